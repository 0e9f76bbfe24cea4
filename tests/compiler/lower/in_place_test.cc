// The compiler and the runtime agree on which results may overwrite an operand: an op carries
// the dialect's InPlace trait (what plan-buffers uses to reuse a dying operand's bytes) exactly
// when the step kind it lowers to says kInPlaceOrDisjoint in the runtime's step-kind table (what
// ValidatePlan accepts and the kernels are written for). Each op that lowers to a step is
// lowered from a small module here, and every op of the dialect and every step kind of the table
// must be covered, so a new op or kind cannot skip the check.
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/dialect/CortiqDialect.h"
#include "compiler/lower/plan_lowering.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/step_kind.h"

namespace cortiq {
namespace {

// Per op: the decode step's body after `%x` and `%y` (two [64] embeddings) and `%k`, `%v` (the
// [32] halves of %x), defining `%r`, the result of the op under test, which lowers to the plan's
// last step.
const std::map<std::string, std::string>& OpBodies() {
  static const auto* bodies = new std::map<std::string, std::string>{
      {"cortiq.embedding", "%r = cortiq.embedding @t[%token] scale 2.0 : tensor<64xf32>"},
      {"cortiq.linear", "%r = cortiq.linear @w(%x) : tensor<64xf32> -> tensor<64xf32>"},
      {"cortiq.rms_norm", "%r = cortiq.rms_norm %x gain @g group 64 eps 1.0e-6 : tensor<64xf32>"},
      {"cortiq.rope",
       "%r = cortiq.rope default %x at %position theta 1.0e4 head_dim 16 pairs 8 : "
       "tensor<64xf32>"},
      {"cortiq.kv_append",
       "cortiq.kv_append %k, %v into @kv at %position : tensor<32xf32>, tensor<32xf32>\n"
       "    %r = cortiq.add %x, %y : tensor<64xf32>"},
      {"cortiq.attention",
       "cortiq.kv_append %k, %v into @kv at %position : tensor<32xf32>, tensor<32xf32>\n"
       "    %r = cortiq.attention layer 0 full %x over @kv at %position heads 4 scale 1.0 : "
       "tensor<64xf32> -> tensor<64xf32>"},
      {"cortiq.gelu_tanh", "%r = cortiq.gelu_tanh %x : tensor<64xf32>"},
      {"cortiq.mul", "%r = cortiq.mul %x, %y : tensor<64xf32>"},
      {"cortiq.add", "%r = cortiq.add %x, %y : tensor<64xf32>"},
      {"cortiq.scale", "%r = cortiq.scale %x by 0.5 : tensor<64xf32>"},
      {"cortiq.layer_scalar", "%r = cortiq.layer_scalar %x by @s : tensor<64xf32>"},
      {"cortiq.softcap", "%r = cortiq.softcap %x cap 30.0 : tensor<64xf32>"},
      {"cortiq.lm_head", "%r = cortiq.lm_head @t(%x) : tensor<64xf32> -> tensor<16xf32>"},
      {"cortiq.gelu_tanh_mul", "%r = cortiq.gelu_tanh_mul %x, %y : tensor<64xf32>"},
      {"cortiq.residual_rms_norm",
       "%r = cortiq.residual_rms_norm %x, %y gain @g scalar @s group 64 eps 1.0e-6 : "
       "tensor<64xf32>"},
  };
  return *bodies;
}

// The ops that lower to no step: module-level declarations, views and taps.
const std::set<std::string>& NoStepOps() {
  static const auto* ops = new std::set<std::string>{"cortiq.weight", "cortiq.kv_cache",
                                                     "cortiq.slice", "cortiq.layer_output"};
  return *ops;
}

std::string Module(const std::string& op, const std::string& body) {
  // lm_head returns the [16] logits; the others a [64] hidden state (the plan's logits buffer
  // is whatever the step returns).
  const std::string type = op == "cortiq.lm_head" ? "tensor<16xf32>" : "tensor<64xf32>";
  return absl::StrCat(
      "module attributes {cortiq.model = {source = \"", op,
      "\", hidden_size = 64 : i64, num_hidden_layers = 1 : i64, max_position_embeddings = 4096 "
      ": i64}} {\n"
      "  cortiq.weight @t stored(f32) : tensor<16x64xf32>\n"
      "  cortiq.weight @w stored(f32) : tensor<64x64xf32>\n"
      "  cortiq.weight @g stored(f32) : tensor<64xf32>\n"
      "  cortiq.weight @s stored(f32) : tensor<1xf32>\n"
      "  cortiq.kv_cache @kv layer 0 full kv_heads 2 head_dim 16\n"
      "  func.func @decode_step(%token: i32, %position: i32) -> ",
      type,
      " {\n"
      "    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>\n"
      "    %y = cortiq.embedding @t[%token] scale 0.5 : tensor<64xf32>\n"
      "    %k = cortiq.slice %x[0] : tensor<64xf32> -> tensor<32xf32>\n"
      "    %v = cortiq.slice %x[32] : tensor<64xf32> -> tensor<32xf32>\n"
      "    ",
      body, "\n    return %r : ", type, "\n  }\n}\n");
}

class InPlaceTest : public testing::Test {
 protected:
  InPlaceTest() { context_.loadDialect<CortiqDialect, mlir::func::FuncDialect>(); }
  mlir::MLIRContext context_;
};

TEST_F(InPlaceTest, TraitAgreesWithTheStepKindTable) {
  std::set<StepKind> kinds;
  for (const auto& [op_name, body] : OpBodies()) {
    SCOPED_TRACE(op_name);
    const std::string text = Module(op_name, body);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, &context_);
    ASSERT_TRUE(module) << text;
    // The op under test: the one defining %r, the returned value.
    mlir::Operation* op = nullptr;
    module->walk([&](mlir::func::ReturnOp ret) { op = ret.getOperand(0).getDefiningOp(); });
    ASSERT_NE(op, nullptr);
    ASSERT_EQ(op->getName().getStringRef().str(), op_name == "cortiq.kv_append" ? "cortiq.add"
                                                                                : op_name);
    absl::StatusOr<Plan> plan = LowerToPlan(*module, LoweringOptions());
    ASSERT_TRUE(plan.ok()) << plan.status() << "\n" << text;
    ASSERT_FALSE(plan->steps.empty());
    // kv_append's step is the one before the add that ends its module.
    const Step& step =
        op_name == "cortiq.kv_append" ? plan->steps[plan->steps.size() - 2] : plan->steps.back();
    const StepKindInfo* info = FindStepKind(step.kind);
    ASSERT_NE(info, nullptr);
    kinds.insert(step.kind);
    mlir::Operation* lowered = op;
    if (op_name == "cortiq.kv_append") {
      module->walk([&](mlir::Operation* o) {
        if (o->getName().getStringRef() == "cortiq.kv_append") lowered = o;
      });
    }
    EXPECT_EQ(lowered->hasTrait<OpTrait::InPlace>(),
              info->aliasing == StepAliasing::kInPlaceOrDisjoint)
        << op_name << " (InPlace: " << lowered->hasTrait<OpTrait::InPlace>()
        << ") lowers to step kind " << info->name << ", whose table entry says "
        << (info->aliasing == StepAliasing::kInPlaceOrDisjoint ? "in place or disjoint"
                                                               : "disjoint");
  }
  // Every kind of the runtime's table is produced by one of the ops above.
  for (const StepKindInfo& info : StepKinds()) {
    EXPECT_TRUE(kinds.count(info.kind)) << "no op of this test lowers to step kind " << info.name;
  }
}

TEST_F(InPlaceTest, EveryOpOfTheDialectIsCovered) {
  // An op added to the dialect must be added to OpBodies (it lowers to a step) or NoStepOps.
  int cortiq_ops = 0;
  for (mlir::RegisteredOperationName name : context_.getRegisteredOperations()) {
    if (name.getDialectNamespace() != CortiqDialect::getDialectNamespace()) continue;
    ++cortiq_ops;
    const std::string op = name.getStringRef().str();
    EXPECT_TRUE(OpBodies().count(op) + NoStepOps().count(op) == 1) << op;
  }
  EXPECT_EQ(static_cast<size_t>(cortiq_ops), OpBodies().size() + NoStepOps().size());
}

}  // namespace
}  // namespace cortiq
