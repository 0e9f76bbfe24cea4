// Request parsing (see request.h). Types follow the OpenAI API reference; null counts as absent,
// as the OpenAI SDKs send it for unset optional members.
#include "server/request.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cortiq::server {
namespace {

using nlohmann::json;

// "string", "number", "boolean", "array", "object", "null": the JSON type name of `v`.
std::string TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number";
    default: return "unknown";
  }
}

ApiError WrongType(const std::string& name, const char* expected, const json& v) {
  return InvalidRequest(absl::StrCat("'", name, "' must be ", expected, ", got ", TypeName(v)),
                        name);
}

// The member `name` of `body`, or null when absent or null.
const json* Member(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<ApiError> GetFloat(const json& body, const char* name, std::optional<float>* out) {
  const json* v = Member(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) return WrongType(name, "a number", *v);
  const double d = v->get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 1e30) {
    return InvalidRequest(absl::StrCat("'", name, "' must be a finite number"), name);
  }
  *out = static_cast<float>(d);
  return std::nullopt;
}

std::optional<ApiError> GetInt(const json& body, const char* name, int64_t min, int64_t max,
                               std::optional<int64_t>* out) {
  const json* v = Member(body, name);
  if (v == nullptr) return std::nullopt;
  int64_t value = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
      return InvalidRequest(absl::StrCat("'", name, "' must be in [", min, ", ", max, "]"), name);
    }
    value = v->get<int64_t>();
  } else if (v->is_number_float() && std::nearbyint(v->get<double>()) == v->get<double>() &&
             std::fabs(v->get<double>()) < 9e18) {
    value = static_cast<int64_t>(v->get<double>());  // 5.0 is the integer 5 in JSON
  } else {
    return WrongType(name, "an integer", *v);
  }
  if (value < min || value > max) {
    return InvalidRequest(
        absl::StrCat("'", name, "' = ", value, " must be in [", min, ", ", max, "]"), name);
  }
  *out = value;
  return std::nullopt;
}

std::optional<ApiError> GetBool(const json& body, const char* name, bool* out) {
  const json* v = Member(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) return WrongType(name, "a boolean", *v);
  *out = v->get<bool>();
  return std::nullopt;
}

// One message's content: a string, a list of parts ({"type": "text", "text": ...}; media parts
// are refused: the model here is text-only) or null.
std::optional<ApiError> ParseContent(const json& content, const std::string& where,
                                     text::ChatMessage* m) {
  if (content.is_null()) {
    m->content_kind = text::ChatMessage::ContentKind::kNone;
    return std::nullopt;
  }
  if (content.is_string()) {
    m->content_kind = text::ChatMessage::ContentKind::kString;
    m->content = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) return WrongType(where, "a string, an array of parts or null", content);
  m->content_kind = text::ChatMessage::ContentKind::kParts;
  for (size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    const std::string at = absl::StrCat(where, "[", i, "]");
    if (!part.is_object()) return WrongType(at, "an object", part);
    const json* type = Member(part, "type");
    if (type == nullptr || !type->is_string()) {
      return InvalidRequest(absl::StrCat("'", at, ".type' must be a string"), at + ".type");
    }
    const std::string t = type->get<std::string>();
    if (t == "text") {
      const json* text = Member(part, "text");
      if (text == nullptr || !text->is_string()) {
        return InvalidRequest(absl::StrCat("'", at, ".text' must be a string"), at + ".text");
      }
      text::ChatContentPart p;
      p.text = text->get<std::string>();
      m->parts.push_back(std::move(p));
    } else if (t == "image_url" || t == "image" || t == "input_audio" || t == "audio" ||
               t == "video" || t == "file") {
      return InvalidRequest(absl::StrCat("'", at, "': content of type '", t,
                                         "' is not supported (the model runs text only)"),
                            at + ".type");
    } else {
      return InvalidRequest(absl::StrCat("'", at, ".type' = '", t, "' is not a content type"),
                            at + ".type");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> ParseMessages(const json& body, CompletionRequest* out) {
  const json* messages = Member(body, "messages");
  if (messages == nullptr) return InvalidRequest("'messages' is required", "messages");
  if (!messages->is_array()) return WrongType("messages", "an array", *messages);
  if (messages->empty()) return InvalidRequest("'messages' is empty", "messages");
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string at = absl::StrCat("messages[", i, "]");
    if (!m.is_object()) return WrongType(at, "an object", m);
    text::ChatMessage message;
    const json* role = Member(m, "role");
    if (role == nullptr) return InvalidRequest(absl::StrCat("'", at, ".role' is required"), at + ".role");
    if (!role->is_string()) return WrongType(at + ".role", "a string", *role);
    message.role = role->get<std::string>();
    // OpenAI's roles (the chat template itself would render any name as a turn of that name).
    if (message.role != "system" && message.role != "developer" && message.role != "user" &&
        message.role != "assistant" && message.role != "tool" && message.role != "function") {
      return InvalidRequest(
          absl::StrCat("'", at, ".role' must be one of system, developer, user, assistant, "
                       "tool, function; got '", message.role, "'"),
          at + ".role");
    }
    if (message.role == "tool" || message.role == "function" || Member(m, "tool_calls") != nullptr ||
        Member(m, "function_call") != nullptr) {
      return InvalidRequest(absl::StrCat("'", at, "': tool and function messages are not supported"),
                            at);
    }
    auto c = m.find("content");
    if (c == m.end()) {
      message.content_kind = text::ChatMessage::ContentKind::kNone;
    } else if (auto e = ParseContent(*c, at + ".content", &message)) {
      return e;
    }
    // OpenAI's API requires content of system, developer and user messages (an assistant's may
    // be null, as after tool calls; it renders as an empty turn).
    if (message.content_kind == text::ChatMessage::ContentKind::kNone &&
        message.role != "assistant") {
      return InvalidRequest(absl::StrCat("'", at, ".content' is required for a '", message.role,
                                         "' message"),
                            at + ".content");
    }
    out->messages.push_back(std::move(message));
  }
  return std::nullopt;
}

std::optional<ApiError> ParsePrompt(const json& body, CompletionRequest* out) {
  const json* prompt = Member(body, "prompt");
  if (prompt == nullptr) return InvalidRequest("'prompt' is required", "prompt");
  if (prompt->is_string()) {
    out->prompt = prompt->get<std::string>();
    return std::nullopt;
  }
  if (!prompt->is_array()) {
    return WrongType("prompt",
                     "a string, an array of token ids or a list of one string or one such array",
                     *prompt);
  }
  if (prompt->empty()) return InvalidRequest("'prompt' is empty", "prompt");
  if (prompt->size() == 1 && (*prompt)[0].is_string()) {
    out->prompt = (*prompt)[0].get<std::string>();
    return std::nullopt;
  }
  // A batch of one token-id array ([[2, 17, 300]], as OpenAI's clients send a list of prompts)
  // is that prompt.
  const bool one_id_list = prompt->size() == 1 && (*prompt)[0].is_array();
  const json& ids = one_id_list ? (*prompt)[0] : *prompt;
  const std::string name = one_id_list ? "prompt[0]" : "prompt";
  if (ids.empty()) return InvalidRequest(absl::StrCat("'", name, "' is empty"), "prompt");
  if ((*prompt)[0].is_string() || (!one_id_list && (*prompt)[0].is_array())) {
    return InvalidRequest("'prompt': one prompt per request (batches of prompts are not supported)",
                          "prompt");
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const json& id = ids[i];
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      return InvalidRequest(
          absl::StrCat("'", name, "[", i, "]' must be a token id (an integer >= 0)"), "prompt");
    }
    out->prompt_ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return std::nullopt;
}

std::optional<ApiError> ParseStop(const json& body, CompletionRequest* out) {
  const json* stop = Member(body, "stop");
  if (stop == nullptr) return std::nullopt;
  if (stop->is_string()) {
    if (!stop->get<std::string>().empty()) out->stop.push_back(stop->get<std::string>());
    return std::nullopt;
  }
  if (!stop->is_array()) return WrongType("stop", "a string or an array of strings", *stop);
  for (size_t i = 0; i < stop->size(); ++i) {
    if (!(*stop)[i].is_string()) return WrongType(absl::StrCat("stop[", i, "]"), "a string", (*stop)[i]);
    if (!(*stop)[i].get<std::string>().empty()) out->stop.push_back((*stop)[i].get<std::string>());
  }
  return std::nullopt;
}

std::optional<ApiError> ParseSampling(const json& body, SamplingOverrides* s) {
  if (auto e = GetFloat(body, "temperature", &s->temperature)) return e;
  if (auto e = GetFloat(body, "top_p", &s->top_p)) return e;
  if (auto e = GetFloat(body, "min_p", &s->min_p)) return e;
  if (auto e = GetFloat(body, "typical_p", &s->typical_p)) return e;
  if (auto e = GetFloat(body, "repeat_penalty", &s->repeat_penalty)) return e;
  if (auto e = GetFloat(body, "presence_penalty", &s->presence_penalty)) return e;
  if (auto e = GetFloat(body, "frequency_penalty", &s->frequency_penalty)) return e;
  std::optional<int64_t> v;
  if (auto e = GetInt(body, "top_k", 0, INT32_MAX, &v)) return e;
  if (v) s->top_k = static_cast<int32_t>(*v);
  v.reset();
  if (auto e = GetInt(body, "repeat_last_n", -1, INT32_MAX, &v)) return e;
  if (v) s->repeat_last_n = static_cast<int32_t>(*v);
  v.reset();
  // OpenAI's seed is any integer; llama-server's -1 means random.
  if (auto e = GetInt(body, "seed", INT64_MIN, INT64_MAX, &v)) return e;
  if (v && *v != -1) s->seed = static_cast<uint64_t>(*v);
  if (const json* bias = Member(body, "logit_bias")) {
    if (!bias->is_object()) return WrongType("logit_bias", "an object {\"token id\": bias}", *bias);
    for (auto it = bias->begin(); it != bias->end(); ++it) {
      int64_t id = 0;
      // Digits only: SimpleAtoi would also take " 5" or "+5".
      const bool digits = !it.key().empty() && it.key().size() <= 10 &&
                          std::all_of(it.key().begin(), it.key().end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || !absl::SimpleAtoi(it.key(), &id) || id > INT32_MAX) {
        return InvalidRequest(
            absl::StrCat("'logit_bias': key '", it.key(), "' is not a token id"), "logit_bias");
      }
      // OpenAI's range, which also keeps the bias a finite float.
      const std::string name = absl::StrCat("logit_bias[\"", it.key(), "\"]");
      if (!it.value().is_number()) return WrongType(name, "a number", it.value());
      if (!(std::fabs(it.value().get<double>()) <= 100.0)) {
        return InvalidRequest(absl::StrCat("'", name, "' = ", it.value().dump(),
                                           " is not in [-100, 100]"),
                              name);
      }
      s->logit_bias.push_back(
          {static_cast<int32_t>(id), static_cast<float>(it.value().get<double>())});
    }
  }
  return std::nullopt;
}

// Parses `body` into *j, which must be a JSON object. nlohmann's parser throws parse_error for
// bad syntax and out_of_range for a number beyond double's range ("1e400"); both are the
// client's malformed JSON.
std::optional<ApiError> ParseBodyObject(const std::string& body, json* j) {
  try {
    *j = json::parse(body);
  } catch (const json::exception& e) {
    return InvalidRequest(absl::StrCat("malformed JSON in the request body: ", e.what()));
  }
  if (!j->is_object()) {
    return InvalidRequest(absl::StrCat("the request body must be a JSON object, got ", TypeName(*j)));
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> ParseCompletionRequest(ApiKind kind, const std::string& body,
                                               CompletionRequest* out) {
  *out = CompletionRequest();
  out->kind = kind;
  json j;
  if (auto error = ParseBodyObject(body, &j)) return error;
  if (const json* model = Member(j, "model")) {
    if (!model->is_string()) return WrongType("model", "a string", *model);
    out->model = model->get<std::string>();
  }
  if (kind == ApiKind::kChat) {
    if (auto e = ParseMessages(j, out)) return e;
    if (const json* kwargs = Member(j, "chat_template_kwargs")) {
      if (!kwargs->is_object()) return WrongType("chat_template_kwargs", "an object", *kwargs);
      if (auto e = GetBool(*kwargs, "enable_thinking", &out->enable_thinking)) {
        e->param = "chat_template_kwargs.enable_thinking";
        return e;
      }
    }
    if (const json* tools = Member(j, "tools")) {
      if (!tools->is_array()) return WrongType("tools", "an array", *tools);
      if (!tools->empty()) return InvalidRequest("'tools' are not supported", "tools");
    }
    // Without tools only "none" and "auto" mean anything (OpenAI refuses the rest).
    if (const json* choice = Member(j, "tool_choice")) {
      if (!choice->is_string() && !choice->is_object()) {
        return WrongType("tool_choice", "a string or an object", *choice);
      }
      if (!choice->is_string() ||
          (choice->get<std::string>() != "none" && choice->get<std::string>() != "auto")) {
        return InvalidRequest("'tool_choice' other than \"none\" or \"auto\" needs 'tools', "
                              "which are not supported",
                              "tool_choice");
      }
    }
    if (const json* format = Member(j, "response_format")) {
      if (!format->is_object()) return WrongType("response_format", "an object", *format);
      const json* type = Member(*format, "type");
      if (type == nullptr || !type->is_string()) {
        return InvalidRequest("'response_format.type' must be a string", "response_format.type");
      }
      if (type->get<std::string>() != "text") {
        return InvalidRequest(absl::StrCat("'response_format.type' = '", type->get<std::string>(),
                                           "' is not supported (only 'text')"),
                              "response_format.type");
      }
    }
  } else {
    if (auto e = ParsePrompt(j, out)) return e;
    bool echo = false;
    if (auto e = GetBool(j, "echo", &echo)) return e;
    if (echo) return InvalidRequest("'echo' is not supported", "echo");
    if (const json* suffix = Member(j, "suffix")) {
      if (!suffix->is_string()) return WrongType("suffix", "a string", *suffix);
      if (!suffix->get<std::string>().empty()) {
        return InvalidRequest("'suffix' is not supported", "suffix");
      }
    }
  }
  if (auto e = GetBool(j, "stream", &out->stream)) return e;
  if (const json* options = Member(j, "stream_options")) {
    if (!options->is_object()) return WrongType("stream_options", "an object", *options);
    if (!out->stream) {
      return InvalidRequest("'stream_options' is only allowed with \"stream\": true",
                            "stream_options");
    }
    if (auto e = GetBool(*options, "include_usage", &out->include_usage)) {
      e->param = "stream_options.include_usage";
      return e;
    }
  }
  // The newest name first: max_completion_tokens replaces max_tokens in OpenAI's chat API.
  for (const char* name : {"max_completion_tokens", "max_tokens", "n_predict"}) {
    std::optional<int64_t> v;
    if (auto e = GetInt(j, name, name[0] == 'n' ? -1 : 0, INT32_MAX, &v)) return e;
    if (v && out->max_tokens == -1) out->max_tokens = *v;
  }
  std::optional<int64_t> n;
  if (auto e = GetInt(j, "n", 1, INT32_MAX, &n)) return e;
  if (n && *n != 1) {
    return InvalidRequest(absl::StrCat("'n' = ", *n, " is not supported (one choice per request)"),
                          "n");
  }
  std::optional<int64_t> best_of;
  if (auto e = GetInt(j, "best_of", 1, INT32_MAX, &best_of)) return e;
  if (best_of && *best_of != 1) return InvalidRequest("'best_of' is not supported", "best_of");
  if (auto e = ParseStop(j, out)) return e;
  if (kind == ApiKind::kChat) {
    bool logprobs = false;
    if (auto e = GetBool(j, "logprobs", &logprobs)) return e;
    std::optional<int64_t> top;
    if (auto e = GetInt(j, "top_logprobs", 0, kMaxTopLogprobs, &top)) return e;
    if (top && !logprobs) {
      return InvalidRequest("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    }
    if (logprobs) out->top_logprobs = top ? static_cast<int>(*top) : 0;
  } else {
    std::optional<int64_t> logprobs;
    if (auto e = GetInt(j, "logprobs", 0, kMaxTopLogprobs, &logprobs)) return e;
    if (logprobs) out->top_logprobs = static_cast<int>(*logprobs);
  }
  if (auto e = GetBool(j, "ignore_eos", &out->ignore_eos)) return e;
  return ParseSampling(j, &out->sampling);
}

sampling::SamplingOptions ApplySamplingOverrides(const SamplingOverrides& o,
                                                 sampling::SamplingOptions d) {
  if (o.temperature) d.temperature = *o.temperature;
  if (o.top_p) d.top_p = *o.top_p;
  if (o.top_k) d.top_k = *o.top_k;
  if (o.min_p) d.min_p = *o.min_p;
  if (o.typical_p) d.typical_p = *o.typical_p;
  if (o.repeat_penalty) d.repeat_penalty = *o.repeat_penalty;
  if (o.repeat_last_n) d.repeat_last_n = *o.repeat_last_n;
  if (o.presence_penalty) d.presence_penalty = *o.presence_penalty;
  if (o.frequency_penalty) d.frequency_penalty = *o.frequency_penalty;
  if (o.seed) d.seed = *o.seed;
  for (const sampling::LogitBias& b : o.logit_bias) d.logit_bias.push_back(b);
  return d;
}

std::optional<ApiError> ParseTokenizeRequest(const std::string& body, TokenizeRequest* out) {
  *out = TokenizeRequest();
  json j;
  if (auto error = ParseBodyObject(body, &j)) return error;
  const json* content = Member(j, "content");
  if (content == nullptr || !content->is_string()) {
    return InvalidRequest("'content' must be a string", "content");
  }
  out->content = content->get<std::string>();
  for (auto [name, target] : {std::pair<const char*, bool*>{"add_special", &out->add_special},
                              std::pair<const char*, bool*>{"with_pieces", &out->with_pieces}}) {
    const json* v = Member(j, name);
    if (v == nullptr) continue;
    if (!v->is_boolean()) return WrongType(name, "a boolean", *v);
    *target = v->get<bool>();
  }
  return std::nullopt;
}

std::optional<ApiError> ParseDetokenizeRequest(const std::string& body, size_t vocab_size,
                                               DetokenizeRequest* out) {
  *out = DetokenizeRequest();
  json j;
  if (auto error = ParseBodyObject(body, &j)) return error;
  const json* tokens = Member(j, "tokens");
  if (tokens == nullptr || !tokens->is_array()) {
    return InvalidRequest("'tokens' must be an array of token ids", "tokens");
  }
  // Ids are int32 whatever the vocabulary (a SIZE_MAX vocab_size checks only that).
  const uint64_t limit = std::min<uint64_t>(vocab_size, uint64_t{1} << 31);
  out->tokens.reserve(tokens->size());
  for (size_t i = 0; i < tokens->size(); ++i) {
    const json& id = (*tokens)[i];
    // number_unsigned holds values above INT64_MAX; compare it unsigned, not wrapped to int64.
    const bool in_range =
        (id.is_number_unsigned() && id.get<uint64_t>() < limit) ||
        (id.is_number_integer() && !id.is_number_unsigned() && id.get<int64_t>() >= 0 &&
         static_cast<uint64_t>(id.get<int64_t>()) < limit);
    if (!in_range) {
      return InvalidRequest(
          absl::StrCat("'tokens[", i, "]' must be a token id in [0, ", limit, ")"), "tokens");
    }
    out->tokens.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return std::nullopt;
}

std::string SamplingParamOf(const std::string& message) {
  const size_t end = message.find_first_of(" [:");
  return message.substr(0, end);
}

}  // namespace cortiq::server
