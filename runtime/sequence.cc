// Sequence: chunked evaluation with observation, the token history and ring validity behind
// Truncate, and the saved-state format of Save/Restore (see sequence.h).
#include "runtime/sequence.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// --- Saved-state format (Save / Restore) ----------------------------------------------------
//
// Host byte order; every field is read with memcpy (no alignment needed). Layout:
//   [0, 8)    magic "CQSTATE\0"
//   [8, 16)   u64 checksum: StateHash of bytes [16, total_size)
//   [16, 20)  u32 version (kStateVersion)
//   [20, 24)  u32 byte-order mark 0x01020304 as written by the host
//   [24, 32)  u64 total_size: bytes of the whole state
//   [32, 40)  u64 the artifact's plan checksum (ModelIdentity::plan_checksum)
//   [40, 48)  u64 the model's weight digest (ModelIdentity::weight_digest)
//   [48, 56)  u64 vocab_size
//   [56, 64)  u64 number of KV caches
//   [64, 72)  u64 length (positions)
//   [72, 80)  u64 1 if the last logits follow at the end, else 0
//   then per cache, in plan order: u64 first position, u64 count, u64 row_width, (version 2:)
//     u64 KV type (KvType: 0 f32, 1 f16), then keys and values of positions first .. first +
//     count - 1, each [count, row_width] elements of that type in position order (independent
//     of the saving session's ring layout and context size); version 1 has no KV type (f32)
//   then the token history: length i32
//   then, if present, the last logits: vocab_size f32.
constexpr char kStateMagic[8] = {'C', 'Q', 'S', 'T', 'A', 'T', 'E', '\0'};
// 2: the per-cache KV type (SessionOptions::kv_type); version 1 states (f32) are read too.
constexpr uint32_t kStateVersion = 2;
constexpr uint32_t kByteOrderMark = 0x01020304u;
constexpr size_t kStateHeaderSize = 80;
constexpr size_t kCacheHeaderSize = 32;

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
  explicit StateReader(absl::Span<const uint8_t> data) : data_(data) {}
  bool Bytes(void* out, size_t size) {
    if (size > data_.size() - pos_) return false;
    if (size != 0) std::memcpy(out, data_.data() + pos_, size);
    pos_ += size;
    return true;
  }
  // Skips `size` bytes, returning their start (nullptr past the end).
  const uint8_t* Skip(size_t size) {
    if (size > data_.size() - pos_) return nullptr;
    const uint8_t* at = data_.data() + pos_;
    pos_ += size;
    return at;
  }
  bool U32(uint32_t* v) { return Bytes(v, sizeof(*v)); }
  bool U64(uint64_t* v) { return Bytes(v, sizeof(*v)); }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  absl::Span<const uint8_t> data_;
  size_t pos_ = 0;
};

absl::Status Corrupt(const std::string& what) {
  return absl::DataLossError("corrupt session state: " + what);
}

}  // namespace

ModelIdentity IdentifyModel(const Artifact& artifact) {
  constexpr uint64_t kChunk = 4096;
  constexpr uint64_t kChunks = 16;
  const uint64_t size = artifact.header().weights_size;
  const uint8_t* weights = artifact.weight_section();
  uint64_t h = Fnv1a64(reinterpret_cast<const uint8_t*>(&size), sizeof(size));
  if (size <= kChunk * kChunks) {
    h = Fnv1a64(weights, size, h);
  } else {
    const uint64_t stride = (size - kChunk) / (kChunks - 1);
    for (uint64_t i = 0; i < kChunks; ++i) h = Fnv1a64(weights + i * stride, kChunk, h);
  }
  return ModelIdentity{artifact.header().checksum, h};
}

absl::StatusOr<std::unique_ptr<Sequence>> Sequence::Create(const Artifact& artifact,
                                                           SessionOptions options) {
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(artifact, options));
  return Create(std::move(session), IdentifyModel(artifact));
}

absl::StatusOr<std::unique_ptr<Sequence>> Sequence::Create(std::unique_ptr<Session> session,
                                                           ModelIdentity identity) {
  if (session == nullptr) return absl::InvalidArgumentError("Sequence: the session is null");
  if (session->length() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sequence: the session already holds ", session->length(),
        " positions (its history is unknown): create the sequence on a new or reset session"));
  }
  std::unique_ptr<Sequence> sequence(new Sequence());
  const size_t ctx = static_cast<size_t>(session->ctx_size());
  const size_t vocab = static_cast<size_t>(session->plan().model.vocab_size);
  sequence->history_.reset(new (std::nothrow) int32_t[ctx]);
  sequence->restored_logits_.reset(new (std::nothrow) float[vocab]);
  if (sequence->history_ == nullptr || sequence->restored_logits_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate the token history (", ctx, " ids) and logits (", vocab, " floats)"));
  }
  sequence->valid_from_.assign(session->plan().caches.size(), 0);
  sequence->session_ = std::move(session);
  sequence->identity_ = identity;
  return sequence;
}

absl::Status Sequence::CheckTokens(absl::Span<const int32_t> tokens) const {
  return session_->CheckTokens(tokens);
}

void Sequence::MarkWritten(int64_t first, int64_t count) {
  if (count <= 0) return;
  const int64_t last = first + count - 1;
  for (size_t c = 0; c < valid_from_.size(); ++c) {
    if (!plan().caches[c].sliding) continue;
    valid_from_[c] = std::max(valid_from_[c], last - session_->cache(c).rows() + 1);
  }
}

int64_t Sequence::FirstSaved(size_t c) const {
  if (!plan().caches[c].sliding) return 0;
  // The next position reads the last window - 1 positions; `window` are saved, whatever the ring
  // size (window - 1 + batch_size rows), so a state restores into any batch size.
  const int64_t n = length();
  const int64_t window = plan().caches[c].window;
  return std::min(n, std::max<int64_t>({valid_from_[c], n - window, 0}));
}

void Sequence::Reset() {
  session_->Reset();
  std::fill(valid_from_.begin(), valid_from_.end(), 0);
  logits_state_ = LogitsState::kNone;
}

size_t PromptChunkRows(size_t remaining, size_t max_rows) {
  const size_t n = std::min(max_rows, remaining);
  return remaining - n == 1 && n >= 3 ? n - 1 : n;
}

absl::Status Sequence::Eval(absl::Span<const int32_t> tokens, BatchLogits logits) {
  return EvalChunks(tokens, logits, nullptr);
}

absl::Status Sequence::Eval(absl::Span<const int32_t> tokens, BatchLogits logits,
                            TokenObserver observer) {
  return EvalChunks(tokens, logits, &observer);
}

absl::Status Sequence::EvalChunks(absl::Span<const int32_t> tokens, BatchLogits logits,
                                  const TokenObserver* observer) {
  if (tokens.empty()) return absl::OkStatus();
  CORTIQ_RETURN_IF_ERROR(session_->CheckTokens(tokens));
  const size_t n_tokens = tokens.size();
  const size_t batch = static_cast<size_t>(session_->batch_size());
  logits_state_ = LogitsState::kNone;
  for (size_t i = 0; i < n_tokens;) {
    const size_t n = PromptChunkRows(n_tokens - i, batch);
    const bool last_chunk = i + n == n_tokens;
    const BatchLogits which = logits == BatchLogits::kAll                 ? BatchLogits::kAll
                              : last_chunk && logits == BatchLogits::kLast ? BatchLogits::kLast
                                                                          : BatchLogits::kNone;
    const int64_t first = length();
    MarkWritten(first, static_cast<int64_t>(n));
    // Ids and room were checked above, for the whole input.
    const absl::Status status = session_->Run(tokens.subspan(i, n), which);
    // On DataLoss the session kept the rows before the failing one (Session::EvalBatch).
    const size_t done = status.ok() ? n : static_cast<size_t>(length() - first);
    std::copy(tokens.begin() + i, tokens.begin() + i + done, history_.get() + first);
    if (observer != nullptr) {
      for (size_t t = 0; t < done; ++t) {
        const bool has_logits =
            which == BatchLogits::kAll || (which == BatchLogits::kLast && t + 1 == n);
        const EvaluatedToken token(session_.get(), t, i + t, first + static_cast<int64_t>(t),
                                   tokens[i + t],
                                   has_logits ? session_->batch_logits(t)
                                              : absl::Span<const float>());
        CORTIQ_RETURN_IF_ERROR((*observer)(token));
      }
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("tokens[", i + done, "] (position ",
                                       first + static_cast<int64_t>(done), "): ", status.message(),
                                       "; ", i + done, " tokens of the call were evaluated"));
    }
    i += n;
  }
  if (logits != BatchLogits::kNone) logits_state_ = LogitsState::kLive;
  return absl::OkStatus();
}

absl::Status Sequence::EvalAcross(absl::Span<Sequence* const> sequences,
                                  absl::Span<const int32_t> tokens) {
  // The sessions of the rows, on the stack for the usual few slots.
  absl::InlinedVector<Session*, 16> sessions(sequences.size(), nullptr);
  absl::InlinedVector<int64_t, 16> before(sequences.size(), 0);
  for (size_t i = 0; i < sequences.size(); ++i) {
    if (sequences[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("sequences[", i, "] is null"));
    }
    sessions[i] = sequences[i]->session_.get();
    before[i] = sequences[i]->length();
  }
  // Session::EvalAcross checks everything before it evaluates; MarkWritten only narrows the
  // valid ranges of the rows being written, so it is done once the call has succeeded or failed.
  const absl::Status status = Session::EvalAcross(absl::MakeConstSpan(sessions), tokens);
  if (!status.ok() && status.code() != absl::StatusCode::kDataLoss) return status;
  for (size_t i = 0; i < sequences.size(); ++i) {
    Sequence& s = *sequences[i];
    // A failed row's KV rows were written at its position (now beyond length()), as for a
    // successful one: its ring lost the same row either way.
    s.MarkWritten(before[i], 1);
    if (s.length() == before[i]) {
      s.logits_state_ = LogitsState::kNone;
      continue;
    }
    s.history_[static_cast<size_t>(before[i])] = tokens[i];
    s.logits_state_ = LogitsState::kLive;
  }
  return status;
}

absl::StatusOr<absl::Span<const float>> Sequence::logits() const {
  switch (logits_state_) {
    case LogitsState::kLive:
      return session_->logits();
    case LogitsState::kRestored:
      return absl::MakeConstSpan(restored_logits_.get(),
                                 static_cast<size_t>(plan().model.vocab_size));
    case LogitsState::kNone:
      break;
  }
  return absl::FailedPreconditionError(
      "no logits: nothing evaluated with logits since the session was created, reset, "
      "truncated or a failed eval");
}

absl::Status Sequence::Truncate(int64_t length) {
  const int64_t current = this->length();
  if (length < 0 || length > current) {
    return absl::OutOfRangeError(
        absl::StrCat("length ", length, " is beyond the session's length ", current));
  }
  if (length == current) return absl::OkStatus();
  if (length == 0) {  // a reset: no row is needed, and none is kept
    Reset();
    return absl::OkStatus();
  }
  logits_state_ = LogitsState::kNone;
  // The next position, `length`, reads positions max(0, length - W + 1) .. length - 1 of a
  // sliding window W (held in a ring of W - 1 + batch_size rows): are they all still there?
  bool recompute = false;
  for (size_t c = 0; c < valid_from_.size(); ++c) {
    if (!plan().caches[c].sliding) continue;  // full caches keep every position
    const int64_t needed_from = std::max<int64_t>(0, length - plan().caches[c].window + 1);
    if (valid_from_[c] > needed_from) recompute = true;
  }
  if (!recompute) {
    session_->SetLength(length);
    return absl::OkStatus();
  }
  // Recompute every cache from the token history. Later positions depend on every earlier one
  // through the full-attention layers and the stacked windows, so this starts at 0. The history
  // of positions < length is not touched by re-evaluating them.
  session_->Reset();
  std::fill(valid_from_.begin(), valid_from_.end(), 0);
  const int64_t batch = session_->batch_size();
  for (int64_t p = 0; p < length;) {
    const int64_t n = std::min(batch, length - p);
    MarkWritten(p, n);
    const absl::Status status = session_->Run(
        absl::MakeConstSpan(history_.get() + p, static_cast<size_t>(n)), BatchLogits::kNone);
    if (!status.ok()) {  // unreachable: ids were checked and no logits are computed
      Reset();
      return absl::InternalError(absl::StrCat("re-evaluating positions ", p, "..", p + n - 1,
                                              ": ", status.message(),
                                              " (the session was reset)"));
    }
    p += n;
  }
  return absl::OkStatus();
}

size_t Sequence::StateSize() const {
  const int64_t n = length();
  size_t size = kStateHeaderSize;
  for (size_t c = 0; c < valid_from_.size(); ++c) {
    const size_t count = static_cast<size_t>(n - FirstSaved(c));
    size += kCacheHeaderSize + 2 * count * session_->cache(c).row_bytes();
  }
  size += static_cast<size_t>(n) * sizeof(int32_t);
  if (logits_state_ != LogitsState::kNone) {
    size += static_cast<size_t>(plan().model.vocab_size) * sizeof(float);
  }
  return size;
}

absl::Status Sequence::Save(absl::Span<uint8_t> out) const {
  const size_t total = StateSize();
  if (out.size() < total) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer of ", out.size(), " bytes; the state needs ", total));
  }
  const int64_t n = length();
  const uint64_t vocab = static_cast<uint64_t>(plan().model.vocab_size);
  const bool has_logits = logits_state_ != LogitsState::kNone;
  StateWriter w(out.data());
  w.Bytes(kStateMagic, sizeof(kStateMagic));
  w.U64(0);  // checksum, filled in last
  w.U32(kStateVersion);
  w.U32(kByteOrderMark);
  w.U64(total);
  w.U64(identity_.plan_checksum);
  w.U64(identity_.weight_digest);
  w.U64(vocab);
  w.U64(valid_from_.size());
  w.U64(static_cast<uint64_t>(n));
  w.U64(has_logits ? 1 : 0);
  for (size_t c = 0; c < valid_from_.size(); ++c) {
    const KvCache& cache = session_->cache(c);
    const int64_t first = FirstSaved(c);
    const size_t width = static_cast<size_t>(cache.row_width());
    w.U64(static_cast<uint64_t>(first));
    w.U64(static_cast<uint64_t>(n - first));
    w.U64(width);
    w.U64(static_cast<uint64_t>(cache.type()));
    for (const uint8_t* base : {cache.key_bytes(), cache.value_bytes()}) {
      for (int64_t p = first; p < n; ++p) {
        w.Bytes(base + static_cast<size_t>(cache.RowOf(p)) * cache.row_bytes(),
                cache.row_bytes());
      }
    }
  }
  w.Bytes(history_.get(), static_cast<size_t>(n) * sizeof(int32_t));
  if (has_logits) {
    const float* logits = logits_state_ == LogitsState::kLive ? session_->logits().data()
                                                              : restored_logits_.get();
    w.Bytes(logits, static_cast<size_t>(vocab) * sizeof(float));
  }
  if (w.position() != total) {
    return absl::InternalError(absl::StrCat("wrote ", w.position(), " bytes, expected ", total));
  }
  const uint64_t checksum = StateHash(out.data() + 16, total - 16);
  std::memcpy(out.data() + 8, &checksum, sizeof(checksum));
  return absl::OkStatus();
}

absl::Status Sequence::Restore(absl::Span<const uint8_t> state) {
  const size_t size = state.size();
  if (size < kStateHeaderSize) {
    return absl::InvalidArgumentError(absl::StrCat("buffer of ", size,
                                                   " bytes is smaller than the ",
                                                   kStateHeaderSize, "-byte state header"));
  }
  StateReader r(state);
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
    return absl::DataLossError("not a cortiq session state (bad magic)");
  }
  if (bom != kByteOrderMark) {
    return absl::UnimplementedError("the state was saved on a host of another byte order");
  }
  if (version != kStateVersion && version != 1) {
    const std::string message = absl::StrCat("state format version ", version,
                                             "; this library reads 1 and ", kStateVersion);
    return version > kStateVersion ? absl::UnimplementedError(message)
                                   : absl::DataLossError(message);
  }
  if (total != size) {
    return absl::InvalidArgumentError(absl::StrCat("the state records ", total,
                                                   " bytes, the buffer has ", size,
                                                   " (pass exactly the saved size)"));
  }
  if (StateHash(state.data() + 16, size - 16) != checksum) return Corrupt("checksum mismatch");

  if (plan_checksum != identity_.plan_checksum || digest != identity_.weight_digest ||
      vocab != static_cast<uint64_t>(plan().model.vocab_size) ||
      num_caches != valid_from_.size()) {
    return absl::FailedPreconditionError(
        "the state was saved from a different model (plan checksum, weight digest, vocab size "
        "or cache count differ)");
  }
  if (length > static_cast<uint64_t>(ctx_size())) {
    return absl::OutOfRangeError(absl::StrCat("the state holds ", length,
                                              " positions; this session's context size is ",
                                              ctx_size()));
  }
  if (has_logits > 1) return Corrupt("logits flag is not 0/1");
  // Check every cache record before changing anything.
  struct CacheRecord {
    int64_t first = 0, count = 0;
    const uint8_t* keys = nullptr;
    const uint8_t* values = nullptr;
  };
  std::vector<CacheRecord> records(num_caches);
  const auto n = static_cast<int64_t>(length);
  for (size_t c = 0; c < num_caches; ++c) {
    const KvCache& cache = session_->cache(c);
    uint64_t first = 0, count = 0, width = 0;
    if (!r.U64(&first) || !r.U64(&count) || !r.U64(&width)) {
      return Corrupt(absl::StrCat("cache ", c, ": truncated"));
    }
    const CacheEntry& entry = plan().caches[c];
    // The rows the next position reads (all of them for a full cache) must be present, and fit
    // this session's storage.
    const int64_t rows = cache.rows();
    const uint64_t needed_from =
        entry.sliding ? static_cast<uint64_t>(std::max<int64_t>(0, n - entry.window + 1)) : 0;
    if (width != static_cast<uint64_t>(cache.row_width()) || first > length ||
        count != length - first || first > needed_from || count > static_cast<uint64_t>(rows)) {
      return Corrupt(absl::StrCat("cache ", c, ": positions ", first, " + ", count, " of width ",
                                  width, " do not match a state of length ", length, " (rows ",
                                  rows, ", width ", cache.row_width(), ")"));
    }
    uint64_t type = static_cast<uint64_t>(KvType::kF32);
    if (version >= 2 && !r.U64(&type)) return Corrupt(absl::StrCat("cache ", c, ": truncated"));
    if (type != static_cast<uint64_t>(KvType::kF32) && type != static_cast<uint64_t>(KvType::kF16)) {
      return Corrupt(absl::StrCat("cache ", c, ": unknown KV type ", type));
    }
    if (type != static_cast<uint64_t>(cache.type())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "state saved with ", KvTypeName(static_cast<KvType>(type)),
          " KV caches; this session's are ", KvTypeName(cache.type()), " (--kv-type)"));
    }
    const size_t bytes = static_cast<size_t>(count) * cache.row_bytes();
    records[c].first = static_cast<int64_t>(first);
    records[c].count = static_cast<int64_t>(count);
    records[c].keys = r.Skip(bytes);
    records[c].values = r.Skip(bytes);
    if (records[c].keys == nullptr || records[c].values == nullptr) {
      return Corrupt(absl::StrCat("cache ", c, ": truncated"));
    }
  }
  const uint8_t* tokens = r.Skip(static_cast<size_t>(length) * sizeof(int32_t));
  const uint8_t* logits =
      has_logits ? r.Skip(static_cast<size_t>(vocab) * sizeof(float)) : nullptr;
  if (tokens == nullptr || (has_logits && logits == nullptr) || r.remaining() != 0) {
    return Corrupt("sizes do not add up to the recorded total");
  }
  for (uint64_t p = 0; p < length; ++p) {
    int32_t token;
    std::memcpy(&token, tokens + p * sizeof(int32_t), sizeof(token));
    if (token < 0 || static_cast<uint64_t>(token) >= vocab) {
      return Corrupt(absl::StrCat("token ", token, " at position ", p, " is out of range"));
    }
  }

  // Valid: apply.
  for (size_t c = 0; c < num_caches; ++c) {
    KvCache& cache = session_->cache(c);
    const size_t row_bytes = cache.row_bytes();
    const CacheRecord& rec = records[c];
    for (int64_t i = 0; i < rec.count; ++i) {
      const size_t row = static_cast<size_t>(cache.RowOf(rec.first + i));
      std::memcpy(cache.mutable_key_bytes() + row * row_bytes, rec.keys + i * row_bytes,
                  row_bytes);
      std::memcpy(cache.mutable_value_bytes() + row * row_bytes, rec.values + i * row_bytes,
                  row_bytes);
    }
    valid_from_[c] = rec.first;
  }
  if (length != 0) {
    std::memcpy(history_.get(), tokens, static_cast<size_t>(length) * sizeof(int32_t));
  }
  session_->SetLength(n);
  if (has_logits) {
    std::memcpy(restored_logits_.get(), logits, static_cast<size_t>(vocab) * sizeof(float));
    logits_state_ = LogitsState::kRestored;
  } else {
    logits_state_ = LogitsState::kNone;
  }
  return absl::OkStatus();
}

}  // namespace cortiq
