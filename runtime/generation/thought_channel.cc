#include "runtime/generation/thought_channel.h"

namespace cortiq {

std::optional<ThoughtChannel> ThoughtChannel::ForTokenizer(const text::Tokenizer& tokenizer) {
  const std::optional<text::TokenId> open = tokenizer.TokenToId(kOpen);
  const std::optional<text::TokenId> close = tokenizer.TokenToId(kClose);
  if (!open || !close || *open == *close) return std::nullopt;
  return ThoughtChannel(*open, *close);
}

ThoughtSplit ThoughtChannel::Push(int32_t token, absl::string_view piece) {
  ThoughtSplit split;
  if (state_ == State::kAnswer) {
    if (token == open_id_) {
      state_ = State::kName;
      split.reasoning_token = true;
    }
    // Text made final by a marker (bytes a decoder held back) was written before it.
    split.content = std::string(piece);
    return split;
  }
  split.reasoning_token = true;
  if (token == close_id_) {
    // Held-back bytes released by the closing marker were reasoning (or, before the name line
    // ended, part of the name).
    if (state_ == State::kReasoning) split.reasoning = std::string(piece);
    state_ = State::kAnswer;
    return split;
  }
  if (state_ == State::kName) {
    const size_t newline = piece.find('\n');
    if (newline == absl::string_view::npos) return split;  // still the name
    piece.remove_prefix(newline + 1);
    state_ = State::kReasoning;
  }
  split.reasoning = std::string(piece);
  return split;
}

}  // namespace cortiq
