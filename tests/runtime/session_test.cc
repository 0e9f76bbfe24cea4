// Tests of runtime/session.cc: the executor against an independent scalar
// forward of hand-built toy plans (f32 and bf16 weights; full, sliding and
// KV-shared layers; sandwich norms; the fused gelu_tanh_mul and
// residual_rms_norm steps, also bit for bit against the unfused plan), and its
// state handling (token range, context overflow, Reset, logits-only steps,
// threads, taps).
#include "runtime/session.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "tests/runtime/toy_model.h"

namespace cortiq {
namespace {

using ::cortiq::testing::BuildToyModel;
using ::cortiq::testing::ToyConfig;
using ::cortiq::testing::ToyLayer;
using ::cortiq::testing::ToyModel;
using ::cortiq::testing::ToyReference;
using ::testing::HasSubstr;

std::unique_ptr<Session> MakeSession(const ToyModel& toy,
                                     SessionOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Session>> session = Session::CreateFromPlan(
      toy.plan, toy.weights(), toy.section_bytes, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

std::vector<float> Logits(const Session& s) {
  return std::vector<float>(s.logits().begin(), s.logits().end());
}

// Token sequence used throughout: BOS then pseudo-random ids.
std::vector<int32_t> Tokens(int n, int32_t vocab, uint32_t seed = 3) {
  std::vector<int32_t> tokens = {2};
  uint32_t x = seed;
  while (static_cast<int>(tokens.size()) < n) {
    x = x * 1664525u + 1013904223u;
    tokens.push_back(
        static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(vocab)));
  }
  return tokens;
}

// Max over the vector of |a - b| / (1 + |b|).
double MaxRelError(absl::Span<const float> a, const std::vector<double>& b) {
  double worst = 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]) / (1.0 + std::abs(b[i])));
  }
  return worst;
}

struct ForwardCase {
  const char* name;
  WeightFormat format;
  std::vector<ToyLayer> layers;
  int tokens;
  bool post_norms = false;  // ToyConfig::post_norms
  bool fused = false;       // ToyConfig::fused
};

void PrintTo(const ForwardCase& c, std::ostream* os) { *os << c.name; }

class ForwardTest : public ::testing::TestWithParam<ForwardCase> {};

// Logits and every layer output at every position match the scalar double
// forward. Tolerance: the kernels compute in f32 (dot products of <= 96 terms,
// Highway exp/tanh of a few ulp) over 2-4 layers; the errors seen are
// <= 1.5e-6, so 2e-5 relative leaves a margin of 10x while still catching any
// formula, index or visibility mistake (an off-by-one sliding window changes
// logits by O(1e-2)).
TEST_P(ForwardTest, MatchesScalarReference) {
  ToyConfig config;
  config.format = GetParam().format;
  config.layers = GetParam().layers;
  config.post_norms = GetParam().post_norms;
  config.fused = GetParam().fused;
  const ToyModel toy = BuildToyModel(config);
  std::unique_ptr<Session> session = MakeSession(toy);
  ASSERT_NE(session, nullptr);
  ToyReference reference(toy);
  for (int32_t token :
       Tokens(GetParam().tokens, static_cast<int32_t>(config.vocab))) {
    ASSERT_TRUE(session->Eval(token, /*want_logits=*/true).ok());
    const std::vector<double> expected = reference.Eval(token);
    const int64_t p = session->length() - 1;
    EXPECT_LT(MaxRelError(session->logits(), expected), 2e-5)
        << "position " << p;
    for (size_t l = 0; l < config.layers.size(); ++l) {
      EXPECT_LT(MaxRelError(session->tap(l), reference.layer_output(l)), 2e-5)
          << "layer " << l << " position " << p;
    }
  }
}

const ForwardCase kForwardCases[] = {
    {"FullF32", WeightFormat::kF32, {ToyLayer{}, ToyLayer{}}, 12},
    {"FullBF16", WeightFormat::kBF16, {ToyLayer{}, ToyLayer{}}, 12},
    // Window 3 over 20 positions: the ring wraps many times.
    {"SlidingF32",
     WeightFormat::kF32,
     {ToyLayer{true, 3, -1}, ToyLayer{true, 3, -1}},
     20},
    {"SlidingBF16",
     WeightFormat::kBF16,
     {ToyLayer{true, 5, -1}, ToyLayer{false, 0, -1}},
     20},
    // Gemma-style KV sharing: layers 2 and 3 read the caches of layers 0
    // (sliding) and 1.
    {"SharedKvF32",
     WeightFormat::kF32,
     {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 4, 0},
      ToyLayer{false, 0, 1}},
     16},
    {"SharedKvBF16",
     WeightFormat::kBF16,
     {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 4, 0},
      ToyLayer{false, 0, 1}},
     16},
    // Sandwich norms, unfused (rms_norm + add [+ layer_scalar]) and fused
    // (residual_rms_norm, gelu_tanh_mul; bf16 gains and scalars widened at
    // Create).
    {"PostNormsF32",
     WeightFormat::kF32,
     {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}},
     12,
     /*post_norms=*/true},
    {"FusedF32",
     WeightFormat::kF32,
     {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}},
     12,
     /*post_norms=*/true,
     /*fused=*/true},
    {"FusedBF16",
     WeightFormat::kBF16,
     {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 4, 0},
      ToyLayer{false, 0, 1}},
     16,
     /*post_norms=*/true,
     /*fused=*/true},
    // Only the MLP gate fused (no post norms to fuse with the residual adds).
    {"FusedGateOnlyBF16",
     WeightFormat::kBF16,
     {ToyLayer{}, ToyLayer{}},
     8,
     /*post_norms=*/false,
     /*fused=*/true},
};

INSTANTIATE_TEST_SUITE_P(All, ForwardTest, ::testing::ValuesIn(kForwardCases),
                         [](const ::testing::TestParamInfo<ForwardCase>& info) {
                           return std::string(info.param.name);
                         });

// Number of steps of `kind` in `plan`.
int CountSteps(const Plan& plan, StepKind kind) {
  return static_cast<int>(
      std::count_if(plan.steps.begin(), plan.steps.end(),
                    [kind](const Step& s) { return s.kind == kind; }));
}

// The fused kernels are bit-identical to the sequences they replace
// (ops/elementwise.h GeluTanhMul, ops/rms_norm.h ResidualRmsNorm), so a plan
// with the fused steps must give exactly the logits and layer outputs of the
// same plan unfused.
TEST(SessionTest, FusedPlanIsBitIdenticalToUnfused) {
  for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kBF16}) {
    for (bool post_norms : {false, true}) {
      ToyConfig config;
      config.format = format;
      config.post_norms = post_norms;
      config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1},
                       ToyLayer{true, 3, 0}};
      const ToyModel unfused = BuildToyModel(config);
      config.fused = true;
      const ToyModel fused = BuildToyModel(config);
      const std::string what = absl::StrCat(WeightFormatName(format),
                                            post_norms ? " post norms" : "");
      ASSERT_EQ(CountSteps(fused.plan, StepKind::kGeluTanhMul), 3) << what;
      ASSERT_EQ(CountSteps(fused.plan, StepKind::kResidualRmsNorm),
                post_norms ? 6 : 0)
          << what;
      ASSERT_EQ(CountSteps(fused.plan, StepKind::kMul), 0) << what;
      ASSERT_EQ(CountSteps(fused.plan, StepKind::kLayerScalar),
                post_norms ? 0 : 3)
          << what;
      std::unique_ptr<Session> a = MakeSession(unfused);
      std::unique_ptr<Session> b = MakeSession(fused);
      ASSERT_NE(a, nullptr);
      ASSERT_NE(b, nullptr);
      for (int32_t t : Tokens(10, 1101)) {
        ASSERT_TRUE(a->Eval(t, true).ok());
        ASSERT_TRUE(b->Eval(t, true).ok());
        EXPECT_EQ(Logits(*a), Logits(*b))
            << what << " position " << a->length();
        for (size_t l = 0; l < config.layers.size(); ++l) {
          EXPECT_TRUE(
              std::equal(a->tap(l).begin(), a->tap(l).end(), b->tap(l).begin()))
              << what << " layer " << l << " position " << a->length();
        }
      }
    }
  }
}

// A hand-built plan of only the fused kinds, in every aliasing the validator
// allows, against a scalar double evaluation. H = 24 in groups of 8 (three
// groups per norm, as the per-head norms); the vectors are table rows:
//
//   0  e = A[t]                      embedding
//   1  x = B[t]                      embedding
//   2  e = e + RMS_8(x) * c          residual_rms_norm, no gain, scalar c
//                                    (in place on the residual)
//   3  x = e + RMS_8(x; g)           residual_rms_norm, gain g, no scalar
//                                    (in place on the normalized operand)
//   4  m = gelu(x) * e               gelu_tanh_mul
//   5  e = gelu(e) * m               gelu_tanh_mul, in place on the gate
//   6  m = m + RMS_8(m; g) * c       residual_rms_norm, residual == x == out
//   7  logits = A e                  lm_head (A is [V, H])
struct FusedPlan {
  Plan plan;
  std::vector<uint64_t> section;           // the weight section, 8-byte aligned
  std::vector<std::vector<float>> values;  // weight values as f32
};

FusedPlan BuildFusedPlan(WeightFormat format, float scalar) {
  constexpr int64_t kV = 37, kH = 24, kGroup = 8;
  FusedPlan f;
  f.plan.model = {"fused", kV, kH, 1, 16};
  std::mt19937 rng(5);
  uint64_t cursor = 0;
  const auto weight = [&](const char* name, std::vector<int64_t> shape,
                          double lo, double hi) {
    WeightEntry w;
    w.name = name;
    w.format = format;
    w.shape = std::move(shape);
    w.size_bytes = static_cast<uint64_t>(w.num_elements()) *
                   WeightFormatElementSize(format);
    w.offset = (cursor + 63) / 64 * 64;
    cursor = w.offset + w.size_bytes;
    std::uniform_real_distribution<float> dist(static_cast<float>(lo),
                                               static_cast<float>(hi));
    std::vector<float> v(static_cast<size_t>(w.num_elements()));
    for (float& e : v) {
      e = dist(rng);
      // Round to bf16 (nearest even; finite values) if stored as bf16.
      if (format == WeightFormat::kBF16) {
        uint32_t bits;
        std::memcpy(&bits, &e, 4);
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000u;
        std::memcpy(&e, &bits, 4);
      }
    }
    f.plan.weights.push_back(w);
    f.values.push_back(std::move(v));
    return static_cast<int32_t>(f.plan.weights.size() - 1);
  };
  const int32_t A = weight("A", {kV, kH}, -1.5, 1.5);
  const int32_t B = weight("B", {kV, kH}, -1.0, 1.0);
  const int32_t g = weight("g", {kGroup}, 0.5, 1.5);
  const int32_t c = weight("c", {1}, 0, 0);
  f.values[c][0] = scalar;  // exactly representable in bf16 (test values)
  uint64_t arena = 0;
  const auto buffer = [&](int64_t n) {
    f.plan.buffers.push_back(BufferEntry{arena, static_cast<uint64_t>(n)});
    arena += 4 * static_cast<uint64_t>(n);
    return static_cast<int32_t>(f.plan.buffers.size() - 1);
  };
  const int32_t e = buffer(kH), x = buffer(kH), m = buffer(kH),
                logits = buffer(kV);
  const auto step = [&](StepKind kind, int32_t out, int32_t in0, int32_t in1,
                        int32_t w, int32_t w2) {
    Step s;
    s.kind = kind;
    s.out = out;
    s.in0 = in0;
    s.in1 = in1;
    s.weight = w;
    s.scalar = w2;
    if (kind == StepKind::kResidualRmsNorm) {
      s.group_size = kGroup;
      s.eps = 1e-6;
    }
    if (kind == StepKind::kEmbedding) s.scale = 1.0;
    f.plan.steps.push_back(s);
  };
  step(StepKind::kEmbedding, e, -1, -1, A, -1);
  step(StepKind::kEmbedding, x, -1, -1, B, -1);
  step(StepKind::kResidualRmsNorm, e, e, x, -1, c);
  step(StepKind::kResidualRmsNorm, x, e, x, g, -1);
  step(StepKind::kGeluTanhMul, m, x, e, -1, -1);
  step(StepKind::kGeluTanhMul, e, e, m, -1, -1);
  step(StepKind::kResidualRmsNorm, m, m, m, g, c);
  step(StepKind::kLmHead, logits, e, -1, A, -1);
  f.plan.taps = {Tap{"e", e}, Tap{"x", x}, Tap{"m", m}};
  f.plan.logits_buffer = logits;
  f.plan.arena_bytes = arena;
  f.section.assign((cursor + 63) / 64 * 8, 0);
  uint8_t* base = reinterpret_cast<uint8_t*>(f.section.data());
  for (size_t i = 0; i < f.plan.weights.size(); ++i) {
    const WeightEntry& w = f.plan.weights[i];
    for (size_t k = 0; k < f.values[i].size(); ++k) {
      uint32_t bits;
      std::memcpy(&bits, &f.values[i][k], 4);
      if (format == WeightFormat::kBF16) {
        const uint16_t top = static_cast<uint16_t>(bits >> 16);
        std::memcpy(base + w.offset + 2 * k, &top, 2);
      } else {
        std::memcpy(base + w.offset + 4 * k, &bits, 4);
      }
    }
  }
  return f;
}

// The plan above in double: returns {e, x, m, logits}.
std::vector<std::vector<double>> EvalFusedPlan(const FusedPlan& f,
                                               int32_t token) {
  const int64_t V = f.plan.model.vocab_size, H = f.plan.model.hidden_size;
  const std::vector<float>& A = f.values[0];
  const std::vector<float>& B = f.values[1];
  const std::vector<float>& g = f.values[2];
  const double c = f.values[3][0];
  const auto rms = [&](const std::vector<double>& v, bool gain) {
    std::vector<double> out(v.size());
    for (size_t g0 = 0; g0 < v.size(); g0 += 8) {
      double ms = 0.0;
      for (size_t i = 0; i < 8; ++i) ms += v[g0 + i] * v[g0 + i];
      const double inv = 1.0 / std::sqrt(ms / 8.0 + 1e-6);
      for (size_t i = 0; i < 8; ++i)
        out[g0 + i] = v[g0 + i] * inv * (gain ? g[i] : 1.0);
    }
    return out;
  };
  const auto gelu = [](double v) {
    return 0.5 * v *
           (1.0 +
            std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  std::vector<double> e(H), x(H), m(H), logits(V, 0.0);
  for (int64_t i = 0; i < H; ++i) {
    e[i] = A[token * H + i];
    x[i] = B[token * H + i];
  }
  std::vector<double> n = rms(x, false);
  for (int64_t i = 0; i < H; ++i) e[i] = (e[i] + n[i]) * c;
  n = rms(x, true);
  for (int64_t i = 0; i < H; ++i) x[i] = e[i] + n[i];
  for (int64_t i = 0; i < H; ++i) m[i] = gelu(x[i]) * e[i];
  for (int64_t i = 0; i < H; ++i) e[i] = gelu(e[i]) * m[i];
  n = rms(m, true);
  for (int64_t i = 0; i < H; ++i) m[i] = (m[i] + n[i]) * c;
  for (int64_t v = 0; v < V; ++v) {
    for (int64_t i = 0; i < H; ++i) logits[v] += A[v * H + i] * e[i];
  }
  return {e, x, m, logits};
}

TEST(SessionTest, FusedStepsMatchScalarEvaluation) {
  for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kBF16}) {
    for (float scalar : {1.0f, -1.375f}) {
      FusedPlan f = BuildFusedPlan(format, scalar);
      const uint64_t section_bytes = f.section.size() * 8;
      absl::StatusOr<std::unique_ptr<Session>> session =
          Session::CreateFromPlan(
              f.plan, reinterpret_cast<const uint8_t*>(f.section.data()),
              section_bytes, {});
      ASSERT_TRUE(session.ok()) << session.status();
      const std::string what =
          absl::StrCat(WeightFormatName(format), " scalar ", scalar);
      std::vector<std::vector<float>> first;
      for (int32_t token : {2, 36, 0, 17}) {
        ASSERT_TRUE((*session)->Eval(token, true).ok());
        const std::vector<std::vector<double>> expected =
            EvalFusedPlan(f, token);
        // f32 kernels over 8-element norms and a 24-term dot product: the
        // errors are a few f32 ulp of the values (|v| <~ 10); 1e-5 relative
        // to 1 + |v| leaves a wide margin and still catches a wrong formula,
        // gain, scalar or aliasing order (each changes results by >= 1e-2).
        for (size_t t = 0; t < 3; ++t) {
          EXPECT_LT(MaxRelError((*session)->tap(t), expected[t]), 1e-5)
              << what << " tap " << f.plan.taps[t].name << " token " << token;
        }
        EXPECT_LT(MaxRelError((*session)->logits(), expected[3]), 1e-5)
            << what << " logits, token " << token;
        first.push_back(Logits(**session));
      }
      // The scalar is read once, at Create: changing its bytes afterwards
      // changes nothing.
      uint8_t* c_bytes = reinterpret_cast<uint8_t*>(f.section.data()) +
                         f.plan.weights[3].offset;
      std::memset(c_bytes, 0, WeightFormatElementSize(format));
      (*session)->Reset();
      size_t i = 0;
      for (int32_t token : {2, 36, 0, 17}) {
        ASSERT_TRUE((*session)->Eval(token, true).ok());
        EXPECT_EQ(Logits(**session), first[i++]) << what;
      }
    }
  }
}

TEST(SessionTest, RejectsTokenOutsideVocabulary) {
  const ToyModel toy = BuildToyModel(ToyConfig{});
  std::unique_ptr<Session> session = MakeSession(toy);
  absl::Status status = session->Eval(1101, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("tokens[0] = 1101 is out of range [0, 1101)"));
  status = session->Eval(-1, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("tokens[0] = -1"));
  EXPECT_EQ(session->length(), 0);
  EXPECT_TRUE(session->Eval(1100, true).ok());
  EXPECT_EQ(session->length(), 1);
}

TEST(SessionTest, ContextOverflowAtCtxSize) {
  const ToyModel toy = BuildToyModel(ToyConfig{});
  SessionOptions options;
  options.ctx_size = 5;
  std::unique_ptr<Session> session = MakeSession(toy, options);
  EXPECT_EQ(session->ctx_size(), 5);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(session->Eval(7, false).ok()) << i;
  const absl::Status status = session->Eval(7, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(status.message()),
            "context full: 1 tokens at position 5 exceed the context size 5 (0 positions left)");
  EXPECT_EQ(session->length(), 5);
  session->Reset();
  EXPECT_TRUE(session->Eval(7, true).ok());
}

TEST(SessionTest, CtxSizeIsClampedToMaxPositions) {
  ToyConfig config;
  config.max_position_embeddings = 6;
  const ToyModel toy = BuildToyModel(config);
  SessionOptions options;
  options.ctx_size = 1000;
  std::unique_ptr<Session> session = MakeSession(toy, options);
  EXPECT_EQ(session->ctx_size(), 6);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(session->Eval(3, false).ok());
  EXPECT_EQ(session->Eval(3, false).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(SessionTest, RejectsBadOptions) {
  const ToyModel toy = BuildToyModel(ToyConfig{});
  SessionOptions options;
  options.ctx_size = 0;
  EXPECT_EQ(Session::CreateFromPlan(toy.plan, toy.weights(), toy.section_bytes,
                                    options)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  options.ctx_size = 16;
  options.threads = 0;
  EXPECT_EQ(Session::CreateFromPlan(toy.plan, toy.weights(), toy.section_bytes,
                                    options)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  options.threads = 1;
  Plan bad = toy.plan;
  bad.steps[2].in0 = 1 << 20;
  EXPECT_EQ(
      Session::CreateFromPlan(bad, toy.weights(), toy.section_bytes, options)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(SessionTest, RejectsArenaSizeThatWouldWrap) {
  // (2^64 - 1 + 3) / 4 wrapped to 0 floats: every buffer "fit" the arena and the run wrote past
  // a 4-byte allocation.
  const ToyModel toy = BuildToyModel(ToyConfig{});
  for (uint64_t arena : {~uint64_t{0}, ~uint64_t{0} - 2, kMaxArenaBytes + 4}) {
    Plan plan = toy.plan;
    plan.arena_bytes = arena;
    const absl::Status status =
        Session::CreateFromPlan(plan, toy.weights(), toy.section_bytes, {}).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << arena;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(absl::StrCat("arena_bytes = ", arena, " exceeds the limit of ",
                                       kMaxArenaBytes, " bytes")));
  }
  Plan unaligned = toy.plan;
  unaligned.arena_bytes = toy.plan.arena_bytes + 3;  // not a multiple of 4: rounded up
  EXPECT_TRUE(
      Session::CreateFromPlan(unaligned, toy.weights(), toy.section_bytes, {}).ok());
}

// Sets element 0 of weight `name` (an f32 toy weight, used in place by sessions) to `value`;
// returns the old value.
float PoisonWeight(ToyModel& toy, const std::string& name, float value) {
  const WeightEntry& w = toy.plan.weights[::cortiq::testing::FindWeight(toy.plan, name)];
  EXPECT_EQ(w.format, WeightFormat::kF32);
  uint8_t* at = reinterpret_cast<uint8_t*>(toy.section.data()) + w.offset;
  float old;
  std::memcpy(&old, at, sizeof(old));
  std::memcpy(at, &value, sizeof(value));
  return old;
}

TEST(SessionTest, NonFiniteLogitsAreAnErrorAndRollBackThePosition) {
  ToyConfig config;
  // A sliding ring of 3 rows that has wrapped by the failing position, a full and a shared
  // layer: the rolled-back position's rows are rewritten before any query reads them.
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1},
                   ToyLayer{true, 3, 0}};
  ToyModel toy = BuildToyModel(config);
  std::unique_ptr<Session> session = MakeSession(toy);
  std::unique_ptr<Session> reference = MakeSession(toy);
  const std::vector<int32_t> tokens = Tokens(9, 1101);
  for (size_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(session->Eval(tokens[i], false).ok());
    ASSERT_TRUE(reference->Eval(tokens[i], true).ok());
  }
  // A NaN in layer 0's q projection: NaN hidden state, NaN keys/values in the later caches'
  // rows of position 5, all-NaN logits.
  const float old = PoisonWeight(toy, "l0.q", std::nanf(""));
  absl::Status status = session->Eval(tokens[5], true);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(status.message()),
            "non-finite logits at position 5 (NaN/Inf in the weights, or an overflow)");
  EXPECT_EQ(session->length(), 5);
  EXPECT_TRUE(std::isnan(session->logits()[0]));  // left for inspection

  // After the rollback the session continues exactly as one that never failed.
  PoisonWeight(toy, "l0.q", old);
  for (size_t i = 5; i < tokens.size(); ++i) {
    ASSERT_TRUE(session->Eval(tokens[i], true).ok()) << i;
    ASSERT_TRUE(reference->Eval(tokens[i], true).ok()) << i;
    EXPECT_EQ(Logits(*session), Logits(*reference)) << "position " << i;
  }

  // Without logits nothing is checked, and the position is consumed.
  PoisonWeight(toy, "l0.q", std::nanf(""));
  EXPECT_TRUE(session->Eval(tokens[0], false).ok());
  EXPECT_EQ(session->length(), static_cast<int64_t>(tokens.size()) + 1);
}

TEST(SessionTest, InfiniteLogitsFromAnOverflowAreAnError) {
  // The softcap bounds the toy's logits by 30; scaling them by 1e38 instead overflows to +-Inf.
  ToyModel toy = BuildToyModel(ToyConfig{});
  Step& last = toy.plan.steps.back();
  ASSERT_EQ(last.kind, StepKind::kSoftcap);
  last.kind = StepKind::kScale;
  last.cap = 0;
  last.factor = 1e38;
  std::unique_ptr<Session> session = MakeSession(toy);
  const absl::Status status = session->Eval(2, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("non-finite logits at position 0"));
  EXPECT_EQ(session->length(), 0);
}

TEST(SessionTest, ResetGivesBitIdenticalLogits) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1},
                   ToyLayer{true, 3, 0}};
  const ToyModel toy = BuildToyModel(config);
  std::unique_ptr<Session> session = MakeSession(toy);
  const std::vector<int32_t> tokens = Tokens(9, 1101);
  std::vector<std::vector<float>> first;
  for (int32_t t : tokens) {
    ASSERT_TRUE(session->Eval(t, true).ok());
    first.push_back(Logits(*session));
  }
  // A different sequence in between leaves stale rows in every cache.
  session->Reset();
  for (int32_t t : Tokens(7, 1101, 99))
    ASSERT_TRUE(session->Eval(t, true).ok());
  session->Reset();
  EXPECT_EQ(session->length(), 0);
  for (size_t i = 0; i < tokens.size(); ++i) {
    ASSERT_TRUE(session->Eval(tokens[i], true).ok());
    EXPECT_EQ(Logits(*session), first[i]) << "position " << i;
  }
}

TEST(SessionTest, SkippingLogitsDoesNotChangeLaterLogits) {
  const ToyModel toy = BuildToyModel(ToyConfig{});
  std::unique_ptr<Session> all = MakeSession(toy);
  std::unique_ptr<Session> last_only = MakeSession(toy);
  const std::vector<int32_t> tokens = Tokens(6, 1101);
  for (size_t i = 0; i < tokens.size(); ++i) {
    ASSERT_TRUE(all->Eval(tokens[i], true).ok());
    ASSERT_TRUE(last_only->Eval(tokens[i], i + 1 == tokens.size()).ok());
  }
  EXPECT_EQ(Logits(*all), Logits(*last_only));
}

// A toy whose last two layers share caches, with every step after the last kv_append on the
// logits rows (as mark-rows gives): tokens evaluated without logits skip those steps, which
// changes neither the caches nor later logits (bit for bit: decode runs the same kernels either
// way); the taps they write are stale then, unless every_tap() is set.
TEST(SessionTest, LogitsRowsStepsAreSkippedWithoutLogits) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 3, 0},
                   ToyLayer{false, 0, 1}};
  const ToyModel toy = BuildToyModel(config);
  ToyModel marked = toy;
  size_t last_append = 0;
  for (size_t i = 0; i < marked.plan.steps.size(); ++i) {
    if (marked.plan.steps[i].kind == StepKind::kKvAppend) last_append = i;
  }
  for (size_t i = last_append + 1; i < marked.plan.steps.size(); ++i) {
    marked.plan.steps[i].rows = StepRows::kLogits;
  }
  std::unique_ptr<Session> all = MakeSession(toy);
  std::unique_ptr<Session> rows = MakeSession(marked);
  std::unique_ptr<Session> taps = MakeSession(marked);
  taps->set_every_tap(true);
  const std::vector<int32_t> tokens = Tokens(7, 1101);
  const size_t last_tap = toy.plan.taps.size() - 1;  // layer.3: logits rows only
  for (size_t i = 0; i < tokens.size(); ++i) {
    const bool want = i % 3 == 2;
    ASSERT_TRUE(all->Eval(tokens[i], want).ok());
    ASSERT_TRUE(rows->Eval(tokens[i], want).ok());
    ASSERT_TRUE(taps->Eval(tokens[i], want).ok());
    for (size_t c = 0; c < toy.plan.caches.size(); ++c) {
      const size_t n = static_cast<size_t>(all->cache(c).rows() * all->cache(c).row_width());
      EXPECT_TRUE(std::equal(all->cache(c).keys(), all->cache(c).keys() + n,
                             rows->cache(c).keys()));
      EXPECT_TRUE(std::equal(all->cache(c).values(), all->cache(c).values() + n,
                             rows->cache(c).values()));
    }
    if (want) EXPECT_EQ(Logits(*all), Logits(*rows)) << i;
    const absl::Span<const float> expected = all->tap(last_tap);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), taps->tap(last_tap).begin())) << i;
    // Without logits the skipped layer's tap still holds the last token with logits.
    EXPECT_EQ(std::equal(expected.begin(), expected.end(), rows->tap(last_tap).begin()), want)
        << i;
  }
}

TEST(SessionTest, ThreadsGiveBitIdenticalResults) {
  for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kBF16}) {
    ToyConfig config;
    config.format = format;
    // Linears big enough to be split: the 1101 x 256 LM head, 300 x 256 MLP.
    config.hidden = 256;
    config.ffn = 300;
    config.heads = 4;
    config.head_dim = 64;
    config.rotated_pairs = 16;
    const ToyModel toy = BuildToyModel(config);
    std::unique_ptr<Session> one = MakeSession(toy);
    for (int threads : {2, 3}) {
      SessionOptions options;
      options.threads = threads;
      std::unique_ptr<Session> many = MakeSession(toy, options);
      one->Reset();
      for (int32_t t : Tokens(5, 1101)) {
        ASSERT_TRUE(one->Eval(t, true).ok());
        ASSERT_TRUE(many->Eval(t, true).ok());
        EXPECT_EQ(Logits(*one), Logits(*many)) << threads << " threads";
        for (size_t l = 0; l < toy.plan.taps.size(); ++l) {
          EXPECT_TRUE(std::equal(one->tap(l).begin(), one->tap(l).end(),
                                 many->tap(l).begin()));
        }
      }
    }
  }
}

// One KV head for four query heads (E2B's kind), and two KV heads (E4B's: as many as threads),
// with a window of at least as many softmax blocks as threads (ops::kAttentionRowBlock = 512
// rows: from position 512 on with 2 threads, 1024 with 3): decode attention splits the blocks
// and then the heads over the threads (Session::RunAttention's two phases) instead of giving a
// thread whole heads. Every logit must keep the one-thread bits, with either KV type, in a full
// layer, a sliding one and a layer reading another's cache, including a last block of one row
// (positions 512 and 1024).
void CheckSharedDecodeAttention(int kv_heads) {
  SCOPED_TRACE(::testing::Message() << kv_heads << " KV heads");
  ToyConfig config;
  config.hidden = 128;
  config.heads = 4;
  config.kv_heads = kv_heads;
  config.head_dim = 64;
  config.rotated_pairs = 16;
  config.layers = {ToyLayer{}, ToyLayer{true, 300, -1}, ToyLayer{false, 0, 0}};
  const ToyModel toy = BuildToyModel(config);
  const std::vector<int32_t> tokens = Tokens(1060, static_cast<int32_t>(config.vocab));
  for (KvType kv_type : {KvType::kF32, KvType::kF16}) {
    SessionOptions base;
    base.kv_type = kv_type;
    base.ctx_size = 1100;
    std::unique_ptr<Session> one = MakeSession(toy, base);
    std::vector<std::unique_ptr<Session>> many;
    for (int threads : {2, 3}) {
      SessionOptions options = base;
      options.threads = threads;
      many.push_back(MakeSession(toy, options));
    }
    for (size_t i = 0; i < tokens.size(); ++i) {
      const bool logits = (i >= 505 && i < 530) || i >= 1015;
      ASSERT_TRUE(one->Eval(tokens[i], logits).ok());
      for (auto& session : many) ASSERT_TRUE(session->Eval(tokens[i], logits).ok());
      if (!logits) continue;
      for (auto& session : many) {
        ASSERT_EQ(Logits(*one), Logits(*session))
            << "position " << i << ", kv " << (kv_type == KvType::kF16 ? "f16" : "f32");
      }
    }
  }
}

TEST(SessionTest, SharedDecodeAttentionGivesBitIdenticalResults) {
  CheckSharedDecodeAttention(1);
  CheckSharedDecodeAttention(2);
}

// With window 2 and two sliding layers, position p sees positions >= p - 1 in
// layer 0 and, through them, >= p - 2 in layer 1: the token at position 0
// cannot influence outputs at positions >= 3. The ring must therefore have
// dropped position 0 exactly.
TEST(SessionTest, SlidingWindowForgetsOldPositions) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 2, -1}, ToyLayer{true, 2, -1}};
  const ToyModel toy = BuildToyModel(config);
  std::unique_ptr<Session> a = MakeSession(toy);
  std::unique_ptr<Session> b = MakeSession(toy);
  std::vector<int32_t> tokens = Tokens(8, 1101);
  std::vector<int32_t> other = tokens;
  other[0] = 77;
  for (size_t p = 0; p < tokens.size(); ++p) {
    ASSERT_TRUE(a->Eval(tokens[p], true).ok());
    ASSERT_TRUE(b->Eval(other[p], true).ok());
    if (p >= 3) {
      EXPECT_EQ(Logits(*a), Logits(*b)) << "position " << p;
    } else {
      EXPECT_NE(Logits(*a), Logits(*b)) << "position " << p;
    }
  }
}

// The same with a full layer: position 0 stays visible forever.
TEST(SessionTest, FullAttentionRemembersEverything) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 2, -1}, ToyLayer{false, 0, -1}};
  const ToyModel toy = BuildToyModel(config);
  std::unique_ptr<Session> a = MakeSession(toy);
  std::unique_ptr<Session> b = MakeSession(toy);
  std::vector<int32_t> tokens = Tokens(8, 1101);
  std::vector<int32_t> other = tokens;
  other[0] = 77;
  for (size_t p = 0; p < tokens.size(); ++p) {
    ASSERT_TRUE(a->Eval(tokens[p], true).ok());
    ASSERT_TRUE(b->Eval(other[p], true).ok());
    EXPECT_NE(Logits(*a), Logits(*b)) << "position " << p;
  }
}

// The ValidatePlan contract: any plan it accepts runs without touching memory
// out of bounds. Random mutations of the toy plan (indices, sizes, parameters,
// buffer and cache layouts); the ones ValidatePlan accepts are executed.
// Meaningful mainly under AddressSanitizer
// (-fsanitize=address), where an out-of-bounds access aborts the test.
TEST(SessionTest, RandomPlansThatValidateRunInBounds) {
  for (bool fused : {false, true}) {
    ToyConfig config;
    config.vocab = 50;
    config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1},
                     ToyLayer{true, 3, 0}};
    config.post_norms = fused;
    config.fused = fused;
    const ToyModel toy = BuildToyModel(config);
    std::mt19937 rng(fused ? 12 : 11);
    const auto pick = [&](int64_t lo, int64_t hi) {  // uniform in [lo, hi]
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    int accepted = 0;
    for (int trial = 0; trial < 4000; ++trial) {
      Plan plan = toy.plan;
      const int mutations = 1 + trial % 3;
      for (int m = 0; m < mutations; ++m) {
        Step& s = plan.steps[pick(0, plan.steps.size() - 1)];
        const int64_t nb = static_cast<int64_t>(plan.buffers.size());
        switch (pick(0, 12)) {
          case 0:
            s.out = static_cast<int32_t>(pick(-1, nb - 1));
            break;
          case 1:
            s.in0 = static_cast<int32_t>(pick(-1, nb - 1));
            break;
          case 2:
            s.in1 = static_cast<int32_t>(pick(-1, nb - 1));
            break;
          case 3:
            s.weight = static_cast<int32_t>(pick(-1, plan.weights.size() - 1));
            break;
          case 4:
            s.cache = static_cast<int32_t>(pick(-1, plan.caches.size() - 1));
            break;
          case 5:  // the kind's (first) integer parameter
            if (s.kind == StepKind::kRope) {
              s.head_dim = pick(0, 70);
            } else if (s.kind == StepKind::kAttention) {
              s.num_heads = pick(0, 70);
            } else {
              s.group_size = pick(0, 70);
            }
            break;
          case 6:  // the second one
            if (s.kind == StepKind::kAttention) {
              s.window = pick(0, 10);
            } else {
              s.rotated_pairs = pick(0, 10);
            }
            break;
          case 7:
            s.kind = static_cast<StepKind>(pick(1, 15));
            break;
          case 8: {
            BufferEntry& b = plan.buffers[pick(0, nb - 1)];
            b.num_elements = static_cast<uint64_t>(pick(0, 128));
            break;
          }
          case 9: {
            BufferEntry& b = plan.buffers[pick(0, nb - 1)];
            b.offset = static_cast<uint64_t>(pick(0, plan.arena_bytes / 4)) * 4;
            break;
          }
          case 10: {
            CacheEntry& c = plan.caches[pick(0, plan.caches.size() - 1)];
            c.window = pick(0, 4);
            c.sliding = c.window > 0;
            break;
          }
          case 11: {
            CacheEntry& c = plan.caches[pick(0, plan.caches.size() - 1)];
            c.num_kv_heads = pick(1, 4);
            c.head_dim = pick(1, 32);
            break;
          }
          case 12:
            s.scalar = static_cast<int32_t>(pick(-1, plan.weights.size() - 1));
            break;
        }
      }
      if (!ValidatePlan(plan, toy.section_bytes).ok()) continue;
      ++accepted;
      SessionOptions options;
      options.ctx_size = 6;
      absl::StatusOr<std::unique_ptr<Session>> session =
          Session::CreateFromPlan(plan, toy.weights(), toy.section_bytes,
                                  options);
      ASSERT_TRUE(session.ok()) << session.status();
      // A mutated plan may compute NaNs (e.g. an RMS norm of zeros with eps 0): that is
      // reported (DataLoss), and is not what this test is about.
      for (int32_t t : {2, 49, 0, 17, 5, 9}) {
        const absl::Status status = (*session)->Eval(t, t != 0);
        ASSERT_TRUE(status.ok() || status.code() == absl::StatusCode::kDataLoss) << status;
      }
    }
    // The mutations do reach the executor.
    EXPECT_GT(accepted, 100) << (fused ? "fused" : "unfused");
  }
}

TEST(SessionTest, ArtifactSessionMatchesInMemorySession) {
  for (bool fused : {false, true}) {
    ToyConfig config;
    config.format = WeightFormat::kBF16;
    config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1},
                     ToyLayer{true, 3, 0}};
    config.post_norms = fused;
    config.fused = fused;  // the residual_rms_norm scalar goes through the file
    const ToyModel toy = BuildToyModel(config);
    const std::string path = ::testing::TempDir() + "/cortiq_session_test_" +
                             std::to_string(getpid()) + ".cortiq";
    ASSERT_TRUE(WriteArtifact(path, toy.plan, [&](size_t i, uint8_t* dst) {
                  return toy.Fill(i, dst);
                }).ok());
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    absl::StatusOr<std::unique_ptr<Session>> from_file =
        Session::Create(**artifact, {});
    ASSERT_TRUE(from_file.ok()) << from_file.status();
    // Two sessions on one artifact are independent.
    absl::StatusOr<std::unique_ptr<Session>> second =
        Session::Create(**artifact, {});
    ASSERT_TRUE(second.ok());
    std::unique_ptr<Session> in_memory = MakeSession(toy);
    for (int32_t t : Tokens(10, 1101)) {
      ASSERT_TRUE((*from_file)->Eval(t, true).ok());
      ASSERT_TRUE(in_memory->Eval(t, true).ok());
      EXPECT_EQ(Logits(**from_file), Logits(*in_memory));
    }
    EXPECT_EQ((*second)->length(), 0);
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace cortiq
