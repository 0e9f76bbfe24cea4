// Tests of WeightMaterializer: checkpoint tensors in f32/bf16, derived weights (scale columns,
// factor, concat_rows, nested) against values worked out in the test, and NaN/Inf rejection.
#include "compiler/lower/weight_materializer.h"

#include <cmath>
#include <fstream>
#include <cstring>
#include <limits>

#include "formats/dtype.h"
#include "formats/safetensors_writer.h"
#include "compiler/dialect/CortiqDialect.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

constexpr char kModule[] = R"mlir(
  cortiq.weight @w : tensor<2x3xf32>
  cortiq.weight @g : tensor<3xbf16>
  cortiq.weight @v : tensor<1x3xf32>
  cortiq.weight @w.g = scale(@w) columns(@g) factor(0.5) : tensor<2x3xf32>
  cortiq.weight @wv = concat_rows(@w.g, @v) : tensor<3x3xbf16>
  cortiq.weight @bad : tensor<1x3xf32>
)mlir";

class WeightMaterializerTest : public testing::Test {
 protected:
  void SetUp() override {
    context_.loadDialect<CortiqDialect, mlir::func::FuncDialect>();
    module_ = mlir::parseSourceString<mlir::ModuleOp>(kModule, &context_);
    ASSERT_TRUE(module_);
    // One directory per test: ctest runs the tests of this binary in parallel processes.
    dir_ = testing::TempDir() + "/materializer." +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(dir_.c_str(), 0755);
    const std::vector<TensorSpec> specs = {{"w", DType::kF32, {2, 3}},
                                           {"g", DType::kBF16, {3}},
                                           {"v", DType::kF32, {1, 3}},
                                           {"bad", DType::kF32, {1, 3}}};
    auto writer = SafetensorsWriter::Create(dir_ + "/model.safetensors", specs, {});
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE(writer->AppendF32(w_).ok());
    ASSERT_TRUE(writer->AppendF32(g_).ok());
    ASSERT_TRUE(writer->AppendF32(v_).ok());
    ASSERT_TRUE(writer->AppendF32({1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f}).ok());
    ASSERT_TRUE(writer->Finish().ok());
    // A directory checkpoint needs its config.json: a copy of tiny-a's (the weights here are
    // not tiny-a's, but the materializer only reads tensors by name).
    std::ifstream config(std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-a-f32/config.json");
    std::ofstream(dir_ + "/config.json") << config.rdbuf();
    auto reader = OpenCheckpoint(dir_, /*map_data=*/true);
    ASSERT_TRUE(reader.ok()) << reader.status();
    checkpoint_ = std::move(*reader);
  }

  std::vector<float> WriteF32(const std::string& name, size_t n) {
    std::vector<float> out(n);
    WeightMaterializer materializer(*module_, *checkpoint_);
    absl::Status status =
        materializer.Write(name, WeightFormat::kF32, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_TRUE(status.ok()) << status;
    return out;
  }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::string dir_;
  std::unique_ptr<CheckpointReader> checkpoint_;
  const std::vector<float> w_ = {1.0f, -2.0f, 3.0f, 0.25f, 0.5f, -8.0f};
  const std::vector<float> g_ = {2.0f, 0.5f, -1.0f};  // exact in bf16
  const std::vector<float> v_ = {7.0f, 8.0f, 9.0f};
};

TEST_F(WeightMaterializerTest, CheckpointTensorIsCopied) {
  EXPECT_EQ(WriteF32("w", 6), w_);
}

TEST_F(WeightMaterializerTest, ScaleColumnsAndFactor) {
  // w[r][c] * g[c] * 0.5
  EXPECT_EQ(WriteF32("w.g", 6), (std::vector<float>{1.0f, -0.5f, -1.5f, 0.25f, 0.125f, 4.0f}));
}

TEST_F(WeightMaterializerTest, ConcatRowsOfDerivedWeightsInBf16) {
  std::vector<uint16_t> out(9);
  WeightMaterializer materializer(*module_, *checkpoint_);
  ASSERT_TRUE(
      materializer.Write("wv", WeightFormat::kBF16, reinterpret_cast<uint8_t*>(out.data())).ok());
  const std::vector<float> expected = {1.0f, -0.5f, -1.5f, 0.25f, 0.125f, 4.0f, 7.0f, 8.0f, 9.0f};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(Bf16ToF32(out[i]), expected[i]) << i;
}

TEST_F(WeightMaterializerTest, NonFiniteValueIsAnErrorNamingTheWeight) {
  std::vector<float> out(3);
  WeightMaterializer materializer(*module_, *checkpoint_);
  absl::Status status =
      materializer.Write("bad", WeightFormat::kF32, reinterpret_cast<uint8_t*>(out.data()));
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("weight 'bad' has a non-finite value (NaN or Inf) at element 1"));
}

TEST_F(WeightMaterializerTest, UnknownWeightIsNotFound) {
  std::vector<float> out(3);
  WeightMaterializer materializer(*module_, *checkpoint_);
  EXPECT_EQ(materializer.Write("nope", WeightFormat::kF32, reinterpret_cast<uint8_t*>(out.data()))
                .code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cortiq
