// The AOT artifact file (MODEL.cortiq): a 64-byte header, the serialized Plan
// (metadata) and the page-aligned weight section. WriteArtifact produces it;
// Artifact::Open maps and checks it (read-only, shareable by sessions and
// threads).
//
// File layout (all integers little-endian):
//   [0, 64)             ArtifactHeader
//   metadata section    the Plan and (3.1) the section list, encoded by SerializeMetadata
//                       (runtime/plan_encoding.h)
//   named sections      (3.1) each at a page-aligned offset after the metadata, e.g. the
//                       tokenizer (kTokenizerSectionName, runtime/text/tokenizer_section.h)
//   weight section      weight i at weights_offset + weights[i].offset
// The checksum (64-bit FNV-1a) covers the header, with its checksum field
// zeroed, followed by the metadata (so the section list too); not the weights nor the named
// sections, so opening a multi-GB model stays O(metadata). The weights are covered by the
// XXH3-64 hashes of their 1 MiB chunks, stored in the metadata (format 3.1,
// runtime/weight_hash.h) and checked on request (Artifact::VerifyWeights); a named section
// carries its own integrity check (the tokenizer section: a checksum checked when it is loaded).
#ifndef CORTIQ_RUNTIME_ARTIFACT_H_
#define CORTIQ_RUNTIME_ARTIFACT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/plan.h"
#include "runtime/plan_encoding.h"

namespace cortiq {

// "CORTIQ\0\1": identifies a cortiq artifact.
inline constexpr char kArtifactMagic[8] = {'C', 'O', 'R',  'T',
                                           'I', 'Q', '\0', '\1'};
// Format version written by this build: the version of the plan's encoding (plan_encoding.h;
// the header and weight section are the same in every version). 2.0: buffer views and
// max_batch (prefill); 3.0: records carry their sizes and steps their parameters by name; 3.1:
// the weights' chunk hashes (runtime/weight_hash.h), the rows each step runs on (Step::rows) and
// named sections (the tokenizer) beside the weights, listed after the plan; 3.2: the weight
// formats F16, Q4_1, Q5_0, Q5_1, Q2_K..Q6_K, IQ4_NL, IQ4_XS (runtime/plan.h). A
// reader accepts its own major with any minor (a minor only appends fields an older reader
// skips, plan_encoding.h) and reads 2.0; it rejects newer majors and older ones.
inline constexpr uint32_t kArtifactVersionMajor = kPlanFormatMajor;
inline constexpr uint32_t kArtifactVersionMinor = kPlanFormatMinor;
inline constexpr uint32_t kOldestArtifactVersionMajor = kOldestPlanFormatMajor;
// Size of the encoded header in bytes.
inline constexpr size_t kArtifactHeaderSize = 64;
// Alignment of the weight section in the file: one 4 KiB page, so the mmapped
// weights are page-aligned (each weight inside the section is kWeightAlignment-aligned,
// runtime/plan.h).
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
  uint64_t weights_offset = 0;  // bytes from the file start; a multiple of kWeightAlignment
                                // (kArtifactWeightsAlignment written)
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

// The bytes of one named section for WriteArtifact (kept alive by the caller during the call).
struct ArtifactSectionData {
  std::string name;
  absl::Span<const uint8_t> bytes;
};

// Writes `plan` to `path` as an artifact. weights[i].offset and size_bytes are
// assigned here (size_bytes = WeightFormatBytes(format, shape); offsets
// kWeightAlignment-aligned, in index order), the plan is checked with ValidatePlan, and then each
// weight's bytes are produced by calling fill(i, dst), dst pointing at
// size_bytes writable bytes of the mmapped output file (so multi-GB models need
// no RAM copy), and hashed once filled (weights[i].xxh3_64 over chunks of
// kWeightHashChunkBytes, runtime/weight_hash.h; any hashes the plan held are replaced). An
// existing `path` must be a regular file (CheckOutputPath: a device node, directory or FIFO is
// refused, never replaced) that is empty or an artifact (CheckReplaceable: another file, e.g. a
// checkpoint or an executable a mistyped -o names, is refused with AlreadyExists, never
// replaced); a symlink `path` is written through (its target is replaced, the link kept). The file is
// written as a fresh temporary beside TARGET (TARGET = `path` with symlinks
// resolved; base/atomic_file.h: created exclusively, never a fixed name, so no
// other file is touched), its full size reserved up front with posix_fallocate
// (so a full disk is an error, not a SIGBUS in the mapping), and renamed to
// TARGET only on success; the temporary is removed on every failure. Callers
// that have inputs should also check `path`
// against them with CheckOutputPath (base/file_checks.h). Errors name the
// path (and the weight for fill errors): invalid plan or output path
// (InvalidArgument), I/O failures (the errno's status: ResourceExhausted for
// "No space left on device", naming the size; Internal otherwise), or fill's
// status.
//
// `sections` are written after the metadata, each at a multiple of kArtifactWeightsAlignment,
// in order, before the weights; their names must be unique and non-empty (InvalidArgument).
absl::Status WriteArtifact(
    const std::string& path, Plan plan,
    const std::function<absl::Status(size_t weight_index, uint8_t* dst)>& fill,
    const std::vector<ArtifactSectionData>& sections = {});

// How Artifact::Open makes the file's bytes addressable.
enum class ArtifactLoad {
  // A read-only shared mmap of the file (the default): opening costs
  // milliseconds whatever the size, pages are read on first use, and they are
  // the page cache's, shared with every process that maps the file.
  kMap,
  // The whole file read (pread, in chunks) into private anonymous memory,
  // then the file is no longer mapped — llama.cpp's --no-mmap. Opening reads
  // the file once (seconds for GBs) and the process holds its size in private
  // memory, but on the VMs this project is measured on, decode streams
  // anonymous memory ~1.5x faster than the same bytes in page-cache pages
  // (bench/README.md, "Loading the weights"), which the kernels cannot help.
  kRead,
  // Mapped as kMap, then the pages of the matrices the steps multiply every
  // token (linear and LM-head weights) replaced by private anonymous memory
  // (2 MiB pages where the kernel has them) holding the same bytes, read
  // from the file; the tables that are only looked up (E2B's per-layer
  // embedding table: half of a Q4_0 file) stay mapped. Opening reads those
  // matrices once (~1.3 GB for E2B Q4_0); decode then streams private
  // memory, which on the hosts measured is 1.0-1.5x faster than page-cache
  // pages (bench/README.md, "Loading the weights"). What llama.cpp's default
  // ends with for its repacked Q4_0 too. The tools' default.
  kReadMatrices,
};

// An opened artifact: the file's bytes (mapped, or read into memory:
// ArtifactLoad) and its validated plan. Immutable, so one Artifact can be
// shared by any number of sessions and threads; it must outlive them.
class Artifact {
 public:
  // Maps and checks `path`, in order: a regular file ("not a regular file",
  // checked before any blocking open, so a FIFO or device never hangs it),
  // size >= 64-byte header, magic ("not a cortiq artifact"), version (a newer
  // major: "was written by a newer cortiq (format vX.Y); this build reads vN";
  // older than 2.0: "unsupported format vX.Y ..."), header file_size == actual
  // size ("truncated: header says N bytes, file has M"), metadata and weight
  // ranges inside the file and not overlapping the header or each other,
  // weights_offset % kWeightAlignment == 0, checksum ("corrupted: checksum
  // mismatch"), the metadata parse (ParsePlan in the file's version; with a
  // valid checksum a parse failure means a layout this build does not read:
  // "... (the metadata does not match this build's format vX.Y layout:
  // recompile the model with this cortiq)"), ValidatePlan against
  // weights_size, and the named sections (3.1): unique non-empty names, each
  // range 8-byte aligned, inside the file, after the metadata and overlapping
  // neither the weights nor another section ("corrupted: section 'tokenizer'
  // [...]"). A section's contents are not read here. Every error message starts with `path`. Errors:
  // NotFound/PermissionDenied/... for the open, InvalidArgument for the
  // content, FailedPrecondition for a newer version. With ArtifactLoad::kRead
  // also ResourceExhausted (the memory for the file's size cannot be had,
  // naming the size) and the errno's status of a failed read; the checks
  // above then run on the copy. With kReadMatrices the same two errors for
  // the matrices' pages, after the checks (which run on the mapping). With
  // kMap and kReadMatrices the weights still mapped are read ahead into the
  // page cache (posix_fadvise WILLNEED, asynchronous; advice only), so that
  // a table row's first lookup is not a synchronous disk read.
  static absl::StatusOr<std::unique_ptr<Artifact>> Open(
      const std::string& path, ArtifactLoad load = ArtifactLoad::kMap);

  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  // The validated plan.
  const Plan& plan() const { return plan_; }
  // First byte of weight `weight_index` (0 <= weight_index <
  // plan().weights.size()), in place in the mapping:
  // plan().weights[i].size_bytes bytes, kWeightAlignment-aligned.
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
  // The named sections (3.1; empty for older files), as listed in the metadata.
  const std::vector<SectionEntry>& sections() const { return sections_; }
  // The bytes of section `name`, in place in the mapping (8-byte aligned, valid as long as the
  // Artifact), or an empty span if the file has none of that name.
  absl::Span<const uint8_t> section(absl::string_view name) const;
  // The tokenizer section's bytes (section(kTokenizerSectionName)): empty if the model was
  // compiled without a tokenizer or by a cortiq before format 3.1. Load it with
  // text::Tokenizer::FromSection (which checks it); runtime/generation/model_text.h gives the
  // error message for the empty case.
  absl::Span<const uint8_t> tokenizer_section() const { return section(kTokenizerSectionName); }

  // Reads every weight and checks it against the hashes written with it (VerifyWeightHashes,
  // runtime/weight_hash.h) on `threads` threads (>= 1): O(weights), about 0.1 s per GB on one
  // core from the page cache. Errors, prefixed with path(): DataLoss naming each damaged weight
  // (index, name, byte range), FailedPrecondition for a file without hashes (format < 3.1).
  absl::Status VerifyWeights(int threads = 1) const;

 private:
  Artifact() = default;

  std::string path_;
  void* mapping_ = nullptr;
  uint64_t file_size_ = 0;
  const uint8_t* weights_ = nullptr;
  ArtifactHeader header_;
  Plan plan_;
  std::vector<SectionEntry> sections_;
};

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_ARTIFACT_H_
