// libFuzzer entry point for encoding arbitrary text (runtime/text/tokenizer.h) with the golden
// tiny Gemma 4 tokenizer (CORTIQ_FUZZ_TOKENIZER: a tokenizer.json, a checkpoint directory or a
// GGUF; default tests/data/models/tiny-a-f32). Invalid UTF-8 must be rejected with a status;
// valid text must give ids in range whose decoding, whole or streamed token by token, is the
// same text. Seeds: corpus/tokenizer_encode_fuzz/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "formats/tokenizer_files.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/unicode.h"

// The tiny tokenizer by absolute path (set by CMake), so the target runs from any directory.
#ifndef CORTIQ_FUZZ_DEFAULT_TOKENIZER
#define CORTIQ_FUZZ_DEFAULT_TOKENIZER "tests/data/models/tiny-a-f32"
#endif

namespace {

const cortiq::text::Tokenizer& FuzzTokenizer() {
  static const cortiq::text::Tokenizer* tokenizer = [] {
    const char* path = std::getenv("CORTIQ_FUZZ_TOKENIZER");
    absl::StatusOr<cortiq::text::TokenizerSpec> spec =
        cortiq::ReadTokenizerSpec(path != nullptr ? path : CORTIQ_FUZZ_DEFAULT_TOKENIZER);
    if (!spec.ok()) std::abort();
    return new cortiq::text::Tokenizer(*cortiq::text::Tokenizer::FromSpec(*spec));
  }();
  return *tokenizer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cortiq::text::Tokenizer& tokenizer = FuzzTokenizer();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<cortiq::text::TokenId>> ids = tokenizer.Encode(text);
  const bool valid = cortiq::text::FindInvalidUtf8(text) == std::string_view::npos;
  if (ids.ok() != valid) std::abort();
  if (!ids.ok()) return 0;
  for (const cortiq::text::TokenId id : *ids) {
    if (id < 0 || static_cast<uint32_t>(id) >= tokenizer.vocab_size()) std::abort();
  }
  const std::string decoded = *tokenizer.Decode(*ids);
  cortiq::text::StreamDecoder stream(&tokenizer);
  std::string streamed;
  for (const cortiq::text::TokenId id : *ids) streamed += *stream.Push(id);
  streamed += *stream.Finish();
  if (streamed != decoded) std::abort();
  if (cortiq::text::FindInvalidUtf8(decoded) != std::string::npos) std::abort();
  return 0;
}
