// The artifact file: header encoding, checksum, the Plan's binary encoding with
// a bounds-checked decoder, the mmap-based writer and the validating reader
// (Artifact::Open).
#include "runtime/artifact.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/file_checks.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {



// ---------------------------------------------------------------------------------------------
// Little-endian scalar encoding.

void StoreLE(uint64_t value, size_t bytes, uint8_t* out) {
  for (size_t i = 0; i < bytes; ++i)
    out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t LoadLE(const uint8_t* in, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

// Appends little-endian values to a byte string.
class Writer {
 public:
  void U8(uint8_t v) { Put(v, 1); }
  void U32(uint32_t v) { Put(v, 4); }
  void I32(int32_t v) { Put(static_cast<uint32_t>(v), 4); }
  void U64(uint64_t v) { Put(v, 8); }
  void I64(int64_t v) { Put(static_cast<uint64_t>(v), 8); }
  void F64(double v) {
    uint64_t bits;
    static_assert(sizeof(bits) == sizeof(v));
    std::memcpy(&bits, &v, sizeof(bits));
    Put(bits, 8);
  }
  void Str(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string Take() { return std::move(out_); }

 private:
  void Put(uint64_t v, size_t bytes) {
    uint8_t buf[8];
    StoreLE(v, bytes, buf);
    out_.append(reinterpret_cast<const char*>(buf), bytes);
  }
  std::string out_;
};

// Reads little-endian values from [data, data + size); every read is
// bounds-checked and errors name the field and its byte offset.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_ - pos_; }
  size_t position() const { return pos_; }

  absl::Status U8(const char* what, uint8_t* v) { return Get(what, 1, v); }
  absl::Status U32(const char* what, uint32_t* v) { return Get(what, 4, v); }
  absl::Status U64(const char* what, uint64_t* v) { return Get(what, 8, v); }
  absl::Status I32(const char* what, int32_t* v) {
    uint32_t u = 0;
    CORTIQ_RETURN_IF_ERROR(Get(what, 4, &u));
    *v = static_cast<int32_t>(u);
    return absl::OkStatus();
  }
  absl::Status I64(const char* what, int64_t* v) {
    uint64_t u = 0;
    CORTIQ_RETURN_IF_ERROR(Get(what, 8, &u));
    *v = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  absl::Status F64(const char* what, double* v) {
    uint64_t bits = 0;
    CORTIQ_RETURN_IF_ERROR(Get(what, 8, &bits));
    std::memcpy(v, &bits, sizeof(bits));
    return absl::OkStatus();
  }
  absl::Status Bool(const char* what, bool* v) {
    uint8_t b = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U8(what, &b));
    if (b > 1) return Error(what, at, absl::StrCat("bool byte is ", b));
    *v = b != 0;
    return absl::OkStatus();
  }
  absl::Status Str(const char* what, std::string* s) {
    uint32_t n = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U32(what, &n));
    if (n > remaining()) {
      return Error(
          what, at,
          absl::StrCat("string of ", n, " bytes, only ", remaining(), " left"));
    }
    s->assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return absl::OkStatus();
  }
  // Reads a u64 count of records of at least `min_record_bytes` each; the count
  // may not exceed what the remaining bytes can hold (so a hostile count cannot
  // trigger a huge allocation).
  absl::Status Count(const char* what, size_t min_record_bytes, size_t* n) {
    uint64_t v = 0;
    const size_t at = pos_;
    CORTIQ_RETURN_IF_ERROR(U64(what, &v));
    if (v > remaining() / min_record_bytes) {
      return Error(
          what, at,
          absl::StrCat("count ", v, " exceeds the ", remaining(),
                       " remaining bytes (", min_record_bytes, " per record)"));
    }
    *n = static_cast<size_t>(v);
    return absl::OkStatus();
  }

  absl::Status Error(const char* what, size_t at,
                     absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata: ", what, " at byte ", at, ": ", message));
  }

 private:
  template <typename T>
  absl::Status Get(const char* what, size_t bytes, T* v) {
    if (remaining() < bytes) return Error(what, pos_, "truncated");
    *v = static_cast<T>(LoadLE(data_ + pos_, bytes));
    pos_ += bytes;
    return absl::OkStatus();
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Minimum encoded sizes of the records (for Reader::Count).
constexpr size_t kWeightMinBytes =
    4 + 4 + 4 + 8 + 8;  // name length, format, rank, offset, size
constexpr size_t kBufferBytes = 8 + 8 + 4;
constexpr size_t kCacheBytes = 8 + 1 + 8 + 8 + 8;
// kind, out, in0, in1, weight, weight2, cache, i0, i1, f0, f1, logits_only.
constexpr size_t kStepBytes = 4 + 6 * 4 + 2 * 8 + 2 * 8 + 1;
constexpr size_t kTapMinBytes = 4 + 4;
// Largest weight rank the decoder accepts (ValidatePlan allows 8; 1 and 2 are
// used).
constexpr uint32_t kMaxRank = 8;

// The generic parameter slots of a v2.0 step record: two integers and a double (a second
// double, f1, was never used). Each kind's named parameters map to them as below; the slots a
// kind does not map are 0 when written and ignored when read.
struct V2Slots {
  int64_t i0 = 0, i1 = 0;
  double f0 = 0.0;
};

V2Slots ToV2Slots(const Step& s) {
  switch (s.kind) {
    case StepKind::kEmbedding:
      return {0, 0, s.scale};
    case StepKind::kRmsNorm:
    case StepKind::kResidualRmsNorm:
      return {s.group_size, 0, s.eps};
    case StepKind::kRope:
      return {s.head_dim, s.rotated_pairs, s.theta};
    case StepKind::kAttention:
      return {s.num_heads, s.window, s.scale};
    case StepKind::kScale:
      return {0, 0, s.factor};
    case StepKind::kSoftcap:
      return {0, 0, s.cap};
    default:
      return {};
  }
}

void FromV2Slots(const V2Slots& v, Step* s) {
  switch (s->kind) {
    case StepKind::kEmbedding:
      s->scale = v.f0;
      return;
    case StepKind::kRmsNorm:
    case StepKind::kResidualRmsNorm:
      s->group_size = v.i0;
      s->eps = v.f0;
      return;
    case StepKind::kRope:
      s->head_dim = v.i0;
      s->rotated_pairs = v.i1;
      s->theta = v.f0;
      return;
    case StepKind::kAttention:
      s->num_heads = v.i0;
      s->window = v.i1;
      s->scale = v.f0;
      return;
    case StepKind::kScale:
      s->factor = v.f0;
      return;
    case StepKind::kSoftcap:
      s->cap = v.f0;
      return;
    default:
      return;
  }
}

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// An absl::Status for the current errno, prefixed with `message`.
absl::Status ErrnoStatus(absl::string_view message) {
  const int e = errno;
  std::string text = absl::StrCat(message, ": ", std::strerror(e));
  switch (e) {
    case ENOENT:
      return absl::NotFoundError(text);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(text);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case ENOMEM:
      return absl::ResourceExhaustedError(text);
    default:
      return absl::InternalError(text);
  }
}

// Closes a file descriptor and unmaps a mapping on scope exit.
struct FileGuard {
  int fd = -1;
  void* map = MAP_FAILED;
  size_t map_size = 0;
  ~FileGuard() {
    if (map != MAP_FAILED) munmap(map, map_size);
    if (fd >= 0) close(fd);
  }
};

// FileGuard for a file being written: also removes `unlink_path` (when set) on scope exit, so
// no error path, early return or exception from a fill callback leaves a stray PATH.tmp.
struct TempFile : FileGuard {
  std::string unlink_path;
  ~TempFile() {
    if (map != MAP_FAILED) {
      munmap(map, map_size);
      map = MAP_FAILED;
    }
    if (fd >= 0) {
      close(fd);
      fd = -1;
    }
    if (!unlink_path.empty()) unlink(unlink_path.c_str());
  }
};

}  // namespace

// -----------------------------------------------------------------------------------------------
// Header and checksum.

void EncodeArtifactHeader(const ArtifactHeader& h, uint8_t* out) {
  std::memcpy(out, h.magic, 8);
  StoreLE(h.version_major, 4, out + 8);
  StoreLE(h.version_minor, 4, out + 12);
  StoreLE(h.file_size, 8, out + 16);
  StoreLE(h.metadata_offset, 8, out + 24);
  StoreLE(h.metadata_size, 8, out + 32);
  StoreLE(h.weights_offset, 8, out + 40);
  StoreLE(h.weights_size, 8, out + 48);
  StoreLE(h.checksum, 8, out + 56);
}

ArtifactHeader DecodeArtifactHeader(const uint8_t* in) {
  ArtifactHeader h;
  std::memcpy(h.magic, in, 8);
  h.version_major = static_cast<uint32_t>(LoadLE(in + 8, 4));
  h.version_minor = static_cast<uint32_t>(LoadLE(in + 12, 4));
  h.file_size = LoadLE(in + 16, 8);
  h.metadata_offset = LoadLE(in + 24, 8);
  h.metadata_size = LoadLE(in + 32, 8);
  h.weights_offset = LoadLE(in + 40, 8);
  h.weights_size = LoadLE(in + 48, 8);
  h.checksum = LoadLE(in + 56, 8);
  return h;
}

uint64_t Fnv1a64(const uint8_t* data, size_t size, uint64_t hash) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= kPrime;
  }
  return hash;
}

uint64_t ArtifactChecksum(const ArtifactHeader& header, const uint8_t* metadata,
                          size_t metadata_size) {
  ArtifactHeader zeroed = header;
  zeroed.checksum = 0;
  uint8_t bytes[kArtifactHeaderSize];
  EncodeArtifactHeader(zeroed, bytes);
  return Fnv1a64(metadata, metadata_size, Fnv1a64(bytes, sizeof(bytes)));
}

// -----------------------------------------------------------------------------------------------
// Plan encoding.

std::string SerializePlan(const Plan& plan) {
  Writer w;
  w.Str(plan.model.source);
  w.I64(plan.model.vocab_size);
  w.I64(plan.model.hidden_size);
  w.I64(plan.model.num_hidden_layers);
  w.I64(plan.model.max_position_embeddings);
  w.U64(plan.weights.size());
  for (const WeightEntry& e : plan.weights) {
    w.Str(e.name);
    w.U32(static_cast<uint32_t>(e.format));
    w.U32(static_cast<uint32_t>(e.shape.size()));
    for (int64_t d : e.shape) w.I64(d);
    w.U64(e.offset);
    w.U64(e.size_bytes);
  }
  w.U64(plan.buffers.size());
  for (const BufferEntry& e : plan.buffers) {
    w.U64(e.offset);
    w.U64(e.num_elements);
    w.I32(e.view_of);
  }
  w.U64(plan.caches.size());
  for (const CacheEntry& e : plan.caches) {
    w.I64(e.layer);
    w.U8(e.sliding ? 1 : 0);
    w.I64(e.window);
    w.I64(e.num_kv_heads);
    w.I64(e.head_dim);
  }
  w.U64(plan.steps.size());
  for (const Step& s : plan.steps) {
    w.U32(static_cast<uint32_t>(s.kind));
    w.I32(s.out);
    w.I32(s.in0);
    w.I32(s.in1);
    w.I32(s.weight);
    w.I32(s.scalar);
    w.I32(s.cache);
    const V2Slots slots = ToV2Slots(s);
    w.I64(slots.i0);
    w.I64(slots.i1);
    w.F64(slots.f0);
    w.F64(0.0);  // f1: no kind uses it
    w.U8(s.logits_only ? 1 : 0);
  }
  w.U64(plan.taps.size());
  for (const Tap& t : plan.taps) {
    w.Str(t.name);
    w.I32(t.buffer);
  }
  w.I32(plan.logits_buffer);
  w.U64(plan.arena_bytes);
  w.I64(plan.max_batch);
  return w.Take();
}

absl::StatusOr<Plan> ParsePlan(const uint8_t* data, size_t size) {
  Reader r(data, size);
  Plan plan;
  CORTIQ_RETURN_IF_ERROR(r.Str("model.source", &plan.model.source));
  CORTIQ_RETURN_IF_ERROR(r.I64("model.vocab_size", &plan.model.vocab_size));
  CORTIQ_RETURN_IF_ERROR(r.I64("model.hidden_size", &plan.model.hidden_size));
  CORTIQ_RETURN_IF_ERROR(
      r.I64("model.num_hidden_layers", &plan.model.num_hidden_layers));
  CORTIQ_RETURN_IF_ERROR(r.I64("model.max_position_embeddings",
                               &plan.model.max_position_embeddings));

  size_t n = 0;
  CORTIQ_RETURN_IF_ERROR(r.Count("weight count", kWeightMinBytes, &n));
  plan.weights.resize(n);
  for (WeightEntry& e : plan.weights) {
    uint32_t format = 0, rank = 0;
    CORTIQ_RETURN_IF_ERROR(r.Str("weight name", &e.name));
    CORTIQ_RETURN_IF_ERROR(r.U32("weight format", &format));
    e.format = static_cast<WeightFormat>(format);
    const size_t rank_at = r.position();
    CORTIQ_RETURN_IF_ERROR(r.U32("weight rank", &rank));
    if (rank > kMaxRank) {
      return r.Error("weight rank", rank_at,
                     absl::StrCat(rank, " exceeds ", kMaxRank));
    }
    e.shape.resize(rank);
    for (int64_t& d : e.shape)
      CORTIQ_RETURN_IF_ERROR(r.I64("weight dimension", &d));
    CORTIQ_RETURN_IF_ERROR(r.U64("weight offset", &e.offset));
    CORTIQ_RETURN_IF_ERROR(r.U64("weight size_bytes", &e.size_bytes));
  }
  CORTIQ_RETURN_IF_ERROR(r.Count("buffer count", kBufferBytes, &n));
  plan.buffers.resize(n);
  for (BufferEntry& e : plan.buffers) {
    CORTIQ_RETURN_IF_ERROR(r.U64("buffer offset", &e.offset));
    CORTIQ_RETURN_IF_ERROR(r.U64("buffer num_elements", &e.num_elements));
    CORTIQ_RETURN_IF_ERROR(r.I32("buffer view_of", &e.view_of));
  }
  CORTIQ_RETURN_IF_ERROR(r.Count("cache count", kCacheBytes, &n));
  plan.caches.resize(n);
  for (CacheEntry& e : plan.caches) {
    CORTIQ_RETURN_IF_ERROR(r.I64("cache layer", &e.layer));
    CORTIQ_RETURN_IF_ERROR(r.Bool("cache sliding", &e.sliding));
    CORTIQ_RETURN_IF_ERROR(r.I64("cache window", &e.window));
    CORTIQ_RETURN_IF_ERROR(r.I64("cache num_kv_heads", &e.num_kv_heads));
    CORTIQ_RETURN_IF_ERROR(r.I64("cache head_dim", &e.head_dim));
  }
  CORTIQ_RETURN_IF_ERROR(r.Count("step count", kStepBytes, &n));
  plan.steps.resize(n);
  for (Step& s : plan.steps) {
    uint32_t kind = 0;
    CORTIQ_RETURN_IF_ERROR(r.U32("step kind", &kind));
    s.kind = static_cast<StepKind>(kind);
    CORTIQ_RETURN_IF_ERROR(r.I32("step out", &s.out));
    CORTIQ_RETURN_IF_ERROR(r.I32("step in0", &s.in0));
    CORTIQ_RETURN_IF_ERROR(r.I32("step in1", &s.in1));
    CORTIQ_RETURN_IF_ERROR(r.I32("step weight", &s.weight));
    CORTIQ_RETURN_IF_ERROR(r.I32("step weight2", &s.scalar));
    CORTIQ_RETURN_IF_ERROR(r.I32("step cache", &s.cache));
    V2Slots slots;
    double f1 = 0;
    CORTIQ_RETURN_IF_ERROR(r.I64("step i0", &slots.i0));
    CORTIQ_RETURN_IF_ERROR(r.I64("step i1", &slots.i1));
    CORTIQ_RETURN_IF_ERROR(r.F64("step f0", &slots.f0));
    CORTIQ_RETURN_IF_ERROR(r.F64("step f1", &f1));
    FromV2Slots(slots, &s);
    CORTIQ_RETURN_IF_ERROR(r.Bool("step logits_only", &s.logits_only));
  }
  CORTIQ_RETURN_IF_ERROR(r.Count("tap count", kTapMinBytes, &n));
  plan.taps.resize(n);
  for (Tap& t : plan.taps) {
    CORTIQ_RETURN_IF_ERROR(r.Str("tap name", &t.name));
    CORTIQ_RETURN_IF_ERROR(r.I32("tap buffer", &t.buffer));
  }
  CORTIQ_RETURN_IF_ERROR(r.I32("logits_buffer", &plan.logits_buffer));
  CORTIQ_RETURN_IF_ERROR(r.U64("arena_bytes", &plan.arena_bytes));
  CORTIQ_RETURN_IF_ERROR(r.I64("max_batch", &plan.max_batch));
  if (r.remaining() != 0) {
    return r.Error("end", r.position(),
                   absl::StrCat(r.remaining(), " unexpected trailing bytes"));
  }
  return plan;
}

// -----------------------------------------------------------------------------------------------
// Writer.

absl::Status WriteArtifact(
    const std::string& path, Plan plan,
    const std::function<absl::Status(size_t weight_index, uint8_t* dst)>&
        fill) {
  // Weight layout: index order, each kWeightAlignment-aligned. Sizes are computed with
  // overflow checks here; ValidatePlan re-checks everything below.
  uint64_t cursor = 0;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    WeightEntry& w = plan.weights[i];
    const uint64_t size = WeightFormatBytes(w.format, w.shape);
    if (size == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": invalid plan: weight ", i, " '", w.name,
          "' has an unknown format (", static_cast<uint32_t>(w.format),
          ") or an invalid shape for it"));
    }
    w.size_bytes = size;
    w.offset = AlignUp(cursor, kWeightAlignment);
    cursor = w.offset + w.size_bytes;
    if (cursor > (uint64_t{1} << 62)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": invalid plan: weights exceed 2^62 bytes"));
    }
  }
  const uint64_t weights_size = AlignUp(cursor, kWeightAlignment);
  if (absl::Status s = ValidatePlan(plan, weights_size); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(path, ": invalid plan: ", s.message()));
  }

  const std::string metadata = SerializePlan(plan);
  ArtifactHeader header;
  std::memcpy(header.magic, kArtifactMagic, 8);
  header.version_major = kArtifactVersionMajor;
  header.version_minor = kArtifactVersionMinor;
  header.metadata_offset = kArtifactHeaderSize;
  header.metadata_size = metadata.size();
  header.weights_offset = AlignUp(header.metadata_offset + header.metadata_size,
                                  kArtifactWeightsAlignment);
  header.weights_size = weights_size;
  header.file_size = header.weights_offset + header.weights_size;
  header.checksum = ArtifactChecksum(
      header, reinterpret_cast<const uint8_t*>(metadata.data()),
      metadata.size());
  if (header.file_size >
          static_cast<uint64_t>(std::numeric_limits<off_t>::max()) ||
      header.file_size > std::numeric_limits<size_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file too large"));
  }

  // Never replace a device node, directory or FIFO by the rename below, and write through a
  // symlink to its target (renaming onto the link itself would replace the link).
  CORTIQ_RETURN_IF_ERROR(CheckOutputPath(path, {}));
  CORTIQ_ASSIGN_OR_RETURN(const std::string target, ResolveOutputPath(path));
  const std::string tmp_path = target + ".tmp";
  TempFile file;
  // A stale PATH.tmp from a killed writer is ours to replace; unlinking it first (with O_EXCL
  // below) also means a symlink planted there is never followed.
  if (unlink(tmp_path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(absl::StrCat(tmp_path, ": cannot remove the stale temporary file"));
  }
  file.fd = open(tmp_path.c_str(),
                 O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (file.fd < 0)
    return ErrnoStatus(absl::StrCat(tmp_path, ": cannot create"));
  // From here on the guard removes tmp_path on every return that does not reach the rename.
  file.unlink_path = tmp_path;
  // The file is written through a shared mapping: pages of a sparse file get their disk blocks
  // only when first touched, and a full disk then raises SIGBUS in the middle of a store. So
  // every block is reserved up front, turning "disk full" into an error here.
  int reserve_error;
  do {
    reserve_error = posix_fallocate(file.fd, 0, static_cast<off_t>(header.file_size));
  } while (reserve_error == EINTR);
  if (reserve_error != 0) {
    errno = reserve_error;  // posix_fallocate returns the error instead of setting errno
    return ErrnoStatus(absl::StrCat(tmp_path, ": cannot reserve ", header.file_size,
                                    " bytes for ", path));
  }
  file.map_size = static_cast<size_t>(header.file_size);
  file.map = mmap(nullptr, file.map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                  file.fd, 0);
  if (file.map == MAP_FAILED)
    return ErrnoStatus(absl::StrCat(tmp_path, ": cannot mmap"));
  uint8_t* base = static_cast<uint8_t*>(file.map);
  EncodeArtifactHeader(header, base);
  std::memcpy(base + header.metadata_offset, metadata.data(), metadata.size());
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    absl::Status s =
        fill(i, base + header.weights_offset + plan.weights[i].offset);
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat(path, ": weight ", i, " '",
                                 plan.weights[i].name, "': ", s.message()));
    }
    // The written pages stay in the page cache (MAP_SHARED) and reach the file; dropping them
    // from this process keeps the writer's RSS near one weight instead of the whole model.
    ReleaseMappedPages(base + header.weights_offset + plan.weights[i].offset,
                 plan.weights[i].size_bytes);
  }
  if (msync(file.map, file.map_size, MS_SYNC) != 0) {
    return ErrnoStatus(absl::StrCat(tmp_path, ": cannot write"));
  }
  munmap(file.map, file.map_size);
  file.map = MAP_FAILED;
  const int fd = file.fd;
  file.fd = -1;
  if (close(fd) != 0)
    return ErrnoStatus(absl::StrCat(tmp_path, ": cannot close"));
  if (rename(tmp_path.c_str(), target.c_str()) != 0) {
    return ErrnoStatus(
        absl::StrCat(path, ": cannot rename ", tmp_path, " to ", target));
  }
  file.unlink_path.clear();  // renamed: nothing left to clean up
  return absl::OkStatus();
}

// -----------------------------------------------------------------------------------------------
// Reader.

Artifact::~Artifact() {
  if (mapping_ != nullptr) munmap(mapping_, static_cast<size_t>(file_size_));
}

absl::StatusOr<std::unique_ptr<Artifact>> Artifact::Open(
    const std::string& path) {
  const auto invalid = [&](absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
  };
  // Opening a FIFO for reading blocks until a writer appears, and opening a device can have
  // side effects: check the type before opening, and open non-blocking so a file swapped for a
  // FIFO in between still cannot hang (O_NONBLOCK changes nothing for a regular file's reads or
  // mmap).
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return invalid("not a regular file");
  }
  FileGuard file;
  file.fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (file.fd < 0) return ErrnoStatus(absl::StrCat(path, ": cannot open"));
  if (fstat(file.fd, &st) != 0)
    return ErrnoStatus(absl::StrCat(path, ": cannot stat"));
  if (!S_ISREG(st.st_mode)) return invalid("not a regular file");
  const uint64_t actual_size = static_cast<uint64_t>(st.st_size);
  if (actual_size < kArtifactHeaderSize) {
    uint8_t prefix[8] = {};
    const ssize_t got =
        pread(file.fd, prefix, std::min<uint64_t>(actual_size, 8), 0);
    if (got > 0 &&
        std::memcmp(prefix, kArtifactMagic, static_cast<size_t>(got)) == 0) {
      return invalid(absl::StrCat("truncated: file has ", actual_size,
                                  " bytes, less than the ", kArtifactHeaderSize,
                                  "-byte header"));
    }
    return invalid(
        absl::StrCat("not a cortiq artifact (", actual_size, " bytes)"));
  }
  if (actual_size > std::numeric_limits<size_t>::max())
    return invalid("file too large");
  file.map_size = static_cast<size_t>(actual_size);
  file.map = mmap(nullptr, file.map_size, PROT_READ, MAP_SHARED, file.fd, 0);
  if (file.map == MAP_FAILED)
    return ErrnoStatus(absl::StrCat(path, ": cannot mmap"));
  const uint8_t* base = static_cast<const uint8_t*>(file.map);

  const ArtifactHeader h = DecodeArtifactHeader(base);
  if (std::memcmp(h.magic, kArtifactMagic, 8) != 0) {
    return invalid("not a cortiq artifact (bad magic)");
  }
  if (h.version_major > kArtifactVersionMajor) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": was written by a newer cortiq (format v", h.version_major, ".",
        h.version_minor, "); this build reads v", kArtifactVersionMajor));
  }
  if (h.version_major < kArtifactVersionMajor) {
    return invalid(absl::StrCat("unsupported format v", h.version_major, ".",
                                h.version_minor, "; this build reads v",
                                kArtifactVersionMajor));
  }
  if (h.file_size > actual_size) {
    return invalid(absl::StrCat("truncated: header says ", h.file_size,
                                " bytes, file has ", actual_size));
  }
  if (h.file_size < actual_size) {
    return invalid(absl::StrCat("corrupted: header says ", h.file_size,
                                " bytes, file has ", actual_size));
  }
  // Ranges: header < metadata <= weights, all inside the file (overflow-safe).
  if (h.metadata_offset < kArtifactHeaderSize ||
      h.metadata_offset > actual_size ||
      h.metadata_size > actual_size - h.metadata_offset) {
    return invalid(absl::StrCat(
        "corrupted: metadata [", h.metadata_offset, ", +", h.metadata_size,
        ") is outside the file of ", actual_size, " bytes"));
  }
  if (h.weights_offset % kWeightAlignment != 0) {
    return invalid(absl::StrCat("corrupted: weights offset ", h.weights_offset,
                                " is not a multiple of ", kWeightAlignment));
  }
  if (h.weights_offset < h.metadata_offset + h.metadata_size ||
      h.weights_offset > actual_size ||
      h.weights_size > actual_size - h.weights_offset) {
    return invalid(absl::StrCat(
        "corrupted: weights [", h.weights_offset, ", +", h.weights_size,
        ") overlap the metadata or leave the file of ", actual_size, " bytes"));
  }
  const uint8_t* metadata = base + h.metadata_offset;
  const size_t metadata_size = static_cast<size_t>(h.metadata_size);
  if (ArtifactChecksum(h, metadata, metadata_size) != h.checksum) {
    return invalid("corrupted: checksum mismatch");
  }
  absl::StatusOr<Plan> plan = ParsePlan(metadata, metadata_size);
  if (!plan.ok()) {
    // The checksum matched, so these are the bytes the writer meant: a metadata layout this
    // build does not read, most likely from another (unreleased) cortiq build of the same format
    // version, rather than corruption.
    return invalid(absl::StrCat(
        plan.status().message(), " (the metadata does not match this build's format v",
        kArtifactVersionMajor, ".", kArtifactVersionMinor,
        " layout: recompile the model with this cortiq)"));
  }
  if (absl::Status s = ValidatePlan(*plan, h.weights_size); !s.ok()) {
    return invalid(absl::StrCat("invalid plan: ", s.message()));
  }

  std::unique_ptr<Artifact> artifact(new Artifact());
  artifact->path_ = path;
  artifact->mapping_ = file.map;
  artifact->file_size_ = actual_size;
  artifact->weights_ = base + h.weights_offset;
  artifact->header_ = h;
  artifact->plan_ = *std::move(plan);
  // The Artifact owns the mapping now; the guard still closes the descriptor.
  file.map = MAP_FAILED;
  return artifact;
}

}  // namespace cortiq
