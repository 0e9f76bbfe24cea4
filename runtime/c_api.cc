// The C API (runtime/cortiq.h) over Artifact and Session: handles, status mapping, batched eval
// with the observer hook, truncate (with recomputation of overwritten sliding-window rows from
// the token history) and the session state format of save/restore.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
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
#include "runtime/cortiq.h"
#include "runtime/session.h"

namespace {

using ::cortiq::Artifact;
using ::cortiq::Session;

// The message of cortiq_last_error(), per thread.
thread_local std::string g_last_error;

// Records "function: message" as this thread's last error and returns `status`. Never throws (an
// allocation failure leaves the message empty).
cortiq_status SetError(cortiq_status status, const char* function,
                       const std::string& message) noexcept {
  try {
    g_last_error = absl::StrCat(function, ": ", message);
  } catch (...) {
    g_last_error.clear();
  }
  return status;
}

cortiq_status Ok() noexcept {
  g_last_error.clear();
  return CORTIQ_STATUS_OK;
}

// Runs `body` (returning a cortiq_status) and turns any exception into a status, so that nothing
// thrown inside the library crosses the C boundary.
template <typename Body>
cortiq_status Guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return SetError(CORTIQ_STATUS_OUT_OF_MEMORY, function, "out of memory");
  } catch (const std::exception& e) {
    return SetError(CORTIQ_STATUS_INTERNAL, function,
                    std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return SetError(CORTIQ_STATUS_INTERNAL, function, "unexpected exception");
  }
}

// --- Session state format (cortiq_session_save / restore) ----------------------------------
//
// Host byte order; every field is read with memcpy (no alignment needed). Layout:
//   [0, 8)    magic "CQSTATE\0"
//   [8, 16)   u64 checksum: StateHash of bytes [16, total_size)
//   [16, 20)  u32 version (kStateVersion)
//   [20, 24)  u32 byte-order mark 0x01020304 as written by the host
//   [24, 32)  u64 total_size: bytes of the whole state
//   [32, 40)  u64 the artifact's plan checksum (ArtifactHeader::checksum)
//   [40, 48)  u64 the model's weight digest (WeightDigest)
//   [48, 56)  u64 vocab_size
//   [56, 64)  u64 number of KV caches
//   [64, 72)  u64 length (positions)
//   [72, 80)  u64 1 if the last logits follow at the end, else 0
//   then per cache, in plan order: u64 first position, u64 count, u64 row_width, then keys and
//     values of positions first .. first + count - 1, each [count, row_width] f32 in position
//     order (independent of the saving session's ring layout and context size)
//   then the token history: length i32
//   then, if present, the last logits: vocab_size f32.
constexpr char kStateMagic[8] = {'C', 'Q', 'S', 'T', 'A', 'T', 'E', '\0'};
constexpr uint32_t kStateVersion = 1;
constexpr uint32_t kByteOrderMark = 0x01020304u;
constexpr size_t kStateHeaderSize = 80;
constexpr size_t kCacheHeaderSize = 24;

// Largest struct_size accepted for the versioned structs (cortiq_model_info,
// cortiq_session_options): far above any future version (they grow by a few fields), so that an
// uninitialized struct_size is an error instead of a huge read or write.
constexpr size_t kMaxStructSize = 4096;

// 64-bit hash of `size` bytes, one 8-byte word per step: h = rotl(h ^ word, 31) * odd. Each step
// is a bijection of h for a fixed word, so a change confined to one word (e.g. a flipped bit)
// always changes the result; word-wise it runs at memory speed on multi-MB KV caches, where
// byte-wise FNV-1a would not.
uint64_t StateHash(const uint8_t* data, size_t size) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio, odd
  uint64_t h = 0xcbf29ce484222325ull ^ static_cast<uint64_t>(size);
  const auto step = [&](uint64_t word) {
    h ^= word;
    h = (h << 31) | (h >> 33);
    h *= kMul;
  };
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    step(word);
  }
  if (i < size) {
    uint64_t word = 0;
    std::memcpy(&word, data + i, size - i);
    step(word);
  }
  h ^= h >> 29;
  h *= kMul;
  return h ^ (h >> 32);
}

// Model identity beyond the plan checksum (which covers header and plan but not the weights):
// FNV-1a over the weight section's size and 16 evenly spaced 4 KiB chunks of it (all of it when
// it is smaller than 64 KiB). Touches at most 16 pages, so opening a multi-GB model stays cheap,
// and two compilations of one plan with different weights almost surely differ.
uint64_t WeightDigest(const Artifact& artifact) {
  constexpr uint64_t kChunk = 4096;
  constexpr uint64_t kChunks = 16;
  const uint64_t size = artifact.header().weights_size;
  const uint8_t* weights = artifact.weight_section();
  uint64_t h = cortiq::Fnv1a64(reinterpret_cast<const uint8_t*>(&size), sizeof(size));
  if (size <= kChunk * kChunks) return cortiq::Fnv1a64(weights, size, h);
  const uint64_t stride = (size - kChunk) / (kChunks - 1);
  for (uint64_t i = 0; i < kChunks; ++i) h = cortiq::Fnv1a64(weights + i * stride, kChunk, h);
  return h;
}

}  // namespace

// An opened artifact with what the C API derives from it once. Shared (std::shared_ptr) by the
// model handle and every session, so that closing the handle first is safe.
struct CortiqModelData {
  std::unique_ptr<Artifact> artifact;
  uint64_t weight_digest = 0;
  uint32_t weight_formats = 0;  // CORTIQ_WEIGHT_* bits
  int64_t sliding_window = 0;
};

struct cortiq_model {
  std::shared_ptr<const CortiqModelData> data;
};

struct cortiq_session {
  // Which logits cortiq_session_logits returns.
  enum class Logits { kNone, kLive, kRestored };

  std::shared_ptr<const CortiqModelData> model;  // declared first: outlives `session`
  std::unique_ptr<Session> session;
  std::vector<int32_t> history;  // [ctx_size]; tokens of positions 0 .. length - 1
  // Per cache: every position in [valid_from, length) still has its rows in the cache (always 0
  // for full caches; for a ring of R rows, evaluating position p overwrote p - R, so
  // valid_from >= p - R + 1 after it).
  std::vector<int64_t> valid_from;
  Logits logits = Logits::kNone;
  std::vector<float> restored_logits;  // [vocab_size], allocated at create
  cortiq_observer_fn observer = nullptr;
  void* observer_user = nullptr;
  std::atomic<bool> busy{false};  // a call is running (CORTIQ_STATUS_BUSY for others)

  const cortiq::Plan& plan() const { return session->plan(); }
  int64_t vocab() const { return plan().model.vocab_size; }

  // Records that position `position` is about to be written (ring rows overwritten).
  void MarkWritten(int64_t position) {
    for (size_t c = 0; c < valid_from.size(); ++c) {
      if (!plan().caches[c].sliding) continue;
      valid_from[c] = std::max(valid_from[c], position - session->cache(c).rows() + 1);
    }
  }
  // First position of cache `c` that save writes: valid_from clamped to the ring's reach.
  int64_t FirstSaved(size_t c) const {
    const int64_t length = session->length();
    if (!plan().caches[c].sliding) return 0;
    // The next position reads the last window - 1 positions; `window` are saved, whatever the
    // ring size (window - 1 + batch_size rows), so a state restores into any batch size.
    const int64_t window = plan().caches[c].window;
    return std::min(length, std::max<int64_t>({valid_from[c], length - window, 0}));
  }
  void ResetState() {
    session->Reset();
    std::fill(valid_from.begin(), valid_from.end(), 0);
    logits = Logits::kNone;
  }
};

namespace {

// Holds a session's busy flag for the duration of one API call.
class SessionCall {
 public:
  explicit SessionCall(cortiq_session* session)
      : session_(session), owned_(!session->busy.exchange(true, std::memory_order_acquire)) {}
  ~SessionCall() {
    if (owned_) session_->busy.store(false, std::memory_order_release);
  }
  SessionCall(const SessionCall&) = delete;
  SessionCall& operator=(const SessionCall&) = delete;
  bool owned() const { return owned_; }

 private:
  cortiq_session* session_;
  bool owned_;
};

cortiq_status Busy(const char* function) {
  return SetError(CORTIQ_STATUS_BUSY, function,
                  "another call on this session is running (use one session per thread)");
}

// Appends raw bytes to a state buffer.
class StateWriter {
 public:
  explicit StateWriter(uint8_t* out) : out_(out) {}
  void Bytes(const void* data, size_t size) {
    if (size != 0) std::memcpy(out_ + pos_, data, size);
    pos_ += size;
  }
  void U32(uint32_t v) { Bytes(&v, sizeof(v)); }
  void U64(uint64_t v) { Bytes(&v, sizeof(v)); }
  size_t position() const { return pos_; }

 private:
  uint8_t* out_;
  size_t pos_ = 0;
};

// Bounds-checked reads from a state buffer: every read fails (returns false) past the end.
class StateReader {
 public:
  StateReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool Bytes(void* out, size_t size) {
    if (size > size_ - pos_) return false;
    if (size != 0) std::memcpy(out, data_ + pos_, size);
    pos_ += size;
    return true;
  }
  // Skips `size` bytes, returning their start (nullptr past the end).
  const uint8_t* Skip(size_t size) {
    if (size > size_ - pos_) return nullptr;
    const uint8_t* at = data_ + pos_;
    pos_ += size;
    return at;
  }
  bool U32(uint32_t* v) { return Bytes(v, sizeof(*v)); }
  bool U64(uint64_t* v) { return Bytes(v, sizeof(*v)); }
  size_t remaining() const { return size_ - pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Bytes of the session's state as save writes it.
size_t StateSize(const cortiq_session& s) {
  const int64_t length = s.session->length();
  size_t size = kStateHeaderSize;
  for (size_t c = 0; c < s.valid_from.size(); ++c) {
    const size_t count = static_cast<size_t>(length - s.FirstSaved(c));
    const size_t width = static_cast<size_t>(s.session->cache(c).row_width());
    size += kCacheHeaderSize + 2 * count * width * sizeof(float);
  }
  size += static_cast<size_t>(length) * sizeof(int32_t);
  if (s.logits != cortiq_session::Logits::kNone)
    size += static_cast<size_t>(s.vocab()) * sizeof(float);
  return size;
}

}  // namespace

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

CORTIQ_API cortiq_status cortiq_model_open(const char* path, cortiq_model** model) {
  static constexpr char kFn[] = "cortiq_model_open";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (path == nullptr) return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "path is NULL");
    if (model == nullptr) return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "model is NULL");
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
    if (!artifact.ok()) {
      cortiq_status status = CORTIQ_STATUS_IO_ERROR;
      switch (artifact.status().code()) {
        case absl::StatusCode::kNotFound: status = CORTIQ_STATUS_NOT_FOUND; break;
        case absl::StatusCode::kPermissionDenied: status = CORTIQ_STATUS_PERMISSION_DENIED; break;
        case absl::StatusCode::kInvalidArgument: status = CORTIQ_STATUS_CORRUPT_DATA; break;
        case absl::StatusCode::kFailedPrecondition:
          status = CORTIQ_STATUS_UNSUPPORTED_VERSION;
          break;
        case absl::StatusCode::kResourceExhausted: status = CORTIQ_STATUS_OUT_OF_MEMORY; break;
        default: break;
      }
      return SetError(status, kFn, std::string(artifact.status().message()));
    }
    auto data = std::make_shared<CortiqModelData>();
    data->artifact = std::move(*artifact);
    data->weight_digest = WeightDigest(*data->artifact);
    const cortiq::Plan& plan = data->artifact->plan();
    for (const cortiq::WeightEntry& w : plan.weights) {
      switch (w.format) {
        case cortiq::WeightFormat::kF32: data->weight_formats |= CORTIQ_WEIGHT_F32; break;
        case cortiq::WeightFormat::kBF16: data->weight_formats |= CORTIQ_WEIGHT_BF16; break;
        case cortiq::WeightFormat::kQ8_0: data->weight_formats |= CORTIQ_WEIGHT_Q8_0; break;
        case cortiq::WeightFormat::kQ4_0: data->weight_formats |= CORTIQ_WEIGHT_Q4_0; break;
      }
    }
    for (const cortiq::CacheEntry& c : plan.caches) {
      if (c.sliding) data->sliding_window = std::max(data->sliding_window, c.window);
    }
    *model = new cortiq_model{std::move(data)};
    return Ok();
  });
}

CORTIQ_API void cortiq_model_close(cortiq_model* model) { delete model; }

CORTIQ_API cortiq_status cortiq_model_get_info(const cortiq_model* model,
                                               cortiq_model_info* info) {
  static constexpr char kFn[] = "cortiq_model_get_info";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (model == nullptr) return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "model is NULL");
    if (info == nullptr) return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "info is NULL");
    const size_t caller_size = info->struct_size;
    if (caller_size < sizeof(cortiq_model_info) || caller_size > kMaxStructSize) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
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
    std::memset(reinterpret_cast<uint8_t*>(info) + sizeof(out), 0,
                caller_size - sizeof(out));
    return Ok();
  });
}

// ---- Sessions -------------------------------------------------------------------------------

CORTIQ_API cortiq_status cortiq_session_create(cortiq_model* model,
                                               const cortiq_session_options* options,
                                               cortiq_session** session) {
  static constexpr char kFn[] = "cortiq_session_create";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (model == nullptr) return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "model is NULL");
    if (session == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "session is NULL");
    }
    cortiq_session_options o = cortiq_session_options_default();
    if (options != nullptr) {
      // API 1.0's struct ends after `threads`.
      constexpr size_t kOldestSize = offsetof(cortiq_session_options, batch_size);
      if (options->struct_size < kOldestSize || options->struct_size > kMaxStructSize) {
        return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                        absl::StrCat("options->struct_size is ", options->struct_size,
                                     ", expected >= ", kOldestSize,
                                     " and <= ", kMaxStructSize,
                                     " (start from cortiq_session_options_default())"));
      }
      const auto* extra = reinterpret_cast<const uint8_t*>(options) + sizeof(o);
      for (size_t i = 0; options->struct_size > sizeof(o) && i < options->struct_size - sizeof(o);
           ++i) {
        if (extra[i] != 0) {
          return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                          absl::StrCat("options set a field unknown to this library (API ",
                                       CORTIQ_API_VERSION_MAJOR, ".", CORTIQ_API_VERSION_MINOR,
                                       "): byte ", sizeof(o) + i, " is not zero"));
        }
      }
      o.ctx_size = options->ctx_size;
      o.threads = options->threads;
      if (options->struct_size >= sizeof(o)) o.batch_size = options->batch_size;
    }
    if (o.batch_size < 0) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("batch_size must be >= 0 (0 = the compiled maximum), got ",
                                   o.batch_size));
    }
    if (o.threads < 0 || o.threads > 256) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("threads must be in [0, 256] (0 = 1), got ", o.threads));
    }
    cortiq::SessionOptions so;
    // 4096 as cortiq-run; anything above max_position_embeddings is clamped by Session.
    so.ctx_size = o.ctx_size == 0 ? 4096
                                  : static_cast<int64_t>(std::min<size_t>(
                                        o.ctx_size, std::numeric_limits<int64_t>::max()));
    so.threads = o.threads == 0 ? 1 : o.threads;
    so.batch_size = o.batch_size;
    const CortiqModelData& data = *model->data;
    absl::StatusOr<std::unique_ptr<Session>> created = Session::Create(*data.artifact, so);
    if (!created.ok()) {
      const cortiq_status status =
          created.status().code() == absl::StatusCode::kResourceExhausted
              ? CORTIQ_STATUS_OUT_OF_MEMORY
              : created.status().code() == absl::StatusCode::kInvalidArgument
                    ? CORTIQ_STATUS_INVALID_ARGUMENT
                    : CORTIQ_STATUS_INTERNAL;
      return SetError(status, kFn, std::string(created.status().message()));
    }
    auto s = std::make_unique<cortiq_session>();
    s->model = model->data;
    s->session = std::move(*created);
    s->history.assign(static_cast<size_t>(s->session->ctx_size()), 0);
    s->valid_from.assign(s->plan().caches.size(), 0);
    s->restored_logits.assign(static_cast<size_t>(s->vocab()), 0.0f);
    *session = s.release();
    return Ok();
  });
}

CORTIQ_API void cortiq_session_free(cortiq_session* session) { delete session; }

CORTIQ_API cortiq_status cortiq_session_eval(cortiq_session* session, const int32_t* tokens,
                                             size_t n_tokens, float* all_logits,
                                             size_t all_logits_count) {
  static constexpr char kFn[] = "cortiq_session_eval";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "session is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    if (n_tokens == 0) return Ok();
    if (tokens == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("tokens is NULL with n_tokens = ", n_tokens));
    }
    Session& s = *session->session;
    const int64_t vocab = session->vocab();
    const size_t row = static_cast<size_t>(vocab);
    if (all_logits != nullptr &&
        (n_tokens > std::numeric_limits<size_t>::max() / row ||
         all_logits_count < n_tokens * row)) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("all_logits holds ", all_logits_count, " floats; ", n_tokens,
                                   " tokens x vocab_size ", vocab, " are needed"));
    }
    for (size_t i = 0; i < n_tokens; ++i) {
      if (tokens[i] < 0 || tokens[i] >= vocab) {
        return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                        absl::StrCat("tokens[", i, "] = ", tokens[i], " is out of range [0, ",
                                     vocab, ")"));
      }
    }
    const int64_t length = s.length();
    const uint64_t room = static_cast<uint64_t>(s.ctx_size() - length);
    if (n_tokens > room) {
      return SetError(CORTIQ_STATUS_CONTEXT_FULL, kFn,
                      absl::StrCat(n_tokens, " tokens at position ", length,
                                   " exceed the context size ", s.ctx_size(), " (", room,
                                   " positions left)"));
    }
    const std::vector<cortiq::Tap>& taps = s.plan().taps;
    const size_t batch = static_cast<size_t>(s.batch_size());
    for (size_t i = 0; i < n_tokens;) {
      // A chunk of up to batch_size() tokens through the batched plan (one token: Eval).
      const size_t n = std::min(batch, n_tokens - i);
      const int64_t first = s.length();
      const bool last_chunk = i + n == n_tokens;
      session->logits = cortiq_session::Logits::kNone;
      for (size_t t = 0; t < n; ++t) session->MarkWritten(first + static_cast<int64_t>(t));
      absl::Status status = s.EvalBatch(absl::MakeConstSpan(tokens + i, n),
                                        all_logits != nullptr ? cortiq::BatchLogits::kAll
                                        : last_chunk          ? cortiq::BatchLogits::kLast
                                                              : cortiq::BatchLogits::kNone);
      // Session::EvalBatch checks the logits it computes (DataLoss for NaN/Inf, the failing
      // row and those after it not consumed; with kAll the rows before it are kept).
      const size_t done = status.ok() ? n : static_cast<size_t>(s.length() - first);
      for (size_t t = 0; t < done; ++t) {
        const int64_t position = first + static_cast<int64_t>(t);
        session->history[static_cast<size_t>(position)] = tokens[i + t];
        if (all_logits != nullptr) {
          const absl::Span<const float> row_logits = s.batch_logits(t);
          std::memcpy(all_logits + (i + t) * row, row_logits.data(), row * sizeof(float));
        }
        if (session->observer != nullptr) {
          for (size_t k = 0; k < taps.size(); ++k) {
            const absl::Span<const float> data = s.batch_tap(k, t);
            session->observer(session->observer_user, taps[k].name.c_str(), position,
                              data.data(), data.size());
          }
        }
      }
      if (!status.ok()) {
        return SetError(status.code() == absl::StatusCode::kDataLoss
                            ? CORTIQ_STATUS_NUMERIC_ERROR
                            : CORTIQ_STATUS_INTERNAL,
                        kFn,
                        absl::StrCat("tokens[", i + done, "] (position ",
                                     first + static_cast<int64_t>(done), "): ",
                                     status.message(), "; ", i + done,
                                     " tokens of the call were evaluated"));
      }
      i += n;
    }
    session->logits = cortiq_session::Logits::kLive;
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_logits(cortiq_session* session, float* out,
                                               size_t count) {
  static constexpr char kFn[] = "cortiq_session_logits";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "session is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    if (out == nullptr) return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "out is NULL");
    const size_t vocab = static_cast<size_t>(session->vocab());
    if (count < vocab) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("out holds ", count, " floats, vocab_size is ", vocab));
    }
    switch (session->logits) {
      case cortiq_session::Logits::kNone:
        return SetError(CORTIQ_STATUS_FAILED_PRECONDITION, kFn,
                        "no logits: nothing evaluated since the session was created, reset, "
                        "truncated or a failed eval");
      case cortiq_session::Logits::kLive:
        std::memcpy(out, session->session->logits().data(), vocab * sizeof(float));
        break;
      case cortiq_session::Logits::kRestored:
        std::memcpy(out, session->restored_logits.data(), vocab * sizeof(float));
        break;
    }
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_length(cortiq_session* session, size_t* length) {
  static constexpr char kFn[] = "cortiq_session_length";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr || length == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      session == nullptr ? "session is NULL" : "length is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    *length = static_cast<size_t>(session->session->length());
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_context_size(cortiq_session* session,
                                                     size_t* ctx_size) {
  static constexpr char kFn[] = "cortiq_session_context_size";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr || ctx_size == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      session == nullptr ? "session is NULL" : "ctx_size is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    *ctx_size = static_cast<size_t>(session->session->ctx_size());
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_reset(cortiq_session* session) {
  static constexpr char kFn[] = "cortiq_session_reset";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "session is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    session->ResetState();
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_truncate(cortiq_session* session, size_t length) {
  static constexpr char kFn[] = "cortiq_session_truncate";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "session is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    Session& s = *session->session;
    const int64_t current = s.length();
    if (length > static_cast<uint64_t>(current)) {
      return SetError(CORTIQ_STATUS_OUT_OF_RANGE, kFn,
                      absl::StrCat("length ", length, " is beyond the session's length ",
                                   current));
    }
    const auto target = static_cast<int64_t>(length);
    if (target == current) return Ok();
    if (target == 0) {  // a reset: no row is needed, and none is kept
      session->ResetState();
      return Ok();
    }
    // The next position, `target`, reads positions max(0, target - W + 1) .. target - 1 of a
    // sliding window W (held in a ring of W - 1 + batch_size rows): are they all still there?
    bool recompute = false;
    for (size_t c = 0; c < session->valid_from.size(); ++c) {
      if (!s.plan().caches[c].sliding) continue;  // full caches keep every position
      const int64_t needed_from =
          std::max<int64_t>(0, target - s.plan().caches[c].window + 1);
      if (session->valid_from[c] > needed_from) recompute = true;
    }
    session->logits = cortiq_session::Logits::kNone;
    if (!recompute) {
      s.SetLength(target);
      return Ok();
    }
    // Recompute every cache from the token history. Later positions depend on every earlier
    // one through the full-attention layers and the stacked windows, so this starts at 0.
    session->ResetState();
    for (int64_t p = 0; p < target;) {
      const int64_t n = std::min(s.batch_size(), target - p);
      for (int64_t t = 0; t < n; ++t) session->MarkWritten(p + t);
      const absl::Status status = s.EvalBatch(
          absl::MakeConstSpan(session->history.data() + p, static_cast<size_t>(n)),
          cortiq::BatchLogits::kNone);
      if (!status.ok()) {  // unreachable: ids were checked and no logits are computed
        session->ResetState();
        return SetError(CORTIQ_STATUS_INTERNAL, kFn,
                        absl::StrCat("re-evaluating positions ", p, "..", p + n - 1, ": ",
                                     status.message(), " (the session was reset)"));
      }
      p += n;
    }
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_state_size(cortiq_session* session, size_t* size) {
  static constexpr char kFn[] = "cortiq_session_state_size";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr || size == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      session == nullptr ? "session is NULL" : "size is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    *size = StateSize(*session);
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_save(cortiq_session* session, void* buf, size_t size) {
  static constexpr char kFn[] = "cortiq_session_save";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr || buf == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      session == nullptr ? "session is NULL" : "buf is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    const size_t total = StateSize(*session);
    if (size < total) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("buffer of ", size, " bytes; the state needs ", total,
                                   " (cortiq_session_state_size)"));
    }
    Session& s = *session->session;
    const CortiqModelData& model = *session->model;
    const int64_t length = s.length();
    const bool has_logits = session->logits != cortiq_session::Logits::kNone;
    auto* out = static_cast<uint8_t*>(buf);
    StateWriter w(out);
    w.Bytes(kStateMagic, sizeof(kStateMagic));
    w.U64(0);  // checksum, filled in last
    w.U32(kStateVersion);
    w.U32(kByteOrderMark);
    w.U64(total);
    w.U64(model.artifact->header().checksum);
    w.U64(model.weight_digest);
    w.U64(static_cast<uint64_t>(session->vocab()));
    w.U64(session->valid_from.size());
    w.U64(static_cast<uint64_t>(length));
    w.U64(has_logits ? 1 : 0);
    for (size_t c = 0; c < session->valid_from.size(); ++c) {
      const cortiq::KvCache& cache = s.cache(c);
      const int64_t first = session->FirstSaved(c);
      const size_t width = static_cast<size_t>(cache.row_width());
      w.U64(static_cast<uint64_t>(first));
      w.U64(static_cast<uint64_t>(length - first));
      w.U64(width);
      for (const float* base : {cache.keys(), cache.values()}) {
        for (int64_t p = first; p < length; ++p) {
          w.Bytes(base + static_cast<size_t>(cache.RowOf(p)) * width, width * sizeof(float));
        }
      }
    }
    w.Bytes(session->history.data(), static_cast<size_t>(length) * sizeof(int32_t));
    if (has_logits) {
      const float* logits = session->logits == cortiq_session::Logits::kLive
                                ? s.logits().data()
                                : session->restored_logits.data();
      w.Bytes(logits, static_cast<size_t>(session->vocab()) * sizeof(float));
    }
    if (w.position() != total) {
      return SetError(CORTIQ_STATUS_INTERNAL, kFn,
                      absl::StrCat("wrote ", w.position(), " bytes, expected ", total));
    }
    const uint64_t checksum = StateHash(out + 16, total - 16);
    std::memcpy(out + 8, &checksum, sizeof(checksum));
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_restore(cortiq_session* session, const void* buf,
                                                size_t size) {
  static constexpr char kFn[] = "cortiq_session_restore";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr || buf == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      session == nullptr ? "session is NULL" : "buf is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    const auto corrupt = [&](const std::string& what) {
      return SetError(CORTIQ_STATUS_CORRUPT_DATA, kFn, "corrupt session state: " + what);
    };
    const auto* data = static_cast<const uint8_t*>(buf);
    if (size < kStateHeaderSize) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("buffer of ", size, " bytes is smaller than the ",
                                   kStateHeaderSize, "-byte state header"));
    }
    StateReader r(data, size);
    char magic[8];
    uint64_t checksum = 0, total = 0, plan_checksum = 0, digest = 0, vocab = 0, num_caches = 0,
             length = 0, has_logits = 0;
    uint32_t version = 0, bom = 0;
    r.Bytes(magic, sizeof(magic));
    r.U64(&checksum);
    r.U32(&version);
    r.U32(&bom);
    r.U64(&total);
    r.U64(&plan_checksum);
    r.U64(&digest);
    r.U64(&vocab);
    r.U64(&num_caches);
    r.U64(&length);
    r.U64(&has_logits);
    if (std::memcmp(magic, kStateMagic, sizeof(magic)) != 0) {
      return SetError(CORTIQ_STATUS_CORRUPT_DATA, kFn,
                      "not a cortiq session state (bad magic)");
    }
    if (bom != kByteOrderMark) {
      return SetError(CORTIQ_STATUS_UNSUPPORTED_VERSION, kFn,
                      "the state was saved on a host of another byte order");
    }
    if (version != kStateVersion) {
      return SetError(version > kStateVersion ? CORTIQ_STATUS_UNSUPPORTED_VERSION
                                              : CORTIQ_STATUS_CORRUPT_DATA,
                      kFn,
                      absl::StrCat("state format version ", version, "; this library reads ",
                                   kStateVersion));
    }
    if (total != size) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn,
                      absl::StrCat("the state records ", total, " bytes, the buffer has ", size,
                                   " (pass exactly the saved size)"));
    }
    if (StateHash(data + 16, size - 16) != checksum) return corrupt("checksum mismatch");

    Session& s = *session->session;
    const CortiqModelData& model = *session->model;
    if (plan_checksum != model.artifact->header().checksum || digest != model.weight_digest ||
        vocab != static_cast<uint64_t>(session->vocab()) ||
        num_caches != session->valid_from.size()) {
      return SetError(CORTIQ_STATUS_MODEL_MISMATCH, kFn,
                      "the state was saved from a different model (plan checksum, weight "
                      "digest, vocab size or cache count differ)");
    }
    if (length > static_cast<uint64_t>(s.ctx_size())) {
      return SetError(CORTIQ_STATUS_OUT_OF_RANGE, kFn,
                      absl::StrCat("the state holds ", length,
                                   " positions; this session's context size is ",
                                   s.ctx_size()));
    }
    if (has_logits > 1) return corrupt("logits flag is not 0/1");
    // Check every cache record before changing anything.
    struct CacheRecord {
      int64_t first = 0, count = 0;
      const uint8_t* keys = nullptr;
      const uint8_t* values = nullptr;
    };
    std::vector<CacheRecord> records(num_caches);
    const auto n = static_cast<int64_t>(length);
    for (size_t c = 0; c < num_caches; ++c) {
      const cortiq::KvCache& cache = s.cache(c);
      uint64_t first = 0, count = 0, width = 0;
      if (!r.U64(&first) || !r.U64(&count) || !r.U64(&width)) {
        return corrupt(absl::StrCat("cache ", c, ": truncated"));
      }
      const bool sliding = s.plan().caches[c].sliding;
      // The rows the next position reads (all of them for a full cache) must be present, and
      // fit this session's storage.
      const int64_t rows = cache.rows();
      const uint64_t needed_from =
          sliding ? static_cast<uint64_t>(
                        std::max<int64_t>(0, n - s.plan().caches[c].window + 1))
                  : 0;
      if (width != static_cast<uint64_t>(cache.row_width()) || first > length ||
          count != length - first || first > needed_from || count > static_cast<uint64_t>(rows)) {
        return corrupt(absl::StrCat("cache ", c, ": positions ", first, " + ", count,
                                    " of width ", width, " do not match a state of length ",
                                    length, " (rows ", rows, ", width ", cache.row_width(),
                                    ")"));
      }
      const size_t bytes = static_cast<size_t>(count * width) * sizeof(float);
      records[c].first = static_cast<int64_t>(first);
      records[c].count = static_cast<int64_t>(count);
      records[c].keys = r.Skip(bytes);
      records[c].values = r.Skip(bytes);
      if (records[c].keys == nullptr || records[c].values == nullptr) {
        return corrupt(absl::StrCat("cache ", c, ": truncated"));
      }
    }
    const uint8_t* tokens = r.Skip(static_cast<size_t>(length) * sizeof(int32_t));
    const uint8_t* logits =
        has_logits ? r.Skip(static_cast<size_t>(vocab) * sizeof(float)) : nullptr;
    if (tokens == nullptr || (has_logits && logits == nullptr) || r.remaining() != 0) {
      return corrupt("sizes do not add up to the recorded total");
    }
    for (uint64_t p = 0; p < length; ++p) {
      int32_t token;
      std::memcpy(&token, tokens + p * sizeof(int32_t), sizeof(token));
      if (token < 0 || static_cast<uint64_t>(token) >= vocab) {
        return corrupt(absl::StrCat("token ", token, " at position ", p,
                                    " is out of range"));
      }
    }

    // Valid: apply.
    for (size_t c = 0; c < num_caches; ++c) {
      cortiq::KvCache& cache = s.cache(c);
      const size_t width = static_cast<size_t>(cache.row_width());
      const size_t row_bytes = width * sizeof(float);
      const CacheRecord& rec = records[c];
      for (int64_t i = 0; i < rec.count; ++i) {
        const size_t row = static_cast<size_t>(cache.RowOf(rec.first + i));
        std::memcpy(cache.mutable_keys() + row * width, rec.keys + i * row_bytes, row_bytes);
        std::memcpy(cache.mutable_values() + row * width, rec.values + i * row_bytes,
                    row_bytes);
      }
      session->valid_from[c] = rec.first;
    }
    if (length != 0) {
      std::memcpy(session->history.data(), tokens, static_cast<size_t>(length) * sizeof(int32_t));
    }
    s.SetLength(n);
    if (has_logits) {
      std::memcpy(session->restored_logits.data(), logits,
                  static_cast<size_t>(vocab) * sizeof(float));
      session->logits = cortiq_session::Logits::kRestored;
    } else {
      session->logits = cortiq_session::Logits::kNone;
    }
    return Ok();
  });
}

CORTIQ_API cortiq_status cortiq_session_set_observer(cortiq_session* session,
                                                     cortiq_observer_fn fn, void* user_data) {
  static constexpr char kFn[] = "cortiq_session_set_observer";
  return Guarded(kFn, [&]() -> cortiq_status {
    if (session == nullptr) {
      return SetError(CORTIQ_STATUS_INVALID_ARGUMENT, kFn, "session is NULL");
    }
    SessionCall call(session);
    if (!call.owned()) return Busy(kFn);
    session->observer = fn;
    session->observer_user = fn != nullptr ? user_data : nullptr;
    return Ok();
  });
}

}  // extern "C"
