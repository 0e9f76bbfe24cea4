// The integrity hashes of an artifact's weights (format 3.1). The header checksum covers the
// header and the plan only, so that opening a multi-GB model stays O(metadata); the weights are
// covered by hashes checked on request: each weight's bytes are cut into chunks of
// Plan::weight_hash_chunk_bytes (the last chunk shorter) and the XXH3-64 of each chunk
// (base/xxh3.h) is stored in the weight's record (WeightEntry::xxh3_64), itself under the
// checksum. WriteArtifact computes them as it writes each weight; VerifyWeightHashes recomputes
// them (Artifact::VerifyWeights; cortiq-run and cortiq-dump --verify; cortiq_model_verify).
//
// Chunks rather than one hash per weight, so that verification splits evenly over threads even
// when one table is most of the model (Gemma-4's per-layer embedding), and names the damaged
// byte range; chunks inside a weight, never across two, so that a mismatch names exactly one
// tensor. Bytes between weights (alignment padding) are read by nothing and not hashed.
#ifndef CORTIQ_RUNTIME_WEIGHT_HASH_H_
#define CORTIQ_RUNTIME_WEIGHT_HASH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace cortiq {

struct Plan;

// Chunk size WriteArtifact uses: 1 MiB. Per chunk the work is a fixed XXH3 finalization and one
// task of the verifying threads, negligible against 1 MiB of hashing (~30 µs), while the hashes
// cost 8 bytes per MiB (80 KB of plan for 10 GB of weights) and a mismatch is located to 1 MiB.
inline constexpr uint64_t kWeightHashChunkBytes = uint64_t{1} << 20;
// The chunk sizes a plan may declare (a power of two in this range): a reader bounds the work
// and the hash lists a file can ask for by them.
inline constexpr uint64_t kMinWeightHashChunkBytes = uint64_t{1} << 12;
inline constexpr uint64_t kMaxWeightHashChunkBytes = uint64_t{1} << 30;

// Number of chunks of a weight of `size_bytes` bytes: ceil(size_bytes / chunk_bytes), 0 for an
// empty weight. chunk_bytes > 0.
inline uint64_t WeightHashChunks(uint64_t size_bytes, uint64_t chunk_bytes) {
  return size_bytes / chunk_bytes + (size_bytes % chunk_bytes != 0 ? 1 : 0);
}

// The XXH3-64 of each chunk of the `size_bytes` bytes at `data`, in order
// (WeightHashChunks(size_bytes, chunk_bytes) values). chunk_bytes > 0.
std::vector<uint64_t> HashWeightChunks(const uint8_t* data, uint64_t size_bytes,
                                       uint64_t chunk_bytes);

// Recomputes every weight's chunk hashes over `weight_section` (the artifact's weight section,
// at least as large as the validated `plan` says) on `threads` threads (>= 1; the chunks of all
// weights are shared out one at a time) and compares them with the stored ones. Errors:
// FailedPrecondition "has no weight hashes ..." when the plan carries none
// (weight_hash_chunk_bytes 0: written before format 3.1); DataLoss "N of M weights are corrupted:
// weight I 'NAME' (bytes [A, B) of its S), ..." naming every damaged weight (the first 16) and
// the byte range from its first to its last damaged chunk.
absl::Status VerifyWeightHashes(const Plan& plan, const uint8_t* weight_section, int threads);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_WEIGHT_HASH_H_
