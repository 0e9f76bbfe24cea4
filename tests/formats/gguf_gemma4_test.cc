// Tests of formats/gguf_gemma4: the config of the tiny-a GGUF files against their
// config.json, the tensor name mapping, and one rewritten file per key/tensor rule.
#include "formats/gguf_gemma4.h"

#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/safetensors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/formats/gguf_test_util.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;
using testing_gguf::CopyGemma4Gguf;
using testing_gguf::ExpectSameConfig;
using testing_gguf::FreshDir;
using testing_gguf::GgufBuilder;
using testing_gguf::KeyFilter;
using testing_gguf::ModelPath;
using testing_gguf::Msg;
using testing_gguf::StoredBytes;
using testing_gguf::TensorOut;
using testing_gguf::TensorRewrite;
using testing_gguf::WriteFile;

constexpr uint32_t kF32 = 0, kI32 = 26;

Gemma4TextConfig JsonConfig() {
  absl::StatusOr<Gemma4TextConfig> config = LoadGemma4TextConfig(ModelPath("tiny-a-f32"));
  EXPECT_TRUE(config.ok()) << Msg(config.status());
  return config.ok() ? *config : Gemma4TextConfig();
}

GgufFile OpenTinyA() {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  EXPECT_TRUE(gguf.ok()) << Msg(gguf.status());
  return *std::move(gguf);
}

// The config of `builder`'s file.
absl::StatusOr<Gemma4TextConfig> ConfigOf(const GgufBuilder& builder) {
  const std::string path = absl::StrCat(FreshDir("gguf_gemma4"), "/model.gguf");
  WriteFile(path, builder.Build());
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(path);
  if (!gguf.ok()) return gguf.status();
  return Gemma4ConfigFromGguf(*gguf);
}

// tiny-a-f32.gguf without the keys `drop` names, plus what `edit` adds; tensors rewritten by
// `rewrite` (unchanged by default).
absl::StatusOr<Gemma4TextConfig> EditedConfig(const std::vector<std::string>& drop,
                                              const std::function<void(GgufBuilder&)>& edit,
                                              const TensorRewrite& rewrite = nullptr) {
  const GgufFile source = OpenTinyA();
  const KeyFilter keep = [&](const std::string& key) {
    for (const std::string& name : drop) {
      if (key == name) return false;
    }
    return true;
  };
  GgufBuilder builder = CopyGemma4Gguf(source, keep, rewrite);
  if (edit) edit(builder);
  return ConfigOf(builder);
}

std::string EditError(const std::vector<std::string>& drop,
                      const std::function<void(GgufBuilder&)>& edit,
                      absl::StatusCode code = absl::StatusCode::kInvalidArgument,
                      const TensorRewrite& rewrite = nullptr) {
  absl::StatusOr<Gemma4TextConfig> config = EditedConfig(drop, edit, rewrite);
  EXPECT_FALSE(config.ok()) << "accepted a file that should have been rejected";
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), code) << Msg(config.status());
  return Msg(config.status());
}

std::string F32Bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Replaces rope_freqs.weight's data with `factors`.
TensorRewrite RopeFreqs(std::vector<float> factors) {
  return [factors](const GgufTensorInfo& info, const GgufFile& source) {
    if (info.name != "rope_freqs.weight") {
      return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
    }
    return std::optional<TensorOut>(TensorOut{
        kF32, F32Bytes(factors), std::vector<int64_t>{static_cast<int64_t>(factors.size())}});
  };
}

TEST(Gemma4GgufTest, ConfigEqualsConfigJson) {
  for (const char* file : {"tiny-a-f32.gguf", "tiny-a-bf16.gguf"}) {
    SCOPED_TRACE(file);
    for (bool map_data : {true, false}) {
      absl::StatusOr<GgufFile> gguf = GgufFile::Open(ModelPath(file), map_data);
      ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
      absl::StatusOr<Gemma4TextConfig> config = Gemma4ConfigFromGguf(*gguf);
      ASSERT_TRUE(config.ok()) << Msg(config.status());
      ExpectSameConfig(*config, JsonConfig());
      // The values spelled out, as the spec's tiny-a has them.
      EXPECT_EQ(config->rms_norm_eps, 1e-6);  // f32 9.99999997e-07 in the file
      EXPECT_EQ(config->final_logit_softcapping, 30.0);
      EXPECT_EQ(config->rope_full.partial_rotary_factor, 0.25);
      EXPECT_EQ(config->rotated_pairs(3), 4);  // full layer, d = 32
      EXPECT_EQ(config->rotated_pairs(0), 8);  // sliding layer, d = 16
      EXPECT_EQ(config->rope_full.rope_theta, 1e6);
      EXPECT_EQ(config->rope_sliding.rope_theta, 1e4);
      EXPECT_EQ(config->kv_source_layer(7), 3);
      EXPECT_EQ(config->kv_source_layer(6), 2);
    }
  }
}

// Absent optional keys that change the math keep their defaults (llama.cpp's loader, the rules
// of gguf_gemma4.h) but are recorded for cortiq-compile's warning / --strict-config.
TEST(Gemma4GgufTest, AbsentKeysThatChangeTheMathAreRecorded) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(ModelPath("tiny-a-f32.gguf"));
  ASSERT_TRUE(gguf.ok()) << Msg(gguf.status());
  absl::StatusOr<Gemma4TextConfig> full = Gemma4ConfigFromGguf(*gguf);
  ASSERT_TRUE(full.ok()) << Msg(full.status());
  EXPECT_TRUE(full->defaulted.empty()) << full->defaulted.front().field;

  const TensorRewrite no_rope_freqs = [](const GgufTensorInfo& info, const GgufFile& source) {
    if (info.name == "rope_freqs.weight") return std::optional<TensorOut>();
    return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
  };
  absl::StatusOr<Gemma4TextConfig> config = EditedConfig(
      {"gemma4.attention.shared_kv_layers", "gemma4.final_logit_softcapping",
       "gemma4.rope.freq_base_swa", "gemma4.attention.head_count_kv",
       "gemma4.attention.key_length", "gemma4.attention.value_length",
       "gemma4.rope.dimension_count", "gemma4.rope.freq_base"},
      nullptr, no_rope_freqs);
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  EXPECT_EQ(config->num_kv_shared_layers, 0);
  EXPECT_FALSE(config->final_logit_softcapping.has_value());
  std::map<std::string, std::string> defaulted;
  for (const DefaultedField& d : config->defaulted) {
    EXPECT_THAT(d.file, ::testing::EndsWith(".gguf"));
    defaulted.emplace(d.field, d.value);
  }
  EXPECT_EQ(defaulted,
            (std::map<std::string, std::string>{
                {"gemma4.attention.head_count_kv (num_key_value_heads)",
                 "4 (= attention.head_count)"},
                {"gemma4.attention.key_length (global_head_dim)",
                 "16 (= embedding_length / head_count)"},
                {"gemma4.attention.shared_kv_layers (num_kv_shared_layers)", "0"},
                {"gemma4.final_logit_softcapping (final_logit_softcapping)",
                 "none (llama.cpp would apply 30)"},
                {"gemma4.rope.freq_base (rope_parameters.full_attention.rope_theta)",
                 "10000 (llama.cpp's default)"},
                {"gemma4.rope.freq_base_swa (rope_parameters.sliding_attention.rope_theta)",
                 "10000 (= rope.freq_base)"},
                {"tensor rope_freqs.weight (rope_parameters.full_attention.partial_rotary_factor)",
                 "1 (every pair of the full layers rotated)"}}));
}

TEST(Gemma4GgufTest, HfTensorNames) {
  const std::pair<const char*, const char*> cases[] = {
      {"token_embd.weight", "model.language_model.embed_tokens.weight"},
      {"per_layer_token_embd.weight", "model.language_model.embed_tokens_per_layer.weight"},
      {"per_layer_model_proj.weight", "model.language_model.per_layer_model_projection.weight"},
      {"per_layer_proj_norm.weight", "model.language_model.per_layer_projection_norm.weight"},
      {"output_norm.weight", "model.language_model.norm.weight"},
      {"output.weight", "lm_head.weight"},
      {"blk.0.attn_norm.weight", "model.language_model.layers.0.input_layernorm.weight"},
      {"blk.7.attn_q.weight", "model.language_model.layers.7.self_attn.q_proj.weight"},
      {"blk.7.attn_k.weight", "model.language_model.layers.7.self_attn.k_proj.weight"},
      {"blk.7.attn_v.weight", "model.language_model.layers.7.self_attn.v_proj.weight"},
      {"blk.7.attn_output.weight", "model.language_model.layers.7.self_attn.o_proj.weight"},
      {"blk.2.attn_q_norm.weight", "model.language_model.layers.2.self_attn.q_norm.weight"},
      {"blk.2.attn_k_norm.weight", "model.language_model.layers.2.self_attn.k_norm.weight"},
      {"blk.2.post_attention_norm.weight",
       "model.language_model.layers.2.post_attention_layernorm.weight"},
      {"blk.2.ffn_norm.weight", "model.language_model.layers.2.pre_feedforward_layernorm.weight"},
      {"blk.2.ffn_gate.weight", "model.language_model.layers.2.mlp.gate_proj.weight"},
      {"blk.2.ffn_up.weight", "model.language_model.layers.2.mlp.up_proj.weight"},
      {"blk.2.ffn_down.weight", "model.language_model.layers.2.mlp.down_proj.weight"},
      {"blk.2.post_ffw_norm.weight",
       "model.language_model.layers.2.post_feedforward_layernorm.weight"},
      {"blk.2.inp_gate.weight", "model.language_model.layers.2.per_layer_input_gate.weight"},
      {"blk.2.proj.weight", "model.language_model.layers.2.per_layer_projection.weight"},
      {"blk.2.post_norm.weight", "model.language_model.layers.2.post_per_layer_input_norm.weight"},
      {"blk.5.layer_output_scale.weight", "model.language_model.layers.5.layer_scalar"},
  };
  for (const auto& [gguf_name, hf_name] : cases) {
    EXPECT_EQ(Gemma4HfTensorName(gguf_name, 8), std::optional<std::string>(hf_name)) << gguf_name;
  }
  for (const char* skipped :
       {"rope_freqs.weight", "blk.8.attn_q.weight", "blk.01.attn_q.weight", "blk.x.attn_q.weight",
        "blk..attn_q.weight", "blk.3", "blk.3.", "blk.3.attn_q.bias", "blk.3.ffn_gate_inp.weight",
        "mtp.pre_proj.weight", "v.patch_embd.weight", "blk.99999999999.attn_q.weight", ""}) {
    EXPECT_EQ(Gemma4HfTensorName(skipped, 8), std::nullopt) << skipped;
  }
  EXPECT_EQ(Gemma4HfTensorName("blk.12.attn_q.weight", 42),
            std::optional<std::string>("model.language_model.layers.12.self_attn.q_proj.weight"));
}

TEST(Gemma4GgufTest, TensorsUnderHfNamesAndShapes) {
  const GgufFile gguf = OpenTinyA();
  absl::StatusOr<Gemma4TextConfig> config = Gemma4ConfigFromGguf(gguf);
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  const std::vector<Gemma4GgufTensor> tensors = Gemma4TensorsFromGguf(gguf, *config);
  EXPECT_EQ(tensors.size(), gguf.tensors().size() - 1);  // all but rope_freqs.weight
  absl::StatusOr<SafetensorsCheckpoint> safetensors =
      SafetensorsCheckpoint::Open(ModelPath("tiny-a-f32"), false);
  ASSERT_TRUE(safetensors.ok()) << Msg(safetensors.status());
  for (const Gemma4GgufTensor& tensor : tensors) {
    SCOPED_TRACE(tensor.info->name);
    const TensorInfo* hf = safetensors->Find(tensor.spec.name);
    ASSERT_NE(hf, nullptr) << tensor.spec.name;
    EXPECT_EQ(tensor.spec.shape, hf->shape);
    EXPECT_EQ(tensor.spec.dtype, DType::kF32);
    EXPECT_EQ(Gemma4HfTensorName(tensor.info->name, 8), tensor.spec.name);
  }
}

// A decoder tensor with no HF name would change the numbers if it were read: the file is refused,
// naming it. Tensors of other parts of a model file are skipped.
TEST(Gemma4GgufTest, UnknownDecoderTensorsAreRefused) {
  const std::string bias = F32Bytes(std::vector<float>(64, 0.5f));
  for (const char* name : {"blk.3.attn_q.bias", "blk.8.attn_q.weight", "output_norm.bias",
                           "token_embd.scale", "per_layer_token_embd.bias",
                           "token_embd_norm.weight", "altup_proj.weight"}) {
    SCOPED_TRACE(name);
    EXPECT_THAT(EditError({}, [&](GgufBuilder& b) { b.Tensor(name, {64}, kF32, bias); }),
                HasSubstr(absl::StrCat("tensor ", name,
                                       " is not part of the Gemma 4 E-series text decoder")));
  }
  // A name with a NUL byte is named whole, escaped (it cut the message at the NUL).
  const std::string nul_name("blk.3.inp_gate.w\0ight", 21);
  EXPECT_THAT(EditError({}, [&](GgufBuilder& b) { b.Tensor(nul_name, {64}, kF32, bias); }),
              HasSubstr("tensor blk.3.inp_gate.w\\x00ight is not part of the Gemma 4 E-series"));
  for (const char* name : {"v.patch_embd.weight", "mm.input_projection.weight",
                           "a.conv1d.0.weight", "mtp.pre_proj.weight"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(EditedConfig({}, [&](GgufBuilder& b) { b.Tensor(name, {64}, kF32, bias); }).ok());
  }
}

TEST(Gemma4GgufTest, MissingAndMistypedKeys) {
  EXPECT_THAT(EditError({"gemma4.block_count"}, nullptr),
              HasSubstr("/model.gguf: missing key gemma4.block_count"));
  for (const char* key :
       {"gemma4.embedding_length", "gemma4.feed_forward_length", "gemma4.attention.head_count",
        "gemma4.attention.key_length_swa", "gemma4.attention.sliding_window",
        "gemma4.attention.sliding_window_pattern", "gemma4.embedding_length_per_layer_input",
        "gemma4.context_length", "gemma4.attention.layer_norm_rms_epsilon"}) {
    EXPECT_THAT(EditError({key}, nullptr), HasSubstr(absl::StrCat("missing key ", key)));
  }
  EXPECT_THAT(
      EditError({"gemma4.block_count"}, [](GgufBuilder& b) { b.Str("gemma4.block_count", "8"); }),
      HasSubstr("key gemma4.block_count has type str; expected an integer"));
  EXPECT_THAT(
      EditError({"gemma4.block_count"}, [](GgufBuilder& b) { b.F32("gemma4.block_count", 8.0f); }),
      HasSubstr("key gemma4.block_count has type f32; expected an integer"));
  EXPECT_THAT(
      EditError({"gemma4.attention.layer_norm_rms_epsilon"},
                [](GgufBuilder& b) { b.U32("gemma4.attention.layer_norm_rms_epsilon", 1); }),
      HasSubstr("key gemma4.attention.layer_norm_rms_epsilon has type u32; expected "
                "f32 or f64"));
  EXPECT_THAT(EditError({"gemma4.attention.sliding_window_pattern"},
                        [](GgufBuilder& b) {
                          b.StrArray("gemma4.attention.sliding_window_pattern",
                                     std::vector<std::string>(8, "yes"));
                        }),
              HasSubstr("has type arr[str,8]; expected bools"));
  EXPECT_THAT(EditError({"gemma4.feed_forward_length"},
                        [](GgufBuilder& b) {
                          b.Array<uint32_t>("gemma4.feed_forward_length", GgufValueType::kU32,
                                            std::vector<uint32_t>(7, 128));
                        }),
              HasSubstr("key gemma4.feed_forward_length has 7 entries; expected 8 "
                        "(gemma4.block_count)"));
  EXPECT_THAT(
      EditError({"gemma4.block_count"}, [](GgufBuilder& b) { b.U32("gemma4.block_count", 0); }),
      HasSubstr("key gemma4.block_count = 0 is outside [1, 1024]"));
  EXPECT_THAT(EditError({"gemma4.attention.sliding_window"},
                        [](GgufBuilder& b) { b.I32("gemma4.attention.sliding_window", -8); }),
              HasSubstr("key gemma4.attention.sliding_window = -8 is outside [1, 2147483647]"));
  EXPECT_THAT(EditError({"general.architecture"}, nullptr),
              HasSubstr("missing key general.architecture"));
  EXPECT_THAT(
      EditError(
          {"general.architecture"}, [](GgufBuilder& b) { b.Str("general.architecture", "llama"); },
          absl::StatusCode::kUnimplemented),
      HasSubstr("general.architecture is \"llama\"; only \"gemma4\""));
}

TEST(Gemma4GgufTest, IntegerKeysOfAnyWidthAndF64Floats) {
  absl::StatusOr<Gemma4TextConfig> config = EditedConfig(
      {"gemma4.block_count", "gemma4.attention.layer_norm_rms_epsilon",
       "gemma4.attention.sliding_window"},
      [](GgufBuilder& b) {
        b.Scalar<uint64_t>("gemma4.block_count", GgufValueType::kU64, 8);
        b.Scalar<double>("gemma4.attention.layer_norm_rms_epsilon", GgufValueType::kF64, 1e-6);
        b.Scalar<int16_t>("gemma4.attention.sliding_window", GgufValueType::kI16, 8);
      });
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  ExpectSameConfig(*config, JsonConfig());
}

TEST(Gemma4GgufTest, PerLayerHeadCounts) {
  absl::StatusOr<Gemma4TextConfig> uniform =
      EditedConfig({"gemma4.attention.head_count_kv"}, [](GgufBuilder& b) {
        b.Array<int32_t>("gemma4.attention.head_count_kv", GgufValueType::kI32,
                         std::vector<int32_t>(8, 2));
      });
  ASSERT_TRUE(uniform.ok()) << Msg(uniform.status());
  EXPECT_EQ(uniform->num_key_value_heads, 2);
  std::vector<int32_t> mixed(8, 2);
  mixed[3] = 1;
  EXPECT_THAT(EditError(
                  {"gemma4.attention.head_count_kv"},
                  [&](GgufBuilder& b) {
                    b.Array<int32_t>("gemma4.attention.head_count_kv", GgufValueType::kI32, mixed);
                  },
                  absl::StatusCode::kUnimplemented),
              HasSubstr("key gemma4.attention.head_count_kv differs between layers (2 for layer "
                        "0, 1 for layer 3)"));
  // Absent head_count_kv: as many K/V heads as query heads.
  absl::StatusOr<Gemma4TextConfig> absent =
      EditedConfig({"gemma4.attention.head_count_kv"}, nullptr);
  ASSERT_TRUE(absent.ok()) << Msg(absent.status());
  EXPECT_EQ(absent->num_key_value_heads, 4);
}

TEST(Gemma4GgufTest, DoubleWideMlpFromPerLayerWidths) {
  // Layers 4-7 (KV-shared) get 2·128 = 256-wide MLPs, as E2B's 15-34 do.
  const TensorRewrite widen = [](const GgufTensorInfo& info, const GgufFile& source) {
    const std::string& n = info.name;
    const bool shared = n.rfind("blk.4.", 0) == 0 || n.rfind("blk.5.", 0) == 0 ||
                        n.rfind("blk.6.", 0) == 0 || n.rfind("blk.7.", 0) == 0;
    const bool ffn = n.find(".ffn_gate.") != std::string::npos ||
                     n.find(".ffn_up.") != std::string::npos ||
                     n.find(".ffn_down.") != std::string::npos;
    if (!shared || !ffn) {
      return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
    }
    std::vector<int64_t> ne = info.ne;
    ne[n.find(".ffn_down.") != std::string::npos ? 0 : 1] = 256;
    return std::optional<TensorOut>(TensorOut{kF32, std::string(64 * 256 * 4, '\0'), ne});
  };
  std::vector<uint32_t> widths(8, 128);
  for (int l = 4; l < 8; ++l) widths[l] = 256;
  const auto per_layer = [&](GgufBuilder& b) {
    b.Array<uint32_t>("gemma4.feed_forward_length", GgufValueType::kU32, widths);
  };
  absl::StatusOr<Gemma4TextConfig> config =
      EditedConfig({"gemma4.feed_forward_length"}, per_layer, widen);
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  EXPECT_EQ(config->intermediate_size, 128);
  EXPECT_TRUE(config->use_double_wide_mlp);
  EXPECT_EQ(config->layer_intermediate_size(3), 128);
  EXPECT_EQ(config->layer_intermediate_size(4), 256);

  // The same widths with the original (128-wide) tensors: the tensor disagrees with the key.
  EXPECT_THAT(EditError({"gemma4.feed_forward_length"}, per_layer),
              HasSubstr("tensor blk.4.ffn_gate.weight has width 128 (ne[1]) but "
                        "gemma4.feed_forward_length[4] is 256"));
  // A uniform array is not double-wide.
  absl::StatusOr<Gemma4TextConfig> uniform =
      EditedConfig({"gemma4.feed_forward_length"}, [](GgufBuilder& b) {
        b.Array<uint32_t>("gemma4.feed_forward_length", GgufValueType::kU32,
                          std::vector<uint32_t>(8, 128));
      });
  ASSERT_TRUE(uniform.ok()) << Msg(uniform.status());
  EXPECT_FALSE(uniform->use_double_wide_mlp);
}

TEST(Gemma4GgufTest, Softcapping) {
  absl::StatusOr<Gemma4TextConfig> absent =
      EditedConfig({"gemma4.final_logit_softcapping"}, nullptr);
  ASSERT_TRUE(absent.ok()) << Msg(absent.status());
  EXPECT_FALSE(absent->final_logit_softcapping.has_value());  // follows the file: no softcap
  absl::StatusOr<Gemma4TextConfig> zero =
      EditedConfig({"gemma4.final_logit_softcapping"},
                   [](GgufBuilder& b) { b.F32("gemma4.final_logit_softcapping", 0.0f); });
  ASSERT_TRUE(zero.ok()) << Msg(zero.status());
  EXPECT_FALSE(zero->final_logit_softcapping.has_value());
  EXPECT_THAT(EditError({"gemma4.final_logit_softcapping"},
                        [](GgufBuilder& b) { b.F32("gemma4.final_logit_softcapping", -30.0f); }),
              HasSubstr("final_logit_softcapping"));
}

TEST(Gemma4GgufTest, RopeFreqsGiveThePartialRotaryFactor) {
  // 2 rotated pairs of 16: factor 2·2/32 = 0.125.
  std::vector<float> factors(16, 1e30f);
  factors[0] = factors[1] = 1.0f;
  absl::StatusOr<Gemma4TextConfig> config = EditedConfig({}, nullptr, RopeFreqs(factors));
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  EXPECT_EQ(config->rope_full.partial_rotary_factor, 0.125);
  EXPECT_EQ(config->rotated_pairs(3), 2);
  // Every pair rotated.
  config = EditedConfig({}, nullptr, RopeFreqs(std::vector<float>(16, 1.0f)));
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  EXPECT_EQ(config->rope_full.partial_rotary_factor, 1.0);
  // No rope_freqs: every pair rotated.
  const TensorRewrite drop_freqs = [](const GgufTensorInfo& info, const GgufFile& source) {
    if (info.name == "rope_freqs.weight") return std::optional<TensorOut>();
    return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
  };
  config = EditedConfig({}, nullptr, drop_freqs);
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  EXPECT_EQ(config->rope_full.rope_type, "proportional");
  EXPECT_EQ(config->rope_full.partial_rotary_factor, 1.0);
  EXPECT_EQ(config->rotated_pairs(3), 16);

  std::vector<float> scaled(16, 1e30f);
  scaled[0] = 1.0f;
  scaled[1] = 2.0f;  // a YaRN-like scaling cortiq's rope cannot express
  EXPECT_THAT(EditError({}, nullptr, absl::StatusCode::kUnimplemented, RopeFreqs(scaled)),
              HasSubstr("tensor rope_freqs.weight[1] = 2: only a run of 1"));
  std::vector<float> gap(16, 1e30f);
  gap[0] = 1.0f;
  gap[2] = 1.0f;
  EXPECT_THAT(EditError({}, nullptr, absl::StatusCode::kUnimplemented, RopeFreqs(gap)),
              HasSubstr("rope_freqs.weight[2] = 1"));
  EXPECT_THAT(EditError({}, nullptr, absl::StatusCode::kInvalidArgument,
                        RopeFreqs(std::vector<float>(16, 1e30f))),
              HasSubstr("rope_freqs.weight rotates no pair"));
  EXPECT_THAT(EditError({}, nullptr, absl::StatusCode::kInvalidArgument,
                        RopeFreqs(std::vector<float>(8, 1.0f))),
              HasSubstr("tensor rope_freqs.weight has ne [8]; expected [16]"));
  EXPECT_THAT(EditError(
                  {"gemma4.rope.dimension_count"},
                  [](GgufBuilder& b) { b.U32("gemma4.rope.dimension_count", 8); },
                  absl::StatusCode::kUnimplemented),
              HasSubstr("key gemma4.rope.dimension_count (8) differs from the full-attention "
                        "head width gemma4.attention.key_length (32)"));
  EXPECT_THAT(EditError(
                  {"gemma4.rope.dimension_count_swa"},
                  [](GgufBuilder& b) { b.U32("gemma4.rope.dimension_count_swa", 8); },
                  absl::StatusCode::kUnimplemented),
              HasSubstr("gemma4.rope.dimension_count_swa (8) differs"));
}

TEST(Gemma4GgufTest, ThetaDefaults) {
  absl::StatusOr<Gemma4TextConfig> config = EditedConfig({"gemma4.rope.freq_base_swa"}, nullptr);
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  EXPECT_EQ(config->rope_sliding.rope_theta, 1e6);  // = rope.freq_base
  config = EditedConfig({"gemma4.rope.freq_base", "gemma4.rope.freq_base_swa"}, nullptr);
  ASSERT_TRUE(config.ok()) << Msg(config.status());
  EXPECT_EQ(config->rope_full.rope_theta, 10000.0);  // llama.cpp's default
  EXPECT_EQ(config->rope_sliding.rope_theta, 10000.0);
  // key_length absent: embedding_length / head_count = 64 / 4 = 16, and key_length_swa is 16,
  // so rope_freqs (16 entries for d_F = 32) no longer fits.
  EXPECT_THAT(EditError({"gemma4.attention.key_length", "gemma4.attention.value_length",
                         "gemma4.rope.dimension_count"},
                        nullptr),
              HasSubstr("expected [8]"));
}

TEST(Gemma4GgufTest, OtherKeyAndTensorRules) {
  EXPECT_THAT(EditError({"gemma4.attention.value_length"},
                        [](GgufBuilder& b) { b.U32("gemma4.attention.value_length", 16); }),
              HasSubstr("key gemma4.attention.value_length (16) must equal "
                        "gemma4.attention.key_length (32)"));
  EXPECT_THAT(EditError(
                  {}, [](GgufBuilder& b) { b.U32("gemma4.expert_count", 4); },
                  absl::StatusCode::kUnimplemented),
              HasSubstr("gemma4.expert_count is 4: mixture-of-experts"));
  EXPECT_THAT(EditError({}, [](GgufBuilder& b) { b.U32("gemma4.vocab_size", 100); }),
              HasSubstr("key gemma4.vocab_size (100) differs from the rows of token_embd.weight "
                        "(512)"));
  EXPECT_THAT(EditError({"gemma4.attention.shared_kv_layers"},
                        [](GgufBuilder& b) { b.U32("gemma4.attention.shared_kv_layers", 8); }),
              HasSubstr("num_kv_shared_layers (8) must be < num_hidden_layers (8)"));
  EXPECT_THAT(EditError({"gemma4.embedding_length"},
                        [](GgufBuilder& b) { b.U32("gemma4.embedding_length", 32); }),
              HasSubstr("tensor token_embd.weight has 64 columns (ne[0]) but "
                        "gemma4.embedding_length is 32"));
  const TensorRewrite drop_embed = [](const GgufTensorInfo& info, const GgufFile& source) {
    if (info.name == "token_embd.weight") return std::optional<TensorOut>();
    return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
  };
  EXPECT_THAT(EditError({}, nullptr, absl::StatusCode::kInvalidArgument, drop_embed),
              HasSubstr("missing tensor token_embd.weight (needed for vocab_size)"));
  // The last layer must be full attention (ValidateGemma4TextConfig, HF field names).
  EXPECT_THAT(EditError({"gemma4.attention.sliding_window_pattern"},
                        [](GgufBuilder& b) {
                          b.BoolArray("gemma4.attention.sliding_window_pattern",
                                      std::vector<bool>(8, true));
                        }),
              HasSubstr("layer_types[7] (last layer) must be \"full_attention\""));
  // An untied head: output.weight becomes lm_head.weight.
  const TensorRewrite add_output = [](const GgufTensorInfo& info, const GgufFile& source) {
    return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
  };
  const GgufFile source = OpenTinyA();
  GgufBuilder builder = CopyGemma4Gguf(source, nullptr, add_output);
  builder.Tensor("output.weight", {64, 512}, kF32, std::string(64 * 512 * 4, '\0'));
  absl::StatusOr<Gemma4TextConfig> untied = ConfigOf(builder);
  ASSERT_TRUE(untied.ok()) << Msg(untied.status());
  EXPECT_FALSE(untied->tie_word_embeddings);
}

TEST(Gemma4GgufTest, UnsupportedRopeFreqsType) {
  const TensorRewrite i32_freqs = [](const GgufTensorInfo& info, const GgufFile& source) {
    if (info.name != "rope_freqs.weight") {
      return std::optional<TensorOut>(TensorOut{info.type, StoredBytes(source, info)});
    }
    return std::optional<TensorOut>(TensorOut{kI32, std::string(16 * 4, '\0')});
  };
  EXPECT_THAT(EditError({}, nullptr, absl::StatusCode::kUnimplemented, i32_freqs),
              HasSubstr("unsupported type I32 for tensor rope_freqs.weight"));
}

}  // namespace
}  // namespace cortiq
