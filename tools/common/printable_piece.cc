// PrintablePiece (see printable_piece.h).
#include "tools/common/printable_piece.h"

#include "absl/strings/str_cat.h"
#include "runtime/text/unicode.h"

namespace cortiq {

std::string PrintablePiece(std::string_view piece) {
  std::string out;
  for (size_t i = 0; i < piece.size();) {
    const unsigned char c = static_cast<unsigned char>(piece[i]);
    if (c >= 0x80) {
      const size_t length = text::Utf8Length(c);
      if (i + length <= piece.size() &&
          text::FindInvalidUtf8(piece.substr(i, length)) == std::string_view::npos) {
        out.append(piece.substr(i, length));
        i += length;
        continue;
      }
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7F) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  return out;
}

}  // namespace cortiq
