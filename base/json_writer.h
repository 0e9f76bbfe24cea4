// JsonWriter: builds one JSON document (RFC 8259) as text, indented two spaces per level, with
// arrays and small objects optionally on one line; and JsonQuote, the string escaping it uses.
// Used by cortiq-dump --json and cortiq-bench --json.
#ifndef CORTIQ_BASE_JSON_WRITER_H_
#define CORTIQ_BASE_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace cortiq {

// `text` as a JSON string literal, quotes included: '"' and '\' escaped, the control characters
// U+0000-U+001F as \b \f \n \r \t or \u00XX, valid UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF) passed through, and every byte of an invalid sequence
// replaced by \ufffd, so the result is valid JSON and valid UTF-8 for any input bytes (e.g. a
// file name in another encoding).
std::string JsonQuote(absl::string_view text);

// Writes values in document order: Begin/End pairs nest, Key precedes each member of an object.
// Misuse (a value without a key inside an object, unbalanced ends) is the caller's bug and is not
// diagnosed. A Begin with one_line = true puts that container and everything inside it on one
// line, separated by ", " (and ": " after keys); otherwise each element starts a new line.
class JsonWriter {
 public:
  void BeginObject(bool one_line = false) { Open('{', one_line); }
  void EndObject() { Close('}'); }
  void BeginArray(bool one_line = false) { Open('[', one_line); }
  void EndArray() { Close(']'); }
  void Key(absl::string_view key);

  void String(absl::string_view v) { Scalar(JsonQuote(v)); }
  void Int(int64_t v);
  void UInt(uint64_t v);
  void Bool(bool v) { Scalar(v ? "true" : "false"); }
  void Null() { Scalar("null"); }
  // "%.17g": 17 significant digits, which round-trip every double; NaN and infinities, which
  // JSON cannot hold, as null.
  void Double(double v);
  // `v` with `decimals` digits after the point ("%.*f"); non-finite values as null.
  void Fixed(double v, int decimals);
  // An array of integers, on one line.
  void Ints(absl::Span<const int64_t> v);

  // Key(key) then the value.
  void Field(absl::string_view key, absl::string_view v) {
    Key(key);
    String(v);
  }
  void Field(absl::string_view key, const char* v) {
    Key(key);
    String(v);
  }
  void Field(absl::string_view key, const std::string& v) {
    Key(key);
    String(v);
  }
  void Field(absl::string_view key, bool v) {
    Key(key);
    Bool(v);
  }
  void Field(absl::string_view key, int32_t v) {
    Key(key);
    Int(v);
  }
  void Field(absl::string_view key, int64_t v) {
    Key(key);
    Int(v);
  }
  void Field(absl::string_view key, uint32_t v) {
    Key(key);
    UInt(v);
  }
  void Field(absl::string_view key, uint64_t v) {
    Key(key);
    UInt(v);
  }
  void Field(absl::string_view key, double v) {
    Key(key);
    Double(v);
  }
  void Field(absl::string_view key, const std::vector<int64_t>& v) {
    Key(key);
    Ints(v);
  }

  // The document, newline-terminated; the writer is empty afterwards.
  std::string Take();

 private:
  struct Level {
    bool first = true;
    bool one_line = false;
  };
  void Separate();
  void Scalar(absl::string_view text);
  void Open(char c, bool one_line);
  void Close(char c);

  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace cortiq

#endif  // CORTIQ_BASE_JSON_WRITER_H_
