// Sampler: the sampler chain that turns a step's logits into the next token — llama.cpp's
// default chain (common/sampling.cpp common_sampler_init over src/llama-sampling.cpp):
//
//   logit_bias → penalties → top_k → typical_p → top_p → min_p → temperature → draw
//
// (greedy when temperature is 0), with the options of SamplingOptions, the penalty history of
// the accepted tokens, and a seeded generator owned by the chain. Reproducible: the same
// options, seed and sequence of logits and accepted tokens give the same tokens on every
// machine — every tie is broken by token id, every sum runs in a fixed order, exp is
// PortableExp and the generator is Xoshiro256StarStar.
#ifndef CORTIQ_RUNTIME_SAMPLING_SAMPLER_H_
#define CORTIQ_RUNTIME_SAMPLING_SAMPLER_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/sampling/repetition_penalties.h"
#include "runtime/sampling/sampling_options.h"
#include "runtime/sampling/token_candidates.h"
#include "runtime/sampling/xoshiro256.h"

namespace cortiq {
namespace sampling {

// One sequence's sampler. Create allocates everything (about 20 bytes per vocabulary entry);
// Sample allocates nothing. Not thread-safe: one Sampler per sequence. Copyable: a copy
// continues with the same history and generator state.
class Sampler {
 public:
  // A sampler over a vocabulary of `vocab_size` tokens. Errors: InvalidArgument from
  // ValidateSamplingOptions, naming the option ("top_p must be in (0, 1], got 1.5").
  static absl::StatusOr<Sampler> Create(const SamplingOptions& options, int32_t vocab_size);

  // The next token for `logits` ([vocab_size] f32, e.g. Session::logits() after the last
  // position): the stages of the chain in order, then ArgmaxToken (temperature 0) or DrawToken
  // (one output of the generator). Does not Accept the token.
  //
  // Stages that are off cost nothing. Without logit_bias and penalties the logits are not
  // copied for greedy (one scan: the other truncations always keep the most likely token) nor
  // for top-k (selected straight from `logits`, LoadTopK). llama.cpp's greedy is the argmax of
  // what the stages keep, which differs only when typical_p drops the most likely token; so
  // here too.
  //
  // Errors: InvalidArgument if logits.size() != vocab_size, naming the first NaN or +inf entry
  // ("logits[17] is NaN"), or if logit_bias or the penalties produce NaN or +inf;
  // FailedPrecondition if every logit is -inf (after logit_bias): there is no token to pick.
  absl::StatusOr<int32_t> Sample(absl::Span<const float> logits);

  // Adds `token` to the penalty history (llama.cpp's tools accept the prompt's tokens too, so
  // repeats of the prompt are penalized). Errors: InvalidArgument if token is outside
  // [0, vocab_size).
  absl::Status Accept(int32_t token);

  // Forgets the history and restarts the generator from seed(): after Reset the sampler draws
  // what a new one with the same options would.
  void Reset();

  // Forgets the penalty history only; the generator goes on (a chat's next turn: its penalties
  // see that turn's prompt, as a fresh run over the rendered conversation would, while its draws
  // differ from the previous turn's).
  void ResetHistory();

  // The generator's state, and continuing from one (a saved chat goes on drawing what it would
  // have drawn). The history is not part of it. Errors: InvalidArgument for the all-zero state
  // (never a state of this generator).
  const std::array<uint64_t, 4>& generator_state() const { return rng_.state(); }
  absl::Status set_generator_state(const std::array<uint64_t, 4>& state);

  // The seed in use: options.seed, or the one drawn from std::random_device at Create.
  uint64_t seed() const { return seed_; }
  const SamplingOptions& options() const { return options_; }
  int32_t vocab_size() const { return candidates_.vocab_size(); }
  // The candidates left by the last Sample (before the draw picked one of them), in the order
  // the draw visited them; their `weight` are the draw's (tempered) weights. Empty before the
  // first Sample and after one that took the greedy fast path (or failed).
  const TokenCandidates& candidates() const { return candidates_; }

 private:
  Sampler(const SamplingOptions& options, int32_t vocab_size, uint64_t seed);

  SamplingOptions options_;
  uint64_t seed_;
  Xoshiro256StarStar rng_;
  RepetitionPenalties penalties_;
  TokenCandidates candidates_;
};

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_SAMPLER_H_
