// The escape sequences of a command-line text argument, as llama.cpp's tools read them by default
// (common/common.cpp string_process_escapes; its -e / --escape, on by default since 2024): a shell
// passes `-p 'a\nb'` or `--stop '\n'` with a backslash and an n, and a user coming from llama.cpp
// means a newline.
#ifndef CORTIQ_TOOLS_COMMON_ESCAPES_H_
#define CORTIQ_TOOLS_COMMON_ESCAPES_H_

#include <string>
#include <vector>

#include "tools/common/flags.h"

namespace cortiq {

// `text` with \n, \r, \t, \', \", \\ and \xHH (two hex digits: that byte) replaced by the
// characters they name; any other backslash, and a \x without two hex digits, is kept as it is
// (as llama.cpp does). Byte-for-byte otherwise; the result may be invalid UTF-8 only where a \xHH
// made it so (callers check UTF-8 after).
std::string ProcessEscapes(const std::string& text);

// -e/--escape (the default; accepted as llama.cpp scripts pass it) and --no-escape (take the
// text arguments literally) of a tool whose text arguments go through ProcessEscapes. Inline,
// so that ProcessEscapes links without the flag parser (tests/fuzz/escapes_fuzz).
struct EscapeFlags {
  bool escape = false;  // -e given (changes nothing: escapes are processed by default)
  bool no_escape = false;
};
// `which` names the tool's text flags in the help ("-p, --system and --stop").
inline void AddEscapeFlags(Flags& flags, EscapeFlags* values, const std::string& which) {
  flags.AddBool("-e, --escape", &values->escape,
                "process escapes in " + which +
                    ": \\n \\r \\t \\' \\\" \\\\ \\xHH (the default, as llama.cpp's)");
  flags.AddBool("--no-escape", &values->no_escape, "take " + which + " literally");
}

// Each of `texts` through ProcessEscapes, unless --no-escape.
inline void ApplyEscapes(const EscapeFlags& values, const std::vector<std::string*>& texts) {
  if (values.no_escape) return;
  for (std::string* text : texts) *text = ProcessEscapes(*text);
}

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_ESCAPES_H_
