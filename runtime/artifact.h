// The AOT artifact file (MODEL.cortiq): a 64-byte header, the serialized Plan
// (metadata) and the page-aligned weight section. WriteArtifact produces it;
// Artifact::Open maps and checks it (read-only, shareable by sessions and
// threads).
//
// File layout (all integers little-endian):
//   [0, 64)             ArtifactHeader
//   metadata section    the Plan, encoded by SerializePlan
//   weight section      weight i at weights_offset + weights[i].offset
// The checksum (64-bit FNV-1a) covers the header, with its checksum field
// zeroed, followed by the metadata; not the weights, so opening a multi-GB
// model stays O(metadata).
#ifndef CORTIQ_RUNTIME_ARTIFACT_H_
#define CORTIQ_RUNTIME_ARTIFACT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/plan.h"

namespace cortiq {

// "CORTIQ\0\1": identifies a cortiq artifact.
inline constexpr char kArtifactMagic[8] = {'C', 'O', 'R',  'T',
                                           'I', 'Q', '\0', '\1'};
// Format version written by this build. A reader accepts equal majors (any
// minor: minors only add what old readers may ignore) and rejects newer majors.
inline constexpr uint32_t kArtifactVersionMajor = 2;  // 2: buffer views and max_batch (prefill)
inline constexpr uint32_t kArtifactVersionMinor = 0;
// Size of the encoded header in bytes.
inline constexpr size_t kArtifactHeaderSize = 64;
// Alignment of the weight section in the file: one 4 KiB page, so the mmapped
// weights are page-aligned (each weight inside the section is 64-byte aligned:
// one cache line, and the widest Highway vector, AVX-512).
inline constexpr uint64_t kArtifactWeightsAlignment = 4096;

// The decoded header. Encoded field by field, little-endian, in this order (64
// bytes).
struct ArtifactHeader {
  char magic[8] = {};
  uint32_t version_major = 0;
  uint32_t version_minor = 0;
  uint64_t file_size = 0;        // bytes of the whole file
  uint64_t metadata_offset = 0;  // bytes from the file start (>= 64)
  uint64_t metadata_size = 0;    // bytes
  uint64_t weights_offset =
      0;  // bytes from the file start; multiple of 64 (4096 written)
  uint64_t weights_size = 0;  // bytes
  uint64_t checksum = 0;      // ArtifactChecksum of the header and the metadata
};

// Encodes `header` into 64 bytes at `out`.
void EncodeArtifactHeader(const ArtifactHeader& header, uint8_t* out);
// Decodes 64 bytes at `in` (no validation).
ArtifactHeader DecodeArtifactHeader(const uint8_t* in);

// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) of
// `size` bytes, continuing from `hash` (pass the previous result to hash
// several ranges as one).
uint64_t Fnv1a64(const uint8_t* data, size_t size,
                 uint64_t hash = 0xcbf29ce484222325ull);

// The checksum stored in the header: Fnv1a64 over the encoded header with its
// checksum field zeroed, then over `metadata_size` metadata bytes.
uint64_t ArtifactChecksum(const ArtifactHeader& header, const uint8_t* metadata,
                          size_t metadata_size);

// Encodes `plan` as the metadata section: ModelInfo, then weights, buffers,
// caches, steps and taps (each a u64 count followed by fixed-layout records;
// strings as a u32 length and bytes; enums as u32; bools as one byte 0/1;
// doubles as IEEE binary64), then logits_buffer (i32), arena_bytes (u64) and
// max_batch (i64). A buffer record is offset, num_elements (u64), view_of (i32).
// A step record is kind (u32), out, in0, in1, weight, weight2, cache (i32),
// i0, i1 (i64), f0, f1 (f64), logits_only (u8): 61 bytes.
// Does not validate the plan.
std::string SerializePlan(const Plan& plan);

// Decodes SerializePlan's encoding from `size` bytes. Bounds-checked: every
// count is at most the number of records the remaining bytes can hold, every
// string fits the remaining bytes, bools are 0/1, and all bytes must be
// consumed. Does not run ValidatePlan. Errors: InvalidArgument "metadata: ..."
// naming the field and byte offset.
absl::StatusOr<Plan> ParsePlan(const uint8_t* data, size_t size);

// Writes `plan` to `path` as an artifact. weights[i].offset and size_bytes are
// assigned here (size_bytes = elements * element size; offsets 64-byte aligned,
// in index order), the plan is checked with ValidatePlan, and then each
// weight's bytes are produced by calling fill(i, dst), dst pointing at
// size_bytes writable bytes of the mmapped output file (so multi-GB models need
// no RAM copy). An existing `path` must be a regular file (CheckOutputPath: a
// device node, directory or FIFO is refused, never replaced); a symlink `path`
// is written through (its target is replaced, the link kept). The file is
// written as TARGET.tmp (TARGET = `path` with symlinks resolved), its full size
// reserved up front with posix_fallocate (so a full disk is an error, not a
// SIGBUS in the mapping), and renamed to TARGET only on success; TARGET.tmp is
// removed on every failure. Callers that have inputs should also check `path`
// against them with CheckOutputPath (base/file_checks.h). Errors name the
// path (and the weight for fill errors): invalid plan or output path
// (InvalidArgument), I/O failures (the errno's status: ResourceExhausted for
// "No space left on device", naming the size; Internal otherwise), or fill's
// status.
absl::Status WriteArtifact(
    const std::string& path, Plan plan,
    const std::function<absl::Status(size_t weight_index, uint8_t* dst)>& fill);

// An opened artifact: a read-only mmap of the file and its validated plan.
// Immutable, so one Artifact can be shared by any number of sessions and
// threads; it must outlive them.
class Artifact {
 public:
  // Maps and checks `path`, in order: a regular file ("not a regular file",
  // checked before any blocking open, so a FIFO or device never hangs it),
  // size >= 64-byte header, magic ("not a
  // cortiq artifact"), version (major > 1: "was written by a newer cortiq
  // (format vX.Y); this build reads v1"), header file_size == actual size
  // ("truncated: header says N bytes, file has M"), metadata and weight ranges
  // inside the file and not overlapping the header or each other,
  // weights_offset % 64 == 0, checksum ("corrupted: checksum mismatch"), the
  // metadata parse (ParsePlan; with a valid checksum a parse failure means a
  // layout this build does not read: "... (the metadata does not match this
  // build's format v1.0 layout: recompile the model with this cortiq)") and
  // ValidatePlan against weights_size. Every
  // error message starts with `path`. Errors: NotFound/PermissionDenied/... for
  // the open, InvalidArgument for the content, FailedPrecondition for a newer
  // version.
  static absl::StatusOr<std::unique_ptr<Artifact>> Open(
      const std::string& path);

  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  // The validated plan.
  const Plan& plan() const { return plan_; }
  // First byte of weight `weight_index` (0 <= weight_index <
  // plan().weights.size()), in place in the mapping:
  // plan().weights[i].size_bytes bytes, 64-byte aligned.
  const uint8_t* weight_data(int32_t weight_index) const {
    return weights_ + plan_.weights[weight_index].offset;
  }
  // Start of the weight section (header().weights_size bytes) in the mapping.
  const uint8_t* weight_section() const { return weights_; }
  // Size of the file in bytes.
  uint64_t file_size() const { return file_size_; }
  // The path it was opened from.
  const std::string& path() const { return path_; }
  // The decoded header.
  const ArtifactHeader& header() const { return header_; }

 private:
  Artifact() = default;

  std::string path_;
  void* mapping_ = nullptr;
  uint64_t file_size_ = 0;
  const uint8_t* weights_ = nullptr;
  ArtifactHeader header_;
  Plan plan_;
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_ARTIFACT_H_
