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

// How many positions of `history` an evaluation of `tokens` (non-empty) keeps: their longest
// common prefix, but at most tokens.size() - 2 (none for a single token), so that at least the
// last two tokens are evaluated, in one batch: the last token's logits then have the bits of a
// fresh evaluation of `tokens` (a one-row evaluation would take the decode kernels, whose
// rounding differs; PromptChunkRows, runtime/sequence.h), and a repeated greedy request gives
// what the first one gave. Only positions that history evaluated in batches keep those bits.
size_t ReusablePrefixLength(absl::Span<const int32_t> history, absl::Span<const int32_t> tokens);

// What EvalReusingPrefix did.
struct PrefixReuse {
  int64_t reused = 0;     // positions kept from the sequence's history
  int64_t evaluated = 0;  // tokens evaluated: tokens.size() - reused
};

// Makes `sequence` hold exactly `tokens` (non-empty) with the last token's logits: keeps the
// ReusablePrefixLength of its history and `tokens` (at most tokens.size() - 2 positions),
// truncates the rest (Sequence::Truncate: O(1)
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
