// UTF-8 and Unicode helpers for the tokenizer: validation and decoding, the character classes the
// Hugging Face `tokenizers` components test (Rust's char::is_whitespace / is_alphanumeric), and
// the Unicode normal forms (utf8proc).
#ifndef CORTIQ_RUNTIME_TEXT_UNICODE_H_
#define CORTIQ_RUNTIME_TEXT_UNICODE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace cortiq::text {

// Byte offset of the first byte of `text` that does not start or continue a well-formed UTF-8
// sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF), or npos if it is valid.
size_t FindInvalidUtf8(std::string_view text);

// True if `text` (1 to 3 bytes) is the start of a well-formed UTF-8 sequence that more bytes
// could complete (a lead byte and the continuation bytes it allows so far).
bool IsIncompleteUtf8(std::string_view text);

// Length of the UTF-8 sequence at text[i] of valid UTF-8 `text` (1 to 4).
inline size_t Utf8Length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// Code points of valid UTF-8 `text` (its bytes that are not continuation bytes): the
// characters OpenAI's text_offset and string lengths count.
inline size_t CodePointCount(std::string_view text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// The code point at text[*i] of valid UTF-8 `text`; advances *i past it.
char32_t DecodeUtf8(std::string_view text, size_t* i);

// Appends the UTF-8 encoding of `c` (at most U+10FFFF) to `out`.
void AppendUtf8(char32_t c, std::string* out);

// Rust's char::is_whitespace: the Unicode White_Space property (tab, LF, VT, FF, CR, space,
// U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
bool IsWhitespace(char32_t c);

// A word character for AddedToken::single_word (tokenizers added_vocabulary.rs: alphanumeric or
// '_'). Alphanumeric is taken as general category L* or N* (utf8proc); Rust's is_alphanumeric
// also counts the Other_Alphabetic marks (some Mn/Mc), which this does not.
bool IsWordCharacter(char32_t c);

// Unicode normal forms of valid UTF-8 `text` (utf8proc_map with UTF8PROC_STABLE; embedded NUL
// characters are kept). An ASCII text is returned unchanged.
enum class NormalForm { kNFC, kNFKC, kNFD, kNFKD };
std::string Normalize(std::string_view text, NormalForm form);

// True if every byte of `text` is below 0x80.
bool IsAscii(std::string_view text);

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_UNICODE_H_
