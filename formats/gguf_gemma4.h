// The Gemma-4 E-series text decoder of a GGUF file (general.architecture "gemma4", as written by
// llama.cpp's convert_hf_to_gguf.py): its Gemma4TextConfig from the `gemma4.*` keys, and its
// tensors under the Hugging Face names and shapes the importer expects (spec §2.2).
//
// Key mapping (every key is prefixed with "gemma4."; "req" = required, else the default):
//
//   block_count                          req   num_hidden_layers (1 … 1024)
//   embedding_length                     req   hidden_size
//   feed_forward_length                  req   intermediate_size = entry 0; scalar, or one entry
//                                              per layer: use_double_wide_mlp when every
//                                              KV-shared layer has 2·entry 0 (E2B)
//   attention.head_count                 req   num_attention_heads (scalar or uniform array)
//   attention.head_count_kv              = head_count   num_key_value_heads (ditto)
//   attention.key_length                 = embedding_length / head_count   global_head_dim
//   attention.key_length_swa             req   head_dim
//   attention.value_length(_swa)         if present, must equal key_length(_swa)
//   attention.sliding_window             req   sliding_window
//   attention.sliding_window_pattern     req   layer_types (bool per layer, true = sliding; a
//                                              scalar applies to every layer)
//   attention.shared_kv_layers           = 0   num_kv_shared_layers
//   attention.layer_norm_rms_epsilon     req   rms_norm_eps
//   embedding_length_per_layer_input     req   hidden_size_per_layer_input
//   rope.freq_base                       = 10000 (llama.cpp's default)   rope_full.rope_theta
//   rope.freq_base_swa                   = rope.freq_base   rope_sliding.rope_theta
//   rope.dimension_count(_swa)           if present, must equal key_length(_swa)
//   final_logit_softcapping              absent or 0 → none (this project follows the file;
//                                              llama.cpp would still apply 30 when absent)
//   context_length                       req   max_position_embeddings
//   vocab_size                           if present, must equal token_embd.weight's rows
//   expert_count                         must be absent or 0 (MoE Gemma 4 is not supported)
//
// and from tensors: vocab_size = rows of token_embd.weight (ne[1]); vocab_size_per_layer_input =
// rows of per_layer_token_embd.weight; tie_word_embeddings = no output.weight;
// rope_full = {"proportional", θ, 2·p / global_head_dim} where p is the number of leading 1.0
// entries of rope_freqs.weight (global_head_dim/2 entries; the rest must be ≥ 1e20, i.e. not
// rotated: the converter writes 1e30), or {"proportional", θ, 1} without rope_freqs;
// rope_sliding = {"default", θ_swa, 1}. hidden_activation is gelu_pytorch_tanh,
// attention_k_eq_v false.
//
// Every optional key above that was absent and changes the math (head_count_kv, key_length,
// shared_kv_layers, final_logit_softcapping, rope.freq_base, rope.freq_base_swa, and the tensor
// rope_freqs.weight) is listed in the config's `defaulted` with the value used.
//
// Integer keys accept any GGUF integer type, float keys f32 or f64. An f32 value is widened to
// the double of its shortest round-trip decimal (f32 1e-6 becomes 1e-6, not 9.99999997e-07), so
// a config read from GGUF equals the one read from the config.json it was converted from.
#ifndef CORTIQ_FORMATS_GGUF_GEMMA4_H_
#define CORTIQ_FORMATS_GGUF_GEMMA4_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/gguf.h"
#include "formats/model_config.h"
#include "formats/tensor_spec.h"

namespace cortiq {

// Prefix of the HF names given to GGUF decoder tensors (the official multimodal checkpoints').
inline constexpr char kGgufHfPrefix[] = "model.language_model.";

// The smallest rope_freqs.weight entry read as "pair not rotated" (ggml divides the pair's
// angle by it); the converter writes 1e30.
inline constexpr double kGgufUnrotatedFreqFactor = 1e20;

// Reads the decoder configuration of `gguf` as described above, then checks it with
// ValidateGemma4TextConfig (whose messages name HF fields; the mapping above gives the key).
// Reads rope_freqs.weight's data (works when `gguf` was opened without map_data).
//
// Errors, prefixed by the file path and naming the key or tensor: InvalidArgument for a missing
// required key ("missing key gemma4.block_count"), a key of the wrong type ("key
// gemma4.block_count has type str; expected an integer"), an integer outside [0 or 1, 2^31 − 1]
// (block_count: [1, 1024]), a per-layer array whose length is not block_count, value_length ≠
// key_length, a vocab_size key that disagrees with token_embd.weight, token_embd.weight or
// per_layer_token_embd.weight missing or not 2-D, token_embd.weight's ne[0] ≠ embedding_length,
// blk.N.ffn_gate.weight's width ≠ feed_forward_length[N], rope_freqs.weight not
// global_head_dim/2 entries or rotating no pair, a tensor with no HF name (Gemma4HfTensorName:
// an unknown suffix, a block >= block_count, an unknown global), except rope_freqs.weight and
// the parts of a model file that are not the text decoder, which are skipped (names starting
// v., a., mm. or mtp.); and every ValidateGemma4TextConfig error.
// Unimplemented for: general.architecture other than "gemma4" (InvalidArgument if missing),
// expert_count > 0, head_count / head_count_kv arrays that differ between layers, a
// rope_freqs.weight entry neither 1 nor ≥ kGgufUnrotatedFreqFactor (or a 1 after such an entry),
// rope.dimension_count(_swa) ≠ key_length(_swa) (ggml would then pair dimension i with i + n/2
// for a smaller n, which no HF rope does), a rope_freqs.weight of a type that cannot be read.
absl::StatusOr<Gemma4TextConfig> Gemma4ConfigFromGguf(const GgufFile& gguf);

// The HF name of GGUF tensor `gguf_name` for a decoder of `num_layers` layers, or nullopt for a
// tensor that is not part of the decoder as cortiq reads it (rope_freqs.weight, whose content is
// in the config; blocks numbered ≥ num_layers or with leading zeros; anything else unknown).
//
//   token_embd.weight            → model.language_model.embed_tokens.weight
//   per_layer_token_embd.weight  → model.language_model.embed_tokens_per_layer.weight
//   per_layer_model_proj.weight  → model.language_model.per_layer_model_projection.weight
//   per_layer_proj_norm.weight   → model.language_model.per_layer_projection_norm.weight
//   output_norm.weight           → model.language_model.norm.weight
//   output.weight                → lm_head.weight (untied head; no prefix, as HF names it)
//   blk.N.attn_norm.weight       → model.language_model.layers.N.input_layernorm.weight
//   blk.N.attn_q / attn_k / attn_v / attn_output.weight → …self_attn.{q,k,v,o}_proj.weight
//   blk.N.attn_q_norm / attn_k_norm.weight               → …self_attn.{q,k}_norm.weight
//   blk.N.post_attention_norm.weight → …post_attention_layernorm.weight
//   blk.N.ffn_norm.weight        → …pre_feedforward_layernorm.weight
//   blk.N.ffn_gate / ffn_up / ffn_down.weight            → …mlp.{gate,up,down}_proj.weight
//   blk.N.post_ffw_norm.weight   → …post_feedforward_layernorm.weight
//   blk.N.inp_gate.weight        → …per_layer_input_gate.weight
//   blk.N.proj.weight            → …per_layer_projection.weight
//   blk.N.post_norm.weight       → …post_per_layer_input_norm.weight
//   blk.N.layer_output_scale.weight → …layer_scalar
std::optional<std::string> Gemma4HfTensorName(std::string_view gguf_name, int64_t num_layers);

// One decoder tensor of a GGUF file, under its HF name.
struct Gemma4GgufTensor {
  // HF name (Gemma4HfTensorName), HF shape (ne reversed: ne [H, V] → [V, H]; the data are not
  // transposed, row-major either way), dtype (DTypeFromGgmlType: kUnsupported for K-quants etc.).
  TensorSpec spec;
  // The tensor in the GGUF file; points into gguf.tensors() and lives as long as `gguf`.
  const GgufTensorInfo* info = nullptr;
};

// The decoder tensors of `gguf` (those with an HF name for config.num_hidden_layers layers), in
// file order. Every tensor the file has for the decoder is listed, including the k/v projections
// of KV-shared layers (the importer ignores them) and tensors of unsupported types (they fail
// when read). Never fails for a GgufFile that opened; shapes are checked by the importer.
std::vector<Gemma4GgufTensor> Gemma4TensorsFromGguf(const GgufFile& gguf,
                                                    const Gemma4TextConfig& config);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_GGUF_GEMMA4_H_
