// Fuzz target: an artifact file → Artifact::Open (header, ranges, checksum, ParseMetadata,
// ValidatePlan, the named sections) → a Session evaluating a batch and single tokens, with and
// without logits, then a reset and a second batch; and the tokenizer section (format 3.1) loaded
// in place, encoding, decoding and stream-decoding. Invariants: errors name the file; an accepted plan
// re-serializes to the bytes it was parsed from and validates again; evaluation never crashes
// (the executor trusts ValidatePlan, so anything it lets through that the executor cannot run
// shows up here as a sanitizer error).
//
// The checksum covers header and metadata, so random mutations would all stop at "checksum
// mismatch". The custom mutator therefore mutates the metadata (the serialized plan, which may
// grow into the padding before the weights), a header field, the weights or the raw bytes, and
// then recomputes the checksum (except for a few raw mutations, which keep testing the checksum
// itself); it also mutates the tokenizer section and recomputes that section's own checksum.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include "runtime/artifact.h"
#include "runtime/plan.h"
#include "runtime/plan_encoding.h"
#include "runtime/session.h"
#include "runtime/text/hash.h"
#include "runtime/text/tokenizer.h"
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

// The tokenizer section, if any: loaded in place (its checksum and every table checked), then
// text encoded, decoded and stream-decoded; every id stays below the vocabulary size.
void RunTokenizer(const Artifact& artifact, const uint8_t* data, size_t size) {
  const absl::Span<const uint8_t> bytes = artifact.tokenizer_section();
  if (bytes.empty()) return;
  absl::StatusOr<text::Tokenizer> tokenizer = text::Tokenizer::FromSection(bytes);
  if (!tokenizer.ok()) return;
  const size_t tail = std::min<size_t>(size, 12);
  const std::string input =
      absl::StrCat("<bos>Hi <|turn>user\n",
                   std::string(reinterpret_cast<const char*>(data + size - tail), tail),
                   " \xE6\x97\xA5<turn|>");
  absl::StatusOr<std::vector<text::TokenId>> ids = tokenizer->Encode(input, {true});
  if (!ids.ok()) ids = tokenizer->Encode("hello world <eos>", {true});
  if (!ids.ok()) return;
  for (const text::TokenId id : *ids) {
    CORTIQ_FUZZ_CHECK(id >= 0 && static_cast<uint32_t>(id) < tokenizer->vocab_size(),
                      "encoded id ", id, " out of range");
  }
  absl::StatusOr<std::string> whole = tokenizer->Decode(*ids);
  text::StreamDecoder stream(&*tokenizer);
  std::string streamed;
  bool stream_ok = true;
  for (const text::TokenId id : *ids) {
    absl::StatusOr<std::string> piece = stream.Push(id);
    stream_ok = stream_ok && piece.ok();
    if (piece.ok()) streamed += *piece;
  }
  absl::StatusOr<std::string> rest = stream.Finish();
  if (whole.ok() && stream_ok && rest.ok() && !stream.streamed_long_byte_run()) {
    CORTIQ_FUZZ_CHECK(streamed + *rest == *whole, "stream decoding differs from Decode");
  }
  for (uint32_t id = 0; id < tokenizer->vocab_size() && id < 64; ++id) {
    (void)tokenizer->TokenString(static_cast<text::TokenId>(id));
  }
}

// The tokenizer section of `data` (the entry named so in the metadata, inside the file), or an
// empty range.
std::pair<size_t, size_t> TokenizerRange(const uint8_t* data, size_t size,
                                         const ArtifactHeader& h) {
  if (!HeaderFits(h, size)) return {0, 0};
  absl::StatusOr<ArtifactMetadata> metadata =
      ParseMetadata(data + h.metadata_offset, h.metadata_size, h.version_major, h.version_minor);
  if (!metadata.ok()) return {0, 0};
  for (const SectionEntry& e : metadata->sections) {
    if (e.name == kTokenizerSectionName && e.offset <= size && e.size <= size - e.offset &&
        e.size >= 64) {
      return {static_cast<size_t>(e.offset), static_cast<size_t>(e.size)};
    }
  }
  return {0, 0};
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
  } else if (const auto [at, length] = TokenizerRange(data, size, h); length > 0 && rng() % 2) {
    // A short range of the tokenizer section, then its own checksum (bytes [24, 32):
    // ChecksumBytes of [64, total_size)).
    const size_t from = at + rng() % length;
    const size_t n = std::min<size_t>(at + length - from, 1 + rng() % 32);
    LLVMFuzzerMutate(data + from, n, n);
    uint64_t total = 0;
    std::memcpy(&total, data + at + 16, 8);
    if (total >= 64 && total <= length) {
      const uint64_t checksum =
          text::ChecksumBytes(data + at + 64, static_cast<size_t>(total) - 64);
      std::memcpy(data + at + 24, &checksum, 8);
    }
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
  const std::string metadata = SerializeMetadata(a.plan(), a.sections());
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
  RunTokenizer(a, data, size);
  return 0;
}
