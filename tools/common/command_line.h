// Command-line parsing shared by the cortiq tools: Abseil flags, with the dashed spellings users
// type (`--n-predict`, `--config-only`) accepted for the underscored flag names Abseil requires.
#ifndef CORTIQ_TOOLS_COMMON_COMMAND_LINE_H_
#define CORTIQ_TOOLS_COMMON_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/flags/parse.h"

namespace cortiq {

// Rewrites every `--some-flag[=v]` / `-some-flag[=v]` argument to `--some_flag[=v]` (only the
// name part; values keep their dashes; a bare `--` ends flag parsing), then calls
// absl::ParseCommandLine, which exits with a message on an unknown flag or a bad value.
// Returns the positional arguments, argv[0] first.
inline std::vector<std::string> ParseToolCommandLine(int argc, char** argv) {
  std::vector<std::string> storage(argv, argv + argc);
  bool flags_done = false;
  for (size_t i = 1; i < storage.size(); ++i) {
    std::string& arg = storage[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') continue;
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    size_t start = arg[1] == '-' ? 2 : 1;
    size_t end = arg.find('=');
    if (end == std::string::npos) end = arg.size();
    for (size_t j = start; j < end; ++j) {
      if (arg[j] == '-') arg[j] = '_';
    }
  }
  std::vector<char*> pointers;
  for (std::string& s : storage) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(storage.size()), pointers.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_COMMAND_LINE_H_
