// float64 Gemma-4 text decoder forward (see reference_forward.h). Section numbers are those of
// the decoder spec (../shared/spec/gemma4e-text-decoder.md).
#include "tests/e2e/reference_forward.h"

#include <algorithm>
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

// ys[t] = W xs[t] for W [rows, cols] row-major, every position at once: each row of W is read
// once for all positions (it stays in L1 while they pass), not once per position — the
// weights of a file are read once per forward instead of T times.
std::vector<Vec> MatVecs(const Vec& w, const std::vector<Vec>& xs) {
  const size_t T = xs.size(), cols = xs.empty() ? 0 : xs[0].size();
  const size_t rows = cols == 0 ? 0 : w.size() / cols;
  std::vector<Vec> ys(T, Vec(rows));
  for (size_t r = 0; r < rows; ++r) {
    const double* row = &w[r * cols];
    for (size_t t = 0; t < T; ++t) {
      const double* x = xs[t].data();
      // Four partial sums (the add latency, not the multiplies, bounds one chain); the order
      // changes the double sum by O(1e-16) relative, far inside the 1e-3 the engine is held to.
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      size_t c = 0;
      for (; c + 4 <= cols; c += 4) {
        s0 += row[c] * x[c];
        s1 += row[c + 1] * x[c + 1];
        s2 += row[c + 2] * x[c + 2];
        s3 += row[c + 3] * x[c + 3];
      }
      for (; c < cols; ++c) s0 += row[c] * x[c];
      ys[t][r] = (s0 + s1) + (s2 + s3);
    }
  }
  return ys;
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

constexpr char kLmHead[] = "lm_head.weight";

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
    // The untied LM head is the one tensor outside the text prefix (HF lm_head.weight; a GGUF's
    // output.weight, which the reader names so).
    const bool head = spec.name == kLmHead;
    if (!head && !absl::StartsWith(spec.name, prefix_)) continue;
    int64_t n = 1;
    for (int64_t d : spec.shape) n *= d;
    std::vector<float> values(static_cast<size_t>(n));
    CORTIQ_RETURN_IF_ERROR(reader_->ReadAsF32(spec.name, values.data()));
    weights_[head ? spec.name : spec.name.substr(prefix_.size())] =
        Vec(values.begin(), values.end());
  }
  const Gemma4TextConfig& c = reader_->config();
  if (!c.tie_word_embeddings && W(kLmHead).empty()) {
    return absl::NotFoundError("tie_word_embeddings is false and the checkpoint has no " +
                               std::string(kLmHead));
  }
  if (!c.tie_word_embeddings &&
      W(kLmHead).size() != static_cast<size_t>(c.vocab_size * c.hidden_size)) {
    return absl::InvalidArgumentError(std::string(kLmHead) + " is not vocab_size x hidden_size");
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
  const size_t T = tokens.size();
  const double eps = c.rms_norm_eps;
  const Vec& embed = W("embed_tokens.weight");
  const Vec& ple_table = W("embed_tokens_per_layer.weight");
  // Layer by layer over all positions (causal attention at position p reads only keys 0..p of
  // the same layer, all computed before it): the same formulas as position by position.
  // §3.1
  std::vector<Vec> h(T);
  for (size_t p = 0; p < T; ++p) {
    const size_t t = static_cast<size_t>(tokens[p]);
    h[p].assign(embed.begin() + t * H, embed.begin() + (t + 1) * H);
    for (double& v : h[p]) v *= std::sqrt(static_cast<double>(H));
  }
  // §3.2: u[p][l] [P].
  std::vector<Vec> z = MatVecs(W("per_layer_model_projection.weight"), h);
  std::vector<std::vector<Vec>> u(T, std::vector<Vec>(L, Vec(P)));
  for (size_t p = 0; p < T; ++p) {
    const size_t t = static_cast<size_t>(tokens[p]);
    for (double& v : z[p]) v /= std::sqrt(static_cast<double>(H));
    for (size_t l = 0; l < L; ++l) {
      RmsNorm(&z[p][l * P], P, &W("per_layer_projection_norm.weight"), eps);
      for (size_t j = 0; j < P; ++j) {
        const double r = ple_table[t * L * P + l * P + j] * std::sqrt(static_cast<double>(P));
        u[p][l][j] = (z[p][l * P + j] + r) / std::sqrt(2.0);
      }
    }
  }
  // §3.3. keys[l][p], values[l][p]: [nkv * d] of the KV-owning layers.
  std::vector<std::vector<Vec>> keys(L), values(L);
  for (size_t l = 0; l < L; ++l) {
    const std::string n = absl::StrCat("layers.", l, ".");
    const size_t d = c.layer_head_dim(l);
    const bool sliding = c.layer_types[l] == LayerType::kSliding;
    const RopeParameters& rope = c.rope(l);
    const size_t rotated = static_cast<size_t>(c.rotated_pairs(l));
    std::vector<Vec> x = h;
    for (Vec& v : x) RmsNorm(v.data(), H, &W(n + "input_layernorm.weight"), eps);
    std::vector<Vec> q = MatVecs(W(n + "self_attn.q_proj.weight"), x);
    for (size_t p = 0; p < T; ++p) {
      for (size_t i = 0; i < nh; ++i) {
        RmsNorm(&q[p][i * d], d, &W(n + "self_attn.q_norm.weight"), eps);
        Rope(&q[p][i * d], d, rotated, rope.rope_theta, static_cast<int64_t>(p));
      }
    }
    size_t src = l;
    if (c.is_kv_shared(l)) {
      src = static_cast<size_t>(c.kv_source_layer(l));
    } else {
      keys[l] = MatVecs(W(n + "self_attn.k_proj.weight"), x);
      values[l] = MatVecs(W(n + "self_attn.v_proj.weight"), x);
      for (size_t p = 0; p < T; ++p) {
        for (size_t j = 0; j < nkv; ++j) {
          RmsNorm(&keys[l][p][j * d], d, &W(n + "self_attn.k_norm.weight"), eps);
          Rope(&keys[l][p][j * d], d, rotated, rope.rope_theta, static_cast<int64_t>(p));
          RmsNorm(&values[l][p][j * d], d, nullptr, eps);
        }
      }
    }
    std::vector<Vec> o(T, Vec(nh * d, 0.0));
    for (size_t p = 0; p < T; ++p) {
      const size_t first =
          sliding && p + 1 > static_cast<size_t>(c.sliding_window) ? p + 1 - c.sliding_window : 0;
      for (size_t i = 0; i < nh; ++i) {
        const size_t j = i / (nh / nkv);
        std::vector<double> s(p + 1 - first);
        double max_s = -INFINITY;
        for (size_t k = first; k <= p; ++k) {
          double dot = 0;
          for (size_t e = 0; e < d; ++e) dot += q[p][i * d + e] * keys[src][k][j * d + e];
          s[k - first] = dot;  // scaling 1.0
          max_s = std::max(max_s, dot);
        }
        double sum = 0;
        for (double& v : s) sum += (v = std::exp(v - max_s));
        for (size_t k = first; k <= p; ++k) {
          for (size_t e = 0; e < d; ++e) {
            o[p][i * d + e] += s[k - first] / sum * values[src][k][j * d + e];
          }
        }
      }
    }
    std::vector<Vec> attn = MatVecs(W(n + "self_attn.o_proj.weight"), o);
    std::vector<Vec> y(T);
    for (size_t p = 0; p < T; ++p) {
      RmsNorm(attn[p].data(), H, &W(n + "post_attention_layernorm.weight"), eps);
      for (size_t i = 0; i < H; ++i) h[p][i] += attn[p][i];
      y[p] = h[p];
      RmsNorm(y[p].data(), H, &W(n + "pre_feedforward_layernorm.weight"), eps);
    }
    std::vector<Vec> gate = MatVecs(W(n + "mlp.gate_proj.weight"), y);
    const std::vector<Vec> up = MatVecs(W(n + "mlp.up_proj.weight"), y);
    for (size_t p = 0; p < T; ++p) {
      for (size_t i = 0; i < gate[p].size(); ++i) gate[p][i] = Gelu(gate[p][i]) * up[p][i];
    }
    std::vector<Vec> mlp = MatVecs(W(n + "mlp.down_proj.weight"), gate);
    for (size_t p = 0; p < T; ++p) {
      RmsNorm(mlp[p].data(), H, &W(n + "post_feedforward_layernorm.weight"), eps);
      for (size_t i = 0; i < H; ++i) h[p][i] += mlp[p][i];
    }
    std::vector<Vec> g = MatVecs(W(n + "per_layer_input_gate.weight"), h);
    for (size_t p = 0; p < T; ++p) {
      for (size_t i = 0; i < P; ++i) g[p][i] = Gelu(g[p][i]) * u[p][l][i];
    }
    std::vector<Vec> ple = MatVecs(W(n + "per_layer_projection.weight"), g);
    const Vec& scalar = W(n + "layer_scalar");
    const double lambda = scalar.empty() ? 1.0 : scalar[0];
    for (size_t p = 0; p < T; ++p) {
      RmsNorm(ple[p].data(), H, &W(n + "post_per_layer_input_norm.weight"), eps);
      for (size_t i = 0; i < H; ++i) h[p][i] += ple[p][i];
      for (double& v : h[p]) v *= lambda;
    }
  }
  // §3.4
  for (Vec& v : h) RmsNorm(v.data(), H, &W("norm.weight"), eps);
  // §3.4: the LM head is the embedding table unless the config unties it.
  const std::vector<Vec> head =
      MatVecs(c.tie_word_embeddings ? embed : W(kLmHead), h);
  const double cap = c.final_logit_softcapping.value_or(0.0);
  std::vector<double> logits;
  logits.reserve(T * V);
  for (size_t p = 0; p < T; ++p) {
    for (size_t v = 0; v < V; ++v) {
      logits.push_back(cap > 0 ? cap * std::tanh(head[p][v] / cap) : head[p][v]);
    }
  }
  return logits;
}

}  // namespace cortiq
