// JSON parsing with a depth guard (see json_util.h).
#include "compiler/checkpoint/json_util.h"

#include <cmath>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/Error.h"

namespace cortiq {
namespace {

// Checks what llvm::json::parse does not: nesting depth (its parser recurses once per level) and
// duplicate keys within one object (it silently keeps one of them; a safetensors header with a
// repeated tensor name would lose an entry). Keys are compared as raw text, escapes undecoded.
// Malformed input is left to the parser. Returns "" if fine, else the problem.
std::string ScanStructure(absl::string_view text, int max_depth) {
  struct Frame {
    bool is_object;
    bool expecting_key;
    std::unordered_set<std::string_view> keys;
  };
  std::vector<Frame> stack;
  bool in_string = false;
  bool escaped = false;
  bool string_is_key = false;
  size_t string_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (string_is_key) {
          const absl::string_view key = text.substr(string_start, i - string_start);
          if (!stack.back().keys.insert(std::string_view(key.data(), key.size())).second) {
            return absl::StrCat("duplicate key \"", key, "\" at byte ", string_start - 1);
          }
        }
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        string_start = i + 1;
        string_is_key = !stack.empty() && stack.back().is_object && stack.back().expecting_key;
        if (string_is_key) stack.back().expecting_key = false;
        break;
      case '{':
      case '[':
        if (static_cast<int>(stack.size()) >= max_depth) {
          return absl::StrCat("nesting deeper than ", max_depth, " levels at byte ", i);
        }
        stack.push_back(Frame{c == '{', c == '{', {}});
        break;
      case '}':
      case ']':
        if (!stack.empty()) stack.pop_back();
        break;
      case ',':
        if (!stack.empty() && stack.back().is_object) stack.back().expecting_key = true;
        break;
      default:
        break;
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<llvm::json::Value> ParseJson(absl::string_view text, absl::string_view file_name) {
  const std::string problem = ScanStructure(text, kMaxJsonDepth);
  if (!problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": malformed JSON: ", problem));
  }
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": malformed JSON: ", llvm::toString(value.takeError())));
  }
  return std::move(*value);
}

absl::string_view JsonKindName(const llvm::json::Value& value) {
  switch (value.kind()) {
    case llvm::json::Value::Null:
      return "null";
    case llvm::json::Value::Boolean:
      return "a boolean";
    case llvm::json::Value::Number:
      return "a number";
    case llvm::json::Value::String:
      return "a string";
    case llvm::json::Value::Array:
      return "an array";
    case llvm::json::Value::Object:
      return "an object";
  }
  return "unknown";
}

bool JsonToInt64(const llvm::json::Value& value, int64_t* out) {
  const llvm::Optional<double> number = value.getAsNumber();
  if (!number) return false;
  // 2^63 itself passes getAsInteger's range check but does not fit int64_t.
  if (!(std::fabs(*number) < 9223372036854775808.0)) return false;
  const llvm::Optional<int64_t> integer = value.getAsInteger();
  if (!integer) return false;
  *out = *integer;
  return true;
}

}  // namespace cortiq
