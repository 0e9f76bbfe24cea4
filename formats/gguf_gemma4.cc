// Gemma-4 decoder config and tensor names from a GGUF file (see gguf_gemma4.h).
#include "formats/gguf_gemma4.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "formats/absl_compat.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

constexpr char kArchitectureKey[] = "general.architecture";
constexpr char kArchitecture[] = "gemma4";
constexpr char kKeyPrefix[] = "gemma4.";
// As ValidateGemma4TextConfig: at most 1024 layers, sizes at most 2^31 − 1.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;

// llama.cpp's default rope.freq_base (llama-model-loader: rope_freq_base_train = 10000).
constexpr double kDefaultFreqBase = 10000.0;

// The double of the shortest decimal that reads back as `value` in f32 (Python's repr of a
// float32): f32 1e-6 (9.99999997e-07) → 1e-6. Non-finite values are returned as they are.
double ShortestDouble(float value) {
  if (!std::isfinite(value)) return value;
  char text[64];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value) return std::strtod(text, nullptr);
  }
  return value;  // %.9g always round-trips; not reached.
}

struct GlobalName {
  const char* gguf;
  const char* hf;  // relative to kGgufHfPrefix, except lm_head.weight.
};
constexpr GlobalName kGlobalNames[] = {
    {"token_embd.weight", "embed_tokens.weight"},
    {"per_layer_token_embd.weight", "embed_tokens_per_layer.weight"},
    {"per_layer_model_proj.weight", "per_layer_model_projection.weight"},
    {"per_layer_proj_norm.weight", "per_layer_projection_norm.weight"},
    {"output_norm.weight", "norm.weight"},
};
constexpr char kOutputName[] = "output.weight";

constexpr GlobalName kLayerNames[] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_q_norm.weight", "self_attn.q_norm.weight"},
    {"attn_k_norm.weight", "self_attn.k_norm.weight"},
    {"post_attention_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
    {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"},
    {"inp_gate.weight", "per_layer_input_gate.weight"},
    {"proj.weight", "per_layer_projection.weight"},
    {"post_norm.weight", "post_per_layer_input_norm.weight"},
    {"layer_output_scale.weight", "layer_scalar"},
};

// Typed access to the gemma4.* keys, with errors naming the file and the key.
class KeyReader {
 public:
  explicit KeyReader(const GgufFile& gguf) : gguf_(gguf) {}

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(gguf_.path(), ": ", what));
  }

  static std::string Key(absl::string_view name) { return absl::StrCat(kKeyPrefix, name); }

  const GgufValue* Find(absl::string_view name) const { return gguf_.FindValue(Key(name)); }

  absl::Status Missing(absl::string_view name) const {
    return Error(absl::StrCat("missing key ", Key(name)));
  }

  absl::Status WrongType(absl::string_view name, const GgufValue& value,
                         absl::string_view expected) const {
    return Error(
        absl::StrCat("key ", Key(name), " has type ", value.TypeString(), "; expected ", expected));
  }

  // Element `index` of `value` as an integer in [min, max].
  absl::StatusOr<int64_t> IntElement(absl::string_view name, const GgufValue& value, uint64_t index,
                                     int64_t min, int64_t max) const {
    const std::optional<int64_t> number = value.Int(index);
    if (!number.has_value()) {
      if (value.Float(index).has_value() || value.Bool(index).has_value() ||
          value.String(index).has_value()) {
        return WrongType(name, value, value.is_array() ? "integers" : "an integer");
      }
      return Error(absl::StrCat("key ", Key(name), " holds a u64 above 2^63 - 1"));
    }
    if (*number < min || *number > max) {
      return Error(absl::StrCat("key ", Key(name),
                                value.is_array() ? absl::StrCat("[", index, "]") : std::string(),
                                " = ", *number, " is outside [", min, ", ", max, "]"));
    }
    return *number;
  }

  // A required scalar integer in [min, max].
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t min, int64_t max = kMaxSize) const {
    const GgufValue* value = Find(name);
    if (value == nullptr) return Missing(name);
    return ScalarInt(name, *value, min, max);
  }

  // An optional scalar integer in [min, max].
  absl::StatusOr<std::optional<int64_t>> OptionalInt(absl::string_view name, int64_t min,
                                                     int64_t max = kMaxSize) const {
    const GgufValue* value = Find(name);
    if (value == nullptr) return std::optional<int64_t>();
    absl::StatusOr<int64_t> number = ScalarInt(name, *value, min, max);
    if (!number.ok()) return number.status();
    return std::optional<int64_t>(*number);
  }

  // A required integer, scalar (repeated for every layer) or one entry per layer, each in
  // [min, max]; `present` is cleared (and nothing else set) when the key is absent and
  // `required` is false.
  absl::StatusOr<std::vector<int64_t>> IntPerLayer(absl::string_view name, int64_t layers,
                                                   int64_t min, bool required = true,
                                                   bool* present = nullptr) const {
    const GgufValue* value = Find(name);
    if (present != nullptr) *present = value != nullptr;
    if (value == nullptr) {
      if (required) return Missing(name);
      return std::vector<int64_t>();
    }
    if (!value->is_array()) {
      absl::StatusOr<int64_t> number = ScalarInt(name, *value, min, kMaxSize);
      if (!number.ok()) return number.status();
      return std::vector<int64_t>(layers, *number);
    }
    CORTIQ_RETURN_IF_ERROR(CheckLength(name, *value, layers));
    std::vector<int64_t> numbers;
    for (int64_t i = 0; i < layers; ++i) {
      absl::StatusOr<int64_t> number = IntElement(name, *value, i, min, kMaxSize);
      if (!number.ok()) return number.status();
      numbers.push_back(*number);
    }
    return numbers;
  }

  // A required bool (or integer, non-zero = true) per layer, scalar or array.
  absl::StatusOr<std::vector<bool>> BoolPerLayer(absl::string_view name, int64_t layers) const {
    const GgufValue* value = Find(name);
    if (value == nullptr) return Missing(name);
    if (value->is_array()) CORTIQ_RETURN_IF_ERROR(CheckLength(name, *value, layers));
    std::vector<bool> flags;
    for (int64_t i = 0; i < layers; ++i) {
      const uint64_t index = value->is_array() ? i : 0;
      if (const std::optional<bool> flag = value->Bool(index)) {
        flags.push_back(*flag);
      } else if (const std::optional<int64_t> number = value->Int(index)) {
        flags.push_back(*number != 0);
      } else {
        return WrongType(name, *value, value->is_array() ? "bools" : "a bool");
      }
    }
    return flags;
  }

  // An optional scalar float (f32 widened by ShortestDouble, or f64).
  absl::StatusOr<std::optional<double>> OptionalFloat(absl::string_view name) const {
    const GgufValue* value = Find(name);
    if (value == nullptr) return std::optional<double>();
    if (value->is_array() || !value->Float().has_value()) {
      return WrongType(name, *value, "f32 or f64");
    }
    if (value->type() == GgufValueType::kF32) {
      return std::optional<double>(ShortestDouble(static_cast<float>(*value->Float())));
    }
    return std::optional<double>(*value->Float());
  }

  absl::StatusOr<double> Float(absl::string_view name) const {
    absl::StatusOr<std::optional<double>> value = OptionalFloat(name);
    if (!value.ok()) return value.status();
    if (!value->has_value()) return Missing(name);
    return **value;
  }

 private:
  absl::StatusOr<int64_t> ScalarInt(absl::string_view name, const GgufValue& value, int64_t min,
                                    int64_t max) const {
    if (value.is_array()) return WrongType(name, value, "an integer");
    return IntElement(name, value, 0, min, max);
  }

  absl::Status CheckLength(absl::string_view name, const GgufValue& value, int64_t layers) const {
    if (value.size() != static_cast<uint64_t>(layers)) {
      return Error(absl::StrCat("key ", Key(name), " has ", value.size(), " entries; expected ",
                                layers, " (", Key("block_count"), ")"));
    }
    return absl::OkStatus();
  }

  const GgufFile& gguf_;
};

// The single value of a per-layer array, or Unimplemented if the layers differ.
absl::StatusOr<int64_t> Uniform(const GgufFile& gguf, absl::string_view key,
                                const std::vector<int64_t>& values) {
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] != values[0]) {
      return absl::UnimplementedError(absl::StrCat(
          gguf.path(), ": key ", KeyReader::Key(key), " differs between layers (", values[0],
          " for layer 0, ", values[i], " for layer ", i, "); only a uniform value is supported"));
    }
  }
  return values[0];
}

// The tensor `name`, required to be 2-D (ggml ne = [columns, rows]).
absl::StatusOr<const GgufTensorInfo*> Matrix(const GgufFile& gguf, absl::string_view name,
                                             absl::string_view needed_for) {
  const GgufTensorInfo* info = gguf.FindTensor(std::string_view(name.data(), name.size()));
  if (info == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(gguf.path(), ": missing tensor ", name, " (needed for ", needed_for, ")"));
  }
  if (info->ne.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(gguf.path(), ": tensor ", name, " has ",
                                                   info->ne.size(), " dimensions; expected 2"));
  }
  return info;
}

// partial_rotary_factor of the full layers, from rope_freqs.weight (see gguf_gemma4.h).
absl::StatusOr<double> FullRotaryFactor(const GgufFile& gguf, const KeyReader& keys,
                                        int64_t global_head_dim) {
  absl::StatusOr<std::optional<int64_t>> dimension_count =
      keys.OptionalInt("rope.dimension_count", 1);
  if (!dimension_count.ok()) return dimension_count.status();
  if (dimension_count->has_value() && **dimension_count != global_head_dim) {
    return absl::UnimplementedError(absl::StrCat(
        gguf.path(), ": key ", KeyReader::Key("rope.dimension_count"), " (", **dimension_count,
        ") differs from the full-attention head width ", KeyReader::Key("attention.key_length"),
        " (", global_head_dim, "): ggml would rotate pairs (i, i + ", **dimension_count / 2,
        "), which no HF rope does; only partial rotation through rope_freqs.weight is "
        "supported"));
  }
  const GgufTensorInfo* info = gguf.FindTensor("rope_freqs.weight");
  if (info == nullptr) return 1.0;
  const int64_t pairs_total = global_head_dim / 2;
  if (info->ne.size() != 1 || info->ne[0] != pairs_total) {
    std::string shape;
    for (size_t i = 0; i < info->ne.size(); ++i)
      absl::StrAppend(&shape, i ? ", " : "", info->ne[i]);
    return absl::InvalidArgumentError(
        absl::StrCat(gguf.path(), ": tensor rope_freqs.weight has ne [", shape, "]; expected [",
                     pairs_total, "] (", KeyReader::Key("attention.key_length"), " / 2)"));
  }
  // The f32 copy is sized by a key (up to 2^30 entries): allocate it only for a type that can
  // be read, whose bytes in the file then bound it (at most 4 · 32 / 18 bytes per stored byte).
  if (info->dtype == DType::kUnsupported) {
    return absl::UnimplementedError(absl::StrCat(
        gguf.path(), ": unsupported type ", ToAbsl(info->type_name),
        " for tensor rope_freqs.weight (", kReadableGgufTypes, " can be read)"));
  }
  std::vector<float> factors(pairs_total);
  CORTIQ_RETURN_IF_ERROR(gguf.ReadAsF32(*info, factors.data()));
  int64_t rotated = 0;
  while (rotated < pairs_total && factors[rotated] == 1.0f) ++rotated;
  for (int64_t i = rotated; i < pairs_total; ++i) {
    if (!(factors[i] >= kGgufUnrotatedFreqFactor)) {
      return absl::UnimplementedError(absl::StrCat(
          gguf.path(), ": tensor rope_freqs.weight[", i, "] = ", factors[i],
          ": only a run of 1 (rotated pairs) followed by entries >= ", kGgufUnrotatedFreqFactor,
          " (pairs left alone) is supported"));
    }
  }
  if (rotated == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(gguf.path(), ": tensor rope_freqs.weight rotates no pair (none of its ",
                     pairs_total, " entries is a leading 1)"));
  }
  // HF: rotated pairs = floor(factor · d / 2). Make sure that gives back `rotated` exactly.
  double factor = 2.0 * static_cast<double>(rotated) / static_cast<double>(global_head_dim);
  while (std::floor(factor * static_cast<double>(global_head_dim) / 2.0) <
         static_cast<double>(rotated)) {
    factor = std::nextafter(factor, 2.0);
  }
  return factor;
}

}  // namespace

absl::StatusOr<Gemma4TextConfig> Gemma4ConfigFromGguf(const GgufFile& gguf) {
  const KeyReader keys(gguf);
  const GgufValue* architecture = gguf.FindValue(kArchitectureKey);
  if (architecture == nullptr) {
    return keys.Error(absl::StrCat("missing key ", kArchitectureKey));
  }
  const std::optional<std::string_view> arch_name = architecture->String();
  if (architecture->is_array() || !arch_name.has_value()) {
    return keys.Error(absl::StrCat("key ", kArchitectureKey, " has type ",
                                   architecture->TypeString(), "; expected str"));
  }
  if (*arch_name != kArchitecture) {
    return absl::UnimplementedError(absl::StrCat(gguf.path(), ": ", kArchitectureKey, " is \"",
                                                 ToAbsl(*arch_name), "\"; only \"", kArchitecture,
                                                 "\" (Gemma 4) files are supported"));
  }
  absl::StatusOr<std::optional<int64_t>> experts = keys.OptionalInt("expert_count", 0);
  if (!experts.ok()) return experts.status();
  if (experts->value_or(0) > 0) {
    return absl::UnimplementedError(absl::StrCat(
        gguf.path(), ": ", KeyReader::Key("expert_count"), " is ", **experts,
        ": mixture-of-experts Gemma 4 models are not supported (only the dense E-series)"));
  }

  Gemma4TextConfig config;
  // Optional keys that change the math: record the default each one takes (gguf_gemma4.h).
  const auto defaulted = [&](absl::string_view key, absl::string_view hf_field,
                             std::string value) {
    config.defaulted.push_back(DefaultedField{
        gguf.path(), absl::StrCat(KeyReader::Key(key), " (", hf_field, ")"), std::move(value)});
  };
  CORTIQ_ASSIGN_OR_RETURN(config.num_hidden_layers, keys.Int("block_count", 1, kMaxLayers));
  const int64_t layers = config.num_hidden_layers;
  CORTIQ_ASSIGN_OR_RETURN(config.hidden_size, keys.Int("embedding_length", 1));

  bool ffn_is_array = false;
  {
    const GgufValue* value = keys.Find("feed_forward_length");
    ffn_is_array = value != nullptr && value->is_array();
  }
  CORTIQ_ASSIGN_OR_RETURN(std::vector<int64_t> ffn,
                          keys.IntPerLayer("feed_forward_length", layers, 1));
  config.intermediate_size = ffn[0];

  CORTIQ_ASSIGN_OR_RETURN(std::vector<int64_t> heads,
                          keys.IntPerLayer("attention.head_count", layers, 1));
  CORTIQ_ASSIGN_OR_RETURN(config.num_attention_heads, Uniform(gguf, "attention.head_count", heads));
  bool has_kv_heads = false;
  CORTIQ_ASSIGN_OR_RETURN(
      std::vector<int64_t> kv_heads,
      keys.IntPerLayer("attention.head_count_kv", layers, 1, /*required=*/false, &has_kv_heads));
  config.num_key_value_heads = config.num_attention_heads;
  if (has_kv_heads) {
    CORTIQ_ASSIGN_OR_RETURN(config.num_key_value_heads,
                            Uniform(gguf, "attention.head_count_kv", kv_heads));
  } else {
    defaulted("attention.head_count_kv", "num_key_value_heads",
              absl::StrCat(config.num_key_value_heads, " (= attention.head_count)"));
  }

  CORTIQ_ASSIGN_OR_RETURN(std::optional<int64_t> key_length,
                          keys.OptionalInt("attention.key_length", 1));
  config.global_head_dim = key_length.value_or(config.hidden_size / config.num_attention_heads);
  if (!key_length.has_value()) {
    defaulted("attention.key_length", "global_head_dim",
              absl::StrCat(config.global_head_dim, " (= embedding_length / head_count)"));
  }
  CORTIQ_ASSIGN_OR_RETURN(config.head_dim, keys.Int("attention.key_length_swa", 1));
  for (const auto& [value_key, key_key, expected] :
       {std::tuple<const char*, const char*, int64_t>{
            "attention.value_length", "attention.key_length", config.global_head_dim},
        {"attention.value_length_swa", "attention.key_length_swa", config.head_dim}}) {
    CORTIQ_ASSIGN_OR_RETURN(std::optional<int64_t> value_length, keys.OptionalInt(value_key, 1));
    if (value_length.has_value() && *value_length != expected) {
      return keys.Error(absl::StrCat("key ", KeyReader::Key(value_key), " (", *value_length,
                                     ") must equal ", KeyReader::Key(key_key), " (", expected,
                                     ")"));
    }
  }
  CORTIQ_ASSIGN_OR_RETURN(std::optional<int64_t> swa_dims,
                          keys.OptionalInt("rope.dimension_count_swa", 1));
  if (swa_dims.has_value() && *swa_dims != config.head_dim) {
    return absl::UnimplementedError(absl::StrCat(
        gguf.path(), ": key ", KeyReader::Key("rope.dimension_count_swa"), " (", *swa_dims,
        ") differs from the sliding head width ", KeyReader::Key("attention.key_length_swa"), " (",
        config.head_dim, "): partial rotation of sliding layers is not supported"));
  }

  CORTIQ_ASSIGN_OR_RETURN(config.sliding_window, keys.Int("attention.sliding_window", 1));
  CORTIQ_ASSIGN_OR_RETURN(std::vector<bool> sliding,
                          keys.BoolPerLayer("attention.sliding_window_pattern", layers));
  config.layer_types.clear();
  for (bool is_sliding : sliding) {
    config.layer_types.push_back(is_sliding ? LayerType::kSliding : LayerType::kFull);
  }
  CORTIQ_ASSIGN_OR_RETURN(std::optional<int64_t> shared,
                          keys.OptionalInt("attention.shared_kv_layers", 0));
  config.num_kv_shared_layers = shared.value_or(0);
  if (!shared.has_value()) defaulted("attention.shared_kv_layers", "num_kv_shared_layers", "0");
  CORTIQ_ASSIGN_OR_RETURN(config.hidden_size_per_layer_input,
                          keys.Int("embedding_length_per_layer_input", 1));
  CORTIQ_ASSIGN_OR_RETURN(config.max_position_embeddings, keys.Int("context_length", 1));
  CORTIQ_ASSIGN_OR_RETURN(config.rms_norm_eps, keys.Float("attention.layer_norm_rms_epsilon"));
  CORTIQ_ASSIGN_OR_RETURN(std::optional<double> softcap,
                          keys.OptionalFloat("final_logit_softcapping"));
  config.final_logit_softcapping.reset();
  if (softcap.has_value() && *softcap != 0.0) config.final_logit_softcapping = *softcap;
  if (!softcap.has_value()) {
    defaulted("final_logit_softcapping", "final_logit_softcapping",
              "none (llama.cpp would apply 30)");
  }

  CORTIQ_ASSIGN_OR_RETURN(std::optional<double> freq_base, keys.OptionalFloat("rope.freq_base"));
  CORTIQ_ASSIGN_OR_RETURN(std::optional<double> freq_base_swa,
                          keys.OptionalFloat("rope.freq_base_swa"));
  const double theta_full = freq_base.value_or(kDefaultFreqBase);
  if (!freq_base.has_value()) {
    defaulted("rope.freq_base", "rope_parameters.full_attention.rope_theta",
              absl::StrCat(kDefaultFreqBase, " (llama.cpp's default)"));
  }
  if (!freq_base_swa.has_value()) {
    defaulted("rope.freq_base_swa", "rope_parameters.sliding_attention.rope_theta",
              absl::StrCat(theta_full, " (= rope.freq_base)"));
  }
  if (gguf.FindTensor("rope_freqs.weight") == nullptr) {
    config.defaulted.push_back(DefaultedField{
        gguf.path(),
        "tensor rope_freqs.weight (rope_parameters.full_attention.partial_rotary_factor)",
        "1 (every pair of the full layers rotated)"});
  }
  CORTIQ_ASSIGN_OR_RETURN(const double factor,
                          FullRotaryFactor(gguf, keys, config.global_head_dim));
  config.rope_full = RopeParameters{"proportional", theta_full, factor};
  config.rope_sliding = RopeParameters{"default", freq_base_swa.value_or(theta_full), 1.0};
  config.hidden_activation = "gelu_pytorch_tanh";
  config.attention_k_eq_v = false;

  // Sizes from the tensors.
  CORTIQ_ASSIGN_OR_RETURN(const GgufTensorInfo* embed,
                          Matrix(gguf, "token_embd.weight", "vocab_size"));
  if (embed->ne[0] != config.hidden_size) {
    return keys.Error(absl::StrCat("tensor token_embd.weight has ", embed->ne[0],
                                   " columns (ne[0]) but ", KeyReader::Key("embedding_length"),
                                   " is ", config.hidden_size));
  }
  config.vocab_size = embed->ne[1];
  CORTIQ_ASSIGN_OR_RETURN(std::optional<int64_t> vocab_key, keys.OptionalInt("vocab_size", 1));
  if (vocab_key.has_value() && *vocab_key != config.vocab_size) {
    return keys.Error(absl::StrCat("key ", KeyReader::Key("vocab_size"), " (", *vocab_key,
                                   ") differs from the rows of token_embd.weight (",
                                   config.vocab_size, ")"));
  }
  CORTIQ_ASSIGN_OR_RETURN(
      const GgufTensorInfo* per_layer_embed,
      Matrix(gguf, "per_layer_token_embd.weight", "vocab_size_per_layer_input"));
  config.vocab_size_per_layer_input = per_layer_embed->ne[1];
  config.tie_word_embeddings = gguf.FindTensor(kOutputName) == nullptr;

  // E2B's per-layer FFN widths: I on KV-owning layers, 2·I on the KV-shared ones.
  const int64_t first_shared = layers - config.num_kv_shared_layers;
  bool double_wide =
      ffn_is_array && config.num_kv_shared_layers > 0 && first_shared > 0 && first_shared < layers;
  for (int64_t l = 0; l < layers && double_wide; ++l) {
    double_wide = ffn[l] == (l < first_shared ? 1 : 2) * config.intermediate_size;
  }
  config.use_double_wide_mlp = double_wide;
  for (int64_t l = 0; l < layers; ++l) {
    const std::string name = absl::StrCat("blk.", l, ".ffn_gate.weight");
    const GgufTensorInfo* gate = gguf.FindTensor(name);
    if (gate != nullptr && gate->ne.size() == 2 && gate->ne[1] != ffn[l]) {
      return keys.Error(absl::StrCat("tensor ", name, " has width ", gate->ne[1], " (ne[1]) but ",
                                     KeyReader::Key("feed_forward_length"),
                                     ffn_is_array ? absl::StrCat("[", l, "]") : std::string(),
                                     " is ", ffn[l]));
    }
  }

  CORTIQ_RETURN_IF_ERROR(ValidateGemma4TextConfig(config, gguf.path()));
  // A tensor cortiq has no name for may belong to the decoder (a bias, a norm of a newer
  // variant, a block beyond block_count) and change the model's numbers: ignoring it would run
  // a different model, so it is refused. Only the parts of a model file that are not the text
  // decoder are skipped: vision (v.) and audio (a.) towers, their projector (mm.), a draft head
  // (mtp.), and rope_freqs.weight (read above).
  for (const GgufTensorInfo& info : gguf.tensors()) {
    if (info.name == "rope_freqs.weight" ||
        Gemma4HfTensorName(info.name, config.num_hidden_layers).has_value()) {
      continue;
    }
    const bool other_part = absl::StartsWith(info.name, "v.") ||
                            absl::StartsWith(info.name, "a.") ||
                            absl::StartsWith(info.name, "mm.") ||
                            absl::StartsWith(info.name, "mtp.");
    if (!other_part) {
      return keys.Error(absl::StrCat(
          "tensor ", absl::CHexEscape(info.name),  // escaped: a NUL would cut the message
          " is not part of the Gemma 4 E-series text decoder (",
          config.num_hidden_layers, " blocks) that cortiq runs; refusing the file rather than "
          "running the model without it"));
    }
  }
  return config;
}

std::optional<std::string> Gemma4HfTensorName(std::string_view gguf_name, int64_t num_layers) {
  for (const GlobalName& entry : kGlobalNames) {
    if (gguf_name == entry.gguf) return absl::StrCat(kGgufHfPrefix, entry.hf);
  }
  if (gguf_name == kOutputName) return std::string("lm_head.weight");
  constexpr std::string_view kBlock = "blk.";
  if (gguf_name.substr(0, kBlock.size()) != kBlock) return std::nullopt;
  std::string_view rest = gguf_name.substr(kBlock.size());
  size_t digits = 0;
  int64_t layer = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && digits < 9) {
    layer = layer * 10 + (rest[digits] - '0');
    ++digits;
  }
  if (digits == 0 || digits >= rest.size() || rest[digits] != '.' ||
      (digits > 1 && rest[0] == '0') || layer >= num_layers) {
    return std::nullopt;
  }
  const std::string_view suffix = rest.substr(digits + 1);
  for (const GlobalName& entry : kLayerNames) {
    if (suffix == entry.gguf) return absl::StrCat(kGgufHfPrefix, "layers.", layer, ".", entry.hf);
  }
  return std::nullopt;
}

std::vector<Gemma4GgufTensor> Gemma4TensorsFromGguf(const GgufFile& gguf,
                                                    const Gemma4TextConfig& config) {
  std::vector<Gemma4GgufTensor> tensors;
  for (const GgufTensorInfo& info : gguf.tensors()) {
    std::optional<std::string> name = Gemma4HfTensorName(info.name, config.num_hidden_layers);
    if (!name.has_value()) continue;
    tensors.push_back(
        Gemma4GgufTensor{TensorSpec{*std::move(name), info.dtype, info.hf_shape()}, &info});
  }
  return tensors;
}

}  // namespace cortiq
