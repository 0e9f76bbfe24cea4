// Tests of compiler/checkpoint/json_util: llvm::json parsing behind a depth guard and a
// duplicate-key check, with file-naming messages.
#include "compiler/checkpoint/json_util.h"

#include <string>

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
