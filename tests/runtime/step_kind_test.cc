// Tests of runtime/step_kind.cc: the table lists every kind once, in value order, under the
// names the dumps and errors use, with operand roles and parameter sets that agree with the
// formulas in step_kind.h; and a kind's entry drives ValidatePlan (an unused operand or
// parameter of each kind is rejected, naming it).
#include "runtime/step_kind.h"

#include <iterator>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/plan.h"
#include "tests/runtime/toy_model.h"

namespace cortiq {
namespace {

using ::cortiq::testing::BuildToyModel;
using ::cortiq::testing::ToyConfig;
using ::cortiq::testing::ToyLayer;
using ::cortiq::testing::ToyModel;
using ::testing::HasSubstr;

constexpr uint32_t kParamBits =
    FieldBit(StepField::kGroupSize) | FieldBit(StepField::kEps) | FieldBit(StepField::kHeadDim) |
    FieldBit(StepField::kRotatedPairs) | FieldBit(StepField::kTheta) |
    FieldBit(StepField::kNumHeads) | FieldBit(StepField::kWindow) | FieldBit(StepField::kScale) |
    FieldBit(StepField::kFactor) | FieldBit(StepField::kCap);

TEST(StepKindTest, TableListsEveryKindOnceInValueOrder) {
  const char* const kNames[] = {"embedding", "linear",       "rms_norm",  "rope",
                                "kv_append", "attention",    "gelu_tanh", "mul",
                                "add",       "scale",        "layer_scalar", "softcap",
                                "lm_head",   "gelu_tanh_mul", "residual_rms_norm"};
  ASSERT_EQ(StepKinds().size(), std::size(kNames));
  std::set<std::string> names;
  for (size_t i = 0; i < StepKinds().size(); ++i) {
    const StepKindInfo& info = StepKinds()[i];
    EXPECT_EQ(static_cast<uint32_t>(info.kind), i + 1);
    EXPECT_STREQ(info.name, kNames[i]);
    EXPECT_EQ(FindStepKind(info.kind), &info);
    EXPECT_STREQ(StepKindName(info.kind), kNames[i]);
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(info.params & ~kParamBits, 0u) << info.name << ": params holds operand bits";
    // Only kv_append has no result, and only it writes a cache.
    EXPECT_EQ(info.out == nullptr, info.kind == StepKind::kKvAppend) << info.name;
    EXPECT_EQ(info.may_be_logits_only, info.kind != StepKind::kKvAppend) << info.name;
    // A second operand comes after a first one; an optional weight needs a weight.
    EXPECT_TRUE(info.in1 == nullptr || info.in0 != nullptr) << info.name;
    EXPECT_TRUE(!info.weight_optional || info.weight != nullptr) << info.name;
    // Block formats only where a matrix or table kernel reads the weight.
    EXPECT_EQ(info.reads_blocks,
              info.cost == StepCost::kMatrix || info.cost == StepCost::kTableRow)
        << info.name;
  }
  for (uint32_t bad : {0u, 16u, 99u}) {
    EXPECT_EQ(FindStepKind(static_cast<StepKind>(bad)), nullptr);
    EXPECT_STREQ(StepKindName(static_cast<StepKind>(bad)), "unknown");
  }
}

TEST(StepKindTest, ParametersMatchTheFormulas) {
  const auto params = [](StepKind kind) { return FindStepKind(kind)->params; };
  EXPECT_EQ(params(StepKind::kRope), FieldBit(StepField::kHeadDim) |
                                         FieldBit(StepField::kRotatedPairs) |
                                         FieldBit(StepField::kTheta));
  EXPECT_EQ(params(StepKind::kAttention), FieldBit(StepField::kNumHeads) |
                                              FieldBit(StepField::kWindow) |
                                              FieldBit(StepField::kScale));
  EXPECT_EQ(params(StepKind::kRmsNorm), params(StepKind::kResidualRmsNorm));
  EXPECT_EQ(params(StepKind::kEmbedding), FieldBit(StepField::kScale));
  EXPECT_EQ(params(StepKind::kScale), FieldBit(StepField::kFactor));
  EXPECT_EQ(params(StepKind::kSoftcap), FieldBit(StepField::kCap));
  for (StepKind kind : {StepKind::kLinear, StepKind::kLmHead, StepKind::kKvAppend,
                        StepKind::kGeluTanh, StepKind::kMul, StepKind::kAdd,
                        StepKind::kLayerScalar, StepKind::kGeluTanhMul}) {
    EXPECT_EQ(params(kind), 0u) << StepKindName(kind);
  }
  EXPECT_TRUE(FindStepKind(StepKind::kResidualRmsNorm)->scalar);
  EXPECT_STREQ(FindStepKind(StepKind::kResidualRmsNorm)->in0, "residual");
  EXPECT_STREQ(FindStepKind(StepKind::kKvAppend)->in1, "value");
}

// Every step of the toy plans with each operand slot and parameter its kind does not use set:
// ValidatePlan names the field.
TEST(StepKindTest, EntriesDriveTheValidator) {
  for (bool fused : {false, true}) {
    ToyConfig config;
    config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}};
    config.post_norms = fused;
    config.fused = fused;
    const ToyModel toy = BuildToyModel(config);
    ASSERT_TRUE(ValidatePlan(toy.plan, toy.section_bytes).ok());
    std::set<StepKind> seen;
    for (size_t i = 0; i < toy.plan.steps.size(); ++i) {
      const StepKindInfo& info = *FindStepKind(toy.plan.steps[i].kind);
      if (!seen.insert(info.kind).second) continue;
      const auto expect_rejected = [&](auto set, const std::string& field) {
        Plan plan = toy.plan;
        set(plan.steps[i]);
        const absl::Status status = ValidatePlan(plan, toy.section_bytes);
        EXPECT_THAT(std::string(status.message()),
                    HasSubstr(absl::StrCat("step ", i, " (", info.name, "): does not use ",
                                           field)))
            << status;
      };
      if (info.in1 == nullptr) expect_rejected([](Step& s) { s.in1 = 0; }, "in1");
      if (info.weight == nullptr) expect_rejected([](Step& s) { s.weight = 0; }, "weight");
      if (!info.scalar) expect_rejected([](Step& s) { s.scalar = 0; }, "scalar");
      if (!info.cache) expect_rejected([](Step& s) { s.cache = 0; }, "cache");
      if ((info.params & FieldBit(StepField::kTheta)) == 0) {
        expect_rejected([](Step& s) { s.theta = 1; }, "theta");
      }
      if ((info.params & FieldBit(StepField::kGroupSize)) == 0) {
        expect_rejected([](Step& s) { s.group_size = 4; }, "group_size");
      }
      if ((info.params & FieldBit(StepField::kCap)) == 0) {
        expect_rejected([](Step& s) { s.cap = 30; }, "cap");
      }
    }
  }
}

}  // namespace
}  // namespace cortiq
