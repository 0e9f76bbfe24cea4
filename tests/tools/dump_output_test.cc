// Tests of tools/cortiq-dump/dump_output.cc: JSON and Graphviz escaping, and the text, JSON and
// dot renderings of a hand-built plan with a KV-shared layer.
#include "tools/cortiq-dump/dump_output.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/plan.h"
#include "tests/tools/dump_test_plans.h"
#include "tools/cortiq-dump/plan_analysis.h"

namespace cortiq {
namespace dump {
namespace {

using ::cortiq::dump::testing::TwoLayerPlan;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(DumpOutputTest, JsonQuoteEscapes) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(JsonQuote("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f\0", 3)), "\"\\u0001\\u001f\\u0000\"");
  // Valid UTF-8 passes through: é (2 bytes), € (3), 😀 (4).
  EXPECT_EQ(JsonQuote("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  // Invalid bytes become U+FFFD, one per byte: a stray continuation, an overlong '/', a
  // surrogate, a truncated sequence at the end.
  EXPECT_EQ(JsonQuote("\x80"), "\"\\ufffd\"");
  EXPECT_EQ(JsonQuote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonQuote("a\xe2\x82"), "\"a\\ufffd\\ufffd\"");
}

TEST(DumpOutputTest, DotQuoteEscapes) {
  EXPECT_EQ(DotQuote("a \"b\" \\ c\nd"), "\"a \\\"b\\\" \\\\ c\\nd\"");
}

class RenderTest : public ::testing::Test {
 protected:
  RenderTest() : plan_(TwoLayerPlan()), analysis_(Analyze(plan_, 8)) {
    input_.path = "dir/\"odd\" name.cortiq";
    input_.header.version_major = 1;
    input_.file_size = 12345;
    input_.plan = &plan_;
    input_.analysis = &analysis_;
  }
  Plan plan_;
  Analysis analysis_;
  DumpInput input_;
};

TEST_F(RenderTest, Text) {
  const std::string text = RenderText(input_);
  EXPECT_THAT(text, HasSubstr("file size       12345 B"));
  EXPECT_THAT(text, HasSubstr("model           vocab 10, hidden 4, layers 2, max positions 64"));
  EXPECT_THAT(text, HasSubstr("  pre    0-1"));
  EXPECT_THAT(text, HasSubstr("owns cache 0"));
  EXPECT_THAT(text, HasSubstr("KV-shared: reads cache 0 of layer 0"));
  EXPECT_THAT(text, HasSubstr("  head   10-10"));
  EXPECT_THAT(text, HasSubstr("residual_rms_norm"));
  EXPECT_THAT(text, HasSubstr("+ w6 model.layers.1.layer_scalar f32 [1]"));
  EXPECT_THAT(text,
              HasSubstr("layer 1 (sliding W=2) reads the cache of layer 0 (cache 0, step 8)"));
  EXPECT_THAT(text, HasSubstr("logits_only"));
  EXPECT_THAT(text, Not(HasSubstr(" \n")));  // no trailing blanks
}

TEST_F(RenderTest, Json) {
  const std::string json = RenderJson(input_);
  EXPECT_THAT(json, HasSubstr("\"file\": \"dir/\\\"odd\\\" name.cortiq\""));
  EXPECT_THAT(json, HasSubstr("{\"layer\": 1, \"cache\": 0, \"source_layer\": 0, "
                              "\"attention_step\": 8}"));
  EXPECT_THAT(json, HasSubstr("\"kind\": \"residual_rms_norm\""));
  EXPECT_THAT(json,
              HasSubstr("\"scalar\": {\"index\": 6, \"name\": \"model.layers.1.layer_scalar\""));
  EXPECT_THAT(json, HasSubstr("\"layer\": \"pre\""));
  EXPECT_THAT(json, HasSubstr("\"layer\": \"head\""));
  EXPECT_EQ(json.back(), '\n');
  EXPECT_EQ(json.front(), '{');
}

TEST_F(RenderTest, Dot) {
  const std::string dot = RenderDot(input_);
  EXPECT_THAT(dot, HasSubstr("digraph cortiq_plan {"));
  EXPECT_THAT(dot, HasSubstr("label=\"cortiq plan:  (11 steps, 2 layers)\""));
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_pre_0 {"));
  EXPECT_THAT(dot, HasSubstr("label=\"layer 1: sliding W=2, KV of layer 0\""));
  // Dataflow: q -> attention; the view-free residual add reads steps 5 and 1.
  EXPECT_THAT(dot, HasSubstr("  s3 -> s5;\n"));
  EXPECT_THAT(dot, HasSubstr("  s1 -> s6;\n"));
  EXPECT_THAT(dot, HasSubstr("  token -> s0;\n"));
  EXPECT_THAT(dot, HasSubstr("  s10 -> logits;\n"));
  EXPECT_THAT(dot, HasSubstr("  s4 -> s5 [style=dashed, color=blue"));
  EXPECT_THAT(dot, HasSubstr("  s4 -> s8 [style=dashed, color=red"));
  EXPECT_THAT(dot, HasSubstr("label=\"KV of layer 0\"]"));
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
}

}  // namespace
}  // namespace dump
}  // namespace cortiq
