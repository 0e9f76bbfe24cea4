// Tests of the storage-format policy (the assign-storage-formats pass) on whole checkpoints, of
// the dialect/plan format correspondence (compiler/lower/storage_format.h), and of what the
// passes and the materializer do with the formats: under --weights q8_0 the default pipeline folds no norm gain
// into a weight that will be quantized (the blocks stay llama.cpp's blocks of the checkpoint
// tensors), and a Q8_0 GGUF compiled with the default pipeline keeps every block as it is,
// fused q/k/v and gate/up included.
#include "compiler/lower/storage_format.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "formats/checkpoint_reader.h"
#include "compiler/import/importer.h"
#include "compiler/lower/plan_lowering.h"
#include "compiler/lower/weight_materializer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "ops/quantize.h"
#include "passes/Passes.h"
#include "tests/formats/gguf_test_util.h"

namespace cortiq {
namespace {

using testing_gguf::CopyGemma4Gguf;
using testing_gguf::FreshDir;
using testing_gguf::ModelPath;
using testing_gguf::Msg;
using testing_gguf::StoredBytes;
using testing_gguf::TensorOut;
using testing_gguf::TensorRewrite;
using testing_gguf::WriteFile;

constexpr uint32_t kGgmlQ8_0 = 8;

// tiny-a-f32.gguf with every 2-D tensor of whole 32-weight rows in Q8_0 (our quantizer, which
// is bit-identical to llama.cpp's reference one).
std::string Q8_0TinyA() {
  absl::StatusOr<GgufFile> source = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  EXPECT_TRUE(source.ok()) << Msg(source.status());
  const TensorRewrite quantize = [](const GgufTensorInfo& info, const GgufFile& gguf) {
    if (info.ne.size() != 2 || info.ne[0] % 32 != 0) {
      return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(gguf, info)});
    }
    std::vector<float> values(info.num_elements());
    EXPECT_TRUE(gguf.ReadAsF32(info, values.data()).ok());
    std::string blocks(ops::Q8_0RowBytes(values.size()), '\0');
    ops::QuantizeRowQ8_0(values.data(), values.size(), blocks.data());
    return std::optional<TensorOut>(TensorOut{kGgmlQ8_0, blocks});
  };
  const std::string path = FreshDir("storage_format") + "/tiny-a-q8_0.gguf";
  WriteFile(path, CopyGemma4Gguf(*source, nullptr, quantize).Build());
  return path;
}

class StorageFormatTest : public testing::Test {
 protected:
  // Imports `checkpoint`, runs assign-storage-formats{weights tables} and the default pipeline
  // (unless `passes` is false), and lowers.
  Plan Compile(const std::string& checkpoint, std::optional<StorageFormat> weights,
               std::optional<StorageFormat> tables, bool passes = true) {
    auto module = ImportCheckpoint(context_, checkpoint, /*config_only=*/false);
    EXPECT_TRUE(module.ok()) << module.status();
    module_ = std::move(*module);
    mlir::PassManager pm(&context_);
    pm.addPass(createAssignStorageFormatsPass(weights, tables));
    if (passes) buildDefaultPipeline(pm);
    EXPECT_TRUE(mlir::succeeded(pm.run(*module_)));
    auto plan = LowerToPlan(*module_, LoweringOptions());
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *std::move(plan) : Plan();
  }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

TEST_F(StorageFormatTest, PolicyFromOptions) {
  // weights=q4_0 gives the tables q8_0 unless they are named.
  const Plan plan = Compile(ModelPath("tiny-a-f32"), StorageFormat::Q4_0, std::nullopt,
                            /*passes=*/false);
  int matrices = 0;
  for (const WeightEntry& w : plan.weights) {
    SCOPED_TRACE(w.name);
    if (w.shape.size() == 1) {
      EXPECT_EQ(w.format, WeightFormat::kF32);
    } else if (absl::StrContains(w.name, "embed_tokens")) {
      EXPECT_EQ(w.format, WeightFormat::kQ8_0);  // the tied table is also the LM head
    } else if (w.shape.back() % 32 != 0) {
      EXPECT_EQ(w.format, WeightFormat::kBF16);  // rows of 16 (PLE projection rows) are not blocks
    } else {
      EXPECT_TRUE(w.format == WeightFormat::kQ4_0 || absl::StrContains(w.name, "per_layer"))
          << WeightFormatName(w.format);
      ++matrices;
    }
  }
  EXPECT_GT(matrices, 30);
}

TEST_F(StorageFormatTest, QuantizedWeightsGetNoFoldedGain) {
  const Plan plan = Compile(ModelPath("tiny-a-f32"), StorageFormat::Q8_0, std::nullopt);
  bool fused = false;
  for (const WeightEntry& w : plan.weights) {
    EXPECT_FALSE(absl::StrContains(w.name, ".gain")) << w.name << " would be requantized";
    fused |= absl::StrContains(w.name, "{");
  }
  EXPECT_TRUE(fused) << "fuse-linear still stacks q/k/v and gate/up";

  // Without --weights the f32 checkpoint is stored exactly, and the gains are folded.
  const Plan exact = Compile(ModelPath("tiny-a-f32"), std::nullopt, std::nullopt);
  bool folded = false;
  for (const WeightEntry& w : exact.weights) folded |= absl::StrContains(w.name, ".gain");
  EXPECT_TRUE(folded);
}

TEST_F(StorageFormatTest, GgufQ8_0BlocksStayBlocksThroughThePasses) {
  const std::string path = Q8_0TinyA();
  const Plan plan = Compile(path, std::nullopt, std::nullopt);
  auto checkpoint = OpenCheckpoint(path, /*map_data=*/true);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  WeightMaterializer materializer(*module_, **checkpoint);
  int fused = 0;
  for (const WeightEntry& w : plan.weights) {
    SCOPED_TRACE(w.name);
    if (w.shape.size() != 2 || w.shape[1] % 32 != 0) continue;
    EXPECT_EQ(w.format, WeightFormat::kQ8_0) << WeightFormatName(w.format);
    std::string bytes(w.size_bytes, '\0');
    ASSERT_TRUE(materializer.Write(w.name, w.format, reinterpret_cast<uint8_t*>(bytes.data())).ok());
    // The stored bytes are the file's blocks: for a stacked weight, its sources' blocks in order.
    std::string expected;
    auto op = mlir::SymbolTable::lookupSymbolIn(*module_, w.name);
    ASSERT_NE(op, nullptr);
    auto weight = mlir::cast<WeightOp>(op);
    std::vector<std::string> sources = {w.name};
    if (auto concat = weight.getConcatRowsAttr()) {
      sources.clear();
      for (mlir::Attribute s : concat) {
        sources.push_back(s.cast<mlir::FlatSymbolRefAttr>().getValue().str());
      }
      ++fused;
    }
    for (const std::string& source : sources) {
      auto raw = (*checkpoint)->RawData(source);
      ASSERT_TRUE(raw.ok()) << raw.status();
      expected.append(reinterpret_cast<const char*>(raw->data()), raw->size());
    }
    EXPECT_TRUE(bytes == expected) << "blocks differ from the GGUF's";
  }
  EXPECT_GT(fused, 8) << "q/k/v and gate/up are still stacked";
}

TEST_F(StorageFormatTest, FuseLinearKeepsMixedFormatsApart) {
  constexpr char kModule[] = R"mlir(
    cortiq.weight @a stored(q8_0) : tensor<32x64xf32>
    cortiq.weight @b stored(q4_0) : tensor<32x64xf32>
    func.func @f(%x: tensor<64xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
      %a = cortiq.linear @a(%x) : tensor<64xf32> -> tensor<32xf32>
      %b = cortiq.linear @b(%x) : tensor<64xf32> -> tensor<32xf32>
      return %a, %b : tensor<32xf32>, tensor<32xf32>
    }
  )mlir";
  context_.loadDialect<CortiqDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kModule, &context_);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context_);
  pm.addPass(createFuseLinearPass());
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  int weights = 0;
  module->walk([&](WeightOp) { ++weights; });
  EXPECT_EQ(weights, 2);
}

// The dialect's storage formats and the plan's weight formats are the same list, by name, with
// the same block sizes: a format added on one side only fails here.
TEST(StorageFormatNames, EveryDialectFormatIsAPlanFormatAndBack) {
  int dialect_formats = 0;
  for (uint32_t i = 0; i <= getMaxEnumValForStorageFormat(); ++i) {
    llvm::Optional<StorageFormat> format = symbolizeStorageFormat(i);
    if (!format) continue;
    ++dialect_formats;
    SCOPED_TRACE(stringifyStorageFormat(*format).str());
    absl::StatusOr<WeightFormat> weight = ToWeightFormat(*format);
    ASSERT_TRUE(weight.ok()) << weight.status();
    EXPECT_EQ(WeightFormatName(*weight), stringifyStorageFormat(*format).str());
    EXPECT_EQ(symbolizeStorageFormat(WeightFormatName(*weight)), format);
    const int64_t block = storageFormatBlockSize(*format);
    EXPECT_EQ(IsBlockFormat(*weight), block > 1);
    EXPECT_GT(WeightFormatBytes(*weight, {2, block}), 0u);
    if (block > 1) {
      EXPECT_EQ(WeightFormatBytes(*weight, {2, block / 2}), 0u);
    }
  }
  // WeightFormat values are small integers (part of the file format); every named one has a
  // dialect twin.
  int named = 0;
  for (uint32_t i = 0; i < 256; ++i) {
    const WeightFormat weight = static_cast<WeightFormat>(i);
    if (std::string(WeightFormatName(weight)) == "unknown") continue;
    ++named;
    EXPECT_TRUE(symbolizeStorageFormat(WeightFormatName(weight)).has_value())
        << WeightFormatName(weight);
  }
  EXPECT_EQ(named, dialect_formats);
}

}  // namespace
}  // namespace cortiq
