// The request bodies of POST /v1/chat/completions and POST /v1/completions (OpenAI's shapes, with
// llama-server's extra sampling members), parsed and type-checked into CompletionRequest. Unknown
// members are ignored (clients send members of newer API versions); a known member of the wrong
// type, out of range or asking for something this server does not do is an ApiError naming it.
#ifndef CORTIQ_SERVER_REQUEST_H_
#define CORTIQ_SERVER_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sampling/sampling_options.h"
#include "runtime/text/gemma4_chat.h"
#include "server/api_error.h"

namespace cortiq::server {

enum class ApiKind {
  kChat,        // POST /v1/chat/completions: `messages`
  kCompletion,  // POST /v1/completions: a raw `prompt`
};

// The sampling members a request sets (unset: the model's defaults, ModelSamplingOptions).
struct SamplingOverrides {
  std::optional<float> temperature;        // OpenAI `temperature`
  std::optional<float> top_p;              // OpenAI `top_p`
  std::optional<int32_t> top_k;            // llama-server `top_k`
  std::optional<float> min_p;              // llama-server `min_p`
  std::optional<float> typical_p;          // llama-server `typical_p`
  std::optional<float> repeat_penalty;     // llama-server `repeat_penalty`
  std::optional<int32_t> repeat_last_n;    // llama-server `repeat_last_n`
  std::optional<float> presence_penalty;   // OpenAI `presence_penalty`
  std::optional<float> frequency_penalty;  // OpenAI `frequency_penalty`
  std::optional<uint64_t> seed;            // OpenAI `seed`
  std::vector<sampling::LogitBias> logit_bias;  // OpenAI `logit_bias` {"id": bias}
};

struct CompletionRequest {
  ApiKind kind = ApiKind::kChat;
  std::string model;  // `model` (any name is accepted: the server has one model)
  // kChat: `messages`.
  std::vector<text::ChatMessage> messages;
  bool enable_thinking = false;  // `chat_template_kwargs.enable_thinking`
  // kCompletion: `prompt` as text, or as token ids (`prompt_ids` non-empty).
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  bool stream = false;         // `stream`: server-sent events
  bool include_usage = false;  // `stream_options.include_usage`: a last chunk with usage
  // `max_completion_tokens` / `max_tokens` / llama-server `n_predict`; -1: until the end of
  // generation or a full context.
  int64_t max_tokens = -1;
  std::vector<std::string> stop;  // `stop`: a string or a list (empty strings are dropped)
  // Log probabilities: -1 none; otherwise the sampled token's and this many alternatives
  // (chat: `logprobs: true` + `top_logprobs`; completions: `logprobs: N`).
  int top_logprobs = -1;
  bool ignore_eos = false;  // llama-server `ignore_eos`
  SamplingOverrides sampling;
};

// Largest top_logprobs / logprobs accepted (OpenAI's chat limit).
inline constexpr int kMaxTopLogprobs = 20;

// Parses `body` as a request of `kind`. Returns the error to answer with (400, naming the member:
// "malformed JSON: ...", "'temperature' must be a number, got string", "'messages' is required",
// "'n' = 2 is not supported (one choice per request)"), or nullopt with *out filled.
std::optional<ApiError> ParseCompletionRequest(ApiKind kind, const std::string& body,
                                               CompletionRequest* out);

// The body of llama-server's POST /tokenize: {"content": string, "add_special": bool,
// "with_pieces": bool} (the booleans default to false; null counts as absent).
struct TokenizeRequest {
  std::string content;       // `content`: the text to encode
  bool add_special = false;  // `add_special`: add the tokenizer's special tokens (<bos>)
  bool with_pieces = false;  // `with_pieces`: answer {"id", "piece"} objects, not bare ids
};

// Parses `body` as a /tokenize request. Returns the 400 error to answer with ("malformed JSON in
// the request body: ...", "'content' must be a string", "'add_special' must be a boolean"), or
// nullopt with *out filled.
std::optional<ApiError> ParseTokenizeRequest(const std::string& body, TokenizeRequest* out);

// The body of llama-server's POST /detokenize: {"tokens": [id, ...]}.
struct DetokenizeRequest {
  std::vector<int32_t> tokens;  // `tokens`, each in [0, vocab_size)
};

// Parses `body` as a /detokenize request for a vocabulary of `vocab_size` tokens. Returns the 400
// error to answer with ("'tokens' must be an array of token ids", "'tokens[3]' must be a token id
// in [0, 262144)"), or nullopt with *out filled.
std::optional<ApiError> ParseDetokenizeRequest(const std::string& body, size_t vocab_size,
                                               DetokenizeRequest* out);

// `defaults` with every member of `overrides` that is set.
sampling::SamplingOptions ApplySamplingOverrides(const SamplingOverrides& overrides,
                                                 sampling::SamplingOptions defaults);

// The request member an option of sampling::ValidateSamplingOptions' messages belongs to (the
// message's first word, e.g. "top_p must be in ..." -> "top_p"; "repeat_penalty" stays).
std::string SamplingParamOf(const std::string& message);

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_REQUEST_H_
