// libFuzzer entry point for the tokenizer section loader (runtime/text/tokenizer_section.h): any
// bytes are rejected with a status or load into a tokenizer that encodes and decodes within
// bounds (every id it returns is below the vocabulary size). Seeds: corpus/tokenizer_section_fuzz/
// (sections written by SerializeTokenizerSection; most mutations fail the checksum, so a fuzzer
// dictionary or a checksum-fixing custom mutator gets deeper).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/text/tokenizer.h"

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
  return 0;
}
