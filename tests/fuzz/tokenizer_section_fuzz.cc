// libFuzzer entry point for the tokenizer section loader (runtime/text/tokenizer_section.h): any
// bytes are rejected with a status or load into a tokenizer that encodes and decodes within
// bounds (every id it returns is below the vocabulary size). Seeds: corpus/tokenizer_section_fuzz/
// (sections written by SerializeTokenizerSection). The section's checksum would stop almost every
// mutation, so in the fuzzing build (CORTIQ_FUZZ_CUSTOM_MUTATOR) a custom mutator recomputes it
// after most mutations: damaged contents behind a valid checksum reach the table checks.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <random>

#include "runtime/text/hash.h"
#include "runtime/text/tokenizer.h"

#ifdef CORTIQ_FUZZ_CUSTOM_MUTATOR
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// Mutates, then (7 times in 8) rewrites the section checksum: bytes [24, 32) hold ChecksumBytes of
// [64, total_size), total_size at [16, 24).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  const bool fix = rng() % 8 != 0;
  if (size >= 64 && rng() % 2) {
    // A short range past the fixed header, where the tables are.
    const size_t from = rng() % size;
    const size_t n = std::min<size_t>(size - from, 1 + rng() % 16);
    LLVMFuzzerMutate(data + from, n, n);
  } else {
    size = LLVMFuzzerMutate(data, size, max_size);
  }
  if (fix && size >= 64) {
    uint64_t total = 0;
    std::memcpy(&total, data + 16, 8);
    if (total >= 64 && total <= size) {
      const uint64_t checksum =
          cortiq::text::ChecksumBytes(data + 64, static_cast<size_t>(total) - 64);
      std::memcpy(data + 24, &checksum, 8);
    }
  }
  return size;
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The loader requires 8-byte alignment, as the artifact guarantees.
  std::vector<uint64_t> aligned((size + 7) / 8 + 1);
  std::memcpy(aligned.data(), data, size);
  const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(aligned.data()), size);
  absl::StatusOr<cortiq::text::Tokenizer> tokenizer = cortiq::text::Tokenizer::FromSection(bytes);
  if (!tokenizer.ok()) return 0;
  absl::StatusOr<std::vector<cortiq::text::TokenId>> ids =
      tokenizer->Encode("The quick brown fox <bos><eos> \xE6\x97\xA5\xE6\x9C\xAC \x01", {true});
  if (!ids.ok()) return 0;
  for (const cortiq::text::TokenId id : *ids) {
    if (id < 0 || static_cast<uint32_t>(id) >= tokenizer->vocab_size()) std::abort();
  }
  (void)tokenizer->Decode(*ids);
  // Ids taken from the input's bytes (some out of range): decoded whole and streamed.
  std::vector<cortiq::text::TokenId> raw;
  for (size_t i = 0; i + 2 <= size && raw.size() < 64; i += 2) {
    raw.push_back(static_cast<cortiq::text::TokenId>((data[i] | data[i + 1] << 8) %
                                                     (tokenizer->vocab_size() + 2)));
  }
  const bool in_range = std::all_of(raw.begin(), raw.end(), [&](cortiq::text::TokenId id) {
    return static_cast<uint32_t>(id) < tokenizer->vocab_size();
  });
  for (const bool skip : {false, true}) {
    cortiq::text::DecodeOptions options;
    options.skip_special_tokens = skip;
    absl::StatusOr<std::string> whole = tokenizer->Decode(raw, options);
    if (whole.ok() != in_range) std::abort();
    cortiq::text::StreamDecoder stream(&*tokenizer, options);
    std::string streamed;
    bool stream_ok = true;
    for (const cortiq::text::TokenId id : raw) {
      absl::StatusOr<std::string> piece = stream.Push(id);
      if (!piece.ok()) {
        stream_ok = false;
        break;
      }
      streamed += *piece;
    }
    if (stream_ok) {
      absl::StatusOr<std::string> rest = stream.Finish();
      if (!rest.ok()) std::abort();
      streamed += *rest;
      // A long run of byte tokens that is not valid UTF-8 as a whole streams its well-formed
      // characters where Decode has U+FFFD (StreamDecoder::kMaxHeldBackBytes).
      if (whole.ok() && !stream.streamed_long_byte_run() && streamed != *whole) std::abort();
    }
  }
  return 0;
}
