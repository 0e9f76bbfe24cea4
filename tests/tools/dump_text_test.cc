// Tests of tools/cortiq-dump/dump_text.cc: the text tables of a hand-built plan with a KV-shared layer.
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

TEST_F(DumpRenderTest, Text) {
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

}  // namespace
}  // namespace dump
}  // namespace cortiq
