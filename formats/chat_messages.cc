// Chat messages JSON → text::ChatMessage (see chat_messages.h).
#include "formats/chat_messages.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "formats/json_util.h"

namespace cortiq {

absl::StatusOr<std::vector<text::ChatMessage>> ParseChatMessages(absl::string_view json,
                                                                 absl::string_view file_name) {
  CORTIQ_ASSIGN_OR_RETURN(const llvm::json::Value root, ParseJson(json, file_name));
  const auto error = [&](absl::string_view field, auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", field, ": ", parts...));
  };
  const llvm::json::Array* list = root.getAsArray();
  if (list == nullptr) return error("messages", "must be an array, got ", JsonKindName(root));
  std::vector<text::ChatMessage> messages;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string where = absl::StrCat("[", i, "]");
    const llvm::json::Object* o = (*list)[i].getAsObject();
    if (o == nullptr) return error(where, "must be an object");
    text::ChatMessage m;
    const llvm::Optional<llvm::StringRef> role = o->getString("role");
    if (!role) return error(where + ".role", "missing or not a string");
    m.role = role->str();
    const llvm::json::Value* content = o->get("content");
    if (content == nullptr || content->kind() == llvm::json::Value::Null) {
      m.content_kind = text::ChatMessage::ContentKind::kNone;
    } else if (content->getAsString()) {
      m.content = content->getAsString()->str();
    } else if (const llvm::json::Array* parts = content->getAsArray()) {
      m.content_kind = text::ChatMessage::ContentKind::kParts;
      for (size_t k = 0; k < parts->size(); ++k) {
        const std::string pw = absl::StrCat(where, ".content[", k, "]");
        const llvm::json::Object* p = (*parts)[k].getAsObject();
        if (p == nullptr) return error(pw, "must be an object");
        const llvm::Optional<llvm::StringRef> type = p->getString("type");
        if (!type) return error(pw + ".type", "missing or not a string");
        text::ChatContentPart part;
        if (*type == "text") {
          const llvm::Optional<llvm::StringRef> t = p->getString("text");
          if (!t) return error(pw + ".text", "missing or not a string");
          part.text = t->str();
        } else if (*type == "image" || *type == "image_url") {
          part.type = text::ChatContentPart::Type::kImage;
        } else if (*type == "audio" || *type == "input_audio") {
          part.type = text::ChatContentPart::Type::kAudio;
        } else if (*type == "video") {
          part.type = text::ChatContentPart::Type::kVideo;
        } else {
          return error(pw + ".type", "\"", type->str(), "\" is not text, image, audio or video");
        }
        m.parts.push_back(std::move(part));
      }
    } else {
      return error(where + ".content", "must be a string, a list of parts or null, got ",
                   JsonKindName(*content));
    }
    const auto present = [&](const char* key) {
      const llvm::json::Value* v = o->get(key);
      if (v == nullptr || v->kind() == llvm::json::Value::Null) return false;
      const llvm::json::Array* a = v->getAsArray();
      return a == nullptr || !a->empty();
    };
    m.has_tool_calls = present("tool_calls");
    m.has_tool_responses = present("tool_responses");
    messages.push_back(std::move(m));
  }
  return messages;
}

}  // namespace cortiq
