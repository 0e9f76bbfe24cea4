// Pearson's chi-square goodness-of-fit statistic for the tests of seeded draws, and the critical
// values of the chi-square distribution at significance 0.001 (any statistics table, e.g.
// NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.4). With a fixed seed a test is
// deterministic: it fails only if the sampler's distribution is wrong (or, once, with
// probability 0.001 when the test is written — then the seed is not changed to hide it).
#ifndef CORTIQ_TESTS_RUNTIME_SAMPLING_CHI_SQUARE_H_
#define CORTIQ_TESTS_RUNTIME_SAMPLING_CHI_SQUARE_H_

#include <cstdint>
#include <vector>

namespace cortiq {
namespace sampling {

// sum_i (observed_i - n p_i)^2 / (n p_i) over the categories with p_i > 0; n = sum observed.
inline double ChiSquare(const std::vector<int64_t>& observed, const std::vector<double>& p) {
  int64_t n = 0;
  for (int64_t o : observed) n += o;
  double statistic = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    const double expected = static_cast<double>(n) * p[i];
    const double d = static_cast<double>(observed[i]) - expected;
    statistic += d * d / expected;
  }
  return statistic;
}

// Upper 0.001 critical value for `dof` degrees of freedom (1 .. 12).
inline double ChiSquareCritical001(int dof) {
  static const double kTable[] = {10.828, 13.816, 16.266, 18.467, 20.515, 22.458,
                                  24.322, 26.124, 27.877, 29.588, 31.264, 32.909};
  return kTable[dof - 1];
}

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_TESTS_RUNTIME_SAMPLING_CHI_SQUARE_H_
