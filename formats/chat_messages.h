// Reader of a conversation in the JSON form of Hugging Face `messages` / the OpenAI chat API:
// [{"role": "...", "content": "..." | [{"type": "text", "text": "..."}, {"type": "image"}, ...]
// | null, "tool_calls": [...]?}, ...] into text::ChatMessage (runtime/text/gemma4_chat.h).
#ifndef CORTIQ_FORMATS_CHAT_MESSAGES_H_
#define CORTIQ_FORMATS_CHAT_MESSAGES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/text/gemma4_chat.h"

namespace cortiq {

// Parses `json`. Content parts of type "text" need "text"; "image", "image_url", "audio",
// "input_audio", "video" become placeholders; other part types are an error. `tool_calls` and
// `tool_responses` are recorded as present. Errors (InvalidArgument "<file>: [i].field: ..."):
// malformed JSON, not an array of objects, a missing or non-string role, a content that is not a
// string, list or null.
absl::StatusOr<std::vector<text::ChatMessage>> ParseChatMessages(absl::string_view json,
                                                                 absl::string_view file_name);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_CHAT_MESSAGES_H_
