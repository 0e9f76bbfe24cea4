// Plain reference implementations of the sampler's stages for the tests, written from the
// definitions (llama.cpp src/llama-sampling.cpp, the papers cited in truncation.h), not from the
// code under test: f64 throughout, std::exp and std::log, full sorts, one pass per rule.
#ifndef CORTIQ_TESTS_RUNTIME_SAMPLING_REFERENCE_SAMPLER_H_
#define CORTIQ_TESTS_RUNTIME_SAMPLING_REFERENCE_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "runtime/sampling/sampling_options.h"

namespace cortiq {
namespace sampling {
namespace reference {

struct Candidate {
  int32_t id;
  double logit;
};
// A candidate set; `sorted` as in TokenCandidates (canonical order after a top-k cut).
struct Set {
  std::vector<Candidate> items;
  bool sorted = false;
};

// Every token in id order.
Set AllTokens(const std::vector<float>& logits);
// The ids of a set, in its order.
std::vector<int32_t> Ids(const Set& set);
// The ids of a set, ascending.
std::vector<int32_t> SortedIds(const Set& set);
// Softmax probabilities of the set at `temperature` (> 0), in its order.
std::vector<double> Probabilities(const Set& set, double temperature = 1.0);

// The stages, each on a copy; same "no change" rules as truncation.h.
Set TopK(Set set, int32_t k);
Set TypicalP(Set set, double p, int32_t min_keep);
Set TopP(Set set, double p, int32_t min_keep);
Set MinP(Set set, double p, int32_t min_keep);

// logits[t] after logit_bias and the penalties of `history` (the last repeat_last_n of it).
std::vector<float> AdjustedLogits(std::vector<float> logits, const SamplingOptions& options,
                                  const std::vector<int32_t>& history);

// The candidates the chain keeps (before the draw), for `logits` after adjustment.
Set ChainCandidates(const std::vector<float>& adjusted_logits, const SamplingOptions& options);

// The token the chain picks for the uniform number `u` (temperature > 0): the first candidate,
// in the set's order, at which the running sum of the probabilities exceeds u.
int32_t DrawWithUniform(const Set& set, double temperature, double u);

}  // namespace reference
}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_TESTS_RUNTIME_SAMPLING_REFERENCE_SAMPLER_H_
