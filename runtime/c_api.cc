// The C API (runtime/cortiq.h): handles, the mapping of absl::Status codes to cortiq_status, and
// one shim per function over Artifact and Sequence (runtime/sequence.h: chunked eval with the
// observer hook, truncate, the saved-state format). Every call on a session opens with OnSession.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "runtime/artifact.h"
#include "runtime/c_api_internal.h"
#include "runtime/cortiq.h"
#include "runtime/generation/model_text.h"
#include "runtime/sequence.h"
#include "runtime/session.h"

using namespace ::cortiq_c_api;  // NOLINT: the shared helpers of c_api_internal.h
using ::cortiq::ArtifactLoad;

namespace cortiq_c_api {
thread_local std::string g_last_error;
}  // namespace cortiq_c_api

extern "C" {

CORTIQ_API uint32_t cortiq_api_version(void) { return CORTIQ_API_VERSION; }

CORTIQ_API const char* cortiq_status_string(cortiq_status status) {
  switch (status) {
    case CORTIQ_STATUS_OK: return "OK";
    case CORTIQ_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case CORTIQ_STATUS_NOT_FOUND: return "NOT_FOUND";
    case CORTIQ_STATUS_PERMISSION_DENIED: return "PERMISSION_DENIED";
    case CORTIQ_STATUS_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case CORTIQ_STATUS_CONTEXT_FULL: return "CONTEXT_FULL";
    case CORTIQ_STATUS_CORRUPT_DATA: return "CORRUPT_DATA";
    case CORTIQ_STATUS_UNSUPPORTED_VERSION: return "UNSUPPORTED_VERSION";
    case CORTIQ_STATUS_MODEL_MISMATCH: return "MODEL_MISMATCH";
    case CORTIQ_STATUS_NUMERIC_ERROR: return "NUMERIC_ERROR";
    case CORTIQ_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case CORTIQ_STATUS_BUSY: return "BUSY";
    case CORTIQ_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case CORTIQ_STATUS_IO_ERROR: return "IO_ERROR";
    case CORTIQ_STATUS_INTERNAL: return "INTERNAL";
  }
  return "UNKNOWN";
}

CORTIQ_API const char* cortiq_last_error(void) { return g_last_error.c_str(); }

// ---- Models ---------------------------------------------------------------------------------

namespace {

// The body of cortiq_model_open and cortiq_model_open_with_options, `call` naming the caller.
cortiq_status OpenModel(const Call& call, const char* path, ArtifactLoad load,
                        cortiq_model** model) {
  if (path == nullptr) return call.Null("path");
  if (model == nullptr) return call.Null("model");
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path, load);
  if (!artifact.ok()) {
    return call.From(artifact.status(),
                     {{absl::StatusCode::kNotFound, CORTIQ_STATUS_NOT_FOUND},
                      {absl::StatusCode::kPermissionDenied, CORTIQ_STATUS_PERMISSION_DENIED},
                      {absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_CORRUPT_DATA},
                      {absl::StatusCode::kFailedPrecondition, CORTIQ_STATUS_UNSUPPORTED_VERSION},
                      {absl::StatusCode::kResourceExhausted, CORTIQ_STATUS_OUT_OF_MEMORY}},
                     CORTIQ_STATUS_IO_ERROR);
  }
  auto data = std::make_shared<CortiqModelData>();
  data->artifact = std::move(*artifact);
  data->identity = cortiq::IdentifyModel(*data->artifact);
  const cortiq::Plan& plan = data->artifact->plan();
  for (const cortiq::WeightEntry& w : plan.weights) {
    // Bit n is format value n (cortiq.h); ValidatePlan admits only the enum's values.
    data->weight_formats |= 1u << static_cast<uint32_t>(w.format);
  }
  for (const cortiq::CacheEntry& c : plan.caches) {
    if (c.sliding) data->sliding_window = std::max(data->sliding_window, c.window);
  }
  // The text calls' tokenizer (API 1.3): a view of the section, loaded once (~ms for 262144
  // tokens). A model without one, or with a damaged one, still opens: only text calls fail.
  absl::StatusOr<cortiq::text::Tokenizer> tokenizer =
      cortiq::LoadArtifactTokenizer(*data->artifact);
  if (tokenizer.ok()) {
    data->tokenizer.emplace(*std::move(tokenizer));
    data->end_of_generation = cortiq::EndOfGenerationIds(*data->tokenizer);
    std::sort(data->end_of_generation.begin(), data->end_of_generation.end());
    data->end_of_turn = cortiq::ChatEndOfTurnIds(*data->tokenizer);
    std::sort(data->end_of_turn.begin(), data->end_of_turn.end());
  } else {
    data->tokenizer_status = tokenizer.status();
  }
  *model = new cortiq_model{std::move(data)};
  return call.Ok();
}

}  // namespace

CORTIQ_API cortiq_status cortiq_model_open(const char* path, cortiq_model** model) {
  return Guarded("cortiq_model_open", [&](const Call& call) -> cortiq_status {
    return OpenModel(call, path, ArtifactLoad::kMap, model);
  });
}

CORTIQ_API cortiq_status cortiq_model_open_with_options(const char* path,
                                                        const cortiq_model_options* options,
                                                        cortiq_model** model) {
  return Guarded("cortiq_model_open_with_options", [&](const Call& call) -> cortiq_status {
    cortiq_model_options o = cortiq_model_options_default();
    if (options != nullptr) {
      const cortiq_status checked =
          CheckOptionsStruct(call, options, options->struct_size, sizeof(o), sizeof(o),
                             "cortiq_model_options_default");
      if (checked != CORTIQ_STATUS_OK) return checked;
      if (options->reserved != 0) {
        return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                          absl::StrCat("options->reserved must be 0, got ", options->reserved));
      }
      o.load = options->load;
    }
    ArtifactLoad load;
    switch (o.load) {
      case CORTIQ_LOAD_MAP: load = ArtifactLoad::kMap; break;
      case CORTIQ_LOAD_READ_MATRICES: load = ArtifactLoad::kReadMatrices; break;
      case CORTIQ_LOAD_READ: load = ArtifactLoad::kRead; break;
      default:
        return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                          absl::StrCat("options->load is ", o.load,
                                       ", expected CORTIQ_LOAD_MAP (0), CORTIQ_LOAD_READ_MATRICES "
                                       "(1) or CORTIQ_LOAD_READ (2)"));
    }
    return OpenModel(call, path, load, model);
  });
}

CORTIQ_API void cortiq_model_close(cortiq_model* model) { delete model; }

CORTIQ_API cortiq_status cortiq_model_get_info(const cortiq_model* model,
                                               cortiq_model_info* info) {
  return Guarded("cortiq_model_get_info", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (info == nullptr) return call.Null("info");
    const size_t caller_size = info->struct_size;
    if (caller_size < sizeof(cortiq_model_info) || caller_size > kMaxStructSize) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("info->struct_size is ", caller_size, ", expected >= ",
                                     sizeof(cortiq_model_info), " and <= ", kMaxStructSize,
                                     " (set it to sizeof(cortiq_model_info))"));
    }
    const CortiqModelData& data = *model->data;
    const cortiq::ModelInfo& m = data.artifact->plan().model;
    cortiq_model_info out;
    std::memset(&out, 0, sizeof(out));
    out.struct_size = caller_size;
    out.vocab_size = m.vocab_size;
    out.hidden_size = m.hidden_size;
    out.num_layers = m.num_hidden_layers;
    out.max_context = m.max_position_embeddings;
    out.sliding_window = data.sliding_window;
    out.weight_bytes = data.artifact->header().weights_size;
    out.file_bytes = data.artifact->file_size();
    out.weight_formats = data.weight_formats;
    std::memcpy(info, &out, sizeof(out));
    // Fields of a newer header that this library does not know: zero.
    std::memset(reinterpret_cast<uint8_t*>(info) + sizeof(out), 0, caller_size - sizeof(out));
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_model_verify(const cortiq_model* model, int32_t threads) {
  return Guarded("cortiq_model_verify", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (threads < 0 || threads > 256) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("threads must be in [0, 256] (0 = 1), got ", threads));
    }
    return call.From(model->data->artifact->VerifyWeights(threads == 0 ? 1 : threads),
                     {{absl::StatusCode::kDataLoss, CORTIQ_STATUS_CORRUPT_DATA},
                      {absl::StatusCode::kFailedPrecondition, CORTIQ_STATUS_FAILED_PRECONDITION}});
  });
}

// ---- Sessions -------------------------------------------------------------------------------

CORTIQ_API cortiq_status cortiq_session_create(cortiq_model* model,
                                               const cortiq_session_options* options,
                                               cortiq_session** session) {
  return Guarded("cortiq_session_create", [&](const Call& call) -> cortiq_status {
    if (model == nullptr) return call.Null("model");
    if (session == nullptr) return call.Null("session");
    cortiq_session_options o = cortiq_session_options_default();
    if (options != nullptr) {
      // API 1.0's struct ends after `threads`.
      constexpr size_t kOldestSize = offsetof(cortiq_session_options, batch_size);
      const cortiq_status checked =
          CheckOptionsStruct(call, options, options->struct_size, kOldestSize, sizeof(o),
                             "cortiq_session_options_default");
      if (checked != CORTIQ_STATUS_OK) return checked;
      o.ctx_size = options->ctx_size;
      o.threads = options->threads;
      if (options->struct_size >= sizeof(o)) o.batch_size = options->batch_size;
    }
    if (o.batch_size < 0) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("batch_size must be >= 0 (0 = the compiled maximum), got ",
                                     o.batch_size));
    }
    if (o.threads < 0 || o.threads > 256) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("threads must be in [0, 256] (0 = 1), got ", o.threads));
    }
    cortiq::SessionOptions so;
    // 4096 as cortiq-run; anything above max_position_embeddings is clamped by Session.
    so.ctx_size = o.ctx_size == 0 ? 4096
                                  : static_cast<int64_t>(std::min<size_t>(
                                        o.ctx_size, std::numeric_limits<int64_t>::max()));
    so.threads = o.threads == 0 ? 1 : o.threads;
    so.batch_size = o.batch_size;
    const std::shared_ptr<const CortiqModelData>& data = model->data;
    const std::initializer_list<CodeMap> codes = {
        {absl::StatusCode::kResourceExhausted, CORTIQ_STATUS_OUT_OF_MEMORY},
        {absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT}};
    absl::StatusOr<std::unique_ptr<cortiq::Session>> created =
        cortiq::Session::Create(*data->artifact, so);
    if (!created.ok()) return call.From(created.status(), codes);
    absl::StatusOr<std::unique_ptr<Sequence>> sequence =
        Sequence::Create(*std::move(created), data->identity);
    if (!sequence.ok()) return call.From(sequence.status(), codes);
    auto s = std::make_unique<cortiq_session>();
    s->model = data;
    s->sequence = *std::move(sequence);
    *session = s.release();
    return call.Ok();
  });
}

CORTIQ_API void cortiq_session_free(cortiq_session* session) { delete session; }

CORTIQ_API cortiq_status cortiq_session_eval(cortiq_session* session, const int32_t* tokens,
                                             size_t n_tokens, float* all_logits,
                                             size_t all_logits_count) {
  return OnSession("cortiq_session_eval", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    if (n_tokens == 0) return call.Ok();
    if (tokens == nullptr) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("tokens is NULL with n_tokens = ", n_tokens));
    }
    Sequence& sequence = *s.sequence;
    const size_t vocab = static_cast<size_t>(sequence.plan().model.vocab_size);
    if (all_logits != nullptr && (n_tokens > std::numeric_limits<size_t>::max() / vocab ||
                                  all_logits_count < n_tokens * vocab)) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("all_logits holds ", all_logits_count, " floats; ",
                                     n_tokens, " tokens x vocab_size ", vocab, " are needed"));
    }
    // Sequence::Eval checks n_tokens against the context before it reads any id.
    const absl::Span<const int32_t> input(tokens, n_tokens);
    const std::initializer_list<CodeMap> codes = {
        {absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT},
        {absl::StatusCode::kResourceExhausted, CORTIQ_STATUS_CONTEXT_FULL},
        {absl::StatusCode::kDataLoss, CORTIQ_STATUS_NUMERIC_ERROR}};
    // An observer sees every tap of every token, the layers that feed only the logits included.
    sequence.set_every_tap(s.observer != nullptr);
    if (all_logits == nullptr && s.observer == nullptr) {
      return call.From(sequence.Eval(input, cortiq::BatchLogits::kLast), codes);
    }
    const std::vector<cortiq::Tap>& taps = sequence.plan().taps;
    const auto observe = [&](const cortiq::EvaluatedToken& t) -> absl::Status {
      if (all_logits != nullptr) {
        std::memcpy(all_logits + t.index() * vocab, t.logits().data(), vocab * sizeof(float));
      }
      if (s.observer != nullptr) {
        for (size_t k = 0; k < taps.size(); ++k) {
          const absl::Span<const float> data = t.tap(k);
          s.observer(s.observer_user, taps[k].name.c_str(), t.position(), data.data(),
                     data.size());
        }
      }
      return absl::OkStatus();
    };
    return call.From(sequence.Eval(input,
                                   all_logits != nullptr ? cortiq::BatchLogits::kAll
                                                         : cortiq::BatchLogits::kLast,
                                   observe),
                     codes);
  });
}

CORTIQ_API cortiq_status cortiq_session_logits(cortiq_session* session, float* out,
                                               size_t count) {
  return OnSession("cortiq_session_logits", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    if (out == nullptr) return call.Null("out");
    const size_t vocab = static_cast<size_t>(s.sequence->plan().model.vocab_size);
    if (count < vocab) {
      return call.Error(CORTIQ_STATUS_INVALID_ARGUMENT,
                        absl::StrCat("out holds ", count, " floats, vocab_size is ", vocab));
    }
    const absl::StatusOr<absl::Span<const float>> logits = s.sequence->logits();
    if (!logits.ok()) {
      return call.From(logits.status(),
                       {{absl::StatusCode::kFailedPrecondition, CORTIQ_STATUS_FAILED_PRECONDITION}});
    }
    std::memcpy(out, logits->data(), vocab * sizeof(float));
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_length(cortiq_session* session, size_t* length) {
  return OnSession("cortiq_session_length", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    if (length == nullptr) return call.Null("length");
    *length = static_cast<size_t>(s.sequence->length());
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_context_size(cortiq_session* session,
                                                     size_t* ctx_size) {
  return OnSession("cortiq_session_context_size", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    if (ctx_size == nullptr) return call.Null("ctx_size");
    *ctx_size = static_cast<size_t>(s.sequence->ctx_size());
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_reset(cortiq_session* session) {
  return OnSession("cortiq_session_reset", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    s.sequence->Reset();
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_truncate(cortiq_session* session, size_t length) {
  return OnSession("cortiq_session_truncate", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    // A length past INT64_MAX is past every sequence's length as well.
    const auto target = static_cast<int64_t>(
        std::min<size_t>(length, static_cast<size_t>(std::numeric_limits<int64_t>::max())));
    return call.From(s.sequence->Truncate(target),
                     {{absl::StatusCode::kOutOfRange, CORTIQ_STATUS_OUT_OF_RANGE}});
  });
}

CORTIQ_API cortiq_status cortiq_session_state_size(cortiq_session* session, size_t* size) {
  return OnSession("cortiq_session_state_size", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    if (size == nullptr) return call.Null("size");
    *size = s.sequence->StateSize();
    return call.Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_save(cortiq_session* session, void* buf, size_t size) {
  return OnSession("cortiq_session_save", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    if (buf == nullptr) return call.Null("buf");
    return call.From(
        s.sequence->Save(absl::MakeSpan(static_cast<uint8_t*>(buf), size)),
        {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT}});
  });
}

CORTIQ_API cortiq_status cortiq_session_restore(cortiq_session* session, const void* buf,
                                                size_t size) {
  return OnSession("cortiq_session_restore", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    if (buf == nullptr) return call.Null("buf");
    return call.From(
        s.sequence->Restore(absl::MakeConstSpan(static_cast<const uint8_t*>(buf), size)),
        {{absl::StatusCode::kInvalidArgument, CORTIQ_STATUS_INVALID_ARGUMENT},
         {absl::StatusCode::kDataLoss, CORTIQ_STATUS_CORRUPT_DATA},
         {absl::StatusCode::kUnimplemented, CORTIQ_STATUS_UNSUPPORTED_VERSION},
         {absl::StatusCode::kFailedPrecondition, CORTIQ_STATUS_MODEL_MISMATCH},
         {absl::StatusCode::kOutOfRange, CORTIQ_STATUS_OUT_OF_RANGE}});
  });
}

CORTIQ_API cortiq_status cortiq_session_set_observer(cortiq_session* session,
                                                     cortiq_observer_fn fn, void* user_data) {
  return OnSession("cortiq_session_set_observer", session,
                   [&](const Call& call, cortiq_session& s) -> cortiq_status {
    s.observer = fn;
    s.observer_user = fn != nullptr ? user_data : nullptr;
    return call.Ok();
  });
}

}  // extern "C"
