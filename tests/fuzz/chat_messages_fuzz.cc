// libFuzzer entry point for a conversation's JSON (formats/chat_messages.h: Hugging Face
// `messages`, the OpenAI chat API's form), as a chat host or server gets it: ParseChatMessages,
// then, for what it accepts, the Gemma 4 prompt (text::RenderGemma4Chat, with and without the
// generation prompt and thinking, and continuing a final assistant message as cortiq-server
// does) encoded by the golden tiny Gemma 4 tokenizer
// (tests/data/models/tiny-a-f32). Any input is either rejected with a status or gives a prompt
// that is valid UTF-8 when every message's text is, starts with the bos token and encodes to ids
// in range. Seeds: corpus/chat_messages_fuzz/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "formats/chat_messages.h"
#include "formats/tokenizer_files.h"
#include "runtime/text/gemma4_chat.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/unicode.h"

#ifndef CORTIQ_FUZZ_DEFAULT_TOKENIZER
#define CORTIQ_FUZZ_DEFAULT_TOKENIZER "tests/data/models/tiny-a-f32"
#endif

namespace {

const cortiq::text::Tokenizer& FuzzTokenizer() {
  static const cortiq::text::Tokenizer* tokenizer = [] {
    absl::StatusOr<cortiq::text::TokenizerSpec> spec =
        cortiq::ReadTokenizerSpec(CORTIQ_FUZZ_DEFAULT_TOKENIZER);
    if (!spec.ok()) std::abort();
    return new cortiq::text::Tokenizer(*cortiq::text::Tokenizer::FromSpec(*spec));
  }();
  return *tokenizer;
}

bool IsUtf8(std::string_view s) {
  return cortiq::text::FindInvalidUtf8(s) == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<cortiq::text::ChatMessage>> messages =
      cortiq::ParseChatMessages(json, "messages.json");
  if (!messages.ok()) return 0;
  bool all_utf8 = true;
  for (const cortiq::text::ChatMessage& m : *messages) {
    all_utf8 = all_utf8 && IsUtf8(m.role) && IsUtf8(m.content);
    for (const cortiq::text::ChatContentPart& p : m.parts) all_utf8 = all_utf8 && IsUtf8(p.text);
  }
  const cortiq::text::Tokenizer& tokenizer = FuzzTokenizer();
  for (int variant = 0; variant < 8; ++variant) {
    cortiq::text::ChatOptions options;
    options.add_generation_prompt = (variant & 1) != 0;
    options.enable_thinking = (variant & 2) != 0;
    options.continue_final_message = (variant & 4) != 0;  // refused with add_generation_prompt
    absl::StatusOr<std::string> prompt = cortiq::text::RenderGemma4Chat(*messages, options);
    if (!prompt.ok()) continue;
    if (prompt->rfind(options.bos_token, 0) != 0) std::abort();
    if (all_utf8 && !IsUtf8(*prompt)) std::abort();
    absl::StatusOr<std::vector<cortiq::text::TokenId>> ids = tokenizer.Encode(*prompt);
    if (ids.ok() != IsUtf8(*prompt)) std::abort();
    if (!ids.ok()) continue;
    for (const cortiq::text::TokenId id : *ids) {
      if (id < 0 || static_cast<uint32_t>(id) >= tokenizer.vocab_size()) std::abort();
    }
  }
  return 0;
}
