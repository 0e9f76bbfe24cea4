// ArgmaxToken and DrawToken (see draw.h).
#include "runtime/sampling/draw.h"

#include <limits>

#include "runtime/sampling/portable_exp.h"

namespace cortiq {
namespace sampling {

int32_t ArgmaxToken(const TokenCandidates& c) {
  // The maximum (vectorized), then the lowest id that has it (elementwise selects).
  const float max = c.MaxLogit();
  const float* logit = c.logit.data();
  const int32_t* id = c.id.data();
  int32_t best = std::numeric_limits<int32_t>::max();
  for (int64_t i = 0; i < c.size; ++i) best = logit[i] == max && id[i] < best ? id[i] : best;
  return best;
}

int32_t DrawToken(float temperature, Xoshiro256StarStar* rng, TokenCandidates* c) {
  return DrawTokenForUniform(temperature, rng->NextUniform(), c);
}

int32_t DrawTokenForUniform(float temperature, double u, TokenCandidates* c) {
  if (temperature != 1.0f || !c->has_weights) {
    // The maximum of the current set has weight exactly 1, so the sum is >= 1.
    c->weight_shift = c->MaxLogit();
    PortableExpShifted(c->logit.data(), c->size, c->weight_shift, temperature, c->weight.data());
    c->has_weights = temperature == 1.0f;
  }
  const double target = u * c->WeightSum();
  const float* weight = c->weight.data();
  double sum = 0.0;
  int64_t last_positive = 0;
  for (int64_t i = 0; i < c->size; ++i) {
    if (weight[i] > 0.0f) last_positive = i;
    sum += static_cast<double>(weight[i]);
    if (sum > target) return c->id[i];
  }
  // The running sum rounded below u * sum(w): the last candidate that has weight.
  return c->id[last_positive];
}

}  // namespace sampling
}  // namespace cortiq
