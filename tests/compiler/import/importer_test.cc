// Tests of ImportGemma4Text / ImportCheckpoint: errors that name the tensor at fault, the
// FFN width taken from the tensors, text-only prefixes, and the default model importing cleanly.
#include "compiler/import/importer.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/dialect/CortiqDialect.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tests/formats/gguf_test_util.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

const std::string kTinyA = std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-a-f32";

Gemma4TextConfig TinyConfig() {
  auto config = LoadGemma4TextConfig(kTinyA);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

std::string ImportError(const Gemma4TextConfig& config, const std::vector<TensorSpec>& tensors) {
  mlir::MLIRContext context;
  auto module = ImportGemma4Text(context, config, tensors, "ckpt");
  EXPECT_FALSE(module.ok());
  return module.ok() ? "" : std::string(module.status().message());
}

TEST(ImporterTest, TinyACheckpointImportsAndVerifies) {
  mlir::MLIRContext context;
  auto module = ImportCheckpoint(context, kTinyA, /*config_only=*/false);
  ASSERT_TRUE(module.ok()) << module.status();
  int attention = 0, appends = 0;
  (*module)->walk([&](AttentionOp) { ++attention; });
  (*module)->walk([&](KvAppendOp) { ++appends; });
  EXPECT_EQ(attention, 8);
  EXPECT_EQ(appends, 4);  // only the KV-owning layers 0..3 write a cache
}

TEST(ImporterTest, MissingTensorIsNamed) {
  Gemma4TextConfig config = TinyConfig();
  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32);
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(), [](const TensorSpec& t) {
                  return t.name ==
                         "model.language_model.layers.5.post_feedforward_layernorm.weight";
                }),
                tensors.end());
  EXPECT_THAT(ImportError(config, tensors),
              HasSubstr("tensor 'model.language_model.layers.5.post_feedforward_layernorm.weight' "
                        "is missing"));
}

TEST(ImporterTest, ShapeDifferentFromConfigIsNamed) {
  Gemma4TextConfig config = TinyConfig();
  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32);
  for (TensorSpec& t : tensors) {
    if (t.name == "model.language_model.layers.3.self_attn.q_proj.weight") t.shape = {64, 64};
  }
  EXPECT_THAT(ImportError(config, tensors),
              HasSubstr("tensor 'model.language_model.layers.3.self_attn.q_proj.weight' has shape "
                        "[64, 64] but the config implies [128, 64]"));
}

TEST(ImporterTest, MlpWidthComesFromGateAndMustAgreeWithUpAndDown) {
  Gemma4TextConfig config = TinyConfig();
  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32);
  for (TensorSpec& t : tensors) {
    if (t.name.find("layers.6.mlp.gate_proj") != std::string::npos) t.shape = {256, 64};
    if (t.name.find("layers.6.mlp.up_proj") != std::string::npos) t.shape = {256, 64};
  }
  // 2 x intermediate_size (double-wide) is accepted; other widths contradict the config.
  {
    std::vector<TensorSpec> odd = tensors;
    for (TensorSpec& t : odd) {
      if (t.name.find("layers.6.mlp.gate_proj") != std::string::npos) t.shape = {192, 64};
    }
    EXPECT_THAT(ImportError(config, odd), HasSubstr("has 192 rows, but intermediate_size is 128"));
  }
  // gate and up say 256, down still says 128.
  EXPECT_THAT(ImportError(config, tensors),
              HasSubstr("'model.language_model.layers.6.mlp.down_proj.weight' has shape [64, 128] "
                        "but the config implies [64, 256]"));
  for (TensorSpec& t : tensors) {
    if (t.name.find("layers.6.mlp.down_proj") != std::string::npos) t.shape = {64, 256};
  }
  mlir::MLIRContext context;
  auto module = ImportGemma4Text(context, config, tensors, "ckpt");
  ASSERT_TRUE(module.ok()) << module.status();
  auto gate = (*module).get().lookupSymbol<WeightOp>(
      "model.language_model.layers.6.mlp.gate_proj.weight");
  ASSERT_TRUE(gate);
  EXPECT_EQ(gate.getTensorType().getDimSize(0), 256);
}

TEST(ImporterTest, UnsupportedDtypeIsNamed) {
  Gemma4TextConfig config = TinyConfig();
  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32);
  tensors[7].dtype = DType::kUnsupported;
  EXPECT_THAT(ImportError(config, tensors),
              HasSubstr(absl::StrCat("tensor '", tensors[7].name, "' has an unsupported dtype")));
}

TEST(ImporterTest, NoTextDecoderPrefix) {
  Gemma4TextConfig config = TinyConfig();
  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32, "other.");
  EXPECT_THAT(ImportError(config, tensors), HasSubstr("no text decoder found"));
}

TEST(ImporterTest, TextOnlyPrefixAndExtraTensorsAreAccepted) {
  Gemma4TextConfig config = TinyConfig();
  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kBF16, kTextOnlyPrefix);
  tensors.push_back(TensorSpec{"model.vision_tower.patch.weight", DType::kF32, {4, 4}});
  tensors.push_back(
      TensorSpec{"model.layers.5.self_attn.k_proj.weight", DType::kBF16, {32, 64}});
  mlir::MLIRContext context;
  auto module = ImportGemma4Text(context, config, tensors, "ckpt");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE((*module).get().lookupSymbol<WeightOp>("model.embed_tokens.weight"));
  EXPECT_FALSE((*module).get().lookupSymbol<WeightOp>("model.layers.5.self_attn.k_proj.weight"));
  EXPECT_FALSE((*module).get().lookupSymbol<WeightOp>("model.vision_tower.patch.weight"));
}

// A decoder tensor the config does not imply would change the numbers if it were read: the
// checkpoint is refused, naming it (a bias, an unknown global, a layer past num_hidden_layers,
// k/v weights of a KV-owning layer's wrong kind). The KV-shared layers' k/v projections and
// norms, which the official checkpoints ship unread, are accepted.
TEST(ImporterTest, UnknownDecoderTensorsAreRefused) {
  Gemma4TextConfig config = TinyConfig();
  const int64_t first_shared = config.num_hidden_layers - config.num_kv_shared_layers;
  ASSERT_GT(first_shared, 0);
  const std::string shared = absl::StrCat("model.language_model.layers.", first_shared, ".");
  for (const std::string& name :
       {std::string("model.language_model.layers.0.self_attn.q_proj.bias"),
        std::string("model.language_model.norm.bias"),
        std::string("model.language_model.altup_projections.0.weight"),
        absl::StrCat("model.language_model.layers.", config.num_hidden_layers,
                     ".self_attn.k_proj.weight"),
        absl::StrCat(shared, "self_attn.k_proj.bias"),
        std::string("model.language_model.vision_tower.x.weight"),
        absl::StrCat("model.language_model.layers.", first_shared - 1, ".self_attn.v_norm.weight")}) {
    SCOPED_TRACE(name);
    std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32);
    tensors.push_back(TensorSpec{name, DType::kF32, {4}});
    EXPECT_THAT(ImportError(config, tensors),
                HasSubstr(absl::StrCat("tensor '", name,
                                       "' is not part of the Gemma 4 E-series text decoder")));
  }
  // A name with a NUL is shown escaped, a very long one cut.
  {
    std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32);
    tensors.push_back(
        TensorSpec{std::string("model.language_model.a\0z", 24), DType::kF32, {4}});
    EXPECT_THAT(ImportError(config, tensors), HasSubstr("'model.language_model.a\\x00z'"));
    tensors.back().name = "model.language_model." + std::string(100000, 'x');
    const std::string error = ImportError(config, tensors);
    EXPECT_THAT(error, HasSubstr("xxx...' is not part of"));
    EXPECT_LT(error.size(), 500u);
  }
  std::vector<TensorSpec> tensors = Gemma4TextTensors(config, DType::kF32);
  for (const char* part : {"self_attn.k_proj.weight", "self_attn.v_proj.weight",
                           "self_attn.k_norm.weight", "self_attn.v_norm.weight"}) {
    tensors.push_back(TensorSpec{absl::StrCat(shared, part), DType::kF32, {4}});
  }
  tensors.push_back(TensorSpec{"model.vision_tower.x.weight", DType::kF32, {4}});
  tensors.push_back(TensorSpec{"model.audio_tower.x.weight", DType::kF32, {4}});
  mlir::MLIRContext context;
  auto module = ImportGemma4Text(context, config, tensors, "ckpt");
  EXPECT_TRUE(module.ok()) << module.status();
}

TEST(ImporterTest, ConfigErrorsPropagateWithTheFieldName) {
  mlir::MLIRContext context;
  auto module = ImportCheckpoint(context, std::string(CORTIQ_TEST_DATA_DIR) + "/no-such-dir",
                                 /*config_only=*/true);
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(std::string(module.status().message()), HasSubstr("no-such-dir"));
}

// A GGUF tensor the decoder reads, in a type cortiq cannot load, is named with its type, its
// GGUF name and its HF name.
TEST(ImporterTest, UnsupportedGgufTypeIsNamed) {
  using namespace testing_gguf;
  constexpr uint32_t kQ8_1 = 9;  // ggml type number (32-weight blocks of 36 bytes)
  absl::StatusOr<GgufFile> source = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  ASSERT_TRUE(source.ok()) << source.status();
  const TensorRewrite q8_1 = [&](const GgufTensorInfo& info, const GgufFile& gguf) {
    if (info.name != "blk.0.attn_q.weight") {
      return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(gguf, info)});
    }
    return std::optional<TensorOut>(TensorOut{kQ8_1, std::string(64 * 64 / 32 * 36, '\0')});
  };
  const std::string path = FreshDir("importer") + "/q8_1.gguf";
  WriteFile(path, CopyGemma4Gguf(*source, nullptr, q8_1).Build());
  mlir::MLIRContext context;
  auto module = ImportCheckpoint(context, path, /*config_only=*/false);
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(std::string(module.status().message()),
              HasSubstr("unsupported type Q8_1 for tensor 'blk.0.attn_q.weight' "
                        "(model.language_model.layers.0.self_attn.q_proj.weight)"));
}

}  // namespace
}  // namespace cortiq
