// RepetitionPenalties: the history of recent tokens and the stage that lowers their logits —
// llama.cpp's penalties sampler (llama_sampler_init_penalties, src/llama-sampling.cpp):
// repeat_penalty as CTRL's repetition penalty with the usual sign fix, frequency_penalty and
// presence_penalty as OpenAI defines them, all over the last repeat_last_n accepted tokens.
#ifndef CORTIQ_RUNTIME_SAMPLING_REPETITION_PENALTIES_H_
#define CORTIQ_RUNTIME_SAMPLING_REPETITION_PENALTIES_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "runtime/sampling/token_candidates.h"

namespace cortiq {
namespace sampling {

// For every token t that occurs c(t) > 0 times in the window, the logit l becomes
//   l' = (l <= 0 ? l * repeat_penalty : l / repeat_penalty)      (Keskar et al. 2019, CTRL, §4.1;
//        dividing a negative logit would raise it, so llama.cpp and transformers'
//        RepetitionPenaltyLogitsProcessor multiply those instead)
//   l'' = l' - c(t) * frequency_penalty - presence_penalty       (OpenAI API reference,
//        "Frequency and presence penalties": mu[j] - c[j] * alpha_frequency
//        - float(c[j] > 0) * alpha_presence)
// in f32, in that order, as llama.cpp computes them. Tokens outside the window are unchanged.
//
// The window is the last `repeat_last_n` tokens given to Accept since the last Reset (0: none,
// the stage is off; -1: all of them). llama.cpp's tools accept the prompt's tokens as well as the
// generated ones, so the prompt counts too; the caller decides by what it accepts.
class RepetitionPenalties {
 public:
  // Arguments as in SamplingOptions (validated there): repeat_last_n >= -1, repeat_penalty > 0.
  RepetitionPenalties(int32_t repeat_last_n, float repeat_penalty, float frequency_penalty,
                      float presence_penalty);

  // Whether Apply changes anything for some history: repeat_last_n != 0 and at least one of
  // repeat_penalty != 1, frequency_penalty != 0, presence_penalty != 0.
  bool active() const { return active_; }

  // Appends `token` (>= 0, checked by the caller against the vocabulary) to the history; the
  // oldest token leaves the window once it holds repeat_last_n. Allocates only while the window
  // fills up (and the counts table grows); a full window allocates nothing.
  void Accept(int32_t token);

  // Forgets the history.
  void Reset();

  // Occurrences of `token` in the window.
  int32_t CountOf(int32_t token) const;
  // Tokens in the window (<= repeat_last_n, or every accepted token for -1).
  int64_t window_size() const { return window_size_; }

  // Applies the formulas above to every token of the window. `candidates` must hold every
  // token in id order (TokenCandidates::Load, then ApplyLogitBias). Errors: InvalidArgument if
  // a history token is outside the vocabulary, or naming the token whose penalized logit is
  // NaN or +inf (possible only with extreme penalties, e.g. repeat_penalty 1e-39).
  absl::Status Apply(TokenCandidates* candidates) const;

 private:
  int32_t repeat_last_n_;
  float repeat_penalty_;
  float frequency_penalty_;
  float presence_penalty_;
  bool active_;
  // The window as a ring once it has repeat_last_n entries (unused for -1: nothing leaves).
  std::vector<int32_t> ring_;
  int64_t ring_next_ = 0;  // slot of the oldest entry once the ring is full
  int64_t window_size_ = 0;
  absl::flat_hash_map<int32_t, int32_t> counts_;  // token -> occurrences in the window (> 0)
};

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_REPETITION_PENALTIES_H_
