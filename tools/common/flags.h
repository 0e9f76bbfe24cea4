// The command line of every cortiq tool: one parser, so that a flag is spelled the same way in
// every tool (llama.cpp's spelling where it has one: -m/--model, -t/--threads, -c/--ctx-size,
// -n/--n-predict, -b/--batch-size, -p/--prompt, -s/--seed ...), -h/--help prints the dashed names
// and exits 0, and --version says what was built (tools/common/version.h).
//
//   Flags flags("cortiq-run", "MODEL.cortiq [options]", "Runs a compiled model.");
//   int64_t threads = PhysicalCoreCount();
//   flags.AddInt("-t, --threads", "N", &threads, 1, 256, "threads for the matrix products");
//   absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv);
//
// Accepted forms: `--name value`, `--name=value`, `-x value`, `-x=value`; for a bool `--name`,
// `--name=true|false|1|0` and `--no-name`; `--` ends the flags (later arguments are positional, as
// is a lone `-`). A value may start with '-' (`--seed -1`). Underscores in a long name are read as
// dashes (`--ctx_size`, the spelling of earlier Abseil-based versions), and a one-letter name
// may be written with two dashes (`--o FILE` for `-o FILE`), as Abseil allowed.
#ifndef CORTIQ_TOOLS_COMMON_FLAGS_H_
#define CORTIQ_TOOLS_COMMON_FLAGS_H_

#include <cstdint>
#include <functional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cortiq {

class Flags {
 public:
  // `tool`: the program name ("cortiq-run"); `usage`: what follows it in the usage line;
  // `description`: a paragraph under the usage line.
  Flags(std::string tool, std::string usage, std::string description);

  // Each Add* declares one flag. `names`: its spellings, comma-separated, e.g. "-c, --ctx-size"
  // (at most one single-letter one; the first long one names the flag in messages and IsSet).
  // `value_name` is shown in the help ("N", "FILE"). The target's value at the time of the call
  // is the default, shown in the help as "(default: V)" unless the help text mentions a default
  // itself or the value is empty.
  void AddString(const std::string& names, const std::string& value_name, std::string* target,
                 const std::string& help);
  // An integer in [min, max] (errors name the flag and the range).
  void AddInt(const std::string& names, const std::string& value_name, int64_t* target,
              int64_t min, int64_t max, const std::string& help);
  // A finite number in [min, max].
  void AddFloat(const std::string& names, const std::string& value_name, float* target, float min,
                float max, const std::string& help);
  void AddDouble(const std::string& names, const std::string& value_name, double* target,
                 double min, double max, const std::string& help);
  // A switch: true when given; --no-NAME sets it false.
  void AddBool(const std::string& names, bool* target, const std::string& help);
  // A flag that may be repeated; each value is appended.
  void AddList(const std::string& names, const std::string& value_name,
               std::vector<std::string>* target, const std::string& help);
  // Starts a group of flags under `title` in the help ("sampling:").
  void AddGroup(const std::string& title);
  // Text printed after the flags (examples, notes).
  void AddEpilog(const std::string& text);

  // Parses argv[1..]: fills the targets and returns the positional arguments in order. -h/--help
  // prints Help() to stdout and exits 0; --version prints ToolVersion(tool) and exits 0 (both are
  // declared by the constructor). Errors (InvalidArgument): "unknown flag --x (see --help)",
  // "--x needs a value", "--x: 'abc' is not an integer", "--x = 5 must be in [1, 4]",
  // "--x takes no value".
  absl::StatusOr<std::vector<std::string>> Parse(int argc, char** argv);

  // Parse, and on error prints "TOOL: message" to stderr and exits 1.
  std::vector<std::string> ParseOrExit(int argc, char** argv);

  // True if the flag named `long_name` ("--ctx-size" or "ctx-size") was given.
  bool IsSet(absl::string_view long_name) const;

  // The help text: usage, description, the flags with their help and defaults, the epilog.
  std::string Help() const;
  const std::string& tool() const { return tool_; }

 private:
  struct Flag {
    std::vector<std::string> names;  // as written, e.g. {"-c", "--ctx-size"}
    std::string value_name;          // empty for bools
    std::string help;
    std::string default_text;
    bool is_bool = false;
    bool set = false;
    // Stores a value (the text after '=' or the next argument); an error names the flag.
    std::function<absl::Status(const std::string& flag, const std::string& value)> store;
    std::string group;  // the AddGroup title in effect when it was declared
  };
  void Add(const std::string& names, const std::string& value_name, const std::string& help,
           std::string default_text, bool is_bool,
           std::function<absl::Status(const std::string&, const std::string&)> store);
  Flag* Find(const std::string& name);

  std::string tool_;
  std::string usage_;
  std::string description_;
  std::vector<Flag> flags_;
  std::string group_;
  std::string epilog_;
  bool help_ = false;
  bool version_ = false;
};

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_FLAGS_H_
