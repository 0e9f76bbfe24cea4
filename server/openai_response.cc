// OpenAI response objects (see openai_response.h).
#include "server/openai_response.h"

#include <atomic>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace cortiq::server {

using nlohmann::json;

std::string DumpJson(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

const char* OpenAiFinishReason(FinishReason reason) {
  switch (reason) {
    case FinishReason::kEndOfGeneration:
    case FinishReason::kStopString:
      return "stop";
    case FinishReason::kMaxTokens:
    case FinishReason::kContextFull:
      return "length";
    case FinishReason::kInterrupted:
      break;
  }
  return "stop";
}

json UsageJson(const JobResult& r) {
  return {{"prompt_tokens", r.prompt_tokens},
          {"completion_tokens", r.completion_tokens},
          {"total_tokens", r.prompt_tokens + r.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", r.cached_tokens}}},
          {"completion_tokens_details", {{"reasoning_tokens", r.reasoning_tokens}}}};
}

std::string NewCompletionId(ApiKind kind) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t base = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  const uint64_t n = counter.fetch_add(1) + 1;
  return absl::StrFormat("%s%016x%08x", kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-", base,
                         static_cast<uint32_t>(n));
}

std::string LogprobsBuilder::TokenText(int32_t id) const {
  if (tokenizer_ == nullptr) return std::to_string(id);
  absl::StatusOr<std::string> text = tokenizer_->Decode(absl::MakeConstSpan(&id, 1));
  return text.ok() ? *text : std::string();
}

std::string LogprobsBuilder::TokenBytes(int32_t id) const {
  if (tokenizer_ != nullptr && id >= 0 &&
      static_cast<uint32_t>(id) < tokenizer_->vocab_size() &&
      (tokenizer_->section().flags(id) & text::kTokenByte) != 0) {
    // "<0xXX>": the byte itself (its text alone is U+FFFD when it is not ASCII).
    absl::StatusOr<std::string_view> piece = tokenizer_->TokenString(id);
    unsigned int value = 0;
    if (piece.ok() && piece->size() == 6 && piece->substr(0, 3) == "<0x" &&
        (*piece)[5] == '>' &&
        absl::SimpleHexAtoi(absl::string_view(piece->data() + 3, 2), &value) && value < 256) {
      return std::string(1, static_cast<char>(value));
    }
  }
  return TokenText(id);
}

json LogprobsBuilder::ChatEntry(const TokenLogprobs& t) const {
  const auto entry = [&](int32_t id, float logprob) {
    const std::string text = TokenText(id);
    json bytes = json::array();
    for (unsigned char c : TokenBytes(id)) bytes.push_back(static_cast<int>(c));
    return json{{"token", text}, {"logprob", logprob}, {"bytes", bytes}};
  };
  json e = entry(t.token, t.logprob);
  json top = json::array();
  for (const auto& [id, logprob] : t.top) top.push_back(entry(id, logprob));
  e["top_logprobs"] = top;
  return e;
}

json LogprobsBuilder::EmptyCompletionLogprobs() {
  return {{"tokens", json::array()},
          {"token_logprobs", json::array()},
          {"top_logprobs", json::array()},
          {"text_offset", json::array()}};
}

void LogprobsBuilder::AddCompletion(const TokenLogprobs& t, size_t text_offset,
                                    json* logprobs) const {
  (*logprobs)["tokens"].push_back(TokenText(t.token));
  (*logprobs)["token_logprobs"].push_back(t.logprob);
  json top = json::object();
  for (const auto& [id, logprob] : t.top) top[TokenText(id)] = logprob;
  (*logprobs)["top_logprobs"].push_back(top);
  (*logprobs)["text_offset"].push_back(text_offset);
}

namespace {

json Base(const ResponseHeader& h, const char* object) {
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model},
          {"system_fingerprint", "cortiq"}};
}

}  // namespace

json CompletionJson(const ResponseHeader& h, const std::string& text, const std::string& reasoning,
                    const json& logprobs, const JobResult& result) {
  json choice = {{"index", 0},
                 {"logprobs", logprobs},
                 {"finish_reason", OpenAiFinishReason(result.reason)}};
  json out;
  if (h.kind == ApiKind::kChat) {
    out = Base(h, "chat.completion");
    choice["message"] = {{"role", "assistant"}, {"content", text}};
    if (!reasoning.empty()) choice["message"]["reasoning_content"] = reasoning;
  } else {
    out = Base(h, "text_completion");
    choice["text"] = text;
  }
  out["choices"] = json::array({choice});
  out["usage"] = UsageJson(result);
  return out;
}

json ChunkJson(const ResponseHeader& h, const std::string* delta_text, bool role,
               const json& logprobs, const char* finish_reason,
               const std::string* delta_reasoning) {
  json choice = {{"index", 0}, {"logprobs", logprobs}};
  choice["finish_reason"] = finish_reason != nullptr ? json(finish_reason) : json(nullptr);
  json out;
  if (h.kind == ApiKind::kChat) {
    out = Base(h, "chat.completion.chunk");
    json delta = json::object();
    if (role) delta["role"] = "assistant";
    if (delta_text != nullptr) delta["content"] = *delta_text;
    if (delta_reasoning != nullptr) delta["reasoning_content"] = *delta_reasoning;
    choice["delta"] = delta;
  } else {
    out = Base(h, "text_completion");
    choice["text"] = delta_text != nullptr ? *delta_text : std::string();
  }
  out["choices"] = json::array({choice});
  return out;
}

json UsageChunkJson(const ResponseHeader& h, const JobResult& result) {
  json out = Base(h, h.kind == ApiKind::kChat ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array();
  out["usage"] = UsageJson(result);
  return out;
}

std::string SseData(const json& value) { return "data: " + DumpJson(value) + "\n\n"; }

}  // namespace cortiq::server
