// The tools' command-line parser (see flags.h).
#include "tools/common/flags.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/common/version.h"

namespace cortiq {
namespace {

// Help layout: flag names in a column of this width, help text wrapped at kHelpWidth.
constexpr size_t kNameColumn = 30;
constexpr size_t kHelpWidth = 100;

std::string FormatNumber(double v) {
  std::string text = absl::StrCat(v);
  return text;
}

// `text` wrapped to lines of at most `width` columns, each after `indent` spaces (the first line
// continues wherever the caller is).
std::string Wrap(const std::string& text, size_t indent, size_t width) {
  std::string out;
  size_t column = indent;
  bool first = true;
  for (absl::string_view paragraph : absl::StrSplit(text, '\n')) {
    if (!first) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      column = indent;
    }
    first = false;
    bool line_start = true;
    for (absl::string_view word : absl::StrSplit(paragraph, ' ', absl::SkipEmpty())) {
      if (!line_start && column + 1 + word.size() > width) {
        absl::StrAppend(&out, "\n", std::string(indent, ' '));
        column = indent;
        line_start = true;
      }
      if (!line_start) {
        out += ' ';
        ++column;
      }
      absl::StrAppend(&out, word);
      column += word.size();
      line_start = false;
    }
  }
  return out;
}

}  // namespace

Flags::Flags(std::string tool, std::string usage, std::string description)
    : tool_(std::move(tool)), usage_(std::move(usage)), description_(std::move(description)) {}

void Flags::Add(const std::string& names, const std::string& value_name, const std::string& help,
                std::string default_text, bool is_bool,
                std::function<absl::Status(const std::string&, const std::string&)> store) {
  Flag flag;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipWhitespace())) {
    flag.names.push_back(std::string(absl::StripAsciiWhitespace(name)));
  }
  flag.value_name = value_name;
  flag.help = help;
  flag.default_text = std::move(default_text);
  flag.is_bool = is_bool;
  flag.store = std::move(store);
  flag.group = group_;
  flags_.push_back(std::move(flag));
}

void Flags::AddString(const std::string& names, const std::string& value_name,
                      std::string* target, const std::string& help) {
  Add(names, value_name, help, *target, false,
      [target](const std::string&, const std::string& value) {
        *target = value;
        return absl::OkStatus();
      });
}

void Flags::AddInt(const std::string& names, const std::string& value_name, int64_t* target,
                   int64_t min, int64_t max, const std::string& help) {
  Add(names, value_name, help, absl::StrCat(*target), false,
      [target, min, max](const std::string& flag, const std::string& value) {
        int64_t v = 0;
        if (!absl::SimpleAtoi(value, &v)) {
          return absl::InvalidArgumentError(
              absl::StrCat(flag, ": '", value, "' is not an integer"));
        }
        if (v < min || v > max) {
          // An unbounded side is left out: "-c = 0 must be >= 1", not "[1, 9223372036854775807]".
          return absl::InvalidArgumentError(
              max == INT64_MAX ? absl::StrCat(flag, " = ", v, " must be >= ", min)
                               : absl::StrCat(flag, " = ", v, " must be in [", min, ", ", max, "]"));
        }
        *target = v;
        return absl::OkStatus();
      });
}

namespace {

// "FLAG = VALUE must be in [MIN, MAX]", or "must be >= MIN" when MAX is no real bound (>= 1e30,
// e.g. FLT_MAX).
std::string RangeError(const std::string& flag, const std::string& value, double min,
                       double max) {
  if (max >= 1e30) return absl::StrCat(flag, " = ", value, " must be >= ", FormatNumber(min));
  return absl::StrCat(flag, " = ", value, " must be in [", FormatNumber(min), ", ",
                      FormatNumber(max), "]");
}

}  // namespace

void Flags::AddDouble(const std::string& names, const std::string& value_name, double* target,
                      double min, double max, const std::string& help) {
  Add(names, value_name, help, FormatNumber(*target), false,
      [target, min, max](const std::string& flag, const std::string& value) {
        double v = 0;
        if (!absl::SimpleAtod(value, &v) || !std::isfinite(v)) {
          return absl::InvalidArgumentError(
              absl::StrCat(flag, ": '", value, "' is not a finite number"));
        }
        if (v < min || v > max) {
          return absl::InvalidArgumentError(RangeError(flag, value, min, max));
        }
        *target = v;
        return absl::OkStatus();
      });
}

void Flags::AddFloat(const std::string& names, const std::string& value_name, float* target,
                     float min, float max, const std::string& help) {
  Add(names, value_name, help, FormatNumber(*target), false,
      [target, min, max](const std::string& flag, const std::string& value) {
        float v = 0;
        if (!absl::SimpleAtof(value, &v) || !std::isfinite(v)) {
          return absl::InvalidArgumentError(
              absl::StrCat(flag, ": '", value, "' is not a finite number"));
        }
        if (v < min || v > max) {
          return absl::InvalidArgumentError(RangeError(flag, value, min, max));
        }
        *target = v;
        return absl::OkStatus();
      });
}

void Flags::AddBool(const std::string& names, bool* target, const std::string& help) {
  Add(names, "", help, "", true, [target](const std::string& flag, const std::string& value) {
    const std::string v = absl::AsciiStrToLower(value);
    if (v == "true" || v == "1") {
      *target = true;
    } else if (v == "false" || v == "0") {
      *target = false;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": '", value, "' is not true or false"));
    }
    return absl::OkStatus();
  });
}

void Flags::AddList(const std::string& names, const std::string& value_name,
                    std::vector<std::string>* target, const std::string& help) {
  Add(names, value_name, help, "", false,
      [target](const std::string&, const std::string& value) {
        target->push_back(value);
        return absl::OkStatus();
      });
}

void Flags::AddGroup(const std::string& title) { group_ = title; }

void Flags::AddEpilog(const std::string& text) { epilog_ = text; }

Flags::Flag* Flags::Find(const std::string& name) {
  for (Flag& f : flags_) {
    for (std::string n : f.names) {
      // As the command line's names: dashes for underscores in long names (--keep-q4_0-layout
      // is matched as --keep-q4-0-layout).
      for (size_t k = 2; n.rfind("--", 0) == 0 && k < n.size(); ++k) {
        if (n[k] == '_') n[k] = '-';
      }
      if (n == name) return &f;
    }
  }
  return nullptr;
}

absl::StatusOr<std::vector<std::string>> Flags::Parse(int argc, char** argv) {
  std::vector<std::string> positional;
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::fputs(Help().c_str(), stdout);
      std::exit(0);
    }
    if (arg == "--version") {
      std::printf("%s\n", ToolVersion(tool_).c_str());
      std::exit(0);
    }
    const size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    // A name registered with one dash (llama.cpp's -np, -mmp) as written; else long names:
    // dashes for underscores, and a long name written with one dash (-ctx-size) too.
    Flag* flag = name.size() > 2 && name[1] != '-' ? Find(name) : nullptr;
    if (flag == nullptr) {
      if (name.size() > 2 && name[1] != '-') name = "-" + name;
      if (name.size() > 2) {
        for (size_t k = 2; k < name.size(); ++k) {
          if (name[k] == '_') name[k] = '-';
        }
      }
      flag = Find(name);
    }
    // A one-letter flag written as a long one (--o FILE), which the earlier Abseil-based
    // versions accepted.
    if (flag == nullptr && name.size() == 3 && name[1] == '-') flag = Find(name.substr(1));
    bool negated = false;
    if (flag == nullptr && name.rfind("--no-", 0) == 0) {
      flag = Find("--" + name.substr(5));
      negated = flag != nullptr && flag->is_bool;
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg.substr(0, eq),
                                                     " (see --help)"));
    }
    flag->set = true;
    if (flag->is_bool) {
      if (negated) {
        if (has_value) return absl::InvalidArgumentError(absl::StrCat(name, " takes no value"));
        if (absl::Status s = flag->store(name, "false"); !s.ok()) return s;
      } else if (absl::Status s = flag->store(name, has_value ? value : "true"); !s.ok()) {
        return s;
      }
      continue;
    }
    std::string v = value;
    if (!has_value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
      v = argv[++i];
    }
    if (absl::Status s = flag->store(name, v); !s.ok()) return s;
  }
  return positional;
}

std::vector<std::string> Flags::ParseOrExit(int argc, char** argv) {
  absl::StatusOr<std::vector<std::string>> positional = Parse(argc, argv);
  if (!positional.ok()) {
    std::fprintf(stderr, "%s: %s\n", tool_.c_str(), std::string(positional.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(positional);
}

bool Flags::IsSet(absl::string_view long_name) const {
  const std::string name =
      long_name.rfind("--", 0) == 0 ? std::string(long_name) : absl::StrCat("--", long_name);
  for (const Flag& f : flags_) {
    for (const std::string& n : f.names) {
      if (n == name) return f.set;
    }
  }
  return false;
}

std::string Flags::Help() const {
  std::string out = absl::StrCat("usage: ", tool_, " ", usage_, "\n");
  if (!description_.empty()) absl::StrAppend(&out, "\n", Wrap(description_, 0, kHelpWidth), "\n");
  std::string group = "\x01";
  const auto line = [&](const std::vector<std::string>& names, const std::string& value_name,
                        const std::string& help) {
    std::string left = "  ";
    // A flag with only a long name is indented as if it had a short one, so that long names line
    // up; a short name of several letters (llama.cpp's -np, -ngl) starts where one-letter ones do.
    if (absl::StartsWith(names.front(), "--")) left += "    ";
    absl::StrAppend(&left, absl::StrJoin(names, ", "));
    if (!value_name.empty()) absl::StrAppend(&left, " ", value_name);
    if (left.size() + 2 > kNameColumn) {
      absl::StrAppend(&out, left, "\n", std::string(kNameColumn, ' '));
    } else {
      absl::StrAppend(&out, left, std::string(kNameColumn - left.size(), ' '));
    }
    absl::StrAppend(&out, Wrap(help, kNameColumn, kHelpWidth), "\n");
  };
  for (const Flag& f : flags_) {
    if (f.group != group) {
      group = f.group;
      absl::StrAppend(&out, "\n", group.empty() ? "options" : group, ":\n");
    }
    std::string help = f.help;
    if (!f.default_text.empty() && help.find("default") == std::string::npos) {
      absl::StrAppend(&help, " (default: ", f.default_text, ")");
    }
    line(f.names, f.value_name, help);
  }
  if (group != "") absl::StrAppend(&out, "\n", flags_.empty() ? "options" : "general", ":\n");
  line({"-h", "--help"}, "", "print this help and exit");
  line({"--version"}, "", "print the version and build and exit");
  if (!epilog_.empty()) absl::StrAppend(&out, "\n", epilog_, epilog_.back() == '\n' ? "" : "\n");
  return out;
}

}  // namespace cortiq
