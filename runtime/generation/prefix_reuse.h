// EvalReusingPrefix: brings a sequence to a new token sequence while evaluating only what differs
// from what it already holds — the prompt cache of a chat (each turn's prompt is the whole
// rendered conversation; all but its new tokens are already in the KV cache), as llama.cpp's
// server compares a slot's cached tokens with a new prompt.
#ifndef CORTIQ_RUNTIME_GENERATION_PREFIX_REUSE_H_
#define CORTIQ_RUNTIME_GENERATION_PREFIX_REUSE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/sequence.h"

namespace cortiq {

// Length of the longest common prefix of `a` and `b`.
size_t CommonPrefixLength(absl::Span<const int32_t> a, absl::Span<const int32_t> b);

// What EvalReusingPrefix did.
struct PrefixReuse {
  int64_t reused = 0;     // positions kept from the sequence's history
  int64_t evaluated = 0;  // tokens evaluated: tokens.size() - reused
};

// Makes `sequence` hold exactly `tokens` (non-empty) with the last token's logits: keeps the
// longest common prefix of its history and `tokens` — at most tokens.size() - 1 positions, since
// the last token must be evaluated for its logits —, truncates the rest (Sequence::Truncate: O(1)
// unless sliding-window rows must be recomputed, and bit-identical to a fresh sequence), then
// evaluates the remaining tokens (Sequence::Eval in chunks, `observer` after each). The result
// equals evaluating `tokens` on a fresh sequence, up to the rounding differences between batched
// and token-by-token evaluation of the reused positions (README: "Batched prefill"). Errors:
// InvalidArgument for empty `tokens`; those of Truncate and Eval (ResourceExhausted when tokens
// exceed the context; checked before anything changes).
absl::StatusOr<PrefixReuse> EvalReusingPrefix(Sequence& sequence,
                                              absl::Span<const int32_t> tokens,
                                              TokenObserver observer);
absl::StatusOr<PrefixReuse> EvalReusingPrefix(Sequence& sequence,
                                              absl::Span<const int32_t> tokens);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_GENERATION_PREFIX_REUSE_H_
