// Fuzz target: an artifact file → Artifact::Open (header, ranges, checksum, ParsePlan,
// ValidatePlan) → a Session evaluating a batch and single tokens, with and without logits,
// then a reset and a second batch. Invariants: errors name the file; an accepted plan
// re-serializes to the bytes it was parsed from and validates again; evaluation never crashes
// (the executor trusts ValidatePlan, so anything it lets through that the executor cannot run
// shows up here as a sanitizer error).
//
// The checksum covers header and metadata, so random mutations would all stop at "checksum
// mismatch". The custom mutator therefore mutates the metadata (the serialized plan, which may
// grow into the padding before the weights), a header field, the weights or the raw bytes, and
// then recomputes the checksum (except for a few raw mutations, which keep testing the checksum
// itself).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/artifact.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using namespace cortiq;

// Sessions whose plan asks for more than this (activation arena per row) are not created: a
// plan may legitimately declare a large arena (ValidatePlan bounds it by kMaxArenaBytes, 1 TiB),
// and allocating it is the host's choice, not a bug; the fuzzer's malloc limit reports anything
// else large.
constexpr uint64_t kMaxSessionArenaBytes = uint64_t{16} << 20;
// Context of the fuzzed sessions: a few positions past the micro seeds' window of 4.
constexpr int64_t kCtxSize = 12;

bool HeaderFits(const ArtifactHeader& h, size_t size) {
  return h.metadata_offset >= kArtifactHeaderSize && h.metadata_offset <= size &&
         h.metadata_size <= size - h.metadata_offset && h.weights_offset <= size &&
         h.weights_offset >= h.metadata_offset + h.metadata_size;
}

void FixChecksum(uint8_t* data, size_t size) {
  ArtifactHeader h = DecodeArtifactHeader(data);
  if (!HeaderFits(h, size)) return;
  h.checksum = ArtifactChecksum(h, data + h.metadata_offset, h.metadata_size);
  EncodeArtifactHeader(h, data);
}

void RunSession(const Artifact& artifact, const uint8_t* data, size_t size) {
  const Plan& plan = artifact.plan();
  if (plan.arena_bytes > kMaxSessionArenaBytes) return;
  for (const CacheEntry& cache : plan.caches) {
    if (static_cast<uint64_t>(cache.num_kv_heads) * static_cast<uint64_t>(cache.head_dim) >
        (uint64_t{1} << 20)) {
      return;  // rows of more than 4 MiB: the same host's choice as the arena
    }
  }
  SessionOptions options;
  options.ctx_size = kCtxSize;
  options.batch_size = 4;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(artifact, options);
  if (!session.ok()) return;
  Session& s = **session;
  // Token ids from the input's last bytes (ids past the vocabulary are errors to exercise too).
  std::vector<int32_t> tokens;
  for (size_t i = 0; i < 8; ++i) {
    const uint8_t byte = size > i ? data[size - 1 - i] : 0;
    tokens.push_back(byte == 0xff ? plan.model.vocab_size
                                  : static_cast<int32_t>(byte % plan.model.vocab_size));
  }
  const size_t batch = static_cast<size_t>(std::min<int64_t>(s.batch_size(), 3));
  (void)s.EvalBatch(absl::MakeConstSpan(tokens.data(), batch), BatchLogits::kAll);
  for (size_t t = 0; t < batch && t < 1; ++t) (void)s.batch_logits(t);
  (void)s.Eval(tokens[3], /*want_logits=*/true);
  (void)s.Eval(tokens[4], /*want_logits=*/false);
  (void)s.EvalBatch(absl::MakeConstSpan(tokens.data() + 5, 2), BatchLogits::kLast);
  for (size_t i = 0; i < plan.taps.size(); ++i) (void)s.tap(i);
  s.Reset();
  (void)s.EvalBatch(absl::MakeConstSpan(tokens.data() + 1, batch), BatchLogits::kNone);
  (void)s.Eval(tokens[0], /*want_logits=*/true);
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  const unsigned choice = rng() % 16;
  if (size < kArtifactHeaderSize || choice == 0) {
    return LLVMFuzzerMutate(data, size, max_size);  // checksum left stale: tests it
  }
  ArtifactHeader h = DecodeArtifactHeader(data);
  if (!HeaderFits(h, size) || choice == 1) {
    size = LLVMFuzzerMutate(data, size, max_size);
    if (size >= kArtifactHeaderSize) FixChecksum(data, size);
    return size;
  }
  if (choice < 12) {
    // The serialized plan, growing at most into the padding before the weights.
    const size_t room = h.weights_offset - h.metadata_offset;
    h.metadata_size = LLVMFuzzerMutate(data + h.metadata_offset, h.metadata_size, room);
    EncodeArtifactHeader(h, data);
  } else if (choice < 14) {
    // One header field (the checksum at [56, 64) is recomputed below).
    LLVMFuzzerMutate(data, 56, 56);
  } else if (h.weights_offset < size) {
    // Weight bytes (NaN/Inf, quantization scales), a short range.
    const size_t at = h.weights_offset + rng() % (size - h.weights_offset);
    const size_t length = std::min<size_t>(size - at, 1 + rng() % 64);
    LLVMFuzzerMutate(data + at, length, length);
  }
  FixChecksum(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemFile file("artifact");
  file.Set(data, size);
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(file.path());
  fuzz::CheckNamesFile(artifact.status(), file.path());
  if (!artifact.ok()) return 0;
  const Artifact& a = **artifact;
  const ArtifactHeader& h = a.header();
  CORTIQ_FUZZ_CHECK(ValidatePlan(a.plan(), h.weights_size).ok(), "plan validates once only");
  // Only a file of this build's version re-serializes to its own bytes (older majors are read,
  // then written in the current encoding; a newer minor carries fields this build skips).
  const std::string metadata = SerializePlan(a.plan());
  const bool current = h.version_major == kArtifactVersionMajor &&
                       h.version_minor == kArtifactVersionMinor;
  CORTIQ_FUZZ_CHECK(!current || (metadata.size() == h.metadata_size &&
                                  std::memcmp(metadata.data(), data + h.metadata_offset,
                                              metadata.size()) == 0),
                    "the plan does not re-serialize to its metadata");
  for (size_t i = 0; i < a.plan().weights.size(); ++i) {
    const WeightEntry& w = a.plan().weights[i];
    CORTIQ_FUZZ_CHECK(w.offset <= h.weights_size && w.size_bytes <= h.weights_size - w.offset,
                      "weight ", i, " outside the section");
  }
  RunSession(a, data, size);
  return 0;
}
