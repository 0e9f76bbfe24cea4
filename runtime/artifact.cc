// The artifact file: header encoding, checksum, the mmap-based writer and the validating reader
// (Artifact::Open). The plan's encoding is runtime/plan_encoding.cc.
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/file_checks.h"
#include "base/status_macros.h"
#include "runtime/weight_hash.h"

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
// Writer.

absl::Status WriteArtifact(
    const std::string& path, Plan plan,
    const std::function<absl::Status(size_t weight_index, uint8_t* dst)>& fill,
    const std::vector<ArtifactSectionData>& sections) {
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": section ", i, " has no name"));
    }
    for (size_t k = 0; k < i; ++k) {
      if (sections[k].name == sections[i].name) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": two sections are named '", sections[i].name, "'"));
      }
    }
  }
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
  // The hashes are computed as the weights are filled below; their count, hence the metadata's
  // size and the weights' offset in the file, is known now (placeholders until then).
  plan.weight_hash_chunk_bytes = kWeightHashChunkBytes;
  for (WeightEntry& w : plan.weights) {
    w.xxh3_64.assign(WeightHashChunks(w.size_bytes, kWeightHashChunkBytes), 0);
  }
  if (absl::Status s = ValidatePlan(plan, weights_size); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(path, ": invalid plan: ", s.message()));
  }

  // The section list's encoded size does not depend on the offsets in it: serialize once to
  // learn the metadata size, place the sections after it, then serialize with their offsets.
  std::vector<SectionEntry> entries;
  for (const ArtifactSectionData& section : sections) {
    entries.push_back({section.name, 0, section.bytes.size()});
  }
  const uint64_t metadata_size = SerializeMetadata(plan, entries).size();
  uint64_t section_cursor = kArtifactHeaderSize + metadata_size;
  for (SectionEntry& entry : entries) {
    entry.offset = AlignUp(section_cursor, kArtifactWeightsAlignment);
    section_cursor = entry.offset + entry.size;
  }
  std::string metadata = SerializeMetadata(plan, entries);
  ArtifactHeader header;
  std::memcpy(header.magic, kArtifactMagic, 8);
  header.version_major = kArtifactVersionMajor;
  header.version_minor = kArtifactVersionMinor;
  header.metadata_offset = kArtifactHeaderSize;
  header.metadata_size = metadata.size();
  header.weights_offset = AlignUp(section_cursor, kArtifactWeightsAlignment);
  header.weights_size = weights_size;
  header.file_size = header.weights_offset + header.weights_size;
  if (header.file_size >
          static_cast<uint64_t>(std::numeric_limits<off_t>::max()) ||
      header.file_size > std::numeric_limits<size_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file too large"));
  }

  // A fresh temporary beside the output, renamed onto it only once complete (base/atomic_file.h:
  // never a fixed name, so no existing file is replaced or removed on the way).
  // A path that names another file (a model, a source, an executable) is refused, not replaced.
  CORTIQ_RETURN_IF_ERROR(
      CheckReplaceable(path, std::string(kArtifactMagic, sizeof(kArtifactMagic)), "cortiq artifact"));
  CORTIQ_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::Create(path));
  // The file is written through a shared mapping: pages of a sparse file get their disk blocks
  // only when first touched, and a full disk then raises SIGBUS in the middle of a store. So
  // every block is reserved up front, turning "disk full" into an error here.
  CORTIQ_RETURN_IF_ERROR(out.Reserve(header.file_size));
  FileGuard file;  // the mapping only: `out` owns the descriptor
  file.map_size = static_cast<size_t>(header.file_size);
  file.map = mmap(nullptr, file.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, out.fd(), 0);
  if (file.map == MAP_FAILED) return ErrnoStatus(absl::StrCat(path, ": cannot mmap"));
  uint8_t* base = static_cast<uint8_t*>(file.map);
  // The named sections now; the header and the metadata once the weights' hashes are known.
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!sections[i].bytes.empty()) {
      std::memcpy(base + entries[i].offset, sections[i].bytes.data(), sections[i].bytes.size());
    }
  }
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    WeightEntry& w = plan.weights[i];
    uint8_t* dst = base + header.weights_offset + w.offset;
    absl::Status s = fill(i, dst);
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat(path, ": weight ", i, " '", w.name, "': ", s.message()));
    }
    // Hashed while its bytes are still in the cache.
    w.xxh3_64 = HashWeightChunks(dst, w.size_bytes, plan.weight_hash_chunk_bytes);
    // The written pages stay in the page cache (MAP_SHARED) and reach the file; dropping them
    // from this process keeps the writer's RSS near one weight instead of the whole model.
    ReleaseMappedPages(dst, w.size_bytes);
  }
  metadata = SerializeMetadata(plan, entries);
  if (metadata.size() != header.metadata_size) {  // the hashes have a fixed size
    return absl::InternalError(absl::StrCat(path, ": the metadata changed size when hashed"));
  }
  header.checksum = ArtifactChecksum(
      header, reinterpret_cast<const uint8_t*>(metadata.data()), metadata.size());
  EncodeArtifactHeader(header, base);
  std::memcpy(base + header.metadata_offset, metadata.data(), metadata.size());
  if (msync(file.map, file.map_size, MS_SYNC) != 0) {
    return ErrnoStatus(absl::StrCat(path, ": cannot write"));
  }
  munmap(file.map, file.map_size);
  file.map = MAP_FAILED;
  return out.Commit();
}

// -----------------------------------------------------------------------------------------------
// Reader.

Artifact::~Artifact() {
  if (mapping_ != nullptr) munmap(mapping_, static_cast<size_t>(file_size_));
}

namespace {

// The file behind `file.fd` (map_size bytes, currently mapped at file.map) read into private
// anonymous memory, which then replaces the mapping in `file` (ArtifactLoad::kRead). pread in
// chunks, so the file mapping is never faulted in and the page cache can drop what was copied.
absl::Status ReadIntoMemory(const std::string& path, FileGuard& file) {
  void* memory =
      mmap(nullptr, file.map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": cannot allocate ", file.map_size, " bytes to read the model into memory (",
        std::strerror(errno), "); open it mapped instead"));
  }
  // 2 MiB pages where the kernel has them (transparent huge pages in "madvise" mode serve only
  // regions asked for): the copy faults in 512x fewer pages. Measured (E2B Q4_0, 2.6 GB, file in
  // the page cache, Zen 5 VM): open 12-13 s -> 2.7-7 s; decoding from either speeds the same.
  // Advice only: where THP is off, it fails and changes nothing.
  madvise(memory, file.map_size, MADV_HUGEPAGE);
  constexpr size_t kChunk = size_t{64} << 20;
  uint8_t* out = static_cast<uint8_t*>(memory);
  for (size_t done = 0; done < file.map_size;) {
    const ssize_t got = pread(file.fd, out + done, std::min(kChunk, file.map_size - done),
                              static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int error = got < 0 ? errno : EIO;
      munmap(memory, file.map_size);
      errno = error;
      return ErrnoStatus(absl::StrCat(path, ": cannot read byte ", done, got == 0 ? " (the file "
                                      "shrank)" : ""));
    }
    done += static_cast<size_t>(got);
  }
  mprotect(memory, file.map_size, PROT_READ);  // as read-only as the mapping it replaces
  munmap(file.map, file.map_size);
  file.map = memory;
  return absl::OkStatus();
}

// ArtifactLoad::kReadMatrices: the pages of `file`'s mapping that hold the weights of linear and
// LM-head steps (the weights section starts at byte weights_offset of the file) replaced, range
// by merged range, by private anonymous pages read from the file (MAP_FIXED over the mapping, so
// every pointer into it stays valid and nothing is copied twice). A page shared with a table is
// read too: the same bytes.
absl::Status ReadMatricesIntoMemory(const std::string& path, FileGuard& file, const Plan& plan,
                                    uint64_t weights_offset) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::vector<bool> multiplied(plan.weights.size(), false);
  for (const Step& step : plan.steps) {
    if ((step.kind == StepKind::kLinear || step.kind == StepKind::kLmHead) && step.weight >= 0) {
      multiplied[static_cast<size_t>(step.weight)] = true;
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [begin, end) in the file, page-aligned
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    if (!multiplied[i] || plan.weights[i].size_bytes == 0) continue;
    const uint64_t begin = weights_offset + plan.weights[i].offset;
    const uint64_t end = begin + plan.weights[i].size_bytes;
    ranges.emplace_back(begin / page * page, std::min<uint64_t>((end + page - 1) / page * page,
                                                                file.map_size));
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  uint8_t* base = static_cast<uint8_t*>(file.map);
  for (const auto& [begin, end] : merged) {
    const size_t size = static_cast<size_t>(end - begin);
    void* at = mmap(base + begin, size, PROT_READ | PROT_WRITE,
                    MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) {
      return absl::ResourceExhaustedError(absl::StrCat(
          path, ": cannot allocate ", size, " bytes to read the model's matrices into memory (",
          std::strerror(errno), "); open it mapped instead"));
    }
    madvise(at, size, MADV_HUGEPAGE);  // advice only, as in ReadIntoMemory
    for (size_t done = 0; done < size;) {
      const ssize_t got = pread(file.fd, base + begin + done, size - done,
                                static_cast<off_t>(begin + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        const int error = got < 0 ? errno : EIO;
        errno = error;
        return ErrnoStatus(absl::StrCat(path, ": cannot read byte ", begin + done,
                                        got == 0 ? " (the file shrank)" : ""));
      }
      done += static_cast<size_t>(got);
    }
    mprotect(at, size, PROT_READ);  // as read-only as the mapping it replaces
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Artifact>> Artifact::Open(const std::string& path,
                                                         ArtifactLoad load) {
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
  if (load == ArtifactLoad::kReadMatrices) {
    // At a 2 MiB-aligned address, so that the matrices' private pages (which keep their offsets
    // in the file) can be huge pages: reserve 2 MiB more, map the file at the aligned address
    // inside, and give back the slack.
    constexpr size_t kHuge = size_t{2} << 20;
    void* reserved = mmap(nullptr, file.map_size + kHuge, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved != MAP_FAILED) {
      const uintptr_t start = reinterpret_cast<uintptr_t>(reserved);
      const uintptr_t aligned = (start + kHuge - 1) / kHuge * kHuge;
      file.map = mmap(reinterpret_cast<void*>(aligned), file.map_size, PROT_READ,
                      MAP_SHARED | MAP_FIXED, file.fd, 0);
      if (aligned > start) munmap(reserved, aligned - start);
      const uintptr_t end = aligned + file.map_size, reserved_end = start + file.map_size + kHuge;
      const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
      const uintptr_t tail = (end + page - 1) / page * page;
      if (reserved_end > tail) munmap(reinterpret_cast<void*>(tail), reserved_end - tail);
      if (file.map == MAP_FAILED) munmap(reinterpret_cast<void*>(aligned), tail - aligned);
    }
  }
  if (file.map == MAP_FAILED) {
    file.map = mmap(nullptr, file.map_size, PROT_READ, MAP_SHARED, file.fd, 0);
  }
  if (file.map == MAP_FAILED)
    return ErrnoStatus(absl::StrCat(path, ": cannot mmap"));
  if (load == ArtifactLoad::kRead) CORTIQ_RETURN_IF_ERROR(ReadIntoMemory(path, file));
  const uint8_t* base = static_cast<const uint8_t*>(file.map);

  const ArtifactHeader h = DecodeArtifactHeader(base);
  if (std::memcmp(h.magic, kArtifactMagic, 8) != 0) {
    if (std::memcmp(h.magic, "GGUF", 4) == 0) {
      // The file people download: say what to do with it.
      return invalid(absl::StrCat("a GGUF checkpoint, not a cortiq artifact: compile it first (",
                                  "cortiq-compile ", path, " -o MODEL.cortiq)"));
    }
    return invalid("not a cortiq artifact (bad magic)");
  }
  // Format versions grow by one at a time: a major version far beyond this build's is a damaged
  // header (a flipped byte), not a newer cortiq.
  if (h.version_major > kArtifactVersionMajor + 64) {
    return absl::DataLossError(absl::StrCat(
        path, ": damaged header: its format version reads v", h.version_major, ".",
        h.version_minor, ", which no cortiq writes (this build writes v", kArtifactVersionMajor,
        ".", kArtifactVersionMinor, ")"));
  }
  if (h.version_major > kArtifactVersionMajor) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": was written by a newer cortiq (format v", h.version_major, ".",
        h.version_minor, "); this build reads v", kArtifactVersionMajor));
  }
  if (h.version_major < kOldestArtifactVersionMajor ||
      (h.version_major == kOldestArtifactVersionMajor && h.version_minor != 0)) {
    return invalid(absl::StrCat("unsupported format v", h.version_major, ".", h.version_minor,
                                "; this build reads v2.0 and v", kArtifactVersionMajor,
                                ".x: recompile the model with this cortiq"));
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
  absl::StatusOr<ArtifactMetadata> plan =
      ParseMetadata(metadata, metadata_size, h.version_major, h.version_minor);
  if (!plan.ok()) {
    // The checksum matched, so these are the bytes the writer meant: a metadata layout this
    // build does not read, most likely from another (unreleased) cortiq build of the same format
    // version, rather than corruption.
    return invalid(absl::StrCat(
        plan.status().message(), " (the metadata does not match this build's format v",
        h.version_major, ".", h.version_minor,
        " layout: recompile the model with this cortiq)"));
  }
  if (absl::Status s = ValidatePlan(plan->plan, h.weights_size); !s.ok()) {
    return invalid(absl::StrCat("invalid plan: ", s.message()));
  }
  // Named sections: after the metadata, inside the file, disjoint from the weights and from one
  // another, 8-byte aligned (their tables are read in place), names unique.
  const std::vector<SectionEntry>& sections = plan->sections;
  for (size_t i = 0; i < sections.size(); ++i) {
    const SectionEntry& e = sections[i];
    const std::string what = absl::StrCat("section '", e.name, "' [", e.offset, ", +", e.size, ")");
    if (e.name.empty()) return invalid(absl::StrCat("corrupted: section ", i, " has no name"));
    for (size_t k = 0; k < i; ++k) {
      if (sections[k].name == e.name) {
        return invalid(absl::StrCat("corrupted: two sections are named '", e.name, "'"));
      }
    }
    const auto overlaps = [&](uint64_t begin, uint64_t size) {
      return size != 0 && e.size != 0 && e.offset < begin + size && begin < e.offset + e.size;
    };
    if (e.offset % 8 != 0 || e.offset < h.metadata_offset + h.metadata_size ||
        e.offset > actual_size || e.size > actual_size - e.offset) {
      return invalid(absl::StrCat("corrupted: ", what,
                                  " is misaligned or outside the file after the metadata (",
                                  actual_size, " bytes)"));
    }
    if (overlaps(h.weights_offset, h.weights_size)) {
      return invalid(absl::StrCat("corrupted: ", what, " overlaps the weights"));
    }
    for (size_t k = 0; k < i; ++k) {
      if (overlaps(sections[k].offset, sections[k].size)) {
        return invalid(absl::StrCat("corrupted: ", what, " overlaps section '", sections[k].name,
                                    "'"));
      }
    }
  }

  if (load == ArtifactLoad::kReadMatrices) {
    CORTIQ_RETURN_IF_ERROR(ReadMatricesIntoMemory(path, file, plan->plan, h.weights_offset));
  }
  if (load != ArtifactLoad::kRead && h.weights_size > 0) {
    // The weights still mapped from the file (all of them with kMap, the lookup-only tables with
    // kReadMatrices) are read ahead into the page cache now, asynchronously, as llama.cpp's
    // loader does (MAP_POPULATE): otherwise each token's first use of a table row is a
    // synchronous disk read once the file has left the page cache (E2B Q4_0: the two embedding
    // steps 4.1 ms of a 48.8 ms token, 0.05 ms from the page cache; bench/README.md, session
    // 33). In chunks, because the kernel reads ahead at most its readahead window per call.
    // Advice only: a failure changes nothing but speed.
    constexpr uint64_t kChunk = uint64_t{4} << 20;
    for (uint64_t at = h.weights_offset; at < h.weights_offset + h.weights_size; at += kChunk) {
      posix_fadvise(file.fd, static_cast<off_t>(at),
                    static_cast<off_t>(std::min(kChunk, h.weights_offset + h.weights_size - at)),
                    POSIX_FADV_WILLNEED);
    }
  }
  std::unique_ptr<Artifact> artifact(new Artifact());
  artifact->path_ = path;
  artifact->mapping_ = file.map;
  artifact->file_size_ = actual_size;
  artifact->weights_ = base + h.weights_offset;
  artifact->header_ = h;
  artifact->plan_ = std::move(plan->plan);
  artifact->sections_ = std::move(plan->sections);
  // The Artifact owns the mapping now; the guard still closes the descriptor.
  file.map = MAP_FAILED;
  return artifact;
}

absl::Status Artifact::VerifyWeights(int threads) const {
  absl::Status s = VerifyWeightHashes(plan_, weights_, threads);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(path_, ": ", s.message()));
}

absl::Span<const uint8_t> Artifact::section(absl::string_view name) const {
  for (const SectionEntry& e : sections_) {
    if (e.name == name) {
      return absl::MakeConstSpan(static_cast<const uint8_t*>(mapping_) + e.offset,
                                 static_cast<size_t>(e.size));
    }
  }
  return {};
}

}  // namespace cortiq
