// libFuzzer entry point for the tokenizer.json reader (formats/tokenizer_json.h): any input is
// either rejected with a status or gives a spec that serializes, loads and encodes without
// crashing. Seeds: corpus/tokenizer_json_fuzz/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/tokenizer_json.h"
#include "runtime/text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<cortiq::text::TokenizerSpec> spec = cortiq::ParseTokenizerJson(json, "fuzz.json");
  if (!spec.ok()) return 0;
  absl::StatusOr<cortiq::text::Tokenizer> tokenizer = cortiq::text::Tokenizer::FromSpec(*spec);
  if (!tokenizer.ok()) return 0;
  absl::StatusOr<std::vector<cortiq::text::TokenId>> ids =
      tokenizer->Encode("Hello world <bos> \xC3\xA9\xF0\x9F\x98\x80 a  b\n", {true});
  if (ids.ok()) (void)tokenizer->Decode(*ids);
  return 0;
}
