// The toy plan builder and its independent scalar reference forward (see
// toy_model.h).
#include "tests/runtime/toy_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace cortiq {
namespace testing {
namespace {

// Round-to-nearest-even f32 -> bf16 bits (finite inputs).
uint16_t ToBF16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

float FromBF16Bits(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

class Builder {
 public:
  explicit Builder(const ToyConfig& config) : rng_(config.seed) {
    model_.config = config;
    model_.plan.model.source = "toy";
    model_.plan.model.vocab_size = config.vocab;
    model_.plan.model.hidden_size = config.hidden;
    model_.plan.model.num_hidden_layers =
        static_cast<int64_t>(config.layers.size());
    model_.plan.model.max_position_embeddings = config.max_position_embeddings;
  }

  // A weight of `shape` with values uniform in [center - spread, center +
  // spread].
  int Weight(const std::string& name, std::vector<int64_t> shape, double center,
             double spread) {
    WeightEntry w;
    w.name = name;
    w.format = model_.config.format;
    w.shape = std::move(shape);
    w.size_bytes = static_cast<uint64_t>(w.num_elements()) *
                   WeightFormatElementSize(w.format);
    w.offset = AlignUp(cursor_, kWeightAlignment);  // as WriteArtifact assigns them
    cursor_ = w.offset + w.size_bytes;
    std::uniform_real_distribution<double> dist(center - spread,
                                                center + spread);
    std::vector<float> values(static_cast<size_t>(w.num_elements()));
    for (float& v : values) {
      v = static_cast<float>(dist(rng_));
      if (w.format == WeightFormat::kBF16) v = FromBF16Bits(ToBF16Bits(v));
    }
    model_.plan.weights.push_back(w);
    model_.values.push_back(std::move(values));
    return static_cast<int>(model_.plan.weights.size() - 1);
  }

  int Buffer(int64_t n) {
    BufferEntry b;
    b.offset = AlignUp(arena_, kBufferAlignment);
    b.num_elements = static_cast<uint64_t>(n);
    arena_ = b.offset + 4 * b.num_elements;
    model_.plan.buffers.push_back(b);
    return static_cast<int>(model_.plan.buffers.size() - 1);
  }

  int Cache(int64_t layer, const ToyLayer& l) {
    CacheEntry c;
    c.layer = layer;
    c.sliding = l.sliding;
    c.window = l.sliding ? l.window : 0;
    c.num_kv_heads = model_.config.kv_heads;
    c.head_dim = model_.config.head_dim;
    model_.plan.caches.push_back(c);
    return static_cast<int>(model_.plan.caches.size() - 1);
  }

  // Appends a step with these operands (the others -1) and returns it, for its parameters.
  Step& Push(StepKind kind, int out, int in0, int in1 = -1, int weight = -1) {
    Step s;
    s.kind = kind;
    s.out = out;
    s.in0 = in0;
    s.in1 = in1;
    s.weight = weight;
    model_.plan.steps.push_back(s);
    return model_.plan.steps.back();
  }
  // A step without parameters; returns its out buffer.
  int Op(StepKind kind, int out, int in0, int in1 = -1, int weight = -1) {
    Push(kind, out, in0, in1, weight);
    return out;
  }
  int Norm(int out, int in, int gain, int64_t group) {
    Step& s = Push(StepKind::kRmsNorm, out, in, -1, gain);
    s.group_size = group;
    s.eps = model_.config.eps;
    return out;
  }
  int ResidualNorm(int out, int residual, int update, int gain, int64_t group, int scalar) {
    Step& s = Push(StepKind::kResidualRmsNorm, out, residual, update, gain);
    s.scalar = scalar;
    s.group_size = group;
    s.eps = model_.config.eps;
    return out;
  }
  int Rope(int out, int in) {
    Step& s = Push(StepKind::kRope, out, in);
    s.head_dim = model_.config.head_dim;
    s.rotated_pairs = model_.config.rotated_pairs;
    s.theta = model_.config.theta;
    return out;
  }
  int Attention(int out, int query, int cache, int64_t window) {
    Step& s = Push(StepKind::kAttention, out, query);
    s.cache = cache;
    s.num_heads = model_.config.heads;
    s.window = window;
    s.scale = model_.config.attention_scale;
    return out;
  }

  ToyModel Build();

 private:
  ToyModel model_;
  std::mt19937 rng_;
  uint64_t cursor_ = 0;
  uint64_t arena_ = 0;
};

ToyModel Builder::Build() {
  const ToyConfig& c = model_.config;
  const int64_t H = c.hidden, d = c.head_dim, q_n = c.heads * d,
                kv_n = c.kv_heads * d;
  const int embed = Weight("embed", {c.vocab, H}, 0.0, 0.5);
  Step& embedding = Push(StepKind::kEmbedding, Buffer(H), -1, -1, embed);
  embedding.scale = static_cast<double>(std::sqrt(static_cast<float>(H)));
  int h = embedding.out;
  std::vector<int> layer_cache(c.layers.size(), -1);
  for (size_t l = 0; l < c.layers.size(); ++l) {
    const ToyLayer& layer = c.layers[l];
    const std::string p = absl::StrCat("l", l, ".");
    const double a_h = 1.0 / std::sqrt(static_cast<double>(H));
    const int g_in = Weight(p + "in_norm", {H}, 1.0, 0.2);
    const int wq = Weight(p + "q", {q_n, H}, 0.0, a_h);
    const int g_q = Weight(p + "q_norm", {d}, 1.0, 0.2);
    const int x = Norm(Buffer(H), h, g_in, H);
    int q = Op(StepKind::kLinear, Buffer(q_n), x, -1, wq);
    Norm(q, q, g_q, d);  // in place
    q = Rope(Buffer(q_n), q);
    int cache;
    if (layer.kv_source < 0) {
      const int wk = Weight(p + "k", {kv_n, H}, 0.0, a_h);
      const int g_k = Weight(p + "k_norm", {d}, 1.0, 0.2);
      const int wv = Weight(p + "v", {kv_n, H}, 0.0, a_h);
      const int k = Op(StepKind::kLinear, Buffer(kv_n), x, -1, wk);
      Norm(k, k, g_k, d);
      Rope(k, k);  // in place
      const int v_raw = Op(StepKind::kLinear, Buffer(kv_n), x, -1, wv);
      const int v = Norm(Buffer(kv_n), v_raw, -1, d);
      cache = Cache(static_cast<int64_t>(l), layer);
      Push(StepKind::kKvAppend, -1, k, v).cache = cache;
    } else {
      cache = layer_cache[layer.kv_source];
    }
    layer_cache[l] = cache;
    const int64_t window = layer.sliding ? layer.window : 0;
    const int o = Attention(Buffer(q_n), q, cache, window);
    const int wo = Weight(p + "o", {H, q_n}, 0.0,
                          1.0 / std::sqrt(static_cast<double>(q_n)));
    int a = Op(StepKind::kLinear, Buffer(H), o, -1, wo);
    Step& scale = Push(StepKind::kScale, Buffer(H), a);
    scale.factor = c.residual_scale;
    a = scale.out;
    const int g_pa =
        c.post_norms ? Weight(p + "post_attn_norm", {H}, 1.0, 0.2) : -1;
    if (!c.post_norms) {
      h = Op(StepKind::kAdd, Buffer(H), h, a);
    } else if (c.fused) {
      h = ResidualNorm(a, h, a, g_pa, H, -1);
    } else {
      Norm(a, a, g_pa, H);  // in place
      h = Op(StepKind::kAdd, Buffer(H), h, a);
    }
    const int g_ff = Weight(p + "ff_norm", {H}, 1.0, 0.2);
    const int wg = Weight(p + "gate", {c.ffn, H}, 0.0, a_h);
    const int wu = Weight(p + "up", {c.ffn, H}, 0.0, a_h);
    const int wd =
        Weight(p + "down", {H, c.ffn}, 0.0, 1.0 / std::sqrt(double(c.ffn)));
    const int y = Norm(Buffer(H), h, g_ff, H);
    const int g = Op(StepKind::kLinear, Buffer(c.ffn), y, -1, wg);
    if (!c.fused) Op(StepKind::kGeluTanh, g, g);  // in place
    const int u = Op(StepKind::kLinear, Buffer(c.ffn), y, -1, wu);
    const int m = Op(c.fused ? StepKind::kGeluTanhMul : StepKind::kMul,
                     Buffer(c.ffn), g, u);
    const int dn = Op(StepKind::kLinear, Buffer(H), m, -1, wd);
    const int g_pf =
        c.post_norms ? Weight(p + "post_ff_norm", {H}, 1.0, 0.2) : -1;
    const int scalar = Weight(p + "scalar", {1}, 0.9, 0.05);
    if (c.post_norms && c.fused) {
      h = ResidualNorm(Buffer(H), h, dn, g_pf, H, scalar);
    } else {
      if (c.post_norms) Norm(dn, dn, g_pf, H);  // in place
      h = Op(StepKind::kAdd, Buffer(H), h, dn);
      h = Op(StepKind::kLayerScalar, Buffer(H), h, -1, scalar);
    }
    model_.plan.taps.push_back(Tap{absl::StrCat("layer.", l), h});
  }
  const int g_f = Weight("final_norm", {H}, 1.0, 0.2);
  const int hf = Norm(Buffer(H), h, g_f, H);
  const int logits = Op(StepKind::kLmHead, Buffer(c.vocab), hf, -1, embed);
  Step& softcap = Push(StepKind::kSoftcap, logits, logits);
  softcap.cap = c.softcap;
  // The head: final norm, LM head, softcap.
  for (size_t i = model_.plan.steps.size() - 3; i < model_.plan.steps.size(); ++i) {
    model_.plan.steps[i].logits_only = true;
    model_.plan.steps[i].rows = StepRows::kLogits;
  }
  model_.plan.logits_buffer = logits;
  model_.plan.arena_bytes = arena_;

  // The weight section.
  model_.section_bytes = AlignUp(cursor_, kWeightAlignment);
  model_.section.assign(model_.section_bytes / 8 + 1, 0);
  uint8_t* base = reinterpret_cast<uint8_t*>(model_.section.data());
  for (size_t i = 0; i < model_.plan.weights.size(); ++i) {
    const WeightEntry& w = model_.plan.weights[i];
    const std::vector<float>& v = model_.values[i];
    for (size_t e = 0; e < v.size(); ++e) {
      if (w.format == WeightFormat::kBF16) {
        const uint16_t b = ToBF16Bits(v[e]);
        std::memcpy(base + w.offset + 2 * e, &b, 2);
      } else {
        std::memcpy(base + w.offset + 4 * e, &v[e], 4);
      }
    }
  }
  return std::move(model_);
}

double Gelu(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

}  // namespace

absl::Status ToyModel::Fill(size_t i, uint8_t* dst) const {
  const WeightEntry& w = plan.weights[i];
  std::memcpy(dst, weights() + w.offset, w.size_bytes);
  return absl::OkStatus();
}

ToyModel BuildToyModel(const ToyConfig& config) {
  return Builder(config).Build();
}

int FindWeight(const Plan& plan, const std::string& name) {
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    if (plan.weights[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

ToyReference::ToyReference(const ToyModel& model)
    : m_(model),
      keys_(model.config.layers.size()),
      values_(model.config.layers.size()),
      layer_out_(model.config.layers.size()) {}

std::vector<double> ToyReference::Linear(int weight,
                                         const std::vector<double>& x) const {
  const WeightEntry& w = m_.plan.weights[weight];
  const std::vector<float>& v = m_.values[weight];
  const size_t rows = static_cast<size_t>(w.shape[0]),
               cols = static_cast<size_t>(w.shape[1]);
  std::vector<double> y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c)
      y[r] += static_cast<double>(v[r * cols + c]) * x[c];
  }
  return y;
}

std::vector<double> ToyReference::Rms(const std::vector<double>& x, int gain,
                                      int64_t group) const {
  std::vector<double> y(x.size());
  for (size_t g0 = 0; g0 < x.size(); g0 += static_cast<size_t>(group)) {
    double ms = 0.0;
    for (int64_t i = 0; i < group; ++i) ms += x[g0 + i] * x[g0 + i];
    ms /= static_cast<double>(group);
    const double inv = 1.0 / std::sqrt(ms + m_.config.eps);
    for (int64_t i = 0; i < group; ++i) {
      const double w = gain >= 0 ? m_.values[gain][i] : 1.0;
      y[g0 + i] = x[g0 + i] * inv * w;
    }
  }
  return y;
}

// Spec §3.0 RoPE, rotate-half: for i < R, angle = p * theta^(-2i/d).
void ToyReference::Rope(std::vector<double>* x, int64_t position) const {
  const int64_t d = m_.config.head_dim, half = d / 2;
  for (size_t h0 = 0; h0 < x->size(); h0 += static_cast<size_t>(d)) {
    for (int64_t i = 0; i < m_.config.rotated_pairs; ++i) {
      const double angle =
          static_cast<double>(position) *
          std::pow(m_.config.theta, -2.0 * i / static_cast<double>(d));
      const double a = (*x)[h0 + i], b = (*x)[h0 + i + half];
      (*x)[h0 + i] = a * std::cos(angle) - b * std::sin(angle);
      (*x)[h0 + i + half] = b * std::cos(angle) + a * std::sin(angle);
    }
  }
}

std::vector<double> ToyReference::Eval(int32_t token) {
  const ToyConfig& c = m_.config;
  const Plan& plan = m_.plan;
  const int64_t p = position_++;
  const int64_t H = c.hidden, d = c.head_dim;
  const auto w = [&](const std::string& name) {
    return FindWeight(plan, name);
  };

  const int embed = w("embed");
  const double s_emb = static_cast<double>(std::sqrt(static_cast<float>(H)));
  std::vector<double> h(H);
  for (int64_t i = 0; i < H; ++i)
    h[i] = m_.values[embed][token * H + i] * s_emb;

  for (size_t l = 0; l < c.layers.size(); ++l) {
    const ToyLayer& layer = c.layers[l];
    const std::string pre = absl::StrCat("l", l, ".");
    const std::vector<double> x = Rms(h, w(pre + "in_norm"), H);
    std::vector<double> q = Rms(Linear(w(pre + "q"), x), w(pre + "q_norm"), d);
    Rope(&q, p);
    size_t src = l;
    if (layer.kv_source < 0) {
      std::vector<double> k =
          Rms(Linear(w(pre + "k"), x), w(pre + "k_norm"), d);
      Rope(&k, p);
      keys_[l].push_back(k);
      values_[l].push_back(Rms(Linear(w(pre + "v"), x), -1, d));
    } else {
      src = static_cast<size_t>(layer.kv_source);
    }
    // Visible positions (spec §3.3 step 4).
    const int64_t first =
        layer.sliding ? std::max<int64_t>(0, p - layer.window + 1) : 0;
    const int64_t group = c.heads / c.kv_heads;
    std::vector<double> o(c.heads * d, 0.0);
    for (int64_t hh = 0; hh < c.heads; ++hh) {
      const int64_t j = hh / group;
      std::vector<double> s;
      double mx = -1e300;
      for (int64_t t = first; t <= p; ++t) {
        double dot = 0.0;
        for (int64_t e = 0; e < d; ++e)
          dot += q[hh * d + e] * keys_[src][t][j * d + e];
        s.push_back(c.attention_scale * dot);
        mx = std::max(mx, s.back());
      }
      double sum = 0.0;
      for (double& v : s) sum += (v = std::exp(v - mx));
      for (int64_t t = first; t <= p; ++t) {
        const double a = s[t - first] / sum;
        for (int64_t e = 0; e < d; ++e)
          o[hh * d + e] += a * values_[src][t][j * d + e];
      }
    }
    std::vector<double> attn = Linear(w(pre + "o"), o);
    for (double& v : attn) v *= c.residual_scale;
    if (c.post_norms) attn = Rms(attn, w(pre + "post_attn_norm"), H);
    for (int64_t i = 0; i < H; ++i) h[i] += attn[i];
    const std::vector<double> y = Rms(h, w(pre + "ff_norm"), H);
    std::vector<double> g = Linear(w(pre + "gate"), y);
    const std::vector<double> u = Linear(w(pre + "up"), y);
    for (size_t i = 0; i < g.size(); ++i) g[i] = Gelu(g[i]) * u[i];
    std::vector<double> dn = Linear(w(pre + "down"), g);
    if (c.post_norms) dn = Rms(dn, w(pre + "post_ff_norm"), H);
    const double lambda = m_.values[w(pre + "scalar")][0];
    for (int64_t i = 0; i < H; ++i) h[i] = (h[i] + dn[i]) * lambda;
    layer_out_[l] = h;
  }
  const std::vector<double> hf = Rms(h, w("final_norm"), H);
  std::vector<double> logits = Linear(embed, hf);
  for (double& v : logits) v = c.softcap * std::tanh(v / c.softcap);
  return logits;
}

}  // namespace testing
}  // namespace cortiq
