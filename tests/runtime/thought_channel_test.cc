// ThoughtChannel (runtime/generation/thought_channel.h): a Gemma 4 reply's token stream routed to
// the answer and the reasoning, checked against the split the official chat template's
// strip_thinking macro implies (the text between <|channel> and <channel|>, its first line the
// channel's name).
#include "runtime/generation/thought_channel.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/text/spec_builder.h"

namespace cortiq {
namespace {

constexpr int32_t kOpen = 100;   // <|channel> in Gemma 4's vocabulary
constexpr int32_t kClose = 101;  // <channel|>
constexpr int32_t kText = 7;     // any other token

struct Replay {
  std::string content, reasoning;
  int reasoning_tokens = 0;
};

// Pushes (token, piece) pairs in order, concatenating what each side gets.
Replay Split(const std::vector<std::pair<int32_t, std::string>>& tokens) {
  ThoughtChannel channel(kOpen, kClose);
  Replay r;
  for (const auto& [token, piece] : tokens) {
    const ThoughtSplit split = channel.Push(token, piece);
    r.content += split.content;
    r.reasoning += split.reasoning;
    r.reasoning_tokens += split.reasoning_token;
  }
  return r;
}

TEST(ThoughtChannelTest, SplitsNameReasoningAndAnswer) {
  // <|channel>thought\nLet me add.\n<channel|>4 — the markers decode to nothing.
  const Replay r = Split({{kOpen, ""},
                        {kText, "thought"},
                        {kText, "\nLet"},
                        {kText, " me add."},
                        {kText, "\n"},
                        {kClose, ""},
                        {kText, "4"}});
  EXPECT_EQ(r.reasoning, "Let me add.\n");
  EXPECT_EQ(r.content, "4");
  EXPECT_EQ(r.reasoning_tokens, 6);  // both markers, the name and the three reasoning tokens
}

TEST(ThoughtChannelTest, NoChannelIsAllAnswer) {
  const Replay r = Split({{kText, "Hello"}, {kText, ", world\n"}, {kClose, ""}, {kText, "!"}});
  EXPECT_EQ(r.content, "Hello, world\n!");  // a stray <channel|> outside changes nothing
  EXPECT_EQ(r.reasoning, "");
  EXPECT_EQ(r.reasoning_tokens, 0);
}

TEST(ThoughtChannelTest, NameSplitAcrossTokensAndEmptyChannel) {
  // The name spelled in pieces, the newline inside a token with reasoning after it.
  Replay r = Split({{kOpen, ""}, {kText, "tho"}, {kText, "ught\nab"}, {kText, "c"},
                  {kClose, ""}, {kText, "x"}});
  EXPECT_EQ(r.reasoning, "abc");
  EXPECT_EQ(r.content, "x");
  // An empty channel (thinking off, the model closing at once): nothing of it anywhere.
  r = Split({{kOpen, ""}, {kText, "thought"}, {kClose, ""}, {kText, "Hi"}});
  EXPECT_EQ(r.reasoning, "");
  EXPECT_EQ(r.content, "Hi");
  EXPECT_EQ(r.reasoning_tokens, 3);
}

TEST(ThoughtChannelTest, TextThatComesWithAMarkerWasWrittenBeforeIt) {
  // Decode flushes the decoder's held bytes at a marker and passes them with it: before the
  // opening marker they were answer text, before the closing one reasoning.
  const Replay r = Split({{kText, "a"}, {kOpen, "\xC3\xA9"}, {kText, "thought\nb"},
                        {kClose, "\xC3\xA8"}, {kText, "c"}});
  EXPECT_EQ(r.content, "a\xC3\xA9" "c");
  EXPECT_EQ(r.reasoning, "b\xC3\xA8");
}

// A Gemma-like tokenizer: byte fallback (a character spelled by byte tokens is held back by the
// stream decoder until its run ends) and the two markers, as special added tokens (Hugging Face's
// tokenizer.json) or as plain vocabulary pieces decoded as text (llama.cpp's GGUF converter
// writes Gemma 4's markers as user-defined tokens).
enum Id : int32_t { kA, kB, kHi, kThought, kNewline, kC3, kA9, kMarkOpen, kMarkClose };
text::Tokenizer MarkerTokenizer(bool special_markers) {
  text::TokenizerSpec spec = text::BpeSpec(
      {"a", "b", "Hi", "thought", "\n", "<0xC3>", "<0xA9>", "<|channel>", "<channel|>"}, {});
  spec.model.byte_fallback = true;
  text::DecoderSpec sequence;
  sequence.type = text::DecoderType::kSequence;
  text::DecoderSpec bytes, fuse;
  bytes.type = text::DecoderType::kByteFallback;
  fuse.type = text::DecoderType::kFuse;
  sequence.children = {bytes, fuse};
  spec.decoder = sequence;
  if (special_markers) {
    for (const int32_t id : {kMarkOpen, kMarkClose}) {
      text::AddedTokenSpec added;
      added.id = id;
      added.content = spec.tokens[id].piece;
      added.special = true;
      spec.added_tokens.push_back(added);
    }
  }
  absl::StatusOr<text::Tokenizer> t = text::Tokenizer::FromSpec(spec);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

// Decode over `ids`, then Finish: what each side got.
Replay DecodeAll(const text::Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  text::DecodeOptions options;
  options.skip_special_tokens = true;
  text::StreamDecoder decoder(&tokenizer, options);
  std::optional<ThoughtChannel> channel = ThoughtChannel::ForTokenizer(tokenizer);
  EXPECT_TRUE(channel.has_value());
  Replay r;
  for (const int32_t id : ids) {
    absl::StatusOr<ThoughtSplit> split = channel->Decode(decoder, id);
    EXPECT_TRUE(split.ok()) << split.status();
    r.content += split->content;
    r.reasoning += split->reasoning;
    r.reasoning_tokens += split->reasoning_token;
  }
  absl::StatusOr<ThoughtSplit> rest = channel->Finish(decoder);
  EXPECT_TRUE(rest.ok()) << rest.status();
  EXPECT_FALSE(rest->reasoning_token);
  r.content += rest->content;
  r.reasoning += rest->reasoning;
  return r;
}

TEST(ThoughtChannelTest, RealDecoderHeldBytesStayOnTheirSideOfEachMarker) {
  for (const bool special : {true, false}) {
    const text::Tokenizer t = MarkerTokenizer(special);
    // "aé" <|channel> "thought\nabé" <channel|> "Hi": each é spelled <0xC3><0xA9>, held back by
    // the decoder until a token that is not a byte comes — here the markers.
    Replay r = DecodeAll(t, {kA, kC3, kA9, kMarkOpen, kThought, kNewline, kA, kB, kC3, kA9,
                             kMarkClose, kHi});
    EXPECT_EQ(r.content, "a\xC3\xA9Hi") << special;
    EXPECT_EQ(r.reasoning, "ab\xC3\xA9") << special;  // the markers' own text nowhere
    EXPECT_EQ(r.reasoning_tokens, 8) << special;
    // Cut inside the channel with bytes held: they are reasoning.
    r = DecodeAll(t, {kMarkOpen, kThought, kNewline, kB, kC3, kA9});
    EXPECT_EQ(r.content, "") << special;
    EXPECT_EQ(r.reasoning, "b\xC3\xA9") << special;
    // Cut after the channel with bytes held: they are answer.
    r = DecodeAll(t, {kMarkOpen, kThought, kNewline, kB, kMarkClose, kC3, kA9});
    EXPECT_EQ(r.content, "\xC3\xA9") << special;
    EXPECT_EQ(r.reasoning, "b") << special;
  }
}

TEST(ThoughtChannelTest, SecondOpenInsideIsReasoningAndStateReported) {
  ThoughtChannel channel(kOpen, kClose);
  EXPECT_FALSE(channel.open());
  channel.Push(kOpen, "");
  EXPECT_TRUE(channel.open());
  channel.Push(kText, "thought\nx");
  const ThoughtSplit again = channel.Push(kOpen, "");
  EXPECT_TRUE(again.reasoning_token);
  EXPECT_TRUE(channel.open());
  EXPECT_EQ(channel.Push(kText, "y").reasoning, "y");
  channel.Push(kClose, "");
  EXPECT_FALSE(channel.open());
  EXPECT_EQ(channel.Push(kText, "z").content, "z");
}

TEST(ThoughtChannelTest, ForTokenizerFindsTheMarkers) {
  text::TokenizerSpec spec = text::BpeSpec({"a", "b", "<|channel>", "<channel|>"}, {});
  absl::StatusOr<text::Tokenizer> t = text::Tokenizer::FromSpec(spec);
  ASSERT_TRUE(t.ok()) << t.status();
  std::optional<ThoughtChannel> channel = ThoughtChannel::ForTokenizer(*t);
  ASSERT_TRUE(channel.has_value());
  channel->Push(2, "");
  EXPECT_TRUE(channel->open());
  channel->Push(3, "");
  EXPECT_FALSE(channel->open());
  // Without either marker: no splitter.
  absl::StatusOr<text::Tokenizer> plain =
      text::Tokenizer::FromSpec(text::BpeSpec({"a", "b", "<|channel>"}, {}));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(ThoughtChannel::ForTokenizer(*plain).has_value());
}

}  // namespace
}  // namespace cortiq
