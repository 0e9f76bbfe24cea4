// The Gemma 4 chat format (see gemma4_chat.h), following the official chat_template.jinja
// statement by statement for the supported features.
#include "runtime/text/gemma4_chat.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

// Python's str.isspace() for one character: bidirectional class WS, B or S, or category Zs.
bool IsPythonSpace(char32_t c) {
  if (c >= 0x09 && c <= 0x0D) return true;
  if (c >= 0x1C && c <= 0x20) return true;
  switch (c) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

// The template's strip_thinking macro: of each part split on '<channel|>', keep what precedes a
// '<|channel>' (or the whole part), then trim the concatenation.
std::string StripThinking(std::string_view text) {
  static constexpr std::string_view kClose = "<channel|>";
  static constexpr std::string_view kOpen = "<|channel>";
  std::string result;
  size_t start = 0;
  while (true) {
    const size_t close = text.find(kClose, start);
    const std::string_view part =
        text.substr(start, close == std::string_view::npos ? std::string_view::npos : close - start);
    const size_t open = part.find(kOpen);
    result.append(open == std::string_view::npos ? part : part.substr(0, open));
    if (close == std::string_view::npos) break;
    start = close + kClose.size();
  }
  return std::string(PythonStrip(result));
}

bool IsSystemRole(const std::string& role) { return role == "system" || role == "developer"; }

}  // namespace

std::string_view PythonStrip(std::string_view text) {
  if (FindInvalidUtf8(text) != std::string_view::npos) return text;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t next = begin;
    if (!IsPythonSpace(DecodeUtf8(text, &next))) break;
    begin = next;
  }
  size_t end = text.size();
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    size_t k = start;
    if (!IsPythonSpace(DecodeUtf8(text, &k))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

absl::StatusOr<std::string> RenderGemma4Chat(absl::Span<const ChatMessage> messages,
                                             const ChatOptions& options) {
  if (messages.empty()) return absl::InvalidArgumentError("the conversation has no messages");
  if (options.continue_final_message) {
    if (messages.back().role != "assistant") {
      return absl::InvalidArgumentError(absl::StrCat(
          "message ", messages.size() - 1, ": only an assistant message can be continued, not a ",
          messages.back().role, " message"));
    }
    if (options.add_generation_prompt) {
      return absl::InvalidArgumentError(
          "continue_final_message and add_generation_prompt cannot be combined");
    }
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "tool" || m.has_tool_calls || m.has_tool_responses) {
      return absl::UnimplementedError(absl::StrCat(
          "message ", i, ": tool calls, tool responses and tool messages are not supported by "
          "the built-in Gemma 4 chat format"));
    }
  }
  std::string out = options.bos_token;
  size_t first = 0;
  if (options.enable_thinking || IsSystemRole(messages[0].role)) {
    out += "<|turn>system\n";
    if (options.enable_thinking) out += "<|think|>\n";
    if (IsSystemRole(messages[0].role)) {
      const ChatMessage& system = messages[0];
      if (system.content_kind == ChatMessage::ContentKind::kString) {
        out += PythonStrip(system.content);
      } else if (system.content_kind == ChatMessage::ContentKind::kParts) {
        // The template trims the list's Python repr; the parts' texts are what is meant.
        std::string text;
        for (const ChatContentPart& p : system.parts) {
          if (p.type != ChatContentPart::Type::kText) {
            return absl::InvalidArgumentError("message 0: a system message can hold only text");
          }
          text += p.text;
        }
        out += PythonStrip(text);
      }
      first = 1;
    }
    out += "<turn|>\n";
  }
  const std::string* previous_role = nullptr;
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const bool model = m.role == "assistant";
    const std::string& role = model ? std::string("model") : m.role;
    const bool continue_same_model_turn =
        model && previous_role != nullptr && *previous_role == "assistant";
    if (!continue_same_model_turn) absl::StrAppend(&out, "<|turn>", role, "\n");
    if (m.content_kind == ChatMessage::ContentKind::kString) {
      out += model ? StripThinking(m.content) : std::string(PythonStrip(m.content));
    } else if (m.content_kind == ChatMessage::ContentKind::kParts) {
      for (const ChatContentPart& p : m.parts) {
        switch (p.type) {
          case ChatContentPart::Type::kText:
            out += model ? StripThinking(p.text) : std::string(PythonStrip(p.text));
            break;
          case ChatContentPart::Type::kImage:
            out += "<|image|>";
            break;
          case ChatContentPart::Type::kAudio:
            out += "<|audio|>";
            break;
          case ChatContentPart::Type::kVideo:
            out += "<|video|>";
            break;
        }
      }
    }
    if (!(options.continue_final_message && i + 1 == messages.size())) out += "<turn|>\n";
    previous_role = &m.role;
  }
  if (options.add_generation_prompt) out += "<|turn>model\n";
  return out;
}

bool IsGemma4ChatTemplate(std::string_view template_text) {
  return template_text.find("<|turn>") != std::string_view::npos &&
         template_text.find("<turn|>") != std::string_view::npos;
}

}  // namespace cortiq::text
