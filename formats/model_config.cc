// Parsing and validation of the Gemma-4 text-decoder config.json (see model_config.h).
#include "formats/model_config.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "formats/absl_compat.h"
#include "base/file_util.h"
#include "formats/json_util.h"
#include "llvm/Support/JSON.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

// Upper bound of every size field: 2^31 − 1 keeps products of two sizes (V·H, L·P·V) inside
// int64 and far above any real value (the E-series maximum is V = 262144).
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
// Upper bound of num_hidden_layers: the per-layer vectors are built before anything else is
// checked, so this bounds their allocation (E4B has 42 layers).
constexpr int64_t kMaxLayers = 1024;
// config.json files are a few KiB (E4B's, with its vision and audio sub-configs, ~6 KB); 1 MiB is
// far beyond any real one and bounds the llvm::json tree of a hostile one (~60× the text).
constexpr uint64_t kMaxConfigBytes = uint64_t{1} << 20;

constexpr absl::string_view kSlidingName = "sliding_attention";
constexpr absl::string_view kFullName = "full_attention";
constexpr absl::string_view kSupportedActivation = "gelu_pytorch_tanh";

[[noreturn]] void DieBadLayer(const char* method, int64_t layer, int64_t num_layers) {
  std::fprintf(stderr, "cortiq: Gemma4TextConfig::%s: layer %lld outside [0, %lld)\n", method,
               static_cast<long long>(layer), static_cast<long long>(num_layers));
  std::abort();
}

// Typed access to the fields of one JSON object, producing messages of the form
// "<file>: <prefix><key> must be ...".
class FieldReader {
 public:
  FieldReader(const llvm::json::Object& object, absl::string_view file_name, std::string prefix)
      : object_(object), file_name_(file_name), prefix_(std::move(prefix)) {}

  std::string Path(absl::string_view key) const { return absl::StrCat(prefix_, key); }

  // The value of `key`, or nullptr if absent or null.
  const llvm::json::Value* Get(absl::string_view key) const {
    const llvm::json::Value* value = object_.get(llvm::StringRef(key.data(), key.size()));
    if (value == nullptr || value->kind() == llvm::json::Value::Null) return nullptr;
    return value;
  }

  absl::Status Missing(absl::string_view key) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name_, ": missing required field ", Path(key)));
  }

  absl::Status WrongType(absl::string_view key, absl::string_view expected,
                         const llvm::json::Value& value) const {
    return absl::InvalidArgumentError(absl::StrCat(file_name_, ": ", Path(key), " must be ",
                                                   expected, ", got ", JsonKindName(value)));
  }

  // Reads an integer field; leaves `*out` unchanged if the field is absent and not `required`.
  absl::Status Int(absl::string_view key, bool required, int64_t* out) const {
    const llvm::json::Value* value = Get(key);
    if (value == nullptr) return required ? Missing(key) : absl::OkStatus();
    if (!JsonToInt64(*value, out)) return WrongType(key, "an integer", *value);
    return absl::OkStatus();
  }

  absl::Status Double(absl::string_view key, bool required, double* out) const {
    const llvm::json::Value* value = Get(key);
    if (value == nullptr) return required ? Missing(key) : absl::OkStatus();
    const llvm::Optional<double> number = value->getAsNumber();
    if (!number) return WrongType(key, "a number", *value);
    *out = *number;
    return absl::OkStatus();
  }

  absl::Status OptionalDouble(absl::string_view key, std::optional<double>* out) const {
    const llvm::json::Value* value = Get(key);
    if (value == nullptr) return absl::OkStatus();
    const llvm::Optional<double> number = value->getAsNumber();
    if (!number) return WrongType(key, "a number or null", *value);
    *out = *number;
    return absl::OkStatus();
  }

  absl::Status Bool(absl::string_view key, bool* out) const {
    const llvm::json::Value* value = Get(key);
    if (value == nullptr) return absl::OkStatus();
    const llvm::Optional<bool> boolean = value->getAsBoolean();
    if (!boolean) return WrongType(key, "a boolean", *value);
    *out = *boolean;
    return absl::OkStatus();
  }

  absl::Status String(absl::string_view key, bool required, std::string* out) const {
    const llvm::json::Value* value = Get(key);
    if (value == nullptr) return required ? Missing(key) : absl::OkStatus();
    const llvm::Optional<llvm::StringRef> text = value->getAsString();
    if (!text) return WrongType(key, "a string", *value);
    *out = text->str();
    return absl::OkStatus();
  }

  // The object at `key`; nullptr with OK status if absent.
  absl::StatusOr<const llvm::json::Object*> Object(absl::string_view key) const {
    const llvm::json::Value* value = Get(key);
    if (value == nullptr) return nullptr;
    const llvm::json::Object* object = value->getAsObject();
    if (object == nullptr) return WrongType(key, "an object", *value);
    return object;
  }

  absl::string_view file_name() const { return file_name_; }

 private:
  const llvm::json::Object& object_;
  absl::string_view file_name_;
  std::string prefix_;
};

// Reads rope_parameters.`key` into `rope`. An absent partial_rotary_factor of a rope_type other
// than "default" (whose factor must be 1) takes HF's default 1.0, which changes the math of the
// E-series' proportional RoPE (0.25 there): it is recorded in `defaulted`.
absl::Status ParseRope(const FieldReader& fields, absl::string_view key, RopeParameters* rope,
                       std::vector<DefaultedField>* defaulted) {
  absl::StatusOr<const llvm::json::Object*> object = fields.Object(key);
  if (!object.ok()) return object.status();
  if (*object == nullptr) return fields.Missing(key);
  const FieldReader rope_fields(**object, fields.file_name(), absl::StrCat(fields.Path(key), "."));
  CORTIQ_RETURN_IF_ERROR(rope_fields.String("rope_type", /*required=*/true, &rope->rope_type));
  CORTIQ_RETURN_IF_ERROR(rope_fields.Double("rope_theta", /*required=*/true, &rope->rope_theta));
  rope->partial_rotary_factor = 1.0;
  CORTIQ_RETURN_IF_ERROR(rope_fields.Double("partial_rotary_factor", /*required=*/false,
                                            &rope->partial_rotary_factor));
  if (rope_fields.Get("partial_rotary_factor") == nullptr && rope->rope_type != "default") {
    defaulted->push_back(DefaultedField{std::string(fields.file_name()),
                                       rope_fields.Path("partial_rotary_factor"), "1"});
  }
  double factor = 1.0;
  CORTIQ_RETURN_IF_ERROR(rope_fields.Double("factor", /*required=*/false, &factor));
  if (factor != 1.0) {
    return absl::UnimplementedError(absl::StrCat(fields.file_name(), ": ",
                                                 rope_fields.Path("factor"), " (", factor,
                                                 ") is not supported: RoPE scaling must be 1"));
  }
  return absl::OkStatus();
}

absl::Status ParseLayerTypes(const FieldReader& fields, Gemma4TextConfig* config) {
  const llvm::json::Value* value = fields.Get("layer_types");
  if (value == nullptr) {
    // HF default: sliding unless (i+1) % 6 == 0, and the last layer forced to full.
    const int64_t num_layers = config->num_hidden_layers;
    config->layer_types.resize(static_cast<size_t>(num_layers));
    for (int64_t i = 0; i < num_layers; ++i) {
      config->layer_types[i] = (i + 1) % 6 != 0 ? LayerType::kSliding : LayerType::kFull;
    }
    config->layer_types.back() = LayerType::kFull;
    return absl::OkStatus();
  }
  const llvm::json::Array* array = value->getAsArray();
  if (array == nullptr) return fields.WrongType("layer_types", "an array of strings", *value);
  config->layer_types.clear();
  config->layer_types.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string path = absl::StrCat(fields.Path("layer_types"), "[", i, "]");
    const llvm::Optional<llvm::StringRef> name = (*array)[i].getAsString();
    if (!name) {
      return absl::InvalidArgumentError(absl::StrCat(
          fields.file_name(), ": ", path, " must be a string, got ", JsonKindName((*array)[i])));
    }
    const absl::string_view type_name(name->data(), name->size());
    if (type_name == kSlidingName) {
      config->layer_types.push_back(LayerType::kSliding);
    } else if (type_name == kFullName) {
      config->layer_types.push_back(LayerType::kFull);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(fields.file_name(), ": ", path, " (\"",
                                                     name->str(), "\") must be \"", kSlidingName,
                                                     "\" or \"", kFullName, "\""));
    }
  }
  return absl::OkStatus();
}

// Rejects a feature flag that cortiq does not implement when it is set to true.
absl::Status RejectIfTrue(const FieldReader& fields, absl::string_view key, absl::string_view why) {
  bool value = false;
  CORTIQ_RETURN_IF_ERROR(fields.Bool(key, &value));
  if (value) {
    return absl::UnimplementedError(
        absl::StrCat(fields.file_name(), ": ", fields.Path(key), " is true: ", why));
  }
  return absl::OkStatus();
}

absl::Status CheckModelType(const FieldReader& fields, absl::string_view expected) {
  std::string model_type;
  CORTIQ_RETURN_IF_ERROR(fields.String("model_type", /*required=*/false, &model_type));
  if (!model_type.empty() && model_type != expected) {
    return absl::InvalidArgumentError(absl::StrCat(fields.file_name(), ": ",
                                                   fields.Path("model_type"), " (\"", model_type,
                                                   "\") must be \"", expected, "\""));
  }
  return absl::OkStatus();
}

absl::Status CheckSize(absl::string_view file_name, const std::string& path, int64_t value,
                       int64_t max_value) {
  if (value <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": ", path, " (", value, ") must be > 0"));
  }
  if (value > max_value) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": ", path, " (", value, ") must be <= ", max_value));
  }
  return absl::OkStatus();
}

// Checks the RoPE parameters at `path` of the layers of width `head_dim` (the field
// `head_dim_path`: head_dim for sliding layers, global_head_dim for full ones).
absl::Status ValidateRope(const RopeParameters& rope, absl::string_view file_name,
                          const std::string& path, int64_t head_dim,
                          const std::string& head_dim_path) {
  if (rope.rope_type != "default" && rope.rope_type != "proportional") {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", path, ".rope_type (\"",
                                                   rope.rope_type,
                                                   "\") must be \"default\" or \"proportional\""));
  }
  // θ >= 1 keeps every frequency θ^(-2i/d) at most 1 rad/token, so angles never exceed the
  // position. Below 1 the spectrum is inverted (no RoPE model does that), and for a tiny θ
  // (5e-324 with d = 256) θ^(-2i/d) overflows to inf and cos/sin become NaN.
  if (!(rope.rope_theta >= 1.0) || !std::isfinite(rope.rope_theta)) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": ", path, ".rope_theta (", rope.rope_theta, ") must be a finite number >= 1"));
  }
  if (!(rope.partial_rotary_factor > 0.0 && rope.partial_rotary_factor <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": ", path, ".partial_rotary_factor (", rope.partial_rotary_factor,
                     ") must be in (0, 1]"));
  }
  if (rope.rope_type == "default" && rope.partial_rotary_factor != 1.0) {
    return absl::UnimplementedError(
        absl::StrCat(file_name, ": ", path, ".partial_rotary_factor (", rope.partial_rotary_factor,
                     ") must be 1 for rope_type \"default\": partial default RoPE is not supported "
                     "(use \"proportional\")"));
  }
  // The rotated pairs, as Gemma4TextConfig::rotated_pairs computes them: a factor small enough to
  // rotate none would pass the range check above and only fail when the IR is verified.
  const double pairs = std::floor(rope.partial_rotary_factor * static_cast<double>(head_dim) / 2.0);
  if (rope.rope_type == "proportional" && pairs < 1.0) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": ", path, ".partial_rotary_factor (", rope.partial_rotary_factor, ") × ",
        head_dim_path, " (", head_dim, ") / 2 rotates no pair: it must be at least ",
        2.0 / static_cast<double>(head_dim)));
  }
  return absl::OkStatus();
}

// Checks a positive parameter that the IR and the runtime hold as an f32: rms_norm_eps and
// final_logit_softcapping. Passing "> 0" in double is not enough: 1e300 becomes inf in f32 and
// 1e-60 (or the subnormal 1e-45) becomes 0 or loses its precision, i.e. an RMS norm without ε
// or a softcap dividing by 0. The value must lie in f32's normal range.
absl::Status CheckPositiveF32(absl::string_view file_name, const std::string& path, double value,
                              absl::string_view alternative) {
  if (!(value >= std::numeric_limits<float>::min() && value <= std::numeric_limits<float>::max())) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": ", path, " (", value,
                     ") must be a finite number > 0 in the normal f32 range [",
                     std::numeric_limits<float>::min(), ", ", std::numeric_limits<float>::max(),
                     "] (it is used as an f32)", alternative));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view LayerTypeName(LayerType type) {
  return type == LayerType::kSliding ? "sliding_attention" : "full_attention";
}

int64_t Gemma4TextConfig::first_kv_shared_layer() const {
  return num_hidden_layers - num_kv_shared_layers;
}

bool Gemma4TextConfig::is_kv_shared(int64_t layer) const {
  if (layer < 0 || layer >= num_hidden_layers)
    DieBadLayer("is_kv_shared", layer, num_hidden_layers);
  return layer >= first_kv_shared_layer();
}

int64_t Gemma4TextConfig::kv_source_layer(int64_t layer) const {
  if (!is_kv_shared(layer)) return layer;
  const LayerType type = layer_types[layer];
  for (int64_t j = first_kv_shared_layer() - 1; j >= 0; --j) {
    if (layer_types[j] == type) return j;
  }
  std::fprintf(stderr,
               "cortiq: Gemma4TextConfig::kv_source_layer: layer %lld has no KV source "
               "(config not validated)\n",
               static_cast<long long>(layer));
  std::abort();
}

int64_t Gemma4TextConfig::layer_head_dim(int64_t layer) const {
  if (layer < 0 || layer >= num_hidden_layers ||
      layer >= static_cast<int64_t>(layer_types.size())) {
    DieBadLayer("layer_head_dim", layer, num_hidden_layers);
  }
  return layer_types[layer] == LayerType::kSliding ? head_dim : global_head_dim;
}

int64_t Gemma4TextConfig::layer_intermediate_size(int64_t layer) const {
  return use_double_wide_mlp && is_kv_shared(layer) ? 2 * intermediate_size : intermediate_size;
}

int64_t Gemma4TextConfig::rotated_pairs(int64_t layer) const {
  const int64_t dim = layer_head_dim(layer);
  const RopeParameters& params = rope(layer);
  if (params.rope_type == "proportional") {
    // Python: int(partial_rotary_factor * head_dim // 2).
    return static_cast<int64_t>(
        std::floor(params.partial_rotary_factor * static_cast<double>(dim) / 2.0));
  }
  return dim / 2;
}

const RopeParameters& Gemma4TextConfig::rope(int64_t layer) const {
  if (layer < 0 || layer >= num_hidden_layers ||
      layer >= static_cast<int64_t>(layer_types.size())) {
    DieBadLayer("rope", layer, num_hidden_layers);
  }
  return layer_types[layer] == LayerType::kSliding ? rope_sliding : rope_full;
}

absl::Status ValidateGemma4TextConfig(const Gemma4TextConfig& config,
                                      std::string_view file_name_std,
                                      std::string_view field_prefix_std) {
  const absl::string_view file_name = ToAbsl(file_name_std);
  const absl::string_view field_prefix = ToAbsl(field_prefix_std);
  auto path = [&](absl::string_view key) { return absl::StrCat(field_prefix, key); };
  const std::pair<const char*, int64_t> sizes[] = {
      {"vocab_size", config.vocab_size},
      {"hidden_size", config.hidden_size},
      {"intermediate_size", config.intermediate_size},
      {"num_attention_heads", config.num_attention_heads},
      {"num_key_value_heads", config.num_key_value_heads},
      {"head_dim", config.head_dim},
      {"global_head_dim", config.global_head_dim},
      {"sliding_window", config.sliding_window},
      {"hidden_size_per_layer_input", config.hidden_size_per_layer_input},
      {"vocab_size_per_layer_input", config.vocab_size_per_layer_input},
      {"max_position_embeddings", config.max_position_embeddings},
  };
  CORTIQ_RETURN_IF_ERROR(
      CheckSize(file_name, path("num_hidden_layers"), config.num_hidden_layers, kMaxLayers));
  for (const auto& [name, value] : sizes) {
    CORTIQ_RETURN_IF_ERROR(CheckSize(file_name, path(name), value, kMaxDim));
  }
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"head_dim", config.head_dim},
                                    {"global_head_dim", config.global_head_dim}}) {
    if (value % 2 != 0) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", path(name), " (", value,
                                                     ") must be even (RoPE rotates pairs)"));
    }
  }
  if (config.num_attention_heads % config.num_key_value_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": ", path("num_attention_heads"), " (", config.num_attention_heads,
        ") must be a multiple of num_key_value_heads (", config.num_key_value_heads, ")"));
  }

  const int64_t num_layers = config.num_hidden_layers;
  if (static_cast<int64_t>(config.layer_types.size()) != num_layers) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": ", path("layer_types"), " has ", config.layer_types.size(),
                     " entries but num_hidden_layers is ", num_layers));
  }
  if (config.layer_types.back() != LayerType::kFull) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": ", path("layer_types"), "[", num_layers - 1, "] (last layer) must be \"",
        kFullName, "\", got \"", ToAbsl(LayerTypeName(config.layer_types.back())), "\""));
  }
  if (config.num_kv_shared_layers < 0) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", path("num_kv_shared_layers"),
                                                   " (", config.num_kv_shared_layers,
                                                   ") must be >= 0"));
  }
  if (config.num_kv_shared_layers >= num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": ", path("num_kv_shared_layers"), " (", config.num_kv_shared_layers,
        ") must be < num_hidden_layers (", num_layers, ")"));
  }
  const int64_t first_shared = num_layers - config.num_kv_shared_layers;
  for (int64_t layer = first_shared; layer < num_layers; ++layer) {
    const LayerType type = config.layer_types[layer];
    bool has_source = false;
    for (int64_t j = 0; j < first_shared && !has_source; ++j) {
      has_source = config.layer_types[j] == type;
    }
    if (!has_source) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_name, ": ", path("num_kv_shared_layers"), " (", config.num_kv_shared_layers,
          ") makes layer ", layer, " (", ToAbsl(LayerTypeName(type)),
          ") KV-shared, but no KV-owning layer before ", first_shared, " in ", path("layer_types"),
          " is ", ToAbsl(LayerTypeName(type)), " to share from"));
    }
  }

  CORTIQ_RETURN_IF_ERROR(ValidateRope(config.rope_sliding, file_name,
                                      path("rope_parameters.sliding_attention"), config.head_dim,
                                      path("head_dim")));
  CORTIQ_RETURN_IF_ERROR(ValidateRope(config.rope_full, file_name,
                                      path("rope_parameters.full_attention"),
                                      config.global_head_dim, path("global_head_dim")));

  CORTIQ_RETURN_IF_ERROR(
      CheckPositiveF32(file_name, path("rms_norm_eps"), config.rms_norm_eps, ""));
  if (config.final_logit_softcapping.has_value()) {
    CORTIQ_RETURN_IF_ERROR(CheckPositiveF32(file_name, path("final_logit_softcapping"),
                                            *config.final_logit_softcapping, ", or null"));
  }
  if (config.hidden_activation != kSupportedActivation) {
    return absl::UnimplementedError(
        absl::StrCat(file_name, ": ", path("hidden_activation"), " (\"", config.hidden_activation,
                     "\") is not supported: only \"", kSupportedActivation, "\""));
  }
  if (config.attention_k_eq_v) {
    return absl::UnimplementedError(absl::StrCat(
        file_name, ": ", path("attention_k_eq_v"),
        " is true: shared K=V projections are not supported (E-series models do not use them)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Gemma4TextConfig> ParseGemma4TextConfig(std::string_view json_text_std,
                                                       std::string_view file_name_std) {
  const absl::string_view json_text = ToAbsl(json_text_std);
  const absl::string_view file_name = ToAbsl(file_name_std);
  // Checked here as well as in LoadGemma4TextConfig: other readers (cortiq-import
  // --config-only) pass their own text, and the bound is what caps the memory of the parse.
  if (json_text.size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", json_text.size(),
                                                   " bytes, more than the limit of ",
                                                   kMaxConfigBytes, " for a config.json"));
  }
  absl::StatusOr<llvm::json::Value> root = ParseJson(json_text, file_name);
  if (!root.ok()) return root.status();
  const llvm::json::Object* top = root->getAsObject();
  if (top == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": the top level must be a JSON object, got ", JsonKindName(*root)));
  }
  const FieldReader top_fields(*top, file_name, "");

  // Multimodal form: the decoder's fields live in `text_config`.
  absl::StatusOr<const llvm::json::Object*> text_object = top_fields.Object("text_config");
  if (!text_object.ok()) return text_object.status();
  const bool multimodal = *text_object != nullptr;
  std::string model_type;
  CORTIQ_RETURN_IF_ERROR(top_fields.String("model_type", /*required=*/false, &model_type));
  if (multimodal) {
    CORTIQ_RETURN_IF_ERROR(CheckModelType(top_fields, "gemma4"));
  } else if (model_type == "gemma4") {
    return top_fields.Missing("text_config");
  } else {
    CORTIQ_RETURN_IF_ERROR(CheckModelType(top_fields, "gemma4_text"));
  }
  const FieldReader fields(multimodal ? **text_object : *top, file_name,
                           multimodal ? "text_config." : "");
  if (multimodal) CORTIQ_RETURN_IF_ERROR(CheckModelType(fields, "gemma4_text"));

  Gemma4TextConfig config;
  // Fields that change the math but may be absent: record the HF default each one takes (the
  // struct's initial values are those defaults).
  const auto defaulted = [&](absl::string_view key, std::string value) {
    config.defaulted.push_back(
        DefaultedField{std::string(file_name), fields.Path(key), std::move(value)});
  };
  const auto absent = [&](absl::string_view key) { return fields.Get(key) == nullptr; };
  CORTIQ_RETURN_IF_ERROR(fields.Int("vocab_size", true, &config.vocab_size));
  CORTIQ_RETURN_IF_ERROR(fields.Int("hidden_size", true, &config.hidden_size));
  CORTIQ_RETURN_IF_ERROR(fields.Int("intermediate_size", true, &config.intermediate_size));
  CORTIQ_RETURN_IF_ERROR(fields.Int("num_hidden_layers", true, &config.num_hidden_layers));
  CORTIQ_RETURN_IF_ERROR(fields.Int("num_attention_heads", true, &config.num_attention_heads));
  CORTIQ_RETURN_IF_ERROR(fields.Int("num_key_value_heads", true, &config.num_key_value_heads));
  CORTIQ_RETURN_IF_ERROR(fields.Int("head_dim", false, &config.head_dim));
  CORTIQ_RETURN_IF_ERROR(fields.Int("global_head_dim", false, &config.global_head_dim));
  CORTIQ_RETURN_IF_ERROR(fields.Int("sliding_window", false, &config.sliding_window));
  CORTIQ_RETURN_IF_ERROR(fields.Int("num_kv_shared_layers", false, &config.num_kv_shared_layers));
  CORTIQ_RETURN_IF_ERROR(
      fields.Int("hidden_size_per_layer_input", false, &config.hidden_size_per_layer_input));
  CORTIQ_RETURN_IF_ERROR(
      fields.Int("vocab_size_per_layer_input", false, &config.vocab_size_per_layer_input));
  CORTIQ_RETURN_IF_ERROR(
      fields.Int("max_position_embeddings", false, &config.max_position_embeddings));
  CORTIQ_RETURN_IF_ERROR(fields.Double("rms_norm_eps", false, &config.rms_norm_eps));
  CORTIQ_RETURN_IF_ERROR(
      fields.OptionalDouble("final_logit_softcapping", &config.final_logit_softcapping));
  // tie_word_embeddings: the text config's own value, else the multimodal top level's.
  if (multimodal) {
    CORTIQ_RETURN_IF_ERROR(top_fields.Bool("tie_word_embeddings", &config.tie_word_embeddings));
  }
  CORTIQ_RETURN_IF_ERROR(fields.Bool("tie_word_embeddings", &config.tie_word_embeddings));
  CORTIQ_RETURN_IF_ERROR(fields.Bool("use_double_wide_mlp", &config.use_double_wide_mlp));
  CORTIQ_RETURN_IF_ERROR(fields.Bool("attention_k_eq_v", &config.attention_k_eq_v));
  CORTIQ_RETURN_IF_ERROR(
      fields.String("hidden_activation", /*required=*/false, &config.hidden_activation));
  for (const auto& [key, value] :
       {std::pair<absl::string_view, int64_t>{"head_dim", config.head_dim},
        {"global_head_dim", config.global_head_dim},
        {"sliding_window", config.sliding_window},
        {"num_kv_shared_layers", config.num_kv_shared_layers},
        {"hidden_size_per_layer_input", config.hidden_size_per_layer_input},
        {"vocab_size_per_layer_input", config.vocab_size_per_layer_input}}) {
    if (absent(key)) defaulted(key, absl::StrCat(value));
  }
  if (absent("rms_norm_eps")) defaulted("rms_norm_eps", absl::StrCat(config.rms_norm_eps));
  // Only a missing key: an explicit null is the documented "no softcap".
  const llvm::json::Object& text_fields = multimodal ? **text_object : *top;
  if (text_fields.get("final_logit_softcapping") == nullptr) {
    defaulted("final_logit_softcapping", "none (null)");
  }
  if (absent("tie_word_embeddings") &&
      !(multimodal && top_fields.Get("tie_word_embeddings") != nullptr)) {
    defaulted("tie_word_embeddings", config.tie_word_embeddings ? "true" : "false");
  }
  if (absent("use_double_wide_mlp")) defaulted("use_double_wide_mlp", "false");
  if (absent("hidden_activation")) defaulted("hidden_activation", config.hidden_activation);
  if (absent("attention_k_eq_v")) defaulted("attention_k_eq_v", "false");
  if (absent("layer_types")) {
    defaulted("layer_types", "sliding unless (i + 1) % 6 == 0, the last layer full");
  }

  // Features outside the E-series decoder (attention_k_eq_v is checked by the validation).
  CORTIQ_RETURN_IF_ERROR(RejectIfTrue(fields, "enable_moe_block",
                                      "mixture-of-experts blocks are not supported (E-series "
                                      "models have none)"));
  CORTIQ_RETURN_IF_ERROR(
      RejectIfTrue(fields, "attention_bias", "attention projection biases are not supported"));
  if (const llvm::json::Value* bidirectional = fields.Get("use_bidirectional_attention")) {
    const llvm::Optional<llvm::StringRef> mode = bidirectional->getAsString();
    const llvm::Optional<bool> flag = bidirectional->getAsBoolean();
    if (flag.has_value() ? *flag : (mode.has_value() && *mode == "all")) {
      return absl::UnimplementedError(
          absl::StrCat(file_name, ": ", fields.Path("use_bidirectional_attention"),
                       " makes text attention bidirectional, which is not supported"));
    }
    if (!flag.has_value() && !(mode.has_value() && *mode == "vision")) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ": ", fields.Path("use_bidirectional_attention"),
                       " must be null, \"vision\" or \"all\", got ", JsonKindName(*bidirectional)));
    }
  }

  // The per-layer list is built from num_hidden_layers: bound it first.
  CORTIQ_RETURN_IF_ERROR(
      CheckSize(file_name, fields.Path("num_hidden_layers"), config.num_hidden_layers, kMaxLayers));
  CORTIQ_RETURN_IF_ERROR(ParseLayerTypes(fields, &config));

  absl::StatusOr<const llvm::json::Object*> rope_object = fields.Object("rope_parameters");
  if (!rope_object.ok()) return rope_object.status();
  if (*rope_object != nullptr) {
    const FieldReader rope_fields(**rope_object, file_name, fields.Path("rope_parameters."));
    CORTIQ_RETURN_IF_ERROR(
        ParseRope(rope_fields, kSlidingName, &config.rope_sliding, &config.defaulted));
    CORTIQ_RETURN_IF_ERROR(ParseRope(rope_fields, kFullName, &config.rope_full, &config.defaulted));
  } else {
    // Older style (Gemma 3): rope_theta for full layers, rope_local_base_freq for sliding ones.
    CORTIQ_RETURN_IF_ERROR(fields.Double("rope_theta", false, &config.rope_full.rope_theta));
    CORTIQ_RETURN_IF_ERROR(
        fields.Double("rope_local_base_freq", false, &config.rope_sliding.rope_theta));
    const auto rope_text = [](absl::string_view name, const RopeParameters& rope) {
      return absl::StrCat(name, " {", rope.rope_type, ", rope_theta ", rope.rope_theta,
                          ", partial_rotary_factor ", rope.partial_rotary_factor, "}");
    };
    defaulted("rope_parameters", absl::StrCat(rope_text(kSlidingName, config.rope_sliding), ", ",
                                              rope_text(kFullName, config.rope_full)));
  }

  CORTIQ_RETURN_IF_ERROR(ValidateGemma4TextConfig(config, file_name_std, fields.Path("")));
  return config;
}

absl::StatusOr<Gemma4TextConfig> LoadGemma4TextConfig(const std::string& checkpoint_dir) {
  const std::string path = JoinPath(checkpoint_dir, "config.json");
  absl::StatusOr<std::string> text = ReadFileToString(path, kMaxConfigBytes);
  if (!text.ok()) return text.status();
  return ParseGemma4TextConfig(*text, path);
}

}  // namespace cortiq
