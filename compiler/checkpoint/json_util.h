// JSON parsing for the checkpoint readers: llvm::json with a nesting-depth guard and
// file-naming error messages (internal to compiler/checkpoint).
#ifndef CORTIQ_COMPILER_CHECKPOINT_JSON_UTIL_H_
#define CORTIQ_COMPILER_CHECKPOINT_JSON_UTIL_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/JSON.h"

namespace cortiq {

// Deepest array/object nesting accepted. llvm::json::parse recurses once per level, so a hostile
// "[[[[..." of a 100 MB header would overflow the stack; real configs and safetensors headers
// nest at most 4 deep.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as one JSON value. Errors (InvalidArgument, prefixed by `file_name`):
// "malformed JSON: [line:col, byte=N]: <llvm message>", invalid UTF-8, nesting deeper than
// kMaxJsonDepth, a key repeated within one object (compared as raw text; llvm::json would keep
// only one of them).
absl::StatusOr<llvm::json::Value> ParseJson(absl::string_view text, absl::string_view file_name);

// The JSON kind of `value` for messages: "null", "a boolean", "a number", "a string",
// "an array", "an object".
absl::string_view JsonKindName(const llvm::json::Value& value);

// Reads a JSON number that is an exact integer with magnitude below 2^63 (an integer literal, or
// an integral double such as 8.0). Returns false for anything else, including INT64_MAX itself
// (its double image is 2^63; no cortiq limit comes near it).
bool JsonToInt64(const llvm::json::Value& value, int64_t* out);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_CHECKPOINT_JSON_UTIL_H_
