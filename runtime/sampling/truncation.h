// The truncation stages of the sampler chain — top-k, typical-p, top-p, min-p — each removing
// candidates from a TokenCandidates set, with llama.cpp's semantics (src/llama-sampling.cpp:
// llama_sampler_top_k_impl, llama_sampler_typical_apply, llama_sampler_top_p_apply,
// llama_sampler_min_p_apply) and ties broken by the canonical order (lower id first) so the
// result is the same on every machine.
//
// Probabilities are those of the current set: p_i = w_i / sum(w) with w_i = exp(logit_i - max)
// (TokenCandidates::weight). Each stage keeps at least one candidate (the set is never empty),
// keeps the order of the entries it does not remove, and costs O(n) for a set of n (a histogram
// of the keys finds the cut; only the candidates in the one bucket that holds it are sorted) —
// so top_p without top_k over a 262144-token vocabulary stays linear.
//
// Preconditions (the Sampler's checks ensure them): size >= 1, and the largest logit is finite.
#ifndef CORTIQ_RUNTIME_SAMPLING_TRUNCATION_H_
#define CORTIQ_RUNTIME_SAMPLING_TRUNCATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/sampling/token_candidates.h"

namespace cortiq {
namespace sampling {

// Keeps the k candidates first in the canonical order (highest logits, ties: lower id) and
// leaves them in that order (`sorted`). k <= 0 or k >= size: no change (not even a sort).
// Unsorted input: one pass with a running threshold over a buffer of max(2k, 128) entries
// (std::nth_element when it fills; blocks of 32 logits below the threshold are skipped with one
// vectorized comparison), then a sort of the k kept.
void ApplyTopK(int32_t k, TokenCandidates* candidates);

// Load then ApplyTopK(k) in one pass over `logits` ([vocab_size] f32) without copying the
// vocabulary: the set becomes the k tokens first in the canonical order, sorted. k <= 0 or
// k >= vocab_size: just Load. Errors as TokenCandidates::Load (size 0 then).
absl::Status LoadTopK(absl::Span<const float> logits, int32_t k, TokenCandidates* candidates);

// Locally typical sampling: with H the entropy of the set, orders the candidates by
// |-log p_i - H| (then by id) and keeps the shortest prefix of that order whose probabilities
// sum to > p and that has >= min_keep entries (llama.cpp's `cum_sum > p` and min_keep rule).
// -log p_i - H = d_i - E[d] with d_i = max - logit_i, so no logarithm is needed. Candidates of
// probability 0 order last. p >= 1: no change.
void ApplyTypicalP(float p, int32_t min_keep, TokenCandidates* candidates);

// Nucleus sampling: keeps the shortest prefix of the canonical order whose probabilities sum to
// >= p and that has >= min_keep entries (llama.cpp's `cum_sum >= p && i + 1 >= min_keep`).
// If rounding keeps the sum below p, everything stays. p >= 1: no change.
void ApplyTopP(float p, int32_t min_keep, TokenCandidates* candidates);

// Keeps the candidates with p_i >= p * max_j p_j, i.e. w_i >= p * max_j w_j (llama.cpp's
// logit_i >= max + log p, without the logarithm); if fewer than min_keep pass, the first
// min_keep of the canonical order. p <= 0: no change.
void ApplyMinP(float p, int32_t min_keep, TokenCandidates* candidates);

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_TRUNCATION_H_
