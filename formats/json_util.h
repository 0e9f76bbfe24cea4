// JSON parsing for the checkpoint readers: llvm::json behind guards for nesting depth, duplicate
// keys and memory, with file-naming error messages; and a tree-less walk over the members of one
// object for large documents (internal to compiler/checkpoint).
#ifndef CORTIQ_FORMATS_JSON_UTIL_H_
#define CORTIQ_FORMATS_JSON_UTIL_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/JSON.h"

namespace cortiq {

// Deepest array/object nesting accepted. llvm::json::parse recurses once per level, so a hostile
// "[[[[..." of a 100 MB header would overflow the stack; real configs and safetensors headers
// nest at most 4 deep.
inline constexpr int kMaxJsonDepth = 64;

// Bound on the objects with at least one member in one ParseJson text of n bytes:
// kJsonObjectAllowance + n / kJsonBytesPerObject. llvm::json gives every non-empty object a hash
// table of at least 64 slots (~4 KiB), so `[{"a":0},{"a":0},...]` would otherwise cost ~1000× its
// size (1 MB of text → 1 GB). With the bound, objects take at most 4 MiB + 16× the text, and the
// whole tree of an accepted text at most ~60× the text + 4 MiB (arrays of small numbers cost ~45×).
// A config.json has a few dozen objects, a safetensors header entry one.
inline constexpr size_t kJsonObjectAllowance = 1024;
inline constexpr size_t kJsonBytesPerObject = 256;

// Parses `text` as one JSON value. Errors (InvalidArgument, prefixed by `file_name`):
// "malformed JSON: [line:col, byte=N]: <llvm message>", invalid UTF-8, nesting deeper than
// kMaxJsonDepth, a key repeated within one object, more non-empty objects than the bound above.
// Keys are compared after decoding their escapes ("n\u006fde" repeats "node"; llvm::json would
// silently keep only one of them), with llvm::json's own decoding; a final count of the parsed
// members against the keys in the text catches any repeat the comparison could miss.
absl::StatusOr<llvm::json::Value> ParseJson(absl::string_view text, absl::string_view file_name);

// One member of an object visited by ForEachJsonMember.
struct JsonMember {
  std::string key;          // decoded (escapes resolved), valid UTF-8.
  absl::string_view value;  // raw text of the value, without surrounding whitespace.
  size_t value_offset = 0;  // byte offset of `value` in the text given to ForEachJsonMember.
};

// Walks the members of the JSON object `text` in document order without building a tree, so the
// memory used is that of the decoded keys (kept to detect repeats) and of whatever `visit` keeps:
// for documents such as a safetensors header, where llvm::json would need ~40× the text. `visit`
// receives each member's raw value text; it must parse every value it uses (ParseJson), since only
// the text between values (braces, quotes, colons, commas) and the keys are checked here, and the
// values only for balanced brackets. The first error returned by `visit` stops the walk.
//
// Errors (InvalidArgument, prefixed by `file_name`): `text` is not an object ("<what> must be a
// JSON object, got an array"), malformed JSON around the values or in a key (with the byte offset),
// a key repeated after decoding escapes, more than `max_members` members.
absl::Status ForEachJsonMember(absl::string_view text, absl::string_view file_name,
                               absl::string_view what, size_t max_members,
                               const std::function<absl::Status(const JsonMember&)>& visit);

// Decodes one JSON string literal (quotes included, nothing around it), escapes resolved. Plain
// literals (no escape, valid UTF-8) cost a copy; others go through llvm::json. Error:
// InvalidArgument with llvm's message (the caller names the file and field).
absl::StatusOr<std::string> ParseJsonString(absl::string_view literal);

// One element of an array visited by ForEachJsonElement.
struct JsonElement {
  size_t index = 0;         // position in the array.
  absl::string_view value;  // raw text of the value, without surrounding whitespace.
  size_t value_offset = 0;  // byte offset of `value` in the text given to ForEachJsonElement.
};

// The array counterpart of ForEachJsonMember: walks the elements of the JSON array `text` in
// order without building a tree (for a tokenizer's 500k merges, which llvm::json would hold in
// ~100 bytes each). `visit` must parse each value it uses. Errors (InvalidArgument, prefixed by
// `file_name`): `text` is not an array ("<what> must be a JSON array, got an object"), malformed
// JSON around the values (with the byte offset), more than `max_elements` elements.
absl::Status ForEachJsonElement(absl::string_view text, absl::string_view file_name,
                                absl::string_view what, size_t max_elements,
                                const std::function<absl::Status(const JsonElement&)>& visit);

// The JSON kind of `value` for messages: "null", "a boolean", "a number", "a string",
// "an array", "an object".
absl::string_view JsonKindName(const llvm::json::Value& value);

// Reads a JSON number that is an exact integer with magnitude below 2^63 (an integer literal, or
// an integral double such as 8.0). Returns false for anything else, including INT64_MAX itself
// (its double image is 2^63; no cortiq limit comes near it).
bool JsonToInt64(const llvm::json::Value& value, int64_t* out);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_JSON_UTIL_H_
