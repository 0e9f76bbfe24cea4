// Quantized weights against the float64 reference: top-1 agreement and mean KL divergence over
// every position of the golden cases. Measured (tiny-a, hidden 64, so one 32-weight block is
// half a row and quantization noise does not average out; blocks are llama.cpp's blocks of the
// checkpoint tensors, no norm gain folded in):
//   Q8_0: top-1 100% / 97.5% / 100% (f32-T6 / f32-T40 / bf16-T40), mean KL 1.3e-3 / 2.3e-3 /
//         2.3e-3 nats; the one miss is f32-T40 position 23, a near tie (reference top-two gap
//         0.079) where the Q8_0 model itself ranks the two the other way by 0.105.
//   Q4_0 with Q8_0 tables (the default policy): 100% / 67.5% / 70%, KL 0.111 / 0.281 / 0.276;
//   Q4_0 everywhere: 67% / 60% / 70%, KL 0.122 / 0.371 / 0.362.
// The bounds below sit just outside those figures; the Q8_0 argmax must match wherever the
// reference's top two logits are further apart than its error budget.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/session.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

struct Agreement {
  double top1 = 0;     // fraction of positions with the same argmax
  double mean_kl = 0;  // mean over positions of KL(softmax(ref) || softmax(quantized)), nats
  int clear_misses = 0;  // argmax misses where the reference's top-two gap exceeds 0.5
};

// Q8_0's logit error budget on tiny-a (measured max 0.46): a wider reference gap must hold.
constexpr float kQ8_0ClearGap = 0.5f;

Agreement Compare(const std::string& case_name, const std::string& variant) {
  GoldenCase golden = LoadGoldenCase(case_name);
  auto artifact = Artifact::Open(ArtifactPath(golden.model, variant));
  EXPECT_TRUE(artifact.ok()) << artifact.status();
  if (!artifact.ok()) return {};
  auto session = Session::Create(**artifact, SessionOptions{});
  EXPECT_TRUE(session.ok()) << session.status();
  const size_t vocab = golden.logits_ref.size() / golden.tokens.size();
  Agreement a;
  for (size_t t = 0; t < golden.tokens.size(); ++t) {
    EXPECT_TRUE((*session)->Eval(golden.tokens[t], true).ok());
    absl::Span<const float> q = (*session)->logits();
    const float* ref = &golden.logits_ref[t * vocab];
    const size_t arg_ref = std::max_element(ref, ref + vocab) - ref;
    const size_t arg_q = std::max_element(q.begin(), q.end()) - q.begin();
    a.top1 += arg_ref == arg_q;
    float second = -INFINITY;
    for (size_t v = 0; v < vocab; ++v) {
      if (v != arg_ref) second = std::max(second, ref[v]);
    }
    if (arg_ref != arg_q && ref[arg_ref] - second > kQ8_0ClearGap) ++a.clear_misses;
    // log-softmax of both, in double.
    const double max_ref = ref[arg_ref], max_q = q[arg_q];
    double sum_ref = 0, sum_q = 0;
    for (size_t v = 0; v < vocab; ++v) {
      sum_ref += std::exp(ref[v] - max_ref);
      sum_q += std::exp(q[v] - max_q);
    }
    double kl = 0;
    for (size_t v = 0; v < vocab; ++v) {
      const double log_p = ref[v] - max_ref - std::log(sum_ref);
      const double log_q = q[v] - max_q - std::log(sum_q);
      kl += std::exp(log_p) * (log_p - log_q);
    }
    a.mean_kl += kl;
  }
  a.top1 /= static_cast<double>(golden.tokens.size());
  a.mean_kl /= static_cast<double>(golden.tokens.size());
  std::printf("%s %s: top-1 agreement %.1f%%, mean KL %.3g nats\n", case_name.c_str(),
              variant.c_str(), 100 * a.top1, a.mean_kl);
  return a;
}

class QuantTest : public testing::TestWithParam<std::string> {};

TEST_P(QuantTest, Q8_0AgreesWhereverTheReferenceIsNotATie) {
  Agreement a = Compare(GetParam(), "q8_0");
  EXPECT_EQ(a.clear_misses, 0);
  EXPECT_GE(a.top1, 0.97);
  EXPECT_LT(a.mean_kl, 5e-3);
}

TEST_P(QuantTest, Q4_0StaysCloseAndQ8_0TablesHelp) {
  Agreement tables_q8 = Compare(GetParam(), "q4_0");
  Agreement all_q4 = Compare(GetParam(), "q4_0-tables");
  EXPECT_GE(tables_q8.top1, 0.65);
  EXPECT_LT(tables_q8.mean_kl, 0.4);
  EXPECT_LT(all_q4.mean_kl, 0.5);
  // The policy: Q8_0 for the tied embedding / LM head and the PLE table lowers the KL.
  EXPECT_LT(tables_q8.mean_kl, all_q4.mean_kl);
}

INSTANTIATE_TEST_SUITE_P(AllCases, QuantTest,
                         testing::Values("tiny-a-f32-T6", "tiny-a-f32-T40", "tiny-a-bf16-T40"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace cortiq
