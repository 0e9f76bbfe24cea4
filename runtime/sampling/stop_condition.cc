// StopCondition (see stop_condition.h).
#include "runtime/sampling/stop_condition.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cortiq {
namespace sampling {
namespace {

// Whether `s` is well-formed UTF-8 (Unicode 15, table 3-7: shortest forms only, no surrogates,
// nothing above U+10FFFF).
bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = byte(i);
    size_t length;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (b0 < 0x80) {
      ++i;
      continue;
    } else if (b0 >= 0xC2 && b0 <= 0xDF) {
      length = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      length = 3;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      length = 4;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + length > s.size()) return false;
    if (byte(i + 1) < lo || byte(i + 1) > hi) return false;
    for (size_t k = 2; k < length; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace

StopCondition::StopCondition(absl::flat_hash_set<int32_t> end_of_generation,
                             std::vector<std::string> stop_strings)
    : end_of_generation_(std::move(end_of_generation)), stop_strings_(std::move(stop_strings)) {}

absl::StatusOr<StopCondition> StopCondition::Create(absl::Span<const int32_t> end_of_generation_ids,
                                                    std::vector<std::string> stop_strings) {
  absl::flat_hash_set<int32_t> ids;
  for (size_t i = 0; i < end_of_generation_ids.size(); ++i) {
    if (end_of_generation_ids[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "end_of_generation_ids[", i, "] is ", end_of_generation_ids[i], " (token ids are >= 0)"));
    }
    ids.insert(end_of_generation_ids[i]);
  }
  for (size_t i = 0; i < stop_strings.size(); ++i) {
    if (stop_strings[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("stop[", i, "] is empty"));
    }
    if (!IsValidUtf8(stop_strings[i])) {
      return absl::InvalidArgumentError(absl::StrCat("stop[", i, "] is not valid UTF-8"));
    }
  }
  return StopCondition(std::move(ids), std::move(stop_strings));
}

size_t StopCondition::HeldSuffixLength(std::string_view text) const {
  size_t longest = 0;
  for (const std::string& stop : stop_strings_) {
    // Proper prefixes only: a whole stop string in the text is a match, found before this.
    for (size_t length = std::min(text.size(), stop.size() - 1); length > longest; --length) {
      if (text.substr(text.size() - length) == std::string_view(stop).substr(0, length)) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

StopUpdate StopCondition::Push(int32_t token, std::string_view piece) {
  StopUpdate update;
  if (stopped_ != StopReason::kNone) {
    update.reason = stopped_;
    update.stop_string = stopped_string_;
    return update;
  }
  if (IsEndOfGeneration(token)) {
    update.text = std::move(held_);
    held_.clear();
    update.reason = stopped_ = StopReason::kEndOfGeneration;
    return update;
  }
  held_.append(piece);
  // Everything before held_ was checked already and cannot start a match (it was released), so
  // a match lies inside held_: the earliest start wins.
  size_t match = std::string::npos;
  for (size_t s = 0; s < stop_strings_.size(); ++s) {
    const size_t at = held_.find(stop_strings_[s]);
    if (at < match) {
      match = at;
      stopped_string_ = static_cast<int>(s);
    }
  }
  if (match != std::string::npos) {
    update.text = held_.substr(0, match);
    held_.clear();
    update.reason = stopped_ = StopReason::kStopString;
    update.stop_string = stopped_string_;
    return update;
  }
  const size_t keep = HeldSuffixLength(held_);
  update.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return update;
}

bool StopCondition::WouldStop(std::string_view piece) const {
  if (stopped_ != StopReason::kNone || piece.empty()) return false;
  std::string text = held_;
  text.append(piece);
  for (const std::string& stop : stop_strings_) {
    if (text.find(stop) != std::string::npos) return true;
  }
  return false;
}

std::string StopCondition::Flush() {
  std::string text = std::move(held_);
  held_.clear();
  return text;
}

void StopCondition::Reset() {
  held_.clear();
  stopped_ = StopReason::kNone;
  stopped_string_ = -1;
}

}  // namespace sampling
}  // namespace cortiq
