// The response objects of the OpenAI API that cortiq-server answers with: chat.completion and
// its stream chunks (chat.completion.chunk), text_completion (whole and streamed), usage, and the
// two logprobs shapes (chat: choices[].logprobs.content[]; completions: tokens / token_logprobs /
// top_logprobs / text_offset). Built as nlohmann::json; DumpJson serializes them.
#ifndef CORTIQ_SERVER_OPENAI_RESPONSE_H_
#define CORTIQ_SERVER_OPENAI_RESPONSE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/generation/generator.h"
#include "runtime/text/tokenizer.h"
#include "server/request.h"
#include "server/scheduler.h"
#include "server/token_logprobs.h"

namespace cortiq::server {

// `value` as compact JSON; invalid UTF-8 in strings is replaced by U+FFFD, never an exception
// (a token's own bytes may be part of a character).
std::string DumpJson(const nlohmann::json& value);

// "stop" for an end-of-generation token or a stop string, "length" for the token limit or a full
// context (OpenAI's finish_reason values).
const char* OpenAiFinishReason(FinishReason reason);

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details": {"cached_tokens"},
// "completion_tokens_details": {"reasoning_tokens"}} (the thought channel's tokens, as OpenAI
// counts a reasoning model's).
nlohmann::json UsageJson(const JobResult& result);

// A fresh id: "chatcmpl-" / "cmpl-" and 24 hex digits.
std::string NewCompletionId(ApiKind kind);

// Identity and shape of one response: which API, the id, `created` (Unix seconds) and `model`.
struct ResponseHeader {
  ApiKind kind = ApiKind::kChat;
  std::string id;
  int64_t created = 0;
  std::string model;
};

// Collects the log probabilities of a response's tokens in the API's shape.
class LogprobsBuilder {
 public:
  explicit LogprobsBuilder(const text::Tokenizer* tokenizer) : tokenizer_(tokenizer) {}
  // Chat: one element of logprobs.content: {"token", "logprob", "bytes", "top_logprobs": [...]}.
  nlohmann::json ChatEntry(const TokenLogprobs& t) const;
  // Completions: appends `t` to the four arrays; `text_offset` is the character offset of the
  // token in the completion text.
  void AddCompletion(const TokenLogprobs& t, size_t text_offset, nlohmann::json* logprobs) const;
  // {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}.
  static nlohmann::json EmptyCompletionLogprobs();

 private:
  // Token `id` decoded alone (the id as text without a tokenizer).
  std::string TokenText(int32_t id) const;
  // The bytes the token stands for: a byte-fallback token's byte, else TokenText (OpenAI's
  // `bytes`, from which a client rebuilds a character spelled by several tokens).
  std::string TokenBytes(int32_t id) const;
  const text::Tokenizer* tokenizer_;
};

// A whole (non-streamed) response: choices[0] with the text, finish_reason and logprobs
// (null when none were asked), and usage. Chat: message.content is `text`, and
// message.reasoning_content the thought channel's `reasoning` when there is any (the member
// llama-server and other OpenAI-compatible servers use; OpenAI's own API does not return it).
nlohmann::json CompletionJson(const ResponseHeader& header, const std::string& text,
                              const std::string& reasoning, const nlohmann::json& logprobs,
                              const JobResult& result);

// One stream chunk with `delta_text` (chat: delta.content; a first chunk with role sets
// `role`), `logprobs` (null when none), `finish_reason` (null when empty) and, for chat, the
// thought channel's `delta_reasoning` as delta.reasoning_content (omitted when null).
nlohmann::json ChunkJson(const ResponseHeader& header, const std::string* delta_text, bool role,
                         const nlohmann::json& logprobs, const char* finish_reason,
                         const std::string* delta_reasoning = nullptr);

// The usage chunk of stream_options.include_usage: empty choices and usage.
nlohmann::json UsageChunkJson(const ResponseHeader& header, const JobResult& result);

// Server-sent events framing (the HTML living standard's event stream, as OpenAI streams):
// "data: JSON\n\n", and the stream's end "data: [DONE]\n\n".
std::string SseData(const nlohmann::json& value);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_OPENAI_RESPONSE_H_
