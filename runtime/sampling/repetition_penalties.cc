// RepetitionPenalties (see repetition_penalties.h).
#include "runtime/sampling/repetition_penalties.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace cortiq {
namespace sampling {

RepetitionPenalties::RepetitionPenalties(int32_t repeat_last_n, float repeat_penalty,
                                         float frequency_penalty, float presence_penalty)
    : repeat_last_n_(repeat_last_n),
      repeat_penalty_(repeat_penalty),
      frequency_penalty_(frequency_penalty),
      presence_penalty_(presence_penalty),
      active_(repeat_last_n != 0 &&
              (repeat_penalty != 1.0f || frequency_penalty != 0.0f || presence_penalty != 0.0f)) {}

void RepetitionPenalties::Accept(int32_t token) {
  if (repeat_last_n_ == 0) return;
  ++counts_[token];
  if (repeat_last_n_ < 0) {  // every token since Reset: nothing leaves the window
    ++window_size_;
    return;
  }
  if (static_cast<int64_t>(ring_.size()) < repeat_last_n_) {  // still filling up
    ring_.push_back(token);
    ++window_size_;
    return;
  }
  int32_t& slot = ring_[static_cast<size_t>(ring_next_)];
  auto oldest = counts_.find(slot);
  if (--oldest->second == 0) counts_.erase(oldest);
  slot = token;
  ring_next_ = (ring_next_ + 1) % repeat_last_n_;
}

void RepetitionPenalties::Reset() {
  ring_.clear();
  ring_next_ = 0;
  window_size_ = 0;
  counts_.clear();
}

int32_t RepetitionPenalties::CountOf(int32_t token) const {
  auto it = counts_.find(token);
  return it == counts_.end() ? 0 : it->second;
}

absl::Status RepetitionPenalties::Apply(TokenCandidates* candidates) const {
  if (!active_ || counts_.empty()) return absl::OkStatus();
  const int32_t vocab_size = candidates->vocab_size();
  // Each token is changed independently of the others, so the hash map's order does not matter.
  for (const auto& [token, count] : counts_) {
    if (token < 0 || token >= vocab_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("penalty history token ", token, " is out of range [0, ", vocab_size, ")"));
    }
    float& logit = candidates->logit[token];
    float penalized = logit <= 0.0f ? logit * repeat_penalty_ : logit / repeat_penalty_;
    penalized -= static_cast<float>(count) * frequency_penalty_ + presence_penalty_;
    if (!(penalized < std::numeric_limits<float>::infinity())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "repeat_penalty ", repeat_penalty_, ", frequency_penalty ", frequency_penalty_,
          " and presence_penalty ", presence_penalty_, " turn the logit ", logit, " of token ",
          token, " (", count, " times in the last ", window_size_, ") into ", penalized));
    }
    logit = penalized;
  }
  candidates->has_weights = false;
  candidates->sorted = false;
  candidates->InvalidateMaxLogit();
  return absl::OkStatus();
}

}  // namespace sampling
}  // namespace cortiq
