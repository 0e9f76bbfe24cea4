// Decoder: the `decoder` of tokenizer.json, turning token strings back into text
// (tokenizers/src/decoders: Sequence, Replace, ByteFallback, Fuse, Strip). Each step maps the
// list of token strings to a new list (decode_chain); the text is the final list joined.
#ifndef CORTIQ_RUNTIME_TEXT_DECODER_H_
#define CORTIQ_RUNTIME_TEXT_DECODER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/text/regex.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq::text {

// True if `token` is a byte-fallback piece as ByteFallback reads it: "<0x" two hex digits ">"
// (Rust's u8::from_str_radix, so "<0x+F>" counts too). Sets *byte.
bool ParseByteToken(std::string_view token, uint8_t* byte);

class Decoder {
 public:
  // Compiles `spec`. Errors: InvalidArgument for an invalid regex or a Strip content that is
  // not one character.
  static absl::StatusOr<Decoder> Create(const DecoderSpec& spec);

  // decode_chain of every step over `tokens`. ByteFallback turns each run of byte tokens into
  // its UTF-8 text, or into one U+FFFD per byte when the run is not valid UTF-8.
  absl::StatusOr<std::vector<std::string>> DecodeChain(std::vector<std::string> tokens) const;

  // True if the chain has a ByteFallback step that a token `piece` would enter as a byte token
  // (after the per-token steps before it), and sets *byte (if not null) to its byte. The stream
  // decoder holds such tokens back.
  bool IsHeldBack(std::string_view piece, uint8_t* byte = nullptr) const;

  // True if the chain works token by token until its Fuse: Replace, Strip and ByteFallback
  // steps, then at most a Fuse at the end. Decoding such a chain piecewise at the end of any run
  // of byte tokens gives the same text as decoding all tokens at once.
  bool IsLocal() const;

 private:
  struct Step {
    DecoderType type;
    std::optional<Regex> regex;
    std::string literal;
    std::string content;
    char32_t strip_char = 0;
    uint32_t start = 0;
    uint32_t stop = 0;
  };
  absl::Status ApplyToken(const Step& step, std::string* token) const;
  std::vector<Step> steps_;
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_DECODER_H_
