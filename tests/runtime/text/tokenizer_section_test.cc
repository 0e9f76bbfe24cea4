// The tokenizer section (runtime/text/tokenizer_section.h): writer → loader round trip, and the
// loader's rejection of every kind of damage (clear error, no crash), the writer's of bad specs.
#include "runtime/text/tokenizer_section.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/text/hash.h"
#include "tests/runtime/text/spec_builder.h"

namespace cortiq::text {
namespace {

using testing::HasSubstr;

TokenizerSpec Sample() {
  TokenizerSpec spec = BpeSpec({"<bos>", "a", "b", "ab", "<0x41>"}, {{"a", "b"}});
  spec.added_tokens.push_back({0, "<bos>", true, false, false, false, false});
  spec.bos_id = 0;
  spec.post_processor.single = {{false, {0}}, {true, {}}};
  spec.generation.eos_token_ids = {0, 3};
  spec.generation.temperature = 1.0f;
  spec.generation.top_k = 64;
  spec.chat_template = {"{{ messages }}", "chat_template.jinja"};
  NormalizerSpec n;
  n.type = NormalizerType::kReplace;
  n.pattern = {TextPattern::Kind::kString, " "};
  n.content = "\xE2\x96\x81";
  spec.normalizer = n;
  return spec;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(TokenizerSection, RoundTrip) {
  const std::vector<uint8_t> bytes = *SerializeTokenizerSection(Sample());
  absl::StatusOr<TokenizerSection> s = TokenizerSection::Load(bytes);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->vocab_size(), 5u);
  EXPECT_EQ(s->Piece(3), "ab");
  EXPECT_EQ(s->FindPiece("ab"), 3);
  EXPECT_EQ(s->FindPiece("ba"), std::nullopt);
  ASSERT_NE(s->FindMerge(1, 2), nullptr);
  EXPECT_EQ(s->FindMerge(1, 2)->result, 3u);
  EXPECT_EQ(s->FindMerge(2, 1), nullptr);
  EXPECT_EQ(s->ByteId(0x41), 4);
  EXPECT_EQ(s->ByteId(0x42), -1);
  EXPECT_TRUE(s->flags(4) & kTokenByte);
  EXPECT_TRUE(s->flags(0) & kTokenSpecial);
  ASSERT_EQ(s->added_tokens().size(), 1u);
  EXPECT_EQ(s->AddedContent(s->added_tokens()[0]), "<bos>");
  const TokenizerConfig& c = s->config();
  EXPECT_EQ(c.bos_id, 0);
  EXPECT_THAT(c.generation.eos_token_ids, testing::ElementsAre(0, 3));
  EXPECT_EQ(c.generation.temperature, 1.0f);
  EXPECT_EQ(c.generation.top_k, 64);
  EXPECT_FALSE(c.generation.top_p.has_value());
  EXPECT_EQ(c.chat_template.text, "{{ messages }}");
  ASSERT_TRUE(c.normalizer.has_value());
  EXPECT_EQ(c.normalizer->content, "\xE2\x96\x81");
  Tokenizer t = *Tokenizer::FromSection(bytes);
  EXPECT_THAT(*t.Encode("ab a", {.add_special_tokens = true}), testing::ElementsAre(0, 3, 1));
}

// The sampling defaults of section 1.1 round-trip; a section without their block (1.0) loads with
// them unset.
TEST(TokenizerSection, SamplingDefaults) {
  TokenizerSpec spec = Sample();
  spec.generation.min_p = 0.0f;
  spec.generation.repetition_penalty = 1.05f;
  spec.generation.repeat_last_n = -1;
  std::vector<uint8_t> bytes = *SerializeTokenizerSection(spec);
  {
    absl::StatusOr<TokenizerSection> s = TokenizerSection::Load(bytes);
    ASSERT_TRUE(s.ok()) << s.status();
    const GenerationDefaults& g = s->config().generation;
    EXPECT_EQ(g.min_p, 0.0f);
    EXPECT_EQ(g.repetition_penalty, 1.05f);
    EXPECT_EQ(g.repeat_last_n, -1);
    EXPECT_FALSE(g.typical_p.has_value());
    EXPECT_EQ(g.temperature, 1.0f);
  }
  // Rewrite it as a 1.0 section: the sampling block's directory entry gets kind 0 (unknown,
  // skipped), the minor 0, and the checksum is recomputed.
  uint32_t num_blocks = 0;
  std::memcpy(&num_blocks, bytes.data() + 32, 4);
  bool found = false;
  for (uint32_t i = 0; i < num_blocks; ++i) {
    uint8_t* entry = bytes.data() + 64 + 24 * i;
    uint32_t kind = 0;
    std::memcpy(&kind, entry, 4);
    if (kind == 12) {
      std::memset(entry, 0, 4);
      found = true;
    }
  }
  ASSERT_TRUE(found);
  std::memset(bytes.data() + 12, 0, 4);
  const uint64_t checksum = ChecksumBytes(bytes.data() + 64, bytes.size() - 64);
  std::memcpy(bytes.data() + 24, &checksum, 8);
  absl::StatusOr<TokenizerSection> old = TokenizerSection::Load(bytes);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_FALSE(old->config().generation.min_p.has_value());
  EXPECT_FALSE(old->config().generation.repetition_penalty.has_value());
  EXPECT_EQ(old->config().generation.top_k, 64);
}

TEST(TokenizerSection, RejectsDamage) {
  std::vector<uint8_t> good = *SerializeTokenizerSection(Sample());
  // Any flipped byte past the header: the checksum.
  for (size_t at = 64; at < good.size(); at += 7) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x5A;
    const absl::Status s = TokenizerSection::Load(bad).status();
    ASSERT_FALSE(s.ok()) << "byte " << at;
    EXPECT_THAT(Message(s), HasSubstr("checksum mismatch"));
  }
  std::vector<uint8_t> bad = good;
  bad[0] = 'X';
  EXPECT_THAT(Message(TokenizerSection::Load(bad).status()), HasSubstr("bad magic"));
  bad = good;
  bad[8] = 2;
  // Major 2 with this build's minor.
  EXPECT_THAT(Message(TokenizerSection::Load(bad).status()),
              ::testing::MatchesRegex(".*version 2\\.[0-9]+ is not readable by this build \\(reads 1\\.x\\).*"));
  // Truncated anywhere.
  for (size_t n : {size_t{0}, size_t{10}, size_t{64}, good.size() / 2, good.size() - 1}) {
    const absl::Status s =
        TokenizerSection::Load(absl::MakeConstSpan(good.data(), n)).status();
    EXPECT_FALSE(s.ok()) << n;
  }
  // Misaligned start.
  std::vector<uint8_t> shifted(good.size() + 8);
  std::memcpy(shifted.data() + 1, good.data(), good.size());
  EXPECT_THAT(Message(TokenizerSection::Load(absl::MakeConstSpan(shifted.data() + 1, good.size()))
                          .status()),
              HasSubstr("does not start at a multiple of 8"));
}

TEST(TokenizerSection, WriterRejectsBadSpecs) {
  TokenizerSpec spec = Sample();
  spec.model.merges.push_back({1, 9, 3, 1});
  EXPECT_THAT(Message(SerializeTokenizerSection(spec).status()),
              HasSubstr("merge 1 names a token id out of range"));
  spec = Sample();
  spec.tokens[2].piece = "a";
  EXPECT_THAT(Message(SerializeTokenizerSection(spec).status()),
              HasSubstr("the vocabulary has the piece \"a\" twice"));
  spec = Sample();
  spec.added_tokens[0].id = 77;
  EXPECT_THAT(Message(SerializeTokenizerSection(spec).status()),
              HasSubstr("added token \"<bos>\" has id 77 out of range"));
  spec = Sample();
  spec.generation.eos_token_ids.push_back(-1);
  EXPECT_FALSE(SerializeTokenizerSection(spec).ok());
  spec = Sample();
  spec.model.merges.push_back(spec.model.merges[0]);
  EXPECT_THAT(Message(SerializeTokenizerSection(spec).status()), HasSubstr("repeats the pair"));
}

TEST(Tokenizer, RejectsInvalidUtf8AndBadIds) {
  Tokenizer t = *Tokenizer::FromSpec(Sample());
  EXPECT_THAT(Message(t.Encode("ab\xC3").status()), HasSubstr("not valid UTF-8 at byte 2"));
  EXPECT_THAT(Message(t.Encode("\xED\xA0\x80").status()), HasSubstr("at byte 0"));  // surrogate
  EXPECT_THAT(Message(t.Decode({1, 5}).status()), HasSubstr("token id 5 is out of range [0, 5)"));
  EXPECT_THAT(Message(t.Decode({-1}).status()), HasSubstr("token id -1"));
}

}  // namespace
}  // namespace cortiq::text
