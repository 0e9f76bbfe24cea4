// Tests of formats/json_util: llvm::json parsing behind a depth guard and a
// duplicate-key check, with file-naming messages.
#include "formats/json_util.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

std::string Error(const std::string& text) {
  absl::StatusOr<llvm::json::Value> value = ParseJson(text, "f.json");
  EXPECT_FALSE(value.ok()) << text;
  return std::string(value.status().message());
}

TEST(JsonUtilTest, ParsesValidJson) {
  absl::StatusOr<llvm::json::Value> value =
      ParseJson("{\"a\": {\"x\": 1}, \"b\": {\"x\": [1, 2, {\"x\": \"}\\\"{\"}]}}", "f.json");
  ASSERT_TRUE(value.ok()) << value.status();
  ASSERT_NE(value->getAsObject(), nullptr);
  EXPECT_EQ(value->getAsObject()->size(), 2u);
}

TEST(JsonUtilTest, Errors) {
  EXPECT_THAT(Error("{\"a\": 1,\n \"b\" 2}"), HasSubstr("f.json: malformed JSON: [2:"));
  EXPECT_THAT(Error(""), HasSubstr("f.json: malformed JSON"));
  EXPECT_THAT(Error("\"\xc3\x28\""), HasSubstr("malformed JSON"));
  EXPECT_THAT(Error(std::string(65, '[') + std::string(65, ']')),
              HasSubstr("nesting deeper than 64 levels at byte 64"));
  EXPECT_THAT(Error(std::string(10000000, '{')),  // NOLINT(bugprone-string-constructor)
              HasSubstr("nesting deeper than 64"));
  EXPECT_THAT(Error("{\"k\": 1, \"k\": 2}"), HasSubstr("duplicate key \"k\" at byte 9"));
  EXPECT_THAT(Error("{\"o\": {\"a\": [1, {\"z\": 1}], \"a\": 3}}"),
              HasSubstr("duplicate key \"a\""));
}

// llvm::json decodes keys, so keys spelled differently can be one key: the duplicate check must
// compare them decoded, or llvm::json silently keeps one of the values.
TEST(JsonUtilTest, DuplicateKeysAreComparedDecoded) {
  EXPECT_THAT(Error("{\"vocab_size\": 1, \"vocab_siz\\u0065\": 2}"),
              HasSubstr("f.json: malformed JSON: duplicate key \"vocab_siz\\u0065\" "
                        "(\"vocab_size\" once its escapes are decoded) at byte 18"));
  EXPECT_THAT(Error("{\"\\u0041\": 1, \"A\": 2}"), HasSubstr("duplicate key \"A\""));
  EXPECT_THAT(Error("{\"\\u00e9\": 1, \"\xC3\xA9\": 2}"), HasSubstr("duplicate key"));
  EXPECT_THAT(Error("{\"\\u00E9\": 1, \"\\u00e9\": 2}"), HasSubstr("duplicate key"));
  // Surrogate pair vs the raw UTF-8 of U+1F600.
  EXPECT_THAT(Error("{\"\\ud83d\\ude00\": 1, \"\xF0\x9F\x98\x80\": 2}"),
              HasSubstr("duplicate key"));
  // Short escapes.
  EXPECT_THAT(Error("{\"a/b\": 1, \"a\\/b\": 2}"), HasSubstr("duplicate key \"a\\/b\""));
  EXPECT_THAT(Error("{\"a\\tb\": 1, \"a\\u0009b\": 2}"), HasSubstr("duplicate key"));
  EXPECT_THAT(Error("{\"q\\\"\": 1, \"q\\u0022\": 2}"), HasSubstr("duplicate key"));
  // Unpaired surrogates, which llvm::json stores as U+FFFD: two different ones collide there.
  EXPECT_THAT(Error("{\"\\ud800\": 1, \"\\udbff\": 2}"), HasSubstr("duplicate key"));
  EXPECT_THAT(Error("{\"\\ud800\": 1, \"\xEF\xBF\xBD\": 2}"), HasSubstr("duplicate key"));
  // Nested objects too.
  EXPECT_THAT(Error("[{\"o\": {\"k\": 1, \"\\u006b\": 2}}]"), HasSubstr("duplicate key"));
  // Different decoded keys are fine, however similar their texts.
  absl::StatusOr<llvm::json::Value> value =
      ParseJson("{\"a\\n\": 1, \"a\": 2, \"a\\\\n\": 3, \"\\u0061b\": 4}", "f");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(value->getAsObject()->size(), 4u);
}

// llvm::json gives each non-empty object a hash table of >= 64 slots: 1 MB of `{"a":0},` would
// take ~1 GB. ParseJson bounds their number by the text size.
TEST(JsonUtilTest, ObjectBombIsRejected) {
  std::string bomb = "[";
  while (bomb.size() < (1u << 20)) bomb += "{\"a\":0},";
  bomb += "{}]";
  EXPECT_THAT(Error(bomb), HasSubstr("f.json: more than 5120 non-empty objects in 1048580 bytes"));
  // Empty objects allocate nothing, and the allowance covers small texts with many objects.
  std::string empties = "[";
  while (empties.size() < (1u << 20)) empties += "{},";
  empties += "{}]";
  EXPECT_TRUE(ParseJson(empties, "f").ok());
  std::string small = "[";
  for (int i = 0; i < 1000; ++i) small += "{\"a\":0},";
  small += "{}]";
  EXPECT_TRUE(ParseJson(small, "f").ok());
}

// Collects the members ForEachJsonMember visits, or its error.
std::string Members(const std::string& text, size_t max_members = 100) {
  std::string out;
  const absl::Status status =
      ForEachJsonMember(text, "f.json", "the thing", max_members, [&](const JsonMember& member) {
        absl::StrAppend(&out, member.key, "=", member.value, "@", member.value_offset, ";");
        return absl::OkStatus();
      });
  return status.ok() ? out : std::string(status.message());
}

TEST(JsonUtilTest, ForEachJsonMember) {
  EXPECT_EQ(Members("{}"), "");
  EXPECT_EQ(Members(" \n{ } \t"), "");
  EXPECT_EQ(Members("{\"a\": 1, \"b\" : {\"x\": [1, \"},]\"]} ,\"c\":\"s\"}"),
            "a=1@6;b={\"x\": [1, \"},]\"]}@15;c=\"s\"@38;");
  EXPECT_EQ(Members("{\"\\u0061\\n\": null}"), "a\n=null@13;");
  EXPECT_EQ(Members("[1]"), "f.json: the thing must be a JSON object, got an array");
  EXPECT_EQ(Members("\"s\""), "f.json: the thing must be a JSON object, got a string");
  EXPECT_EQ(Members("7"), "f.json: the thing must be a JSON object, got a number");
  EXPECT_EQ(Members(""), "f.json: malformed JSON: the thing is empty");
  EXPECT_EQ(Members("x"), "f.json: malformed JSON: unexpected character at byte 0");
  EXPECT_THAT(Members("{\"a\": 1,}"),
              HasSubstr("malformed JSON: expected a key string at byte 8 of the thing"));
  EXPECT_THAT(Members("{\"a\" 1}"), HasSubstr("malformed JSON: expected ':' after the key \"a\""));
  EXPECT_THAT(Members("{\"a\": }"), HasSubstr("malformed JSON: missing value for the key \"a\""));
  EXPECT_THAT(Members("{\"a\": [1}"), HasSubstr("unexpected end of the thing in the value of"));
  EXPECT_THAT(Members("{\"a\": 1]"),
              HasSubstr("malformed JSON: unexpected ']' at byte 7 of the thing"));
  EXPECT_THAT(Members("{\"a\": 1} 2"), HasSubstr("text after the end of the thing at byte 9"));
  EXPECT_THAT(Members("{\"a"), HasSubstr("unterminated key string at byte 1"));
  EXPECT_THAT(Members("{\"\\x\": 1}"), HasSubstr("invalid key string at byte 1"));
  EXPECT_THAT(Members("{\"\xff\": 1}"), HasSubstr("invalid key string at byte 1"));
  EXPECT_THAT(Members("{\"a\": 1, \"\\u0061\": 2}"),
              HasSubstr("malformed JSON: duplicate key \"a\" at byte 9"));
  EXPECT_EQ(Members("{\"a\": 1, \"b\": 2}", 2), "a=1@6;b=2@14;");
  EXPECT_EQ(Members("{\"a\": 1, \"b\": 2, \"c\": 3}", 2),
            "f.json: the thing has more than 2 members");
  // The visitor's error stops the walk.
  int visits = 0;
  const absl::Status status =
      ForEachJsonMember("{\"a\": 1, \"b\": 2}", "f", "x", 10, [&](const JsonMember&) {
        ++visits;
        return absl::InvalidArgumentError("stop");
      });
  EXPECT_EQ(status.message(), "stop");
  EXPECT_EQ(visits, 1);
}

TEST(JsonUtilTest, NestingAtTheLimitAndStringsAreFine) {
  EXPECT_TRUE(ParseJson(std::string(64, '[') + std::string(64, ']'), "f").ok());
  // Brackets and quotes inside strings do not count.
  EXPECT_TRUE(ParseJson("[\"" + std::string(1000, '[') + "\\\"\"]", "f").ok());
  // Equal keys in different objects are not duplicates.
  EXPECT_TRUE(
      ParseJson("{\"a\": {\"k\": 1}, \"b\": {\"k\": 1}, \"c\": [{\"k\": 1}, {\"k\": 2}]}", "f")
          .ok());
  // A value equal to a key is not a key.
  EXPECT_TRUE(ParseJson("{\"k\": \"k\", \"j\": \"k\"}", "f").ok());
}

TEST(JsonUtilTest, Int64) {
  int64_t out = 0;
  EXPECT_TRUE(JsonToInt64(llvm::json::Value(int64_t{-5}), &out));
  EXPECT_EQ(out, -5);
  EXPECT_TRUE(JsonToInt64(llvm::json::Value(8.0), &out));
  EXPECT_EQ(out, 8);
  EXPECT_FALSE(JsonToInt64(llvm::json::Value(8.5), &out));
  EXPECT_FALSE(JsonToInt64(llvm::json::Value(9223372036854775808.0), &out));
  EXPECT_FALSE(JsonToInt64(llvm::json::Value(1e300), &out));
  EXPECT_FALSE(JsonToInt64(llvm::json::Value("3"), &out));
  EXPECT_FALSE(JsonToInt64(llvm::json::Value(nullptr), &out));
  EXPECT_EQ(JsonKindName(llvm::json::Value(true)), "a boolean");
  EXPECT_EQ(JsonKindName(llvm::json::Array{}), "an array");
}

}  // namespace
}  // namespace cortiq
