#include "runtime/generation/thought_channel.h"

#include "base/status_macros.h"

namespace cortiq {

std::optional<ThoughtChannel> ThoughtChannel::ForTokenizer(const text::Tokenizer& tokenizer) {
  const std::optional<text::TokenId> open = tokenizer.TokenToId(kOpen);
  const std::optional<text::TokenId> close = tokenizer.TokenToId(kClose);
  if (!open || !close || *open == *close) return std::nullopt;
  return ThoughtChannel(*open, *close);
}

absl::StatusOr<ThoughtSplit> ThoughtChannel::Decode(text::StreamDecoder& decoder,
                                                    int32_t token) {
  if (IsMarker(token)) {
    CORTIQ_ASSIGN_OR_RETURN(const std::string before, decoder.Flush());
    return Push(token, before);
  }
  CORTIQ_ASSIGN_OR_RETURN(const std::string piece, decoder.Push(token));
  return Push(token, piece);
}

absl::StatusOr<ThoughtSplit> ThoughtChannel::Finish(text::StreamDecoder& decoder) {
  CORTIQ_ASSIGN_OR_RETURN(const std::string rest, decoder.Finish());
  return Push(-1, rest);
}

ThoughtSplit ThoughtChannel::Push(int32_t token, absl::string_view piece) {
  ThoughtSplit split;
  if (state_ == State::kAnswer) {
    if (token == open_id_) {
      state_ = State::kName;
      split.reasoning_token = true;
    }
    // Text that came with the opening marker was written before it: the answer's.
    split.content = std::string(piece);
    return split;
  }
  split.reasoning_token = token >= 0;
  if (token == close_id_) {
    // Text that came with the closing marker was written before it: reasoning (or, before the
    // name line ended, part of the name).
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

absl::StatusOr<ThoughtSplit> DecodeReplyToken(text::StreamDecoder* decoder,
                                              ThoughtChannel* thought, int32_t token) {
  if (decoder == nullptr) return ThoughtSplit();
  if (thought != nullptr) return thought->Decode(*decoder, token);
  ThoughtSplit split;
  CORTIQ_ASSIGN_OR_RETURN(split.content, decoder->Push(token));
  return split;
}

absl::StatusOr<ThoughtSplit> FinishReply(text::StreamDecoder* decoder, ThoughtChannel* thought) {
  if (decoder == nullptr) return ThoughtSplit();
  if (thought != nullptr) return thought->Finish(*decoder);
  ThoughtSplit split;
  CORTIQ_ASSIGN_OR_RETURN(split.content, decoder->Finish());
  return split;
}

}  // namespace cortiq
