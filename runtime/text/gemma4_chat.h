// The built-in Gemma 4 chat format: renders a conversation to the prompt text exactly as the
// official Gemma 4 E2B/E4B `chat_template.jinja` does (google/gemma-4-E2B-it; a copy is kept in
// tests/data/chat/gemma4_chat_template.jinja and the rendering is tested against it with an
// independent Jinja engine), without a template engine at run time:
//
//     <bos>
//     [<|turn>system\n [<|think|>\n] [system text, trimmed] <turn|>\n]   if a system/developer
//                                                      message comes first or thinking is on
//     per message: <|turn>ROLE\n CONTENT <turn|>\n     ROLE: user, model (for assistant), or the
//                                                      role as given; CONTENT trimmed; a model
//                                                      message loses its <|channel>…<channel|>
//                                                      (thought) parts; a model message right
//                                                      after another one continues its turn
//                                                      (no second <|turn>model\n)
//     [<|turn>model\n]                                 add_generation_prompt
//
// With continue_final_message the last (assistant) message's <turn|>\n is left out, as
// transformers' apply_chat_template(continue_final_message=True) cuts the rendered text after
// that message's content.
//
// Content is a string or a list of parts (text, each trimmed; image/audio/video placeholders
// <|image|>, <|audio|>, <|video|>). Tools (declarations, tool_calls, tool messages) are not
// rendered: they give Unimplemented.
#ifndef CORTIQ_RUNTIME_TEXT_GEMMA4_CHAT_H_
#define CORTIQ_RUNTIME_TEXT_GEMMA4_CHAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace cortiq::text {

// One part of a message's content given as a list (OpenAI / HF multimodal form).
struct ChatContentPart {
  enum class Type { kText, kImage, kAudio, kVideo };
  Type type = Type::kText;
  std::string text;  // kText.
};

// One message of a conversation (HF `messages` entry).
struct ChatMessage {
  std::string role;  // "system", "developer", "user", "assistant", ...
  enum class ContentKind { kNone, kString, kParts };
  ContentKind content_kind = ContentKind::kString;
  std::string content;                 // kString.
  std::vector<ChatContentPart> parts;  // kParts.
  bool has_tool_calls = false;         // `tool_calls` present: not supported.
  bool has_tool_responses = false;     // `tool_responses` present: not supported.
};

struct ChatOptions {
  bool add_generation_prompt = false;
  // HF apply_chat_template's continue_final_message: the last message, the assistant's, is left
  // open (no <turn|>\n after it) so that the model continues it (a prefill); its text is
  // rendered as in a closed turn (trimmed, thoughts stripped). Excludes add_generation_prompt.
  bool continue_final_message = false;
  bool enable_thinking = false;  // the template's `enable_thinking`: <|think|> in the system turn.
  std::string bos_token = "<bos>";
};

// The prompt text of `messages`. Errors: InvalidArgument for no messages, a system/developer
// message whose content is not text, or continue_final_message with a last message that is not
// the assistant's or with add_generation_prompt; Unimplemented for tool calls, tool responses
// or a "tool" message (the official template's tool formats are not built in).
absl::StatusOr<std::string> RenderGemma4Chat(absl::Span<const ChatMessage> messages,
                                             const ChatOptions& options);

// Python's str.strip() (what Jinja's `trim` filter does in transformers): removes leading and
// trailing characters for which str.isspace() is true.
std::string_view PythonStrip(std::string_view text);

// True if a chat template is of the Gemma 4 format (its turn markers "<|turn>" and "<turn|>"),
// so that the built-in renderer gives what the template would for the supported features.
bool IsGemma4ChatTemplate(std::string_view template_text);

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_GEMMA4_CHAT_H_
