// Test helpers for the runtime: a hand-built Gemma-style toy plan with random
// weights (the compiler is not involved), and an independent scalar
// double-precision forward of the same model computed from the formulas of spec
// §3 (never through the executor or the ops/ kernels).
#ifndef CORTIQ_TESTS_RUNTIME_TOY_MODEL_H_
#define CORTIQ_TESTS_RUNTIME_TOY_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/plan.h"

namespace cortiq {
namespace testing {

// One decoder layer of the toy.
struct ToyLayer {
  // Sliding-window attention (window below) or full attention.
  bool sliding = false;
  // Sliding window W (> 0 for sliding layers).
  int64_t window = 0;
  // -1: owns a KV cache; else attends over that earlier layer's cache.
  int kv_source = -1;
};

// Sizes and options of the toy. Defaults: vocab 1101 (so the LM head, 1101 x 64
// = 70464 elements, is above the session's parallel threshold and its row count
// is not a multiple of 4), two full layers.
struct ToyConfig {
  int64_t vocab = 1101;
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t head_dim = 16;
  // < head_dim / 2: the last pairs pass through (as the proportional RoPE).
  int64_t rotated_pairs = 6;
  int64_t ffn = 96;
  double theta = 10000.0;
  double eps = 1e-6;
  double softcap = 30.0;
  double attention_scale = 1.0;
  double residual_scale = 0.75;  // a kScale step on the attention output
  int64_t max_position_embeddings = 4096;
  WeightFormat format = WeightFormat::kF32;
  // Gemma's sandwich norms: RMS(attention output; g_pa) and RMS(MLP output;
  // g_pf) before their residual adds (spec §3.3 steps 5-6).
  bool post_norms = false;
  // Emit the fused steps of the fuse-elementwise pass: kGeluTanhMul for the
  // MLP gate and, with post_norms, kResidualRmsNorm for both residual adds
  // (the MLP one with the layer scalar as its scalar). Same weights (same values,
  // same order) and the same function as the unfused plan.
  bool fused = false;
  std::vector<ToyLayer> layers = {ToyLayer{}, ToyLayer{}};
  uint32_t seed = 1;
};

// The plan, its weight section, and every weight's values as f32 (bf16 ones
// widened).
struct ToyModel {
  ToyConfig config;
  // A valid plan, weight offsets assigned as WriteArtifact assigns them.
  Plan plan;
  // Weight section storage (8-byte aligned) and its size in bytes.
  std::vector<uint64_t> section;
  uint64_t section_bytes = 0;
  // values[i]: weight i's elements as f32.
  std::vector<std::vector<float>> values;

  const uint8_t* weights() const {
    return reinterpret_cast<const uint8_t*>(section.data());
  }
  // Copies weight i's bytes to dst (a WriteArtifact fill callback).
  absl::Status Fill(size_t i, uint8_t* dst) const;
};

// Builds the toy plan (spec §3 in miniature). Per token:
//   e = E[t] * sqrt(H); h = e
//   per layer l:
//     x = RMS(h; g_in); q = RoPE(RMS_d(Wq x; g_q))
//     if it owns a cache: k = RoPE(RMS_d(Wk x; g_k)), v = RMS0_d(Wv x), append
//     o = attention(q over its own or its source's cache)
//     h = h + 0.75 * Wo o        (post_norms: h + RMS(0.75 Wo o; g_pa))
//     y = RMS(h; g_ff); m = Wd (gelu(Wg y) * (Wu y))
//     h = (h + m) * lambda_l     (post_norms: (h + RMS(m; g_pf)) * lambda_l;
//                                 lambda_l = layer_scalar)
//     tap "layer.l" = h
//   fused: gelu(.) * (.) is one gelu_tanh_mul step; with post_norms each
//   residual add above (with its norm and, for the MLP, lambda_l) is one
//   residual_rms_norm step, the attention one in place on its normed operand.
//   head (logits_only): logits = softcap(E · RMS(h; g_f))
ToyModel BuildToyModel(const ToyConfig& config);

// Scalar double-precision forward of a ToyModel, one token at a time, with its
// own unbounded K/V history (visibility by the spec's position rule, not a
// ring).
class ToyReference {
 public:
  explicit ToyReference(const ToyModel& model);
  // Evaluates `token` at the next position; returns the logits [vocab].
  std::vector<double> Eval(int32_t token);
  // Hidden state after layer l for the last Eval.
  const std::vector<double>& layer_output(size_t l) const {
    return layer_out_[l];
  }

 private:
  std::vector<double> Linear(int weight, const std::vector<double>& x) const;
  std::vector<double> Rms(const std::vector<double>& x, int gain,
                          int64_t group) const;
  void Rope(std::vector<double>* x, int64_t position) const;

  const ToyModel& m_;
  int64_t position_ = 0;
  // Per layer that owns a cache: keys/values per position.
  std::vector<std::vector<std::vector<double>>> keys_, values_;
  std::vector<std::vector<double>> layer_out_;
};

// Fixed names of the toy's weights, for tests that look them up.
int FindWeight(const Plan& plan, const std::string& name);

}  // namespace testing
}  // namespace cortiq

#endif  // CORTIQ_TESTS_RUNTIME_TOY_MODEL_H_
