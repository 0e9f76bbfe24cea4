// TokenLogprobs: the log probabilities OpenAI's `logprobs` report for one sampled token — the
// natural log of its probability under the model's distribution at that step (log-softmax of the
// raw logits, before the sampler's truncations and temperature, as the OpenAI API documents "the
// log probability of this token"), and the `top` most likely tokens with theirs.
#ifndef CORTIQ_SERVER_TOKEN_LOGPROBS_H_
#define CORTIQ_SERVER_TOKEN_LOGPROBS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace cortiq::server {

struct TokenLogprobs {
  int32_t token = 0;
  float logprob = 0.0f;
  // The most likely tokens, most likely first (ties: lower id first): (id, logprob).
  std::vector<std::pair<int32_t, float>> top;
};

// log_softmax(logits)[token] and the `top` (>= 0) best entries, over finite `logits`
// ([vocab_size] f32). The sum runs in double, in index order: the result does not depend on
// threads or batching beyond the logits themselves.
TokenLogprobs ComputeTokenLogprobs(absl::Span<const float> logits, int32_t token, int top);

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_TOKEN_LOGPROBS_H_
