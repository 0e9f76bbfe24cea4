// BpeModel (runtime/text/bpe.h): merge order by rank then position, byte fallback, unk fusing,
// ignore_merges, subword prefix/suffix, and a 100k-character word (the heap keeps it fast).
#include "runtime/text/bpe.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/text/spec_builder.h"

namespace cortiq::text {
namespace {

using testing::ElementsAre;

TEST(Bpe, LowestRankMergesFirst) {
  // (a,b) first → ab, then (ab,c) → abc.
  Tokenizer t1 = *Tokenizer::FromSpec(
      BpeSpec({"a", "b", "c", "ab", "bc", "abc"}, {{"a", "b"}, {"b", "c"}, {"ab", "c"}}));
  EXPECT_THAT(Pieces(t1, "abc"), ElementsAre("abc"));
  // (b,c) first → bc; (a, bc) is no merge.
  Tokenizer t2 = *Tokenizer::FromSpec(
      BpeSpec({"a", "b", "c", "ab", "bc", "abc"}, {{"b", "c"}, {"a", "b"}, {"ab", "c"}}));
  EXPECT_THAT(Pieces(t2, "abc"), ElementsAre("a", "bc"));
}

TEST(Bpe, EqualRanksMergeLeftFirst) {
  Tokenizer t = *Tokenizer::FromSpec(BpeSpec({"a", "aa"}, {{"a", "a"}}));
  EXPECT_THAT(Pieces(t, "aaa"), ElementsAre("aa", "a"));
  EXPECT_THAT(Pieces(t, "aaaaa"), ElementsAre("aa", "aa", "a"));
}

TEST(Bpe, ByteFallbackAndUnk) {
  TokenizerSpec spec = BpeSpec({"<unk>", "a", "<0xC3>", "<0xA9>"}, {});
  spec.model.byte_fallback = true;
  spec.model.unk_id = 0;
  Tokenizer t = *Tokenizer::FromSpec(spec);
  // é = C3 A9 has byte tokens; € (E2 82 AC) does not: unk.
  EXPECT_THAT(Pieces(t, "aéa"), ElementsAre("a", "<0xC3>", "<0xA9>", "a"));
  EXPECT_THAT(Pieces(t, "a€a"), ElementsAre("a", "<unk>", "a"));
  EXPECT_THAT(Pieces(t, "€€"), ElementsAre("<unk>", "<unk>"));
  spec.model.fuse_unk = true;
  Tokenizer fused = *Tokenizer::FromSpec(spec);
  EXPECT_THAT(Pieces(fused, "€€a€"), ElementsAre("<unk>", "a", "<unk>"));
  // No unk token: the character is dropped, as tokenizers does.
  spec.model.unk_id.reset();
  Tokenizer dropped = *Tokenizer::FromSpec(spec);
  EXPECT_THAT(Pieces(dropped, "a€a"), ElementsAre("a", "a"));
}

TEST(Bpe, IgnoreMerges) {
  TokenizerSpec spec = BpeSpec({"a", "b", "c", "ab", "abc"}, {{"a", "b"}});
  Tokenizer merging = *Tokenizer::FromSpec(spec);
  EXPECT_THAT(Pieces(merging, "abc"), ElementsAre("ab", "c"));
  spec.model.ignore_merges = true;
  Tokenizer ignoring = *Tokenizer::FromSpec(spec);
  EXPECT_THAT(Pieces(ignoring, "abc"), ElementsAre("abc"));
  EXPECT_THAT(Pieces(ignoring, "abcab"), ElementsAre("ab", "c", "ab"));
}

TEST(Bpe, ContinuingSubwordPrefixAndSuffix) {
  TokenizerSpec spec = BpeSpec({"a", "##b", "##c", "##bc", "a##b"}, {});
  spec.model.continuing_subword_prefix = "##";
  // (##b, ##c) → "##b" + "c" = "##bc".
  spec.model.merges.push_back({1, 2, 3, 0});
  Tokenizer t = *Tokenizer::FromSpec(spec);
  EXPECT_THAT(Pieces(t, "abc"), ElementsAre("a", "##bc"));
  TokenizerSpec suffix = BpeSpec({"a", "b</w>", "b"}, {});
  suffix.model.end_of_word_suffix = "</w>";
  Tokenizer s = *Tokenizer::FromSpec(suffix);
  EXPECT_THAT(Pieces(s, "abb"), ElementsAre("a", "b", "b</w>"));
}

TEST(Bpe, LongWordIsNotQuadratic) {
  // 100,000 characters, 50,000 merges of (a,b) then 25,000 of (ab,ab): a rescanning BPE would
  // need ~10^10 pair visits; the heap does it in milliseconds.
  Tokenizer t = *Tokenizer::FromSpec(BpeSpec({"a", "b", "ab", "abab"}, {{"a", "b"}, {"ab", "ab"}}));
  std::string word;
  for (int i = 0; i < 50000; ++i) word += "ab";
  const std::vector<TokenId> ids = *t.Encode(word);
  ASSERT_EQ(ids.size(), 25000u);
  for (TokenId id : ids) ASSERT_EQ(id, 3);
}

}  // namespace
}  // namespace cortiq::text
