#include "tools/common/escapes.h"

namespace cortiq {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

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
    if (next == 'x' && i + 3 < text.size() && HexValue(text[i + 2]) >= 0 &&
        HexValue(text[i + 3]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 2]) * 16 + HexValue(text[i + 3]));
      i += 3;
      continue;
    }
    out += text[i];  // not an escape: the backslash stays
  }
  return out;
}

void AddEscapeFlags(Flags& flags, EscapeFlags* values, const std::string& which) {
  flags.AddBool("-e, --escape", &values->escape,
                "process escapes in " + which +
                    ": \\n \\r \\t \\' \\\" \\\\ \\xHH (the default, as llama.cpp's)");
  flags.AddBool("--no-escape", &values->no_escape, "take " + which + " literally");
}

void ApplyEscapes(const EscapeFlags& values, const std::vector<std::string*>& texts) {
  if (values.no_escape) return;
  for (std::string* text : texts) *text = ProcessEscapes(*text);
}

}  // namespace cortiq
