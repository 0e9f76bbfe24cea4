// float64 Gemma-4 text decoder forward (see reference_forward.h). Section numbers are those of
// the decoder spec (../shared/spec/gemma4e-text-decoder.md).
#include "tests/e2e/reference_forward.h"

#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

using Vec = std::vector<double>;

// RMS(x; w) over groups of `n` (§3.0, §4): x · (mean(x²) + ε)^-1/2 · w; no w for RMS0.
void RmsNorm(double* x, size_t n, const Vec* w, double eps) {
  double ms = 0;
  for (size_t i = 0; i < n; ++i) ms += x[i] * x[i];
  const double r = 1.0 / std::sqrt(ms / static_cast<double>(n) + eps);
  for (size_t i = 0; i < n; ++i) x[i] *= r * (w != nullptr ? (*w)[i] : 1.0);
}

double Gelu(double x) {  // gelu_pytorch_tanh
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// y = W x for W [rows, cols] row-major.
Vec MatVec(const Vec& w, const Vec& x) {
  const size_t cols = x.size(), rows = w.size() / cols;
  Vec y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    double s = 0;
    for (size_t c = 0; c < cols; ++c) s += w[r * cols + c] * x[c];
    y[r] = s;
  }
  return y;
}

// Rotate-half RoPE of one head (§3.0): pairs (i, i + d/2) for i < rotated, ω_i = θ^(-2i/d).
void Rope(double* x, size_t d, size_t rotated, double theta, int64_t position) {
  for (size_t i = 0; i < rotated; ++i) {
    const double angle = static_cast<double>(position) *
                         std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = x[i], b = x[i + d / 2];
    x[i] = a * c - b * s;
    x[i + d / 2] = b * c + a * s;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReferenceForward>> ReferenceForward::Open(const std::string& path) {
  CORTIQ_ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> reader,
                          OpenCheckpoint(path, /*map_data=*/true));
  std::string prefix = "model.language_model.";
  if (reader->Find(prefix + "embed_tokens.weight") == nullptr) prefix = "model.";
  std::unique_ptr<ReferenceForward> forward(new ReferenceForward(std::move(reader), prefix));
  CORTIQ_RETURN_IF_ERROR(forward->Load());
  return forward;
}

absl::Status ReferenceForward::Load() {
  for (const TensorSpec& spec : reader_->tensors()) {
    if (!absl::StartsWith(spec.name, prefix_)) continue;
    int64_t n = 1;
    for (int64_t d : spec.shape) n *= d;
    std::vector<float> values(static_cast<size_t>(n));
    CORTIQ_RETURN_IF_ERROR(reader_->ReadAsF32(spec.name, values.data()));
    weights_[spec.name.substr(prefix_.size())] = Vec(values.begin(), values.end());
  }
  return absl::OkStatus();
}

const Vec& ReferenceForward::W(const std::string& name) const {
  static const Vec kEmpty;
  auto it = weights_.find(name);
  return it == weights_.end() ? kEmpty : it->second;
}

std::vector<double> ReferenceForward::Logits(const std::vector<int32_t>& tokens) const {
  const Gemma4TextConfig& c = reader_->config();
  const size_t H = c.hidden_size, L = c.num_hidden_layers, P = c.hidden_size_per_layer_input;
  const size_t V = c.vocab_size, nh = c.num_attention_heads, nkv = c.num_key_value_heads;
  const double eps = c.rms_norm_eps;
  const Vec& embed = W("embed_tokens.weight");
  const Vec& ple_table = W("embed_tokens_per_layer.weight");
  // keys[l][p], values[l][p]: [nkv * d] of the KV-owning layers.
  std::vector<std::vector<Vec>> keys(L), values(L);
  std::vector<double> logits;
  for (size_t p = 0; p < tokens.size(); ++p) {
    const size_t t = static_cast<size_t>(tokens[p]);
    // §3.1
    Vec h(embed.begin() + t * H, embed.begin() + (t + 1) * H);
    for (double& v : h) v *= std::sqrt(static_cast<double>(H));
    // §3.2
    Vec z = MatVec(W("per_layer_model_projection.weight"), h);
    for (double& v : z) v /= std::sqrt(static_cast<double>(H));
    std::vector<Vec> u(L);
    for (size_t l = 0; l < L; ++l) {
      RmsNorm(&z[l * P], P, &W("per_layer_projection_norm.weight"), eps);
      u[l].resize(P);
      for (size_t j = 0; j < P; ++j) {
        const double r = ple_table[t * L * P + l * P + j] * std::sqrt(static_cast<double>(P));
        u[l][j] = (z[l * P + j] + r) / std::sqrt(2.0);
      }
    }
    // §3.3
    for (size_t l = 0; l < L; ++l) {
      const std::string n = absl::StrCat("layers.", l, ".");
      const size_t d = c.layer_head_dim(l);
      const bool sliding = c.layer_types[l] == LayerType::kSliding;
      const RopeParameters& rope = c.rope(l);
      const size_t rotated = static_cast<size_t>(c.rotated_pairs(l));
      Vec x = h;
      RmsNorm(x.data(), H, &W(n + "input_layernorm.weight"), eps);
      Vec q = MatVec(W(n + "self_attn.q_proj.weight"), x);
      for (size_t i = 0; i < nh; ++i) {
        RmsNorm(&q[i * d], d, &W(n + "self_attn.q_norm.weight"), eps);
        Rope(&q[i * d], d, rotated, rope.rope_theta, static_cast<int64_t>(p));
      }
      size_t src = l;
      if (c.is_kv_shared(l)) {
        src = static_cast<size_t>(c.kv_source_layer(l));
      } else {
        Vec k = MatVec(W(n + "self_attn.k_proj.weight"), x);
        Vec v = MatVec(W(n + "self_attn.v_proj.weight"), x);
        for (size_t j = 0; j < nkv; ++j) {
          RmsNorm(&k[j * d], d, &W(n + "self_attn.k_norm.weight"), eps);
          Rope(&k[j * d], d, rotated, rope.rope_theta, static_cast<int64_t>(p));
          RmsNorm(&v[j * d], d, nullptr, eps);
        }
        keys[l].push_back(std::move(k));
        values[l].push_back(std::move(v));
      }
      const size_t first =
          sliding && p + 1 > static_cast<size_t>(c.sliding_window) ? p + 1 - c.sliding_window : 0;
      Vec o(nh * d, 0.0);
      for (size_t i = 0; i < nh; ++i) {
        const size_t j = i / (nh / nkv);
        std::vector<double> s(p + 1 - first);
        double max_s = -INFINITY;
        for (size_t k = first; k <= p; ++k) {
          double dot = 0;
          for (size_t e = 0; e < d; ++e) dot += q[i * d + e] * keys[src][k][j * d + e];
          s[k - first] = dot;  // scaling 1.0
          max_s = std::max(max_s, dot);
        }
        double sum = 0;
        for (double& v : s) sum += (v = std::exp(v - max_s));
        for (size_t k = first; k <= p; ++k) {
          for (size_t e = 0; e < d; ++e) {
            o[i * d + e] += s[k - first] / sum * values[src][k][j * d + e];
          }
        }
      }
      Vec attn = MatVec(W(n + "self_attn.o_proj.weight"), o);
      RmsNorm(attn.data(), H, &W(n + "post_attention_layernorm.weight"), eps);
      for (size_t i = 0; i < H; ++i) h[i] += attn[i];
      Vec y = h;
      RmsNorm(y.data(), H, &W(n + "pre_feedforward_layernorm.weight"), eps);
      Vec gate = MatVec(W(n + "mlp.gate_proj.weight"), y);
      const Vec up = MatVec(W(n + "mlp.up_proj.weight"), y);
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = Gelu(gate[i]) * up[i];
      Vec mlp = MatVec(W(n + "mlp.down_proj.weight"), gate);
      RmsNorm(mlp.data(), H, &W(n + "post_feedforward_layernorm.weight"), eps);
      for (size_t i = 0; i < H; ++i) h[i] += mlp[i];
      Vec g = MatVec(W(n + "per_layer_input_gate.weight"), h);
      for (size_t i = 0; i < P; ++i) g[i] = Gelu(g[i]) * u[l][i];
      Vec ple = MatVec(W(n + "per_layer_projection.weight"), g);
      RmsNorm(ple.data(), H, &W(n + "post_per_layer_input_norm.weight"), eps);
      for (size_t i = 0; i < H; ++i) h[i] += ple[i];
      const Vec& scalar = W(n + "layer_scalar");
      const double lambda = scalar.empty() ? 1.0 : scalar[0];
      for (double& v : h) v *= lambda;
    }
    // §3.4
    RmsNorm(h.data(), H, &W("norm.weight"), eps);
    const Vec head = MatVec(embed, h);
    for (size_t v = 0; v < V; ++v) {
      const double cap = c.final_logit_softcapping.value_or(0.0);
      logits.push_back(cap > 0 ? cap * std::tanh(head[v] / cap) : head[v]);
    }
  }
  return logits;
}

}  // namespace cortiq
