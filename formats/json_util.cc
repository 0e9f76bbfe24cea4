// JSON parsing with depth, duplicate-key and memory guards, and a tree-less member walk (see
// json_util.h).
#include "formats/json_util.h"

#include <cmath>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/Error.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of the 4 hex digits at text[i], or -1.
int Hex4(absl::string_view text, size_t i) {
  if (i + 4 > text.size()) return -1;
  int v = 0;
  for (size_t k = 0; k < 4; ++k) {
    const int d = HexDigit(text[i + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// LLVM 15's JSON parser decodes a surrogate pair as 0x10000 | (high - 0xD800) << 10 | (low -
// 0xDC00), an OR where an addition is meant, so every code point from U+20000 up written as
// "\uXXXX\uXXXX" (e.g. U+10FFFF, most CJK extension characters) comes out wrong. Returns `text`
// with each valid surrogate-pair escape inside a string replaced by the UTF-8 bytes of its code
// point (which llvm::json keeps as they are), or nullopt if there is none.
std::optional<std::string> RewriteSurrogatePairs(absl::string_view text) {
  if (text.find("\\u") == absl::string_view::npos) return std::nullopt;
  std::string out;
  bool changed = false;
  bool in_string = false;
  size_t copied = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string) {
      if (c == '"') in_string = true;
      continue;
    }
    if (c == '"') {
      in_string = false;
      continue;
    }
    if (c != '\\') continue;
    if (i + 1 < text.size() && text[i + 1] == 'u') {
      const int high = Hex4(text, i + 2);
      if (high >= 0xD800 && high <= 0xDBFF && i + 7 < text.size() && text[i + 6] == '\\' &&
          text[i + 7] == 'u') {
        const int low = Hex4(text, i + 8);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          const uint32_t cp = 0x10000 + ((static_cast<uint32_t>(high) - 0xD800) << 10) +
                              (static_cast<uint32_t>(low) - 0xDC00);
          out.append(text.data() + copied, i - copied);
          out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          copied = i + 12;
          changed = true;
          i += 11;
          continue;
        }
      }
    }
    ++i;  // the escaped character cannot end the string
  }
  if (!changed) return std::nullopt;
  out.append(text.data() + copied, text.size() - copied);
  return out;
}

// Decodes the JSON string literal `literal` (quotes included). Literals with escapes or control
// characters go through llvm::json itself, so that keys compare exactly as llvm::json will store
// them (including its replacement of unpaired surrogates by U+FFFD). Error: the llvm message.
absl::StatusOr<std::string> DecodeJsonString(absl::string_view literal) {
  const absl::string_view body = literal.substr(1, literal.size() - 2);
  bool plain = true;
  for (const char c : body) {
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      plain = false;
      break;
    }
  }
  if (plain && llvm::json::isUTF8(llvm::StringRef(body.data(), body.size()))) {
    return std::string(body);
  }
  const std::optional<std::string> fixed = RewriteSurrogatePairs(literal);
  if (fixed) literal = *fixed;
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse(llvm::StringRef(literal.data(), literal.size()));
  if (!value) return absl::InvalidArgumentError(llvm::toString(value.takeError()));
  const llvm::Optional<llvm::StringRef> text = value->getAsString();
  if (!text) return absl::InvalidArgumentError("not a string");
  return text->str();
}

// Checks what llvm::json::parse does not: nesting depth (its parser recurses once per level),
// duplicate keys within one object (it silently keeps one of them; a safetensors header with a
// repeated tensor name would lose an entry) and the number of non-empty objects (each costs
// llvm::json ~4 KiB). Keys with escapes are decoded before the comparison. Malformed input is
// left to the parser. Counts the keys into `*num_keys`. Returns "" if fine, else the problem.
std::string ScanStructure(absl::string_view text, int max_depth, size_t max_objects,
                          size_t* num_keys) {
  struct Frame {
    bool is_object;
    bool expecting_key;
    bool has_member;  // counted against max_objects.
    std::unordered_set<std::string_view> keys;
  };
  std::vector<Frame> stack;
  // Decoded keys with escapes; the sets view into them (a deque never moves its elements).
  std::deque<std::string> decoded;
  size_t objects = 0;
  bool in_string = false;
  bool escaped = false;
  bool string_is_key = false;
  bool string_has_escape = false;
  size_t string_start = 0;
  *num_keys = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
        string_has_escape = true;
      } else if (c == '"') {
        in_string = false;
        if (!string_is_key) continue;
        const absl::string_view raw = text.substr(string_start, i - string_start);
        std::string_view key(raw.data(), raw.size());
        if (string_has_escape) {
          absl::StatusOr<std::string> decoded_key =
              DecodeJsonString(text.substr(string_start - 1, i - string_start + 2));
          if (!decoded_key.ok()) continue;  // The parser reports the bad string.
          decoded.push_back(*std::move(decoded_key));
          key = decoded.back();
        }
        ++*num_keys;
        Frame& frame = stack.back();
        if (!frame.has_member) {
          frame.has_member = true;
          if (++objects > max_objects) {
            return absl::StrCat("more than ", max_objects, " non-empty objects in ", text.size(),
                                " bytes (at byte ", string_start - 1,
                                "); llvm::json needs ~4 KiB for each, so the limit is ",
                                kJsonObjectAllowance, " + 1 per ", kJsonBytesPerObject, " bytes");
          }
        }
        if (!frame.keys.insert(key).second) {
          return absl::StrCat("malformed JSON: duplicate key \"", raw, "\"",
                              string_has_escape
                                  ? absl::StrCat(" (\"", absl::string_view(key.data(), key.size()),
                                                 "\" once its escapes are decoded)")
                                  : "",
                              " at byte ", string_start - 1);
        }
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        string_has_escape = false;
        string_start = i + 1;
        string_is_key = !stack.empty() && stack.back().is_object && stack.back().expecting_key;
        if (string_is_key) stack.back().expecting_key = false;
        break;
      case '{':
      case '[':
        if (static_cast<int>(stack.size()) >= max_depth) {
          return absl::StrCat("malformed JSON: nesting deeper than ", max_depth, " levels at byte ",
                              i);
        }
        stack.push_back(Frame{c == '{', c == '{', false, {}});
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

// Number of object members in the tree under `root` (iterative: the depth is bounded, but an
// explicit stack costs nothing more).
size_t CountMembers(const llvm::json::Value& root) {
  size_t count = 0;
  std::vector<const llvm::json::Value*> pending = {&root};
  while (!pending.empty()) {
    const llvm::json::Value* value = pending.back();
    pending.pop_back();
    if (const llvm::json::Object* object = value->getAsObject()) {
      count += object->size();
      for (const auto& member : *object) pending.push_back(&member.second);
    } else if (const llvm::json::Array* array = value->getAsArray()) {
      for (const llvm::json::Value& element : *array) pending.push_back(&element);
    }
  }
  return count;
}

// The JSON kind of a value starting with `c`, for "must be an object, got ..." messages.
absl::string_view KindOfValueStartingWith(char c) {
  switch (c) {
    case '[':
      return "an array";
    case '"':
      return "a string";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    default:
      return c == '-' || (c >= '0' && c <= '9') ? "a number" : "";
  }
}

}  // namespace

absl::StatusOr<llvm::json::Value> ParseJson(absl::string_view text, absl::string_view file_name) {
  const std::optional<std::string> fixed = RewriteSurrogatePairs(text);
  if (fixed) text = *fixed;
  size_t num_keys = 0;
  const std::string problem = ScanStructure(
      text, kMaxJsonDepth, kJsonObjectAllowance + text.size() / kJsonBytesPerObject, &num_keys);
  if (!problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", problem));
  }
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": malformed JSON: ", llvm::toString(value.takeError())));
  }
  // Backstop of the key comparison above: llvm::json keeps one member per distinct stored key,
  // so any repeat it collapsed shows up as a missing member.
  const size_t members = CountMembers(*value);
  if (members != num_keys) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": malformed JSON: a key is repeated within an object once decoded (", num_keys,
        " keys in the text, ", members, " distinct)"));
  }
  return std::move(*value);
}

absl::Status ForEachJsonMember(absl::string_view text, absl::string_view file_name,
                               absl::string_view what, size_t max_members,
                               const std::function<absl::Status(const JsonMember&)>& visit) {
  const auto malformed = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": malformed JSON: ", parts...));
  };
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < text.size() && IsJsonSpace(text[i])) ++i;
  };
  skip_space();
  if (i == text.size()) return malformed(what, " is empty");
  if (text[i] != '{') {
    const absl::string_view kind = KindOfValueStartingWith(text[i]);
    if (kind.empty()) return malformed("unexpected character at byte ", i);
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": ", what, " must be a JSON object, got ", kind));
  }
  ++i;
  skip_space();
  // Decoded keys seen so far: one copy of each key, the only memory that grows with the text.
  absl::flat_hash_set<std::string> keys;
  bool closed = i < text.size() && text[i] == '}';
  if (closed) ++i;
  while (!closed) {
    skip_space();
    if (i >= text.size() || text[i] != '"') {
      return malformed("expected a key string at byte ", i, " of ", what);
    }
    const size_t key_start = i;
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\') ++i;  // The escaped character cannot end the string.
    }
    if (i >= text.size()) return malformed("unterminated key string at byte ", key_start);
    ++i;
    absl::StatusOr<std::string> key = DecodeJsonString(text.substr(key_start, i - key_start));
    if (!key.ok()) {
      return malformed("invalid key string at byte ", key_start, ": ", key.status().message());
    }
    if (keys.size() >= max_members) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ": ", what, " has more than ", max_members, " members"));
    }
    if (!keys.insert(*key).second) {
      return malformed("duplicate key \"", *key, "\" at byte ", key_start,
                       " (keys are compared with their escapes decoded)");
    }
    skip_space();
    if (i >= text.size() || text[i] != ':') {
      return malformed("expected ':' after the key \"", *key, "\" at byte ", i);
    }
    ++i;
    skip_space();
    // The value ends at the first ',' or '}' outside strings and brackets. Mismatched brackets
    // inside it are left to the caller's parse of the value, which then fails.
    const size_t value_start = i;
    size_t depth = 0;
    bool in_string = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    if (i >= text.size()) {
      return malformed("unexpected end of ", what, " in the value of \"", *key, "\"");
    }
    size_t value_end = i;
    while (value_end > value_start && IsJsonSpace(text[value_end - 1])) --value_end;
    if (value_end == value_start) {
      return malformed("missing value for the key \"", *key, "\" at byte ", value_start);
    }
    if (text[i] == ']') return malformed("unexpected ']' at byte ", i, " of ", what);
    JsonMember member;
    member.key = *std::move(key);
    member.value = text.substr(value_start, value_end - value_start);
    member.value_offset = value_start;
    CORTIQ_RETURN_IF_ERROR(visit(member));
    closed = text[i] == '}';
    ++i;
  }
  skip_space();
  if (i != text.size()) return malformed("text after the end of ", what, " at byte ", i);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ParseJsonString(absl::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') {
    return absl::InvalidArgumentError("not a JSON string");
  }
  for (size_t i = 1; i + 1 < literal.size(); ++i) {
    if (literal[i] == '\\') {
      ++i;
    } else if (literal[i] == '"') {
      return absl::InvalidArgumentError("not a single JSON string");
    }
  }
  return DecodeJsonString(literal);
}

absl::Status ForEachJsonElement(absl::string_view text, absl::string_view file_name,
                                absl::string_view what, size_t max_elements,
                                const std::function<absl::Status(const JsonElement&)>& visit) {
  const auto malformed = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": malformed JSON: ", parts...));
  };
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < text.size() && IsJsonSpace(text[i])) ++i;
  };
  skip_space();
  if (i == text.size()) return malformed(what, " is empty");
  if (text[i] != '[') {
    const absl::string_view kind = text[i] == '{' ? "an object" : KindOfValueStartingWith(text[i]);
    if (kind.empty()) return malformed("unexpected character at byte ", i);
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": ", what, " must be a JSON array, got ", kind));
  }
  ++i;
  skip_space();
  bool closed = i < text.size() && text[i] == ']';
  if (closed) ++i;
  size_t index = 0;
  while (!closed) {
    skip_space();
    const size_t value_start = i;
    size_t depth = 0;
    bool in_string = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) break;
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    if (i >= text.size()) return malformed("unexpected end of ", what, " in element ", index);
    size_t value_end = i;
    while (value_end > value_start && IsJsonSpace(text[value_end - 1])) --value_end;
    if (value_end == value_start) {
      return malformed("missing element ", index, " of ", what, " at byte ", value_start);
    }
    if (text[i] == '}') return malformed("unexpected '}' at byte ", i, " of ", what);
    if (index >= max_elements) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ": ", what, " has more than ", max_elements, " elements"));
    }
    JsonElement element;
    element.index = index++;
    element.value = text.substr(value_start, value_end - value_start);
    element.value_offset = value_start;
    CORTIQ_RETURN_IF_ERROR(visit(element));
    closed = text[i] == ']';
    ++i;
  }
  skip_space();
  if (i != text.size()) return malformed("text after the end of ", what, " at byte ", i);
  return absl::OkStatus();
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
