// One sampling step of the sampler chain (runtime/sampling/sampler.h) over Gemma 4's vocabulary
// of 262144 logits, on one core, for the settings people run: greedy, the model's defaults,
// top-p alone (no top-k in front, so the nucleus is cut from the whole vocabulary), plain
// softmax, and every stage on; plus the stages alone, to show where the time goes.
//
//   build/bin/cortiq-sampler-benchmark
//
// Logits (fixed seed): "lm_like" — a language model's shape: 40 candidates in [6, 14] above a
// tail of N(-5, 2) (the top candidates carry ~99% of the probability, so the nucleus is
// small); "flat" — N(0, 2) over every token (the 95% nucleus holds ~94000 tokens: top-p's
// worst case). Counter `kept`: candidates left for the draw in the last step.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/sampling/draw.h"
#include "runtime/sampling/portable_exp.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/truncation.h"

namespace cortiq {
namespace sampling {
namespace {

constexpr int32_t kVocab = 262144;  // Gemma 4 (config.json vocab_size)

enum Shape { kLmLike, kFlat };

const std::vector<float>& Logits(Shape shape) {
  static const std::vector<float> lm_like = [] {
    std::mt19937_64 gen(1);
    std::normal_distribution<float> tail(-5.0f, 2.0f);
    std::uniform_real_distribution<float> top(6.0f, 14.0f);
    std::vector<float> logits(kVocab);
    for (float& l : logits) l = tail(gen);
    for (int i = 0; i < 40; ++i) logits[gen() % kVocab] = top(gen);
    return logits;
  }();
  static const std::vector<float> flat = [] {
    std::mt19937_64 gen(2);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> logits(kVocab);
    for (float& l : logits) l = normal(gen);
    return logits;
  }();
  return shape == kLmLike ? lm_like : flat;
}

SamplingOptions Off() {  // every stage off: plain softmax at temperature 1
  SamplingOptions o;
  o.seed = 1;
  o.temperature = 1.0f;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.min_p = 0.0f;
  o.repeat_last_n = 0;
  return o;
}

SamplingOptions Greedy() {
  SamplingOptions o = Off();
  o.temperature = 0.0f;
  return o;
}

SamplingOptions GemmaDefaults() {  // generation_config.json of Gemma 4, llama.cpp's for the rest
  GenerationConfigSampling gemma;
  gemma.do_sample = true;
  gemma.temperature = 1.0f;
  gemma.top_k = 64;
  gemma.top_p = 0.95f;
  SamplingOptions o = DefaultSamplingOptions(gemma);
  o.seed = 1;
  return o;
}

SamplingOptions TopPOnly() {
  SamplingOptions o = Off();
  o.top_p = 0.95f;
  return o;
}

SamplingOptions AllStages(int32_t top_k) {
  SamplingOptions o = Off();
  o.temperature = 0.8f;
  o.top_k = top_k;
  o.typical_p = 0.95f;
  o.top_p = 0.95f;
  o.min_p = 0.05f;
  o.repeat_penalty = 1.1f;
  o.repeat_last_n = 64;
  o.frequency_penalty = 0.1f;
  o.presence_penalty = 0.1f;
  o.logit_bias = {{0, -INFINITY}, {1, 2.0f}, {106, -1.0f}, {1000, 0.5f}};
  return o;
}

// Microseconds, and besides mean/median the minimum over repetitions: on a shared machine the
// least disturbed run is the best estimate of the code's own cost.
void Configure(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMicrosecond)->ComputeStatistics("min", [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  });
}

void BM_Sample(benchmark::State& state, SamplingOptions options, Shape shape) {
  const std::vector<float>& logits = Logits(shape);
  absl::StatusOr<Sampler> created = Sampler::Create(options, kVocab);
  if (!created.ok()) {
    state.SkipWithError(created.status().ToString().c_str());
    return;
  }
  Sampler sampler = *std::move(created);
  std::mt19937 gen(3);
  for (int i = 0; i < 64; ++i) {  // a full penalty window
    if (!sampler.Accept(static_cast<int32_t>(gen() % kVocab)).ok()) return;
  }
  for (auto _ : state) {
    absl::StatusOr<int32_t> token = sampler.Sample(logits);
    benchmark::DoNotOptimize(token);
  }
  state.counters["kept"] = static_cast<double>(sampler.candidates().size);
}

// clang-format off
BENCHMARK_CAPTURE(BM_Sample, greedy/lm_like, Greedy(), kLmLike)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, gemma_defaults/lm_like, GemmaDefaults(), kLmLike)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, gemma_defaults/flat, GemmaDefaults(), kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, top_p_only/lm_like, TopPOnly(), kLmLike)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, top_p_only/flat, TopPOnly(), kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, softmax_only/flat, Off(), kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, all_stages/lm_like, AllStages(64), kLmLike)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, all_stages/flat, AllStages(64), kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, all_stages_no_top_k/lm_like, AllStages(0), kLmLike)
    ->Apply(Configure);
BENCHMARK_CAPTURE(BM_Sample, all_stages_no_top_k/flat, AllStages(0), kFlat)->Apply(Configure);
// clang-format on

// The pieces, each after a fresh Load (the Load is timed too, in Load's own figure).
enum Piece { kLoad, kWeights, kTopK64, kTopP, kMinP, kTypicalP };

void BM_Stage(benchmark::State& state, Piece piece, Shape shape) {
  const std::vector<float>& logits = Logits(shape);
  TokenCandidates c(kVocab);
  for (auto _ : state) {
    if (!c.Load(logits).ok()) return;
    switch (piece) {
      case kLoad:
        break;
      case kWeights:
        c.EnsureWeights();
        break;
      case kTopK64:
        ApplyTopK(64, &c);
        break;
      case kTopP:
        ApplyTopP(0.95f, 0, &c);
        break;
      case kMinP:
        ApplyMinP(0.05f, 0, &c);
        break;
      case kTypicalP:
        ApplyTypicalP(0.95f, 0, &c);
        break;
    }
    benchmark::DoNotOptimize(c.size);
  }
  state.counters["kept"] = static_cast<double>(c.size);
}

// clang-format off
BENCHMARK_CAPTURE(BM_Stage, load, kLoad, kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Stage, load_and_weights, kWeights, kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Stage, load_and_top_k_64, kTopK64, kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Stage, load_and_top_p/lm_like, kTopP, kLmLike)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Stage, load_and_top_p/flat, kTopP, kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Stage, load_and_min_p/flat, kMinP, kFlat)->Apply(Configure);
BENCHMARK_CAPTURE(BM_Stage, load_and_typical_p/flat, kTypicalP, kFlat)->Apply(Configure);
// clang-format on

}  // namespace
}  // namespace sampling
}  // namespace cortiq

BENCHMARK_MAIN();
