#include "tools/common/escapes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace cortiq {

std::string ProcessEscapes(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[i + 1];
    char replaced = 0;
    switch (next) {
      case 'n': replaced = '\n'; break;
      case 'r': replaced = '\r'; break;
      case 't': replaced = '\t'; break;
      case '\'': replaced = '\''; break;
      case '"': replaced = '"'; break;
      case '\\': replaced = '\\'; break;
      default: break;
    }
    if (replaced != 0) {
      out += replaced;
      ++i;
      continue;
    }
    // Exactly two hex digits (SimpleHexAtoi alone would also take "+1" or " 1").
    int byte = 0;
    if (next == 'x' && i + 3 < text.size() && absl::ascii_isxdigit(text[i + 2]) &&
        absl::ascii_isxdigit(text[i + 3]) &&
        absl::SimpleHexAtoi(absl::string_view(text).substr(i + 2, 2), &byte)) {
      out += static_cast<char>(byte);
      i += 3;
      continue;
    }
    out += text[i];  // not an escape: the backslash stays
  }
  return out;
}

}  // namespace cortiq
