// Tests of tools/cortiq-dump/dump_json.cc: the JSON object of a hand-built plan with a KV-shared layer (escaping is
// base/json_writer_test).
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
    // Format 3.1's chunk hashes (hex, as the header's checksum) on the first weight.
    plan_.weight_hash_chunk_bytes = 4096;
    plan_.weights[0].xxh3_64 = {0x0123456789abcdefull};
  }
  Plan plan_;
  Analysis analysis_;
  DumpInput input_;
};

TEST_F(DumpRenderTest, Json) {
  const std::string json = RenderJson(input_);
  EXPECT_THAT(json, HasSubstr("\"file\": \"dir/\\\"odd\\\" name.cortiq\""));
  EXPECT_THAT(json, HasSubstr("{\"layer\": 1, \"cache\": 0, \"source_layer\": 0, "
                              "\"attention_step\": 8}"));
  EXPECT_THAT(json, HasSubstr("\"kind\": \"residual_rms_norm\""));
  EXPECT_THAT(json,
              HasSubstr("\"scalar\": {\"index\": 6, \"name\": \"model.layers.1.layer_scalar\""));
  EXPECT_THAT(json, HasSubstr("\"layer\": \"pre\""));
  EXPECT_THAT(json, HasSubstr("\"layer\": \"head\""));
  // The plan's records under their artifact field names (runtime/plan_fields.h).
  EXPECT_THAT(json, HasSubstr("\"plan\": {\"logits_buffer\": 10, \"arena_bytes\": 704, "
                              "\"max_batch\": 1, \"weight_hash_chunk_bytes\": 4096}"));
  EXPECT_THAT(json, HasSubstr("{\"index\": 0, \"name\": \"model.embed_tokens.weight\", "
                              "\"format\": \"f32\", \"shape\": [10, 4], \"offset\": 0, "
                              "\"size_bytes\": 160, \"xxh3_64\": [\"0123456789abcdef\"], "
                              "\"steps\": [0, 10]}"));
  // A step's weight operand: the record without offset and hashes.
  EXPECT_THAT(json, HasSubstr("\"weight\": {\"index\": 0, \"name\": \"model.embed_tokens.weight\", "
                              "\"format\": \"f32\", \"shape\": [10, 4], \"size_bytes\": 160}"));
  EXPECT_THAT(json, HasSubstr("{\"index\": 0, \"layer\": 0, \"sliding\": true, \"window\": 2, "
                              "\"num_kv_heads\": 1, \"head_dim\": 4, \"rows\": "));
  EXPECT_THAT(json, HasSubstr("\"params\": {\"num_heads\": 1, \"window\": 2, \"scale\": 0}"));
  EXPECT_THAT(json, HasSubstr("\"params\": {\"group_size\": 4, \"eps\": 0}"));
  EXPECT_EQ(json.back(), '\n');
  EXPECT_EQ(json.front(), '{');
}

}  // namespace
}  // namespace dump
}  // namespace cortiq
