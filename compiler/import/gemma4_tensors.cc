// The tensor list of a Gemma-4 E-series text decoder, derived from its config (spec §2.1).
#include "compiler/import/gemma4_tensors.h"

#include "absl/strings/str_cat.h"

namespace cortiq {

std::vector<TensorSpec> Gemma4TextTensors(const Gemma4TextConfig& config, DType dtype,
                                          const std::string& prefix) {
  const int64_t hidden = config.hidden_size;
  const int64_t layers = config.num_hidden_layers;
  const int64_t per_layer = config.hidden_size_per_layer_input;
  std::vector<TensorSpec> specs;
  auto add = [&](std::string name, std::vector<int64_t> shape) {
    specs.push_back(TensorSpec{prefix + name, dtype, std::move(shape)});
  };
  add("embed_tokens.weight", {config.vocab_size, hidden});
  add("embed_tokens_per_layer.weight", {config.vocab_size_per_layer_input, layers * per_layer});
  add("per_layer_model_projection.weight", {layers * per_layer, hidden});
  add("per_layer_projection_norm.weight", {per_layer});
  add("norm.weight", {hidden});
  for (int64_t l = 0; l < layers; ++l) {
    const std::string layer = absl::StrCat("layers.", l, ".");
    const int64_t head_dim = config.layer_head_dim(l);
    const int64_t q_width = config.num_attention_heads * head_dim;
    const int64_t kv_width = config.num_key_value_heads * head_dim;
    const int64_t ffn = config.layer_intermediate_size(l);
    add(layer + "input_layernorm.weight", {hidden});
    add(layer + "self_attn.q_proj.weight", {q_width, hidden});
    add(layer + "self_attn.q_norm.weight", {head_dim});
    if (!config.is_kv_shared(l)) {
      add(layer + "self_attn.k_proj.weight", {kv_width, hidden});
      add(layer + "self_attn.v_proj.weight", {kv_width, hidden});
      add(layer + "self_attn.k_norm.weight", {head_dim});
    }
    add(layer + "self_attn.o_proj.weight", {hidden, q_width});
    add(layer + "post_attention_layernorm.weight", {hidden});
    add(layer + "pre_feedforward_layernorm.weight", {hidden});
    add(layer + "mlp.gate_proj.weight", {ffn, hidden});
    add(layer + "mlp.up_proj.weight", {ffn, hidden});
    add(layer + "mlp.down_proj.weight", {hidden, ffn});
    add(layer + "post_feedforward_layernorm.weight", {hidden});
    add(layer + "per_layer_input_gate.weight", {per_layer, hidden});
    add(layer + "per_layer_projection.weight", {hidden, per_layer});
    add(layer + "post_per_layer_input_norm.weight", {hidden});
    add(layer + "layer_scalar", {1});
  }
  if (!config.tie_word_embeddings) {
    specs.push_back(TensorSpec{"lm_head.weight", dtype, {config.vocab_size, hidden}});
  }
  return specs;
}

}  // namespace cortiq
