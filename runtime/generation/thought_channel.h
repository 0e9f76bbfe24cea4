// Splits a Gemma 4 reply into its thought channel and its answer, as the reply streams.
//
// With thinking on (the chat template's `enable_thinking`: <|think|> in the system turn), a
// Gemma 4 model writes its reasoning first, in a channel the official chat template
// (google/gemma-4-E2B-it chat_template.jinja, tests/data/chat/gemma4_chat_template.jinja)
// renders as
//
//     <|channel>thought\n REASONING \n<channel|> ANSWER <turn|>
//
// and strips from earlier model turns (its `strip_thinking` macro: everything from <|channel>
// to <channel|>). The markers are special tokens (user-defined ones in llama.cpp's GGUF, which
// decode as text), so text decoded with skip_special_tokens would run the channel's name, the
// reasoning and the answer together ("thought\n...answer"), markers and all from a GGUF.
// ThoughtChannel routes each sampled token's text: to the answer (OpenAI's message.content)
// outside the channel, to the reasoning (message.reasoning_content, as llama-server and other
// OpenAI-compatible servers name it) inside, without the channel's name line; the markers
// themselves go nowhere.
#ifndef CORTIQ_RUNTIME_GENERATION_THOUGHT_CHANNEL_H_
#define CORTIQ_RUNTIME_GENERATION_THOUGHT_CHANNEL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "runtime/text/tokenizer.h"

namespace cortiq {

// Where one token's text went (ThoughtChannel::Push).
struct ThoughtSplit {
  std::string content;    // text of the answer
  std::string reasoning;  // text of the thought channel, without its name line
  // The token belongs to the thought channel: a marker, the name line or reasoning text (what
  // OpenAI's usage.completion_tokens_details.reasoning_tokens counts).
  bool reasoning_token = false;
};

class ThoughtChannel {
 public:
  // The token strings of the channel markers in Gemma 4's vocabulary (ids 100 and 101 there).
  static constexpr const char* kOpen = "<|channel>";
  static constexpr const char* kClose = "<channel|>";

  // A splitter for `tokenizer`'s marker ids, or nullopt when its vocabulary lacks either marker
  // (not a Gemma 4 vocabulary: every token's text is the answer).
  static std::optional<ThoughtChannel> ForTokenizer(const text::Tokenizer& tokenizer);

  ThoughtChannel(int32_t open_id, int32_t close_id) : open_id_(open_id), close_id_(close_id) {}

  // Decodes sampled `token` with `decoder` (skip_special_tokens, as a server streams) and routes
  // its text (Push). A marker is not given to the decoder: its own text goes nowhere (a GGUF
  // vocabulary, as llama.cpp's converter writes Gemma 4's, may spell it as user-defined text
  // rather than a special token), and the bytes the decoder held back before it (part of a
  // character spelled by byte tokens) are flushed to the side they were written on.
  // Errors: the decoder's (an id outside the vocabulary).
  absl::StatusOr<ThoughtSplit> Decode(text::StreamDecoder& decoder, int32_t token);
  // At the end of generation: the decoder's held-back bytes (StreamDecoder::Finish), routed to
  // the side the reply ended on.
  absl::StatusOr<ThoughtSplit> Finish(text::StreamDecoder& decoder);

  // The state machine under Decode. `piece` is the text that came with `token`: for a marker,
  // the text written before it (routed by the state the marker ends); otherwise the token's own
  // final text. A marker opens or closes the channel; inside, the text up to and including the
  // first '\n' is the channel's name ("thought") and is dropped, the rest is reasoning. A second
  // <|channel> inside the channel, or a <channel|> outside it, changes nothing (counted with the
  // channel it is in). token -1: text with no token (Finish).
  ThoughtSplit Push(int32_t token, absl::string_view piece);

  bool IsMarker(int32_t token) const { return token == open_id_ || token == close_id_; }

  // Inside the channel (an open <|channel> not closed yet).
  bool open() const { return state_ != State::kAnswer; }

 private:
  enum class State { kAnswer, kName, kReasoning };
  int32_t open_id_;
  int32_t close_id_;
  State state_ = State::kAnswer;
};

// The step a generation loop takes per sampled token: `token`'s text from `decoder`, split by
// `thought` where there is one (ThoughtChannel::Decode), else all of it answer. A null decoder (a
// model without a tokenizer) gives no text. Errors: the decoder's.
absl::StatusOr<ThoughtSplit> DecodeReplyToken(text::StreamDecoder* decoder,
                                              ThoughtChannel* thought, int32_t token);
// At the end of a reply: the decoder's held-back bytes, split the same way.
absl::StatusOr<ThoughtSplit> FinishReply(text::StreamDecoder* decoder, ThoughtChannel* thought);
// The decoder whose held-back bytes a stop string may end in (PushDecodedPiece): null inside the
// thought channel, where they are reasoning and stop strings do not apply.
inline const text::StreamDecoder* AnswerDecoder(const text::StreamDecoder* decoder,
                                                const ThoughtChannel* thought) {
  return thought != nullptr && thought->open() ? nullptr : decoder;
}

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_GENERATION_THOUGHT_CHANNEL_H_
