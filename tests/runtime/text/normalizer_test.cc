// Normalizer (runtime/text/normalizer.h): Replace (literal and regex), Prepend, the Unicode normal
// forms (expected values from the Unicode standard's examples), Sequence order.
#include "runtime/text/normalizer.h"

#include <string>

#include "gtest/gtest.h"

namespace cortiq::text {
namespace {

std::string Apply(const NormalizerSpec& spec, const std::string& text) {
  absl::StatusOr<Normalizer> n = Normalizer::Create(spec);
  EXPECT_TRUE(n.ok()) << n.status();
  return *n->Apply(text);
}

NormalizerSpec Of(NormalizerType type) {
  NormalizerSpec n;
  n.type = type;
  return n;
}

TEST(Replace, LiteralAndRegex) {
  NormalizerSpec r = Of(NormalizerType::kReplace);
  r.pattern = {TextPattern::Kind::kString, " "};
  r.content = "\xE2\x96\x81";
  EXPECT_EQ(Apply(r, " a  b "), "▁a▁▁b▁");
  r.pattern = {TextPattern::Kind::kRegex, " {2,}"};
  r.content = " ";
  EXPECT_EQ(Apply(r, "a  b     c d"), "a b c d");
  r.pattern = {TextPattern::Kind::kString, "aa"};
  r.content = "b";
  EXPECT_EQ(Apply(r, "aaa"), "ba");  // left to right, no overlaps
  r.pattern = {TextPattern::Kind::kRegex, "("};
  EXPECT_FALSE(Normalizer::Create(r).ok());
}

TEST(Prepend, OnlyNonEmpty) {
  NormalizerSpec p = Of(NormalizerType::kPrepend);
  p.content = "▁";
  EXPECT_EQ(Apply(p, "hi"), "▁hi");
  EXPECT_EQ(Apply(p, ""), "");
}

TEST(NormalForms, UnicodeExamples) {
  // U+212B ANGSTROM SIGN → U+00C5 (NFC); U+FB01 ﬁ → "fi" (NFKC); é → e + U+0301 (NFD).
  EXPECT_EQ(Apply(Of(NormalizerType::kNFC), "\xE2\x84\xAB"), "\xC3\x85");
  EXPECT_EQ(Apply(Of(NormalizerType::kNFC), "e\xCC\x81"), "\xC3\xA9");
  EXPECT_EQ(Apply(Of(NormalizerType::kNFKC), "\xEF\xAC\x81"), "fi");
  EXPECT_EQ(Apply(Of(NormalizerType::kNFC), "\xEF\xAC\x81"), "\xEF\xAC\x81");
  EXPECT_EQ(Apply(Of(NormalizerType::kNFD), "\xC3\xA9"), "e\xCC\x81");
  EXPECT_EQ(Apply(Of(NormalizerType::kNFKD), "\xE2\x91\xA0"), "1");  // ① → 1
  // Embedded NUL survives.
  EXPECT_EQ(Apply(Of(NormalizerType::kNFC), std::string("a\0\xC3\xA9", 4)),
            std::string("a\0\xC3\xA9", 4));
}

TEST(Sequence, InOrder) {
  NormalizerSpec seq = Of(NormalizerType::kSequence);
  NormalizerSpec prepend = Of(NormalizerType::kPrepend);
  prepend.content = " ";
  NormalizerSpec replace = Of(NormalizerType::kReplace);
  replace.pattern = {TextPattern::Kind::kString, " "};
  replace.content = "▁";
  seq.children = {prepend, replace};
  EXPECT_EQ(Apply(seq, "a b"), "▁a▁b");
  seq.children = {replace, prepend};
  EXPECT_EQ(Apply(seq, "a b"), " a▁b");
}

}  // namespace
}  // namespace cortiq::text
