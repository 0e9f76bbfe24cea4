// Tests of base/json_writer.cc: string escaping (control characters, valid and invalid UTF-8),
// the layout of nested and one-line containers, and numbers (integers at their limits,
// round-tripping and fixed doubles, non-finite values as null).
#include "base/json_writer.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace cortiq {
namespace {

TEST(JsonQuoteTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(JsonQuote("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f\0", 3)), "\"\\u0001\\u001f\\u0000\"");
  EXPECT_EQ(JsonQuote("\x7f"), "\"\x7f\"");  // DEL needs no escape (RFC 8259 §7)
}

TEST(JsonQuoteTest, PassesValidUtf8AndReplacesInvalidBytes) {
  // é (2 bytes), € (3), 😀 (4), U+10FFFF (the largest).
  EXPECT_EQ(JsonQuote("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"),
            "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
  // Invalid bytes become U+FFFD, one per byte: a stray continuation, an overlong '/', a
  // surrogate, a code point past U+10FFFF, a Latin-1 'é', a truncated sequence at the end.
  EXPECT_EQ(JsonQuote("\x80"), "\"\\ufffd\"");
  EXPECT_EQ(JsonQuote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonQuote("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonQuote("caf\xe9.cortiq"), "\"caf\\ufffd.cortiq\"");
  EXPECT_EQ(JsonQuote("a\xe2\x82"), "\"a\\ufffd\\ufffd\"");
}

TEST(JsonWriterTest, NestedAndOneLineContainers) {
  JsonWriter j;
  j.BeginObject();
  j.Field("name", "x");
  j.Key("list");
  j.BeginArray();
  j.BeginObject(true);
  j.Field("a", int64_t{1});
  j.Key("b");
  j.BeginArray();  // inside a one-line object: one line too
  j.Int(2);
  j.Null();
  j.EndArray();
  j.EndObject();
  j.Bool(false);
  j.EndArray();
  j.Key("empty");
  j.BeginObject();
  j.EndObject();
  j.Field("ints", std::vector<int64_t>{3, -4});
  j.EndObject();
  EXPECT_EQ(j.Take(),
            "{\n"
            "  \"name\": \"x\",\n"
            "  \"list\": [\n"
            "    {\"a\": 1, \"b\": [2, null]},\n"
            "    false\n"
            "  ],\n"
            "  \"empty\": {},\n"
            "  \"ints\": [3, -4]\n"
            "}\n");
  // Taken: the writer starts over.
  j.BeginArray(true);
  j.String("\xff");
  j.EndArray();
  EXPECT_EQ(j.Take(), "[\"\\ufffd\"]\n");
}

TEST(JsonWriterTest, Numbers) {
  JsonWriter j;
  j.BeginArray(true);
  j.Int(std::numeric_limits<int64_t>::min());
  j.UInt(std::numeric_limits<uint64_t>::max());
  j.Double(0.1);
  j.Double(1e300);
  j.Double(-0.0);
  j.Double(std::numeric_limits<double>::quiet_NaN());
  j.Double(-std::numeric_limits<double>::infinity());
  j.Fixed(15.26349, 2);
  j.Fixed(std::numeric_limits<double>::infinity(), 2);
  j.EndArray();
  EXPECT_EQ(j.Take(),
            "[-9223372036854775808, 18446744073709551615, 0.10000000000000001, "
            "1.0000000000000001e+300, -0, null, null, 15.26, null]\n");
}

}  // namespace
}  // namespace cortiq
