// ApplyLogitBias: the first stage of the chain, adding a fixed amount to chosen tokens' logits
// (OpenAI's `logit_bias`, llama.cpp's `--logit-bias` / llama_sampler_init_logit_bias).
#ifndef CORTIQ_RUNTIME_SAMPLING_LOGIT_BIAS_H_
#define CORTIQ_RUNTIME_SAMPLING_LOGIT_BIAS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/sampling/token_candidates.h"

namespace cortiq {
namespace sampling {

// One entry of SamplingOptions::logit_bias: `bias` is added to the logit of `token`. -inf bans
// the token; +inf and NaN are invalid.
struct LogitBias {
  int32_t token = 0;
  float bias = 0.0f;
};

// logit[token] += bias for every entry (entries for the same token add up, in order).
// `candidates` must hold every token in id order (as TokenCandidates::Load leaves it).
// Errors: InvalidArgument naming the entry if its token is outside [0, vocab_size) or the
// biased logit is NaN or +inf (e.g. a bias of 3e38 on a large logit); nothing after that entry
// is applied.
absl::Status ApplyLogitBias(absl::Span<const LogitBias> biases, TokenCandidates* candidates);

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_LOGIT_BIAS_H_
