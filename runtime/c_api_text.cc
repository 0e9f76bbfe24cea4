// The text and sampling calls of the C API (cortiq.h, API 1.3): shims over the artifact's
// tokenizer (runtime/text/tokenizer.h), the Gemma 4 chat format (gemma4_chat.h, through
// generation/model_text.h) and the sampler chain (sampling/sampler.h), with the argument checks
// and status mapping of c_api_internal.h.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "runtime/c_api_internal.h"
#include "runtime/cortiq.h"
#include "runtime/generation/model_text.h"
#include "runtime/generation/thought_channel.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/sampling_options.h"
#include "runtime/text/gemma4_chat.h"
#include "runtime/text/tokenizer.h"

using namespace ::cortiq_c_api;  // NOLINT: the shared helpers of c_api_internal.h

struct cortiq_sampler {
  std::shared_ptr<const CortiqModelData> model;
  cortiq::sampling::Sampler sampler;
  std::atomic<bool> busy{false};
};

struct cortiq_decoder {
  std::shared_ptr<const CortiqModelData> model;  // declared first: outlives `decoder`
  cortiq::text::StreamDecoder decoder;
  std::string text;  // what the last push / finish returned
};

namespace {

using ::cortiq::text::Tokenizer;

// The model's tokenizer, or null after recording why there is none (FAILED_PRECONDITION; a
// damaged section is CORRUPT_DATA) in *status.
const Tokenizer* TokenizerOf(const Call& call, const CortiqModelData& data,
                             cortiq_status* status) {
  if (data.tokenizer) return &*data.tokenizer;
  *status = call.From(data.tokenizer_status,
                      {{absl::StatusCode::kFailedPrecondition, CORTIQ_STATUS_FAILED_PRECONDITION},
                       {absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_CORRUPT_DATA}},
                      CORTIQ_STATUS_FAILED_PRECONDITION);
  return nullptr;
}

// The output pattern of cortiq.h's text section: NULL `out` stores the size; else `out` must
// hold text.size() + 1 bytes, which get the text and a NUL.
cortiq_status WriteText(const Call& call, const std::string_view text, char* out,
                        size_t capacity, size_t* length) {
  if (out != nullptr) {
    if (capacity < text.size() + 1) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("the buffer holds ", capacity, " bytes; ", text.size() + 1,
                                     " are needed (", text.size(), " and a NUL)"));
    }
    std::memcpy(out, text.data(), text.size());
    out[text.size()] = '\0';
  }
  *length = text.size();
  return call.Ok();
}

cortiq_status CheckTokenIds(const Call& call, const Tokenizer& tokenizer, const int32_t* tokens,
                            size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || static_cast<uint32_t>(tokens[i]) >= tokenizer.vocab_size()) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("tokens[", i, "] = ", tokens[i], " is outside the tokenizer's "
                                     "vocabulary [0, ", tokenizer.vocab_size(), ")"));
    }
  }
  return CORTIQ_STATUS_OK;
}

cortiq_sampler_options ToC(const cortiq::sampling::SamplingOptions& o) {
  cortiq_sampler_options c;
  std::memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  c.temperature = o.temperature;
  c.top_k = o.top_k;
  c.top_p = o.top_p;
  c.min_p = o.min_p;
  c.typical_p = o.typical_p;
  c.repeat_penalty = o.repeat_penalty;
  c.repeat_last_n = o.repeat_last_n;
  c.frequency_penalty = o.frequency_penalty;
  c.presence_penalty = o.presence_penalty;
  c.min_keep = o.min_keep;
  c.seed = o.seed ? *o.seed : CORTIQ_SEED_RANDOM;
  return c;
}

cortiq::sampling::SamplingOptions ModelDefaults(const CortiqModelData& data) {
  return data.tokenizer ? cortiq::ModelSamplingOptions(*data.tokenizer)
                        : cortiq::sampling::DefaultSamplingOptions();
}

// OnExclusive (c_api_internal.h) for the calls on a sampler.
template <typename Body>
cortiq_status OnSampler(const char* function, cortiq_sampler* sampler, Body&& body) noexcept {
  return OnExclusive(function, "sampler", sampler, std::forward<Body>(body));
}

}  // namespace

extern "C" {

// ---- Text -----------------------------------------------------------------------------------

CORTIQ_API cortiq_status cortiq_tokenize(const cortiq_model* model, const char* text,
                                         size_t text_length, int add_special, int32_t* tokens,
                                         size_t capacity, size_t* n_tokens) {
  return Guarded("cortiq_tokenize", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (n_tokens == nullptr) return call.Null("n_tokens");
    if (text == nullptr && text_length > 0) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("text is NULL with text_length = ", text_length));
    }
    cortiq_status status = CORTIQ_STATUS_OK;
    const Tokenizer* tokenizer = TokenizerOf(call, *model->data, &status);
    if (tokenizer == nullptr) return status;
    const std::string_view input(text == nullptr ? "" : text, text_length);
    absl::StatusOr<std::vector<int32_t>> ids;
    if (add_special != 0) {
      ids = cortiq::EncodePrompt(*tokenizer, absl::string_view(input.data(), input.size()));
    } else {
      ids = tokenizer->Encode(input);
    }
    if (!ids.ok()) {
      return call.From(ids.status(),
                       {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT}});
    }
    if (tokens != nullptr) {
      if (capacity < ids->size()) {
        return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                          absl::StrCat("tokens holds ", capacity, " ids; the text has ",
                                       ids->size()));
      }
      std::copy(ids->begin(), ids->end(), tokens);
    }
    *n_tokens = ids->size();
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_detokenize(const cortiq_model* model, const int32_t* tokens,
                                           size_t n_tokens, int skip_special, char* text,
                                           size_t capacity, size_t* length) {
  return Guarded("cortiq_detokenize", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (length == nullptr) return call.Null("length");
    if (tokens == nullptr && n_tokens > 0) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("tokens is NULL with n_tokens = ", n_tokens));
    }
    cortiq_status status = CORTIQ_STATUS_OK;
    const Tokenizer* tokenizer = TokenizerOf(call, *model->data, &status);
    if (tokenizer == nullptr) return status;
    if (CheckTokenIds(call, *tokenizer, tokens, n_tokens) != CORTIQ_STATUS_OK) {
      return CORTIQ_STATUS_INVALID_ARGUMENT;
    }
    cortiq::text::DecodeOptions options;
    options.skip_special_tokens = skip_special != 0;
    absl::StatusOr<std::string> decoded =
        tokenizer->Decode(absl::MakeConstSpan(tokens, n_tokens), options);
    if (!decoded.ok()) {
      return call.From(decoded.status(),
                       {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT}});
    }
    return WriteText(call, *decoded, text, capacity, length);
  });
}

CORTIQ_API cortiq_status cortiq_token_piece(const cortiq_model* model, int32_t token,
                                            char* piece, size_t capacity, size_t* length) {
  return Guarded("cortiq_token_piece", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (length == nullptr) return call.Null("length");
    cortiq_status status = CORTIQ_STATUS_OK;
    const Tokenizer* tokenizer = TokenizerOf(call, *model->data, &status);
    if (tokenizer == nullptr) return status;
    if (CheckTokenIds(call, *tokenizer, &token, 1) != CORTIQ_STATUS_OK) {
      return CORTIQ_STATUS_INVALID_ARGUMENT;
    }
    absl::StatusOr<std::string_view> s = tokenizer->TokenString(token);
    if (!s.ok()) {
      return call.From(s.status(),
                       {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT}});
    }
    return WriteText(call, *s, piece, capacity, length);
  });
}

CORTIQ_API cortiq_status cortiq_model_special_token(const cortiq_model* model, int32_t kind,
                                                    int32_t* token) {
  return Guarded("cortiq_model_special_token", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (token == nullptr) return call.Null("token");
    cortiq_status status = CORTIQ_STATUS_OK;
    const Tokenizer* tokenizer = TokenizerOf(call, *model->data, &status);
    if (tokenizer == nullptr) return status;
    const cortiq::text::TokenizerConfig& config = tokenizer->config();
    std::optional<int32_t> id;
    switch (kind) {
      case CORTIQ_TOKEN_BOS: id = config.bos_id; break;
      case CORTIQ_TOKEN_EOS: id = config.eos_id; break;
      case CORTIQ_TOKEN_END_OF_TURN: id = tokenizer->TokenToId("<turn|>"); break;
      case CORTIQ_TOKEN_PAD: id = config.pad_id; break;
      case CORTIQ_TOKEN_UNK: id = config.unk_id; break;
      case CORTIQ_TOKEN_CHANNEL_OPEN: id = tokenizer->TokenToId(cortiq::ThoughtChannel::kOpen); break;
      case CORTIQ_TOKEN_CHANNEL_CLOSE: id = tokenizer->TokenToId(cortiq::ThoughtChannel::kClose); break;
      default:
        return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                          absl::StrCat("kind ", kind,
                                       " is not a cortiq_token_kind (0..6)"));
    }
    *token = id ? *id : -1;
    return call.Ok();
  });
}

namespace {

// *result = whether `token` is in the sorted `ids` member of the model's data, after the checks
// of cortiq_token_is_end_of_generation / _of_turn.
cortiq_status IsAmong(const char* function, const cortiq_model* model, int32_t token,
                      std::vector<int32_t> CortiqModelData::*ids, int* result) {
  return Guarded(function, [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (result == nullptr) return call.Null("result");
    const CortiqModelData& data = *model->data;
    const int64_t vocab = data.artifact->plan().model.vocab_size;
    if (token < 0 || token >= vocab) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("token ", token, " is outside [0, ", vocab, ")"));
    }
    const std::vector<int32_t>& list = data.*ids;
    *result = std::binary_search(list.begin(), list.end(), token) ? 1 : 0;
    return call.Ok();
  });
}

}  // namespace

CORTIQ_API cortiq_status cortiq_token_is_end_of_generation(const cortiq_model* model,
                                                           int32_t token, int* result) {
  return IsAmong("cortiq_token_is_end_of_generation", model, token,
                 &CortiqModelData::end_of_generation, result);
}

CORTIQ_API cortiq_status cortiq_token_is_end_of_turn(const cortiq_model* model, int32_t token,
                                                     int* result) {
  return IsAmong("cortiq_token_is_end_of_turn", model, token, &CortiqModelData::end_of_turn,
                 result);
}

CORTIQ_API cortiq_status cortiq_model_chat_format(const cortiq_model* model,
                                                  const cortiq_chat_message* messages,
                                                  size_t n_messages, int add_generation_prompt,
                                                  int enable_thinking, char* text,
                                                  size_t capacity, size_t* length) {
  return Guarded("cortiq_model_chat_format", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (length == nullptr) return call.Null("length");
    if (messages == nullptr && n_messages > 0) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("messages is NULL with n_messages = ", n_messages));
    }
    cortiq_status status = CORTIQ_STATUS_OK;
    const Tokenizer* tokenizer = TokenizerOf(call, *model->data, &status);
    if (tokenizer == nullptr) return status;
    std::vector<cortiq::text::ChatMessage> conversation(n_messages);
    for (size_t i = 0; i < n_messages; ++i) {
      if (messages[i].role == nullptr || messages[i].content == nullptr) {
        return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                          absl::StrCat("messages[", i, "].",
                                       messages[i].role == nullptr ? "role" : "content",
                                       " is NULL"));
      }
      conversation[i].role = messages[i].role;
      conversation[i].content_kind = cortiq::text::ChatMessage::ContentKind::kString;
      conversation[i].content = messages[i].content;
    }
    cortiq::text::ChatOptions options;
    options.add_generation_prompt = add_generation_prompt != 0;
    options.enable_thinking = enable_thinking != 0;
    absl::StatusOr<std::string> rendered =
        cortiq::RenderChatPrompt(*tokenizer, conversation, options);
    if (!rendered.ok()) {
      // Unimplemented (a tool message) has no code of its own in the C API: INVALID_ARGUMENT,
      // a request this library cannot take (documented in cortiq.h).
      return call.From(rendered.status(),
                       {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT},
                        {absl::StatusCode::kUnimplemented, CORTIQ_STATUS_INVALID_ARGUMENT}});
    }
    return WriteText(call, *rendered, text, capacity, length);
  });
}

CORTIQ_API cortiq_status cortiq_decoder_create(const cortiq_model* model, int skip_special,
                                               cortiq_decoder** decoder) {
  return Guarded("cortiq_decoder_create", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (decoder == nullptr) return call.Null("decoder");
    cortiq_status status = CORTIQ_STATUS_OK;
    const Tokenizer* tokenizer = TokenizerOf(call, *model->data, &status);
    if (tokenizer == nullptr) return status;
    cortiq::text::DecodeOptions options;
    options.skip_special_tokens = skip_special != 0;
    *decoder = new cortiq_decoder{model->data, cortiq::text::StreamDecoder(tokenizer, options), {}};
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_decoder_push(cortiq_decoder* decoder, int32_t token,
                                             const char** text, size_t* length) {
  return Guarded("cortiq_decoder_push", [&](const Call& call) -> cortiq_status {
    if (decoder == nullptr) return call.Null("decoder");
    if (text == nullptr) return call.Null("text");
    if (length == nullptr) return call.Null("length");
    const Tokenizer& tokenizer = *decoder->model->tokenizer;
    if (CheckTokenIds(call, tokenizer, &token, 1) != CORTIQ_STATUS_OK) {
      return CORTIQ_STATUS_INVALID_ARGUMENT;
    }
    absl::StatusOr<std::string> piece = decoder->decoder.Push(token);
    if (!piece.ok()) {
      return call.From(piece.status(),
                       {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT}});
    }
    decoder->text = *std::move(piece);
    *text = decoder->text.c_str();
    *length = decoder->text.size();
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_decoder_finish(cortiq_decoder* decoder, const char** text,
                                               size_t* length) {
  return Guarded("cortiq_decoder_finish", [&](const Call& call) -> cortiq_status {
    if (decoder == nullptr) return call.Null("decoder");
    if (text == nullptr) return call.Null("text");
    if (length == nullptr) return call.Null("length");
    absl::StatusOr<std::string> rest = decoder->decoder.Finish();
    if (!rest.ok()) return call.From(rest.status(), {});
    decoder->text = *std::move(rest);
    *text = decoder->text.c_str();
    *length = decoder->text.size();
    return call.Ok();
  });
}

CORTIQ_API void cortiq_decoder_free(cortiq_decoder* decoder) { delete decoder; }

// ---- Sampling -------------------------------------------------------------------------------

CORTIQ_API cortiq_status cortiq_sampler_default_options(const cortiq_model* model,
                                                        cortiq_sampler_options* options) {
  return Guarded("cortiq_sampler_default_options", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (options == nullptr) return call.Null("options");
    *options = ToC(ModelDefaults(*model->data));
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_sampler_create(const cortiq_model* model,
                                               const cortiq_sampler_options* options,
                                               cortiq_sampler** sampler) {
  return Guarded("cortiq_sampler_create", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (sampler == nullptr) return call.Null("sampler");
    const CortiqModelData& data = *model->data;
    cortiq::sampling::SamplingOptions o = ModelDefaults(data);
    if (options != nullptr) {
      const cortiq_status checked =
          CheckOptionsStruct(call, options, options->struct_size, sizeof(*options),
                             sizeof(*options), "cortiq_sampler_default_options");
      if (checked != CORTIQ_STATUS_OK) return checked;
      o.temperature = options->temperature;
      o.top_k = options->top_k;
      o.top_p = options->top_p;
      o.min_p = options->min_p;
      o.typical_p = options->typical_p;
      o.repeat_penalty = options->repeat_penalty;
      o.repeat_last_n = options->repeat_last_n;
      o.frequency_penalty = options->frequency_penalty;
      o.presence_penalty = options->presence_penalty;
      o.min_keep = options->min_keep;
      o.seed.reset();
      if (options->seed != CORTIQ_SEED_RANDOM) o.seed = options->seed;
    }
    const int64_t vocab = data.artifact->plan().model.vocab_size;
    if (data.tokenizer) {
      for (const cortiq::sampling::LogitBias& ban :
           cortiq::UntokenizableIdBans(vocab, *data.tokenizer)) {
        o.logit_bias.push_back(ban);
      }
    }
    absl::StatusOr<cortiq::sampling::Sampler> created =
        cortiq::sampling::Sampler::Create(o, static_cast<int32_t>(vocab));
    if (!created.ok()) {
      return call.From(created.status(),
                       {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT},
                        {absl::StatusCode::kResourceExhausted, CORTIQ_STATUS_OUT_OF_MEMORY}});
    }
    *sampler = new cortiq_sampler{model->data, *std::move(created)};
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_sampler_sample(cortiq_sampler* sampler, cortiq_session* session,
                                               int32_t* token) {
  return OnSampler("cortiq_sampler_sample", sampler,
                   [&](const Call& call, cortiq_sampler& sa) -> cortiq_status {
    if (session == nullptr) return call.Null("session");
    if (session->busy.exchange(true, std::memory_order_acquire)) {
      return call.Error(CORTIQ_STATUS_BUSY, "another call on the session is running");
    }
    struct Release {
      cortiq_session* session;
      ~Release() { session->busy.store(false, std::memory_order_release); }
    } release{session};
    if (token == nullptr) return call.Null("token");
    const int64_t vocab = session->sequence->plan().model.vocab_size;
    if (vocab != sa.sampler.vocab_size()) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("the session's model has ", vocab, " logits, the sampler's ",
                                     sa.sampler.vocab_size()));
    }
    const absl::StatusOr<absl::Span<const float>> logits = session->sequence->logits();
    if (!logits.ok()) {
      return call.From(logits.status(), {{absl::StatusCode::kFailedPrecondition,
                                          CORTIQ_STATUS_FAILED_PRECONDITION}});
    }
    const absl::StatusOr<int32_t> sampled = sa.sampler.Sample(*logits);
    if (!sampled.ok()) {
      return call.From(sampled.status(),
                       {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_NUMERIC_ERROR},
                        {absl::StatusCode::kFailedPrecondition, CORTIQ_STATUS_FAILED_PRECONDITION}});
    }
    *token = *sampled;
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_sampler_accept(cortiq_sampler* sampler, int32_t token) {
  return OnSampler("cortiq_sampler_accept", sampler,
                   [&](const Call& call, cortiq_sampler& sa) -> cortiq_status {
    return call.From(sa.sampler.Accept(token),
                     {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT}});
  });
}

CORTIQ_API cortiq_status cortiq_sampler_reset(cortiq_sampler* sampler) {
  return OnSampler("cortiq_sampler_reset", sampler,
                   [&](const Call& call, cortiq_sampler& sa) -> cortiq_status {
    sa.sampler.Reset();
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_sampler_seed(cortiq_sampler* sampler, uint64_t* seed) {
  return OnSampler("cortiq_sampler_seed", sampler,
                   [&](const Call& call, cortiq_sampler& sa) -> cortiq_status {
    if (seed == nullptr) return call.Null("seed");
    *seed = sa.sampler.seed();
    return call.Ok();
  });
}

CORTIQ_API void cortiq_sampler_free(cortiq_sampler* sampler) { delete sampler; }

}  // extern "C"
