// JsonQuote and JsonWriter (json_writer.h).
#include "base/json_writer.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cortiq {

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    // A UTF-8 sequence: lead byte, then 1-3 continuation bytes; overlong forms, surrogates and
    // code points above U+10FFFF are invalid.
    size_t len = 0;
    uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (ok) {
      ok = !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
           !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (!ok) {
      out += "\\ufffd";
      continue;
    }
    out.append(text.data() + i, len);
    i += len - 1;
  }
  out += '"';
  return out;
}

void JsonWriter::Key(absl::string_view key) {
  Separate();
  absl::StrAppend(&out_, JsonQuote(key), ": ");
  after_key_ = true;
}

void JsonWriter::Int(int64_t v) { Scalar(absl::StrCat(v)); }

void JsonWriter::UInt(uint64_t v) { Scalar(absl::StrCat(v)); }

void JsonWriter::Double(double v) {
  Scalar(std::isfinite(v) ? absl::StrFormat("%.17g", v) : std::string("null"));
}

void JsonWriter::Fixed(double v, int decimals) {
  Scalar(std::isfinite(v) ? absl::StrFormat("%.*f", decimals, v) : std::string("null"));
}

void JsonWriter::Ints(absl::Span<const int64_t> v) {
  BeginArray(true);
  for (int64_t x : v) Int(x);
  EndArray();
}

std::string JsonWriter::Take() {
  std::string out = std::move(out_) + "\n";
  out_.clear();
  levels_.clear();
  after_key_ = false;
  return out;
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& l = levels_.back();
  if (!l.first) out_ += ',';
  if (l.one_line) {
    if (!l.first) out_ += ' ';
  } else {
    out_ += '\n';
    out_.append(2 * levels_.size(), ' ');
  }
  l.first = false;
}

void JsonWriter::Scalar(absl::string_view text) {
  Separate();
  out_.append(text.data(), text.size());
}

void JsonWriter::Open(char c, bool one_line) {
  Separate();
  out_ += c;
  const bool parent_one_line = !levels_.empty() && levels_.back().one_line;
  levels_.push_back({true, one_line || parent_one_line});
}

void JsonWriter::Close(char c) {
  const Level l = levels_.back();
  levels_.pop_back();
  if (!l.one_line && !l.first) {
    out_ += '\n';
    out_.append(2 * levels_.size(), ' ');
  }
  out_ += c;
}

}  // namespace cortiq
