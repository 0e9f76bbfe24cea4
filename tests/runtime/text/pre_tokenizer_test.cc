// PreTokenizer (runtime/text/pre_tokenizer.h): Split with every behavior on the example of the
// tokenizers documentation ("the-final--countdown" split on "-"), invert, regex patterns with
// lookahead and Unicode classes, Metaspace's prepend schemes.
#include "runtime/text/pre_tokenizer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq::text {
namespace {

using testing::ElementsAre;

std::vector<std::string> Apply(const PreTokenizerSpec& spec, const std::string& text,
                               bool at_start = true) {
  absl::StatusOr<PreTokenizer> p = PreTokenizer::Create(spec);
  EXPECT_TRUE(p.ok()) << p.status();
  std::vector<PreToken> pieces = {{text, at_start}};
  EXPECT_TRUE(p->Apply(&pieces).ok());
  std::vector<std::string> out;
  for (const PreToken& t : pieces) out.push_back(t.text);
  return out;
}

PreTokenizerSpec Split(TextPattern pattern, SplitBehavior behavior, bool invert = false) {
  PreTokenizerSpec s;
  s.type = PreTokenizerType::kSplit;
  s.pattern = std::move(pattern);
  s.behavior = behavior;
  s.invert = invert;
  return s;
}

const TextPattern kDash = {TextPattern::Kind::kString, "-"};

// The expected splits are those of the tokenizers documentation (SplitDelimiterBehavior).
TEST(Split, EveryBehavior) {
  const std::string text = "the-final--countdown";
  EXPECT_THAT(Apply(Split(kDash, SplitBehavior::kRemoved), text),
              ElementsAre("the", "final", "countdown"));
  EXPECT_THAT(Apply(Split(kDash, SplitBehavior::kIsolated), text),
              ElementsAre("the", "-", "final", "-", "-", "countdown"));
  EXPECT_THAT(Apply(Split(kDash, SplitBehavior::kMergedWithPrevious), text),
              ElementsAre("the-", "final-", "-", "countdown"));
  EXPECT_THAT(Apply(Split(kDash, SplitBehavior::kMergedWithNext), text),
              ElementsAre("the", "-final", "-", "-countdown"));
  EXPECT_THAT(Apply(Split(kDash, SplitBehavior::kContiguous), text),
              ElementsAre("the", "-", "final", "--", "countdown"));
}

TEST(Split, Invert) {
  // Inverted: the words are the delimiters.
  const TextPattern words = {TextPattern::Kind::kRegex, "\\w+"};
  EXPECT_THAT(Apply(Split(words, SplitBehavior::kRemoved, true), "Hey, friend!"),
              ElementsAre("Hey", "friend"));
  EXPECT_THAT(Apply(Split(words, SplitBehavior::kRemoved), "Hey, friend!"),
              ElementsAre(", ", "!"));
}

TEST(Split, RegexWithLookaheadAndUnicodeClasses) {
  // GPT-2's pattern: \s+(?!\S) keeps the last space for the next word; \p{L} matches é, я, 日.
  const TextPattern gpt2 = {TextPattern::Kind::kRegex,
                            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
                            "\\s+(?!\\S)|\\s+"};
  EXPECT_THAT(Apply(Split(gpt2, SplitBehavior::kIsolated), "I'm   héllo 日本 42!!"),
              ElementsAre("I", "'m", "  ", " héllo", " 日本", " 42", "!!"));
}

TEST(Split, EmptyMatchesDoNotLoop) {
  // An empty-matching pattern splits nowhere visible (empty pieces are dropped).
  const TextPattern empty = {TextPattern::Kind::kRegex, "x*"};
  EXPECT_THAT(Apply(Split(empty, SplitBehavior::kIsolated), "abxxc"),
              ElementsAre("a", "b", "xx", "c"));
}

TEST(Metaspace, PrependSchemes) {
  PreTokenizerSpec m;
  m.type = PreTokenizerType::kMetaspace;
  m.replacement = "\xE2\x96\x81";
  m.prepend_scheme = PrependScheme::kAlways;
  EXPECT_THAT(Apply(m, "Hey friend"), ElementsAre("▁Hey", "▁friend"));
  EXPECT_THAT(Apply(m, "Hey friend", false), ElementsAre("▁Hey", "▁friend"));
  m.prepend_scheme = PrependScheme::kFirst;
  EXPECT_THAT(Apply(m, "Hey friend"), ElementsAre("▁Hey", "▁friend"));
  EXPECT_THAT(Apply(m, "Hey friend", false), ElementsAre("Hey", "▁friend"));
  m.prepend_scheme = PrependScheme::kNever;
  EXPECT_THAT(Apply(m, "Hey  friend"), ElementsAre("Hey", "▁", "▁friend"));
  m.split = false;
  m.prepend_scheme = PrependScheme::kAlways;
  EXPECT_THAT(Apply(m, "Hey friend"), ElementsAre("▁Hey▁friend"));
  m.replacement = "ab";
  EXPECT_FALSE(PreTokenizer::Create(m).ok());
}

TEST(Sequence, AppliesInOrder) {
  PreTokenizerSpec seq;
  seq.type = PreTokenizerType::kSequence;
  seq.children.push_back(Split(kDash, SplitBehavior::kRemoved));
  seq.children.push_back(Split({TextPattern::Kind::kString, "n"}, SplitBehavior::kIsolated));
  EXPECT_THAT(Apply(seq, "the-final--countdown"),
              ElementsAre("the", "fi", "n", "al", "cou", "n", "tdow", "n"));
}

}  // namespace
}  // namespace cortiq::text
