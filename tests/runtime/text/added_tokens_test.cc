// Added tokens (runtime/text/added_tokens.h): leftmost-longest matching, single_word, lstrip,
// rstrip, normalized tokens matched after the normalizer — the rules of tokenizers'
// AddedVocabulary::find_matches.
#include "runtime/text/added_tokens.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/text/spec_builder.h"

namespace cortiq::text {
namespace {

using testing::ElementsAre;

// Characters a-z and space as pieces, plus the added tokens.
Tokenizer Make(std::vector<AddedTokenSpec> added, bool with_normalizer = false) {
  std::vector<std::string> pieces;
  for (char c = 'a'; c <= 'z'; ++c) pieces.emplace_back(1, c);
  pieces.push_back(" ");
  pieces.push_back("_");
  TokenizerSpec spec = BpeSpec(pieces, {});
  for (AddedTokenSpec& t : added) {
    t.id = static_cast<TokenId>(spec.tokens.size());
    spec.tokens.push_back({t.content, false});
  }
  spec.added_tokens = std::move(added);
  if (with_normalizer) {
    NormalizerSpec n;
    n.type = NormalizerType::kReplace;
    n.pattern = {TextPattern::Kind::kString, "x"};
    n.content = "<y>";
    spec.normalizer = n;
  }
  return *Tokenizer::FromSpec(spec);
}

AddedTokenSpec Token(std::string content) {
  AddedTokenSpec t;
  t.content = std::move(content);
  return t;
}

TEST(AddedTokens, LeftmostLongest) {
  Tokenizer t = Make({Token("<a>"), Token("<a><b>"), Token("b>")});
  EXPECT_THAT(Pieces(t, "x<a><b>y"), ElementsAre("x", "<a><b>", "y"));
  // '<' is no piece (and there is no unk): dropped.
  EXPECT_THAT(Pieces(t, "<a><c"), ElementsAre("<a>", "c"));
  // "<a>" starts first and wins over the later "b>".
  EXPECT_THAT(Pieces(t, "<a>b>"), ElementsAre("<a>", "b>"));
}

TEST(AddedTokens, SingleWord) {
  AddedTokenSpec word = Token("ab");
  word.single_word = true;
  Tokenizer t = Make({word});
  EXPECT_THAT(Pieces(t, "ab c"), ElementsAre("ab", " ", "c"));
  EXPECT_THAT(Pieces(t, "c ab"), ElementsAre("c", " ", "ab"));
  EXPECT_THAT(Pieces(t, "cab"), ElementsAre("c", "a", "b"));
  EXPECT_THAT(Pieces(t, "ab_"), ElementsAre("a", "b", "_"));  // '_' is a word character
}

TEST(AddedTokens, LstripRstrip) {
  AddedTokenSpec l = Token("<l>");
  l.lstrip = true;
  AddedTokenSpec r = Token("<r>");
  r.rstrip = true;
  Tokenizer t = Make({l, r});
  const std::vector<TokenId> ids = *t.Encode("a  <l> b <r>  c");
  // The whitespace beside the token goes with it: "a", "  <l>", " b ", "<r>  ", "c".
  EXPECT_THAT(Pieces(t, "a  <l> b <r>  c"), ElementsAre("a", "<l>", " ", "b", " ", "<r>", "c"));
  EXPECT_EQ(ids.size(), 7u);
}

TEST(AddedTokens, NormalizedTokensMatchAfterTheNormalizer) {
  AddedTokenSpec raw = Token("<y>");
  AddedTokenSpec normalized = Token("<y>");
  normalized.normalized = true;
  // Raw: only a literal "<y>" in the input is the token; "x" becomes "<y>" only after
  // normalization, where only the normalized token is looked for.
  Tokenizer t_raw = Make({raw}, true);
  EXPECT_THAT(Pieces(t_raw, "x<y>"), ElementsAre("y", "<y>"));  // '<' '>' are no pieces
  Tokenizer t_norm = Make({normalized}, true);
  EXPECT_THAT(Pieces(t_norm, "x<y>"), ElementsAre("<y>", "<y>"));
}

}  // namespace
}  // namespace cortiq::text
