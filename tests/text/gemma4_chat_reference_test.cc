// The built-in Gemma 4 chat format against the official chat_template.jinja rendered by an
// independent Jinja engine (@huggingface/jinja; tests/tools/reference/render_chat.mjs) for the
// conversations of tests/data/chat/conversations.json.
#include <string>
#include <vector>

#include "base/file_util.h"
#include "formats/chat_messages.h"
#include "formats/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "runtime/text/gemma4_chat.h"

namespace cortiq {
namespace {

const std::string kChat = std::string(CORTIQ_TEST_DATA_DIR) + "/chat/";

TEST(Gemma4Chat, RendersLikeTheOfficialTemplate) {
  const std::string conversations = *ReadFileToString(kChat + "conversations.json", 1 << 20);
  const std::string reference = *ReadFileToString(kChat + "gemma4_rendered_ref.json", 1 << 20);
  absl::StatusOr<llvm::json::Value> list = ParseJson(conversations, "conversations.json");
  ASSERT_TRUE(list.ok()) << list.status();
  absl::StatusOr<llvm::json::Value> ref = ParseJson(reference, "gemma4_rendered_ref.json");
  ASSERT_TRUE(ref.ok()) << ref.status();
  int checked = 0;
  for (const llvm::json::Value& c : *list->getAsArray()) {
    const llvm::json::Object& o = *c.getAsObject();
    const std::string name = o.getString("name")->str();
    SCOPED_TRACE(name);
    std::string messages_json;
    llvm::raw_string_ostream os(messages_json);
    os << *o.get("messages");
    os.flush();
    absl::StatusOr<std::vector<text::ChatMessage>> messages =
        ParseChatMessages(messages_json, name);
    ASSERT_TRUE(messages.ok()) << messages.status();
    text::ChatOptions options;
    options.add_generation_prompt = o.getBoolean("add_generation_prompt").value_or(false);
    options.enable_thinking = o.getBoolean("enable_thinking").value_or(false);
    absl::StatusOr<std::string> rendered = text::RenderGemma4Chat(*messages, options);
    ASSERT_TRUE(rendered.ok()) << rendered.status();
    const llvm::Optional<llvm::StringRef> expected = ref->getAsObject()->getString(name);
    ASSERT_TRUE(expected.has_value());
    EXPECT_EQ(*rendered, expected->str());
    ++checked;
  }
  EXPECT_EQ(checked, 20);
}

TEST(Gemma4Chat, RecognizesTheGemma4Template) {
  const std::string official = *ReadFileToString(kChat + "gemma4_chat_template.jinja", 1 << 20);
  EXPECT_TRUE(text::IsGemma4ChatTemplate(official));
  EXPECT_FALSE(text::IsGemma4ChatTemplate("{{ '<start_of_turn>' + role }}<end_of_turn>"));
}

TEST(Gemma4Chat, RejectsWhatItDoesNotRender) {
  EXPECT_EQ(text::RenderGemma4Chat({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<text::ChatMessage>> tool = ParseChatMessages(
      R"([{"role":"user","content":"x"},{"role":"assistant","content":null,)"
      R"("tool_calls":[{"function":{"name":"f","arguments":{}}}]}])",
      "tool.json");
  ASSERT_TRUE(tool.ok()) << tool.status();
  const absl::Status status = text::RenderGemma4Chat(*tool, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()), testing::HasSubstr("message 1: tool calls"));
  EXPECT_THAT(std::string(ParseChatMessages(R"([{"content":"x"}])", "f.json").status().message()),
              testing::HasSubstr("f.json: [0].role: missing"));
  EXPECT_THAT(
      std::string(ParseChatMessages(R"([{"role":"user","content":7}])", "f.json").status().message()),
      testing::HasSubstr("[0].content: must be a string, a list of parts or null"));
}

// continue_final_message (transformers' apply_chat_template: the rendered text cut after the
// final message's content): the assistant's last turn stays open for the model to continue.
TEST(Gemma4Chat, ContinuesTheFinalAssistantMessage) {
  absl::StatusOr<std::vector<text::ChatMessage>> messages = ParseChatMessages(
      R"([{"role":"user","content":"Name a colour."},)"
      R"({"role":"assistant","content":"<|channel>thought\nhmm<channel|>The colour is "}])",
      "prefill.json");
  ASSERT_TRUE(messages.ok()) << messages.status();
  text::ChatOptions options;
  options.continue_final_message = true;
  absl::StatusOr<std::string> rendered = text::RenderGemma4Chat(*messages, options);
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  EXPECT_EQ(*rendered,
            "<bos><|turn>user\nName a colour.<turn|>\n<|turn>model\nThe colour is");
  options.add_generation_prompt = true;
  EXPECT_EQ(text::RenderGemma4Chat(*messages, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.add_generation_prompt = false;
  const absl::Status user_last =
      text::RenderGemma4Chat(absl::MakeConstSpan(*messages).first(1), options).status();
  EXPECT_EQ(user_last.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(user_last.message()),
              testing::HasSubstr("only an assistant message can be continued, not a user"));
}

TEST(Gemma4Chat, PythonStripMatchesStrStrip) {
  // str.isspace(): \x1c-\x1f and U+0085 are whitespace, U+200B and U+FEFF are not.
  EXPECT_EQ(text::PythonStrip(" \t\n\x1c\x1f a b \xC2\x85\xE3\x80\x80"), "a b");
  EXPECT_EQ(text::PythonStrip("\xE2\x80\x8B x \xEF\xBB\xBF"), "\xE2\x80\x8B x \xEF\xBB\xBF");
  EXPECT_EQ(text::PythonStrip("   "), "");
}

}  // namespace
}  // namespace cortiq
