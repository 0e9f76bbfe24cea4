// Tests of tools/cortiq-dump/dump_dot.cc: Graphviz escaping and the digraph of a hand-built plan with a KV-shared
// layer.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/plan.h"
#include "tests/tools/dump_test_plans.h"
#include "tools/cortiq-dump/dump_output.h"
#include "tools/cortiq-dump/plan_analysis.h"

namespace cortiq {
namespace dump {
namespace {

using ::cortiq::dump::testing::TwoLayerPlan;
using ::testing::HasSubstr;
using ::testing::Not;

class DumpRenderTest : public ::testing::Test {
 protected:
  DumpRenderTest() : plan_(TwoLayerPlan()), analysis_(Analyze(plan_, 8)) {
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

TEST(DumpDotTest, DotQuoteEscapes) {
  EXPECT_EQ(DotQuote("a \"b\" \\ c\nd"), "\"a \\\"b\\\" \\\\ c\\nd\"");
}

TEST_F(DumpRenderTest, Dot) {
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
