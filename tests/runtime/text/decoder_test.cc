// Decoder (runtime/text/decoder.h): ByteFallback (valid runs → text, invalid runs → one U+FFFD
// per byte, as tokenizers' byte_fallback.rs), Replace, Fuse, Strip, Sequence order.
#include "runtime/text/decoder.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq::text {
namespace {

using testing::ElementsAre;

DecoderSpec Of(DecoderType type) {
  DecoderSpec d;
  d.type = type;
  return d;
}

std::vector<std::string> Chain(const DecoderSpec& spec, std::vector<std::string> tokens) {
  absl::StatusOr<Decoder> d = Decoder::Create(spec);
  EXPECT_TRUE(d.ok()) << d.status();
  return *d->DecodeChain(std::move(tokens));
}

TEST(ByteFallback, RunsOfBytes) {
  const DecoderSpec b = Of(DecoderType::kByteFallback);
  EXPECT_THAT(Chain(b, {"a", "<0xE2>", "<0x82>", "<0xAC>", "b"}), ElementsAre("a", "€", "b"));
  // Not valid UTF-8: one U+FFFD per byte of the run.
  EXPECT_THAT(Chain(b, {"<0xE2>", "<0x82>", "x", "<0xFF>"}),
              ElementsAre("\xEF\xBF\xBD", "\xEF\xBF\xBD", "x", "\xEF\xBF\xBD"));
  // A valid character followed by a stray byte spoils the whole run.
  EXPECT_THAT(Chain(b, {"<0xC3>", "<0xA9>", "<0xA9>"}),
              ElementsAre("\xEF\xBF\xBD", "\xEF\xBF\xBD", "\xEF\xBF\xBD"));
  // Lower-case hex is a byte too (u8::from_str_radix); other shapes are not.
  EXPECT_THAT(Chain(b, {"<0x61>", "<0x6a>", "<0x6G>", "<0x612>"}),
              ElementsAre("aj", "<0x6G>", "<0x612>"));
}

TEST(Decoder, GemmaChain) {
  DecoderSpec seq = Of(DecoderType::kSequence);
  DecoderSpec replace = Of(DecoderType::kReplace);
  replace.pattern = {TextPattern::Kind::kString, "\xE2\x96\x81"};
  replace.content = " ";
  seq.children = {replace, Of(DecoderType::kByteFallback), Of(DecoderType::kFuse)};
  EXPECT_THAT(Chain(seq, {"▁Hello", "▁wor", "ld", "<0x21>"}), ElementsAre(" Hello world!"));
  absl::StatusOr<Decoder> d = Decoder::Create(seq);
  EXPECT_TRUE(d->IsLocal());
  EXPECT_TRUE(d->IsHeldBack("<0x21>"));
  EXPECT_FALSE(d->IsHeldBack("▁Hello"));
}

TEST(Decoder, ReplaceRegex) {
  DecoderSpec r = Of(DecoderType::kReplace);
  r.pattern = {TextPattern::Kind::kRegex, "_+"};
  r.content = " ";
  EXPECT_THAT(Chain(r, {"a__b", "_c"}), ElementsAre("a b", " c"));
}

TEST(Strip, StartAndStop) {
  DecoderSpec s = Of(DecoderType::kStrip);
  s.content = " ";
  s.start = 1;
  s.stop = 0;
  EXPECT_THAT(Chain(s, {"  a ", " b", "c"}), ElementsAre(" a ", "b", "c"));
  s.start = 5;
  s.stop = 2;
  EXPECT_THAT(Chain(s, {"  a   ", "   ", ""}), ElementsAre("a ", "", ""));
  s.content = "▁";
  s.start = 1;
  s.stop = 1;
  EXPECT_THAT(Chain(s, {"▁x▁"}), ElementsAre("x"));
  s.content = "ab";
  EXPECT_FALSE(Decoder::Create(s).ok());
}

}  // namespace
}  // namespace cortiq::text
