// Tests of runtime/sampling/stop_condition.cc: end-of-generation ids, stop strings split across
// tokens, overlapping prefixes, several stop strings, partial matches released, a stop string at
// the very start, and UTF-8 never cut.
#include "runtime/sampling/stop_condition.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace sampling {
namespace {

using ::testing::HasSubstr;

constexpr int32_t kEos = 1;
constexpr int32_t kEndOfTurn = 106;
constexpr int32_t kText = 500;  // any ordinary token

StopCondition Make(std::vector<std::string> stops) {
  absl::StatusOr<StopCondition> s = StopCondition::Create({kEos, kEndOfTurn}, std::move(stops));
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

// Pushes the pieces; returns what was emitted (each Push's text) and the final update.
struct Emitted {
  std::vector<std::string> emitted;
  StopUpdate last;
  std::string All() const {
    std::string all;
    for (const std::string& e : emitted) all += e;
    return all;
  }
};
Emitted Feed(StopCondition& stop, const std::vector<std::string>& pieces) {
  Emitted run;
  for (const std::string& piece : pieces) {
    run.last = stop.Push(kText, piece);
    run.emitted.push_back(run.last.text);
    if (run.last.stopped()) break;
  }
  return run;
}

TEST(StopConditionTest, EndOfGenerationIds) {
  StopCondition stop = Make({});
  EXPECT_TRUE(stop.IsEndOfGeneration(1));
  EXPECT_TRUE(stop.IsEndOfGeneration(106));
  EXPECT_FALSE(stop.IsEndOfGeneration(2));
  EXPECT_EQ(stop.Push(kText, "Hello").text, "Hello");
  const StopUpdate end = stop.Push(kEndOfTurn, "<turn|>");
  EXPECT_EQ(end.reason, StopReason::kEndOfGeneration);
  EXPECT_EQ(end.text, "");  // the end-of-turn token's text is not emitted
  // After a stop: nothing more, same reason.
  const StopUpdate after = stop.Push(kText, "more");
  EXPECT_EQ(after.text, "");
  EXPECT_EQ(after.reason, StopReason::kEndOfGeneration);
}

TEST(StopConditionTest, NoStopStringsEmitsEverythingAtOnce) {
  StopCondition stop = Make({});
  const Emitted run = Feed(stop, {"a", "bc", "", "d"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{"a", "bc", "", "d"}));
  EXPECT_FALSE(run.last.stopped());
}

TEST(StopConditionTest, StopStringSplitAcrossTwoAndThreeTokens) {
  StopCondition two = Make({"User:"});
  Emitted run = Feed(two, {"Sure.", "\nUs", "er: hi"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{"Sure.", "\n", ""}));
  EXPECT_EQ(run.last.reason, StopReason::kStopString);
  EXPECT_EQ(run.last.stop_string, 0);
  EXPECT_EQ(run.All(), "Sure.\n");

  StopCondition three = Make({"<END>"});
  run = Feed(three, {"ok <", "EN", "D> trailing"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{"ok ", "", ""}));
  EXPECT_TRUE(run.last.stopped());
  EXPECT_EQ(run.All(), "ok ");
}

TEST(StopConditionTest, OverlappingPrefixes) {
  // "ab" inside "aab": the first "a" is released once the second "a" arrives.
  StopCondition ab = Make({"ab"});
  Emitted run = Feed(ab, {"a", "a", "b"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{"", "a", ""}));
  EXPECT_EQ(run.All(), "a");
  EXPECT_TRUE(run.last.stopped());
  // Stop string "aab" over "aaab": "aa" stays held while it could start "aab".
  StopCondition aab = Make({"aab"});
  run = Feed(aab, {"a", "a", "a", "b"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{"", "", "a", ""}));
  EXPECT_EQ(run.All(), "a");
  EXPECT_TRUE(run.last.stopped());
  // Both at once: the one that starts first wins.
  StopCondition both = Make({"ab", "aab"});
  run = Feed(both, {"x", "aa", "b"});
  EXPECT_EQ(run.All(), "x");
  EXPECT_EQ(run.last.stop_string, 1);  // "aab" starts at 1, "ab" at 2
}

TEST(StopConditionTest, SeveralStopStrings) {
  StopCondition stop = Make({"###", "\n\n", "STOP"});
  Emitted run = Feed(stop, {"one", "\n", "two", "ST", "O", "P", "after"});
  EXPECT_EQ(run.All(), "one\ntwo");
  EXPECT_EQ(run.last.stop_string, 2);
  // Two complete in the same piece: the earlier one wins whatever the list order.
  StopCondition same = Make({"STOP", "##"});
  run = Feed(same, {"a ## b STOP"});
  EXPECT_EQ(run.All(), "a ");
  EXPECT_EQ(run.last.stop_string, 1);
}

TEST(StopConditionTest, PartialMatchThatIsNotOneIsReleased) {
  StopCondition stop = Make({"</answer>"});
  Emitted run = Feed(stop, {"x <", "/ans", "wer", "!", " done"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{"x ", "", "", "</answer!", " done"}));
  EXPECT_FALSE(run.last.stopped());
  EXPECT_EQ(stop.held_bytes(), 0u);
  // Held text at the end of generation comes out through Flush, or with an end-of-generation
  // token.
  Emitted held = Feed(stop, {" </ans"});
  EXPECT_EQ(held.All(), " ");
  EXPECT_EQ(stop.Flush(), "</ans");
  Feed(stop, {"</an"});
  const StopUpdate end = stop.Push(kEos, "");
  EXPECT_EQ(end.text, "</an");
  EXPECT_EQ(end.reason, StopReason::kEndOfGeneration);
}

TEST(StopConditionTest, StopStringAtTheVeryStart) {
  StopCondition stop = Make({"Q:"});
  Emitted run = Feed(stop, {"Q:", " what"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{""}));
  EXPECT_TRUE(run.last.stopped());
  StopCondition split = Make({"Q:"});
  run = Feed(split, {"Q", ": what"});
  EXPECT_EQ(run.All(), "");
  EXPECT_TRUE(run.last.stopped());
}

TEST(StopConditionTest, StopInsideOnePieceDropsTheRest) {
  StopCondition stop = Make({"\n"});
  const Emitted run = Feed(stop, {"first line\nsecond"});
  EXPECT_EQ(run.All(), "first line");
  EXPECT_EQ(stop.Flush(), "");
}

TEST(StopConditionTest, ResetStartsOver) {
  StopCondition stop = Make({"end"});
  Feed(stop, {"the en", "d"});
  stop.Reset();
  const Emitted run = Feed(stop, {"again e"});
  EXPECT_EQ(run.All(), "again ");
  EXPECT_FALSE(run.last.stopped());
}

TEST(StopConditionTest, NeverCutsAUtf8Character) {
  // "é" is C3 A9 and "€" E2 82 AC; the stop string starts with "€".
  StopCondition stop = Make({"€uro"});
  Emitted run = Feed(stop, {"caf\xC3\xA9 ", "\xE2\x82\xAC", "u", "!"});
  EXPECT_EQ(run.emitted, (std::vector<std::string>{"caf\xC3\xA9 ", "", "", "\xE2\x82\xACu!"}));
}

// WouldStop answers for text not pushed yet (a decoder's held bytes) and changes nothing.
TEST(StopConditionTest, WouldStopLooksWithoutPushing) {
  StopCondition stop = Make({"\n\n", "end"});
  EXPECT_FALSE(stop.WouldStop(""));
  EXPECT_FALSE(stop.WouldStop("\n"));
  const StopUpdate first = stop.Push(-1, "a\n");  // "\n" held: it may start "\n\n"
  EXPECT_EQ(first.text, "a");
  EXPECT_TRUE(stop.WouldStop("\n"));    // with the held "\n"
  EXPECT_TRUE(stop.WouldStop("xend"));
  EXPECT_FALSE(stop.WouldStop("x"));
  EXPECT_EQ(stop.held_bytes(), 1u);      // unchanged
  const StopUpdate second = stop.Push(-1, "\n");
  EXPECT_EQ(second.reason, StopReason::kStopString);
  EXPECT_EQ(second.stop_string, 0);
  EXPECT_FALSE(stop.WouldStop("end"));  // stopped already
}

TEST(StopConditionTest, Errors) {
  EXPECT_THAT(StopCondition::Create({1, -3}, {}).status().message(),
              HasSubstr("end_of_generation_ids[1] is -3"));
  EXPECT_THAT(StopCondition::Create({1}, {"ok", ""}).status().message(),
              HasSubstr("stop[1] is empty"));
  EXPECT_THAT(StopCondition::Create({1}, {"\xC3"}).status().message(),
              HasSubstr("stop[0] is not valid UTF-8"));
  EXPECT_THAT(StopCondition::Create({1}, {"\xED\xA0\x80"}).status().message(),  // a surrogate
              HasSubstr("not valid UTF-8"));
  EXPECT_TRUE(StopCondition::Create({}, {"\xF0\x9F\x98\x80"}).ok());  // U+1F600
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
