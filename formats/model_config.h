// The Gemma-4 E-series text-decoder configuration (HF `Gemma4TextConfig`) as read from a
// checkpoint's config.json, with its validation and the per-layer quantities derived from it.
#ifndef CORTIQ_FORMATS_MODEL_CONFIG_H_
#define CORTIQ_FORMATS_MODEL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cortiq {

// Attention type of one decoder layer; config.json spells them "sliding_attention" and
// "full_attention" (spec §1 `layer_types`).
enum class LayerType { kSliding, kFull };

// The config.json spelling of `type`: "sliding_attention" or "full_attention".
std::string_view LayerTypeName(LayerType type);

// RoPE parameters of one layer type (config.json `rope_parameters.{sliding_attention,
// full_attention}`; spec §3.0).
struct RopeParameters {
  // "default": all head_dim/2 pairs rotated, ω_i = θ^(-2i/d).
  // "proportional": only int(partial_rotary_factor · d / 2) pairs rotated, with ω_i = θ^(-2i/d)
  // still using the full head width d (spec §3.0, §5.1-1); the other pairs are identity.
  std::string rope_type;
  // Base θ of the frequencies (1e4 sliding, 1e6 full for the E-series).
  double rope_theta = 0.0;
  // Fraction of the head width that is rotated, in (0, 1]; must be 1 for "default".
  double partial_rotary_factor = 1.0;
};

// A field the checkpoint did not give although it changes the computation, and the value used
// in its place: the Hugging Face `Gemma4TextConfig` class default (config.json), or the default
// of llama.cpp's loader / the rule of formats/gguf_gemma4.h (GGUF). Those defaults are the
// formats' semantics, so they are applied; readers record them so that tools can say so
// (cortiq-compile warns, and refuses them with --strict-config).
struct DefaultedField {
  std::string file;   // the file that lacks it: ".../config.json", "model.gguf"
  std::string field;  // as the file would spell it: "text_config.sliding_window",
                      // "gemma4.attention.shared_kv_layers (num_kv_shared_layers)"
  std::string value;  // the value used, as text: "512", "none", "1e-06"
};

// Hyper-parameters of the text decoder, named as HF `Gemma4TextConfig` names them. All sizes are
// element counts. Symbols (spec §1): H = hidden_size, L = num_hidden_layers, nh, nkv, d_S =
// head_dim, d_F = global_head_dim, W = sliding_window, P = hidden_size_per_layer_input,
// N_sh = num_kv_shared_layers, F0 = L − N_sh.
//
// A value returned by ParseGemma4TextConfig has passed ValidateGemma4TextConfig; the derived
// methods below assume that (they abort on a layer index outside [0, L)).
struct Gemma4TextConfig {
  int64_t vocab_size = 0;                       // V, rows of embed_tokens (required field).
  int64_t hidden_size = 0;                      // H (required).
  int64_t intermediate_size = 0;                // I, MLP width of a normal layer (required).
  int64_t num_hidden_layers = 0;                // L (required).
  int64_t num_attention_heads = 0;              // nh, query heads (required).
  int64_t num_key_value_heads = 0;              // nkv, K/V heads; nh % nkv == 0 (required).
  int64_t head_dim = 256;                       // d_S, head width of sliding layers.
  int64_t global_head_dim = 512;                // d_F, head width of full layers.
  int64_t sliding_window = 512;                 // W, key positions visible to a sliding query
                                                // (including itself).
  int64_t num_kv_shared_layers = 0;             // N_sh, trailing layers that reuse an earlier K/V.
  int64_t hidden_size_per_layer_input = 256;    // P, per-layer-input (PLE) width.
  int64_t vocab_size_per_layer_input = 262144;  // rows of embed_tokens_per_layer.
  int64_t max_position_embeddings = 131072;     // longest supported context, in tokens.

  double rms_norm_eps = 1e-6;                           // ε inside every RMSNorm root (spec §4).
  std::optional<double> final_logit_softcapping;        // c in logits = c·tanh(logits/c); none if
                                                        // absent or null.
  bool tie_word_embeddings = true;                      // LM head = embed_tokens (spec §3.4).
  bool use_double_wide_mlp = false;                     // KV-shared layers use 2·I (E2B).
  bool attention_k_eq_v = false;                        // unsupported; always false after parsing.
  std::string hidden_activation = "gelu_pytorch_tanh";  // the only supported activation.

  std::vector<LayerType> layer_types;                         // size L; the last entry is kFull.
  RopeParameters rope_sliding{"default", 10000.0, 1.0};       // rope_parameters.sliding_attention
  RopeParameters rope_full{"proportional", 1000000.0, 0.25};  // rope_parameters.full_attention

  // The fields of the file that were absent and took a default that changes the math, in file
  // order (ParseGemma4TextConfig, Gemma4ConfigFromGguf); empty when the file gives everything.
  // Not part of the model: two configs that differ only here describe the same decoder.
  std::vector<DefaultedField> defaulted;

  // F0 = L − N_sh: index of the first KV-shared layer (L when nothing is shared).
  int64_t first_kv_shared_layer() const;

  // True if `layer` ≥ F0, i.e. it projects no K/V and attends over kv_source_layer's cache.
  bool is_kv_shared(int64_t layer) const;

  // The layer whose K/V cache `layer` attends over: `layer` itself if it owns its K/V; else the
  // largest j < F0 with layer_types[j] == layer_types[layer] (HF rule, spec §3.3-3; E2B 13/14,
  // E4B 22/23 for sliding/full).
  int64_t kv_source_layer(int64_t layer) const;

  // Head width of `layer`: head_dim (sliding) or global_head_dim (full).
  int64_t layer_head_dim(int64_t layer) const;

  // MLP width I_l of `layer`: 2·I on KV-shared layers when use_double_wide_mlp, else I
  // (HF condition `layer ≥ F0 > 0`; spec §3.3-6).
  int64_t layer_intermediate_size(int64_t layer) const;

  // Number of rotated (i, i + d/2) pairs of `layer`, d = layer_head_dim(layer):
  // "default": d/2; "proportional": int(partial_rotary_factor · d / 2) (HF
  // `_compute_proportional_rope_parameters`; 64 for the E-series full layers).
  int64_t rotated_pairs(int64_t layer) const;

  // rope_sliding or rope_full, by the type of `layer`.
  const RopeParameters& rope(int64_t layer) const;
};

// Parses the text of a config.json. Accepts the multimodal form (fields inside a `text_config`
// object; top-level `model_type` "gemma4", `architectures` ["Gemma4ForConditionalGeneration"])
// and the text-only form (fields at the top level; `model_type` "gemma4_text", architectures
// ["Gemma4ForCausalLM"]). `tie_word_embeddings` falls back to the top level in the multimodal
// form. Absent optional fields take the HF class defaults (spec §1); an absent `layer_types`
// becomes "sliding unless (i+1) % 6 == 0", with the last layer forced to full as HF does.
// An absent `rope_parameters` takes the defaults above, with the older top-level `rope_theta`
// (full) and `rope_local_base_freq` (sliding) overriding the two thetas if present. Every
// default of a field that changes the computation is listed in `defaulted` (field path and
// value): head_dim, global_head_dim, sliding_window, num_kv_shared_layers,
// hidden_size_per_layer_input, vocab_size_per_layer_input, rms_norm_eps,
// final_logit_softcapping (absent only: null means "none" explicitly), tie_word_embeddings,
// use_double_wide_mlp, hidden_activation, attention_k_eq_v, layer_types, rope_parameters. (A
// JSON null elsewhere counts as absent, as it always has here.) max_position_embeddings only
// bounds the context and is not listed.
//
// Errors (InvalidArgument unless noted), each prefixed by `file_name` and naming the field with
// its path, e.g. "config.json: text_config.num_kv_shared_layers (8) must be < num_hidden_layers
// (8)": a text over 1 MiB (a real config.json is a few KiB), malformed JSON (with line:column), a
// key repeated within an object (also when spelled with escapes, "vocab_siz\u0065"), a missing
// required field, a field of the wrong JSON type, and everything ValidateGemma4TextConfig checks.
// Unsupported features (attention_k_eq_v, enable_moe_block, attention_bias,
// use_bidirectional_attention "all", another activation) give Unimplemented.
absl::StatusOr<Gemma4TextConfig> ParseGemma4TextConfig(std::string_view json_text,
                                                       std::string_view file_name);

// Reads and parses `checkpoint_dir`/config.json (at most 1 MiB; it is not opened if it is not a
// regular file, so a FIFO is an error rather than a hang). Errors: NotFound if the file cannot
// be opened, InvalidArgument if it is not a regular file, else as ParseGemma4TextConfig with the
// file path as `file_name`.
absl::StatusOr<Gemma4TextConfig> LoadGemma4TextConfig(const std::string& checkpoint_dir);

// Checks the invariants the rest of cortiq relies on, naming fields as `field_prefix` + name
// (ParseGemma4TextConfig passes "text_config." for the multimodal form) in messages prefixed by
// `file_name`:
// - sizes > 0 and at most 2^31 − 1 (num_hidden_layers at most 1024), so that products such as
//   L·P or V·H fit in int64 and a bad value cannot request absurd memory;
// - head_dim and global_head_dim even (RoPE rotates pairs);
// - num_attention_heads % num_key_value_heads == 0;
// - layer_types has num_hidden_layers entries and the last is full attention;
// - 0 ≤ num_kv_shared_layers < num_hidden_layers, and every KV-shared layer has an earlier
//   KV-owning layer of its type to read from (spec §3.3-3);
// - rope_type ∈ {default, proportional}, rope_theta finite and >= 1 (frequencies of at most 1
//   rad/token; a tiny θ overflows them to inf), partial_rotary_factor ∈ (0, 1] and == 1 for
//   "default", and large enough to rotate at least one pair: floor(factor · d / 2) >= 1 with d =
//   head_dim (sliding) or global_head_dim (full);
// - rms_norm_eps and final_logit_softcapping (when set) in f32's normal range
//   [FLT_MIN ≈ 1.2e-38, FLT_MAX ≈ 3.4e38]: both are used as f32, where 1e300 would be inf and
//   1e-60 zero;
// - hidden_activation == "gelu_pytorch_tanh", attention_k_eq_v false (Unimplemented otherwise).
absl::Status ValidateGemma4TextConfig(const Gemma4TextConfig& config, std::string_view file_name,
                                      std::string_view field_prefix = "");

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_MODEL_CONFIG_H_
