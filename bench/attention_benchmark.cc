// Decode attention of one query over a long full-attention cache
// (ops/attention.h), one thread: the whole computation (AttentionRingHeads) and
// each of the three phases the session shares between threads when there are
// fewer KV heads than threads (AttentionScores, AttentionSoftmax,
// AttentionWeightedSum). Shapes of the E-series full-attention layers
// (global_head_dim 512): E2B 8 query heads over 1 KV head, E4B 8 over 2.
//
//   build/bin/cortiq-attention-benchmark [--benchmark_filter=...]
//
// Arguments: rows (context positions), KV heads, KV type (0 f32, 1 f16), copies:
// with 1 the same cache every iteration (from cache where it fits: 4096 rows,
// or a large L3), with more each iteration reads the next of that many caches,
// as a token does (the layers in between evict it): from DRAM. The `/threads:2`
// rows run the same on both cores at once (each its own caches), the read
// bandwidth two decode threads share.
// Counters: bytes/s is the key and value bytes the phase reads (each KV row
// once), so it sets the phase against the machine's read bandwidth; MAC/s the
// multiply-adds (2 * heads * head_dim per row for the whole, half of it for the
// scores or the weighted sum).
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/attention.h"

namespace cortiq {
namespace {

constexpr size_t kHeads = 8;
constexpr size_t kHeadDim = 512;

struct Case {
  size_t rows, kv_heads;
  bool f16;
  size_t copies, next = 0;
  std::vector<float> q, k, v, scores, inv_sum, out, scratch;
  std::vector<uint16_t> k16, v16;

  explicit Case(const benchmark::State &state)
      : rows(static_cast<size_t>(state.range(0))),
        kv_heads(static_cast<size_t>(state.range(1))),
        f16(state.range(2) != 0),
        copies(static_cast<size_t>(state.range(3))),
        q(kHeads * kHeadDim),
        scores(kHeads * rows),
        inv_sum(kHeads),
        out(kHeads * kHeadDim),
        scratch(ops::AttentionScratchFloats(rows)) {
    uint32_t x = 1;
    const auto next = [&x] {
      x = x * 1664525u + 1013904223u;
      return static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) / (1 << 26);
    };
    for (float &e : q) e = next();
    const size_t n = rows * kv_heads * kHeadDim * copies;
    if (f16) {
      // Binary16 of small values: sign, exponent 0x0c-0x0f, random mantissa.
      k16.resize(n);
      v16.resize(n);
      for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        k16[i] = static_cast<uint16_t>(((x >> 16) & 0x83ff) | 0x3000);
        v16[i] = static_cast<uint16_t>(((x >> 8) & 0x83ff) | 0x3400);
      }
    } else {
      k.resize(n);
      v.resize(n);
      for (size_t i = 0; i < n; ++i) {
        k[i] = next();
        v[i] = next();
      }
    }
  }
  float scale() const { return 1.0f; }
  // The current copy's keys and values; Next() moves to the next copy.
  size_t offset() const { return next * rows * kv_heads * kHeadDim; }
  const uint16_t *K16() const { return k16.data() + offset(); }
  const uint16_t *V16() const { return v16.data() + offset(); }
  const float *K() const { return k.data() + offset(); }
  const float *V() const { return v.data() + offset(); }
  void Next() { next = next + 1 == copies ? 0 : next + 1; }
  int64_t kv_bytes() const {
    return static_cast<int64_t>(2 * rows * kv_heads * kHeadDim * (f16 ? 2 : 4));
  }
  void Scores() {
    if (f16) {
      ops::AttentionScoresF16(q.data(), K16(), rows, 0, rows, 0, rows, kHeads, kv_heads,
                              kHeadDim, scale(), scores.data());
    } else {
      ops::AttentionScores(q.data(), K(), rows, 0, rows, 0, rows, kHeads, kv_heads, kHeadDim,
                           scale(), scores.data());
    }
  }
  void WeightedSum() {
    if (f16) {
      ops::AttentionWeightedSumF16(V16(), rows, 0, rows, kHeads, kv_heads, kHeadDim,
                                   scores.data(), inv_sum.data(), 0, kHeadDim, out.data());
    } else {
      ops::AttentionWeightedSum(V(), rows, 0, rows, kHeads, kv_heads, kHeadDim, scores.data(),
                                inv_sum.data(), 0, kHeadDim, out.data());
    }
  }
};

void SetCounters(benchmark::State &state, int64_t bytes, double macs) {
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * macs,
                                               benchmark::Counter::kIsRate);
}

void BM_Whole(benchmark::State &state) {
  Case c(state);
  for (auto _ : state) {
    if (c.f16) {
      ops::AttentionRingHeadsF16(c.q.data(), c.K16(), c.V16(), c.rows, 0, c.rows, kHeads,
                                 c.kv_heads, kHeadDim, c.scale(), 0, kHeads, c.scratch.data(),
                                 c.out.data());
    } else {
      ops::AttentionRingHeads(c.q.data(), c.K(), c.V(), c.rows, 0, c.rows, kHeads,
                              c.kv_heads, kHeadDim, c.scale(), 0, kHeads, c.scratch.data(),
                              c.out.data());
    }
    benchmark::DoNotOptimize(c.out.data());
    c.Next();
  }
  SetCounters(state, c.kv_bytes(), 2.0 * kHeads * kHeadDim * static_cast<double>(c.rows));
}

void BM_Scores(benchmark::State &state) {
  Case c(state);
  for (auto _ : state) {
    c.Scores();
    benchmark::DoNotOptimize(c.scores.data());
    c.Next();
  }
  SetCounters(state, c.kv_bytes() / 2, 1.0 * kHeads * kHeadDim * static_cast<double>(c.rows));
}

void BM_Softmax(benchmark::State &state) {
  Case c(state);
  c.Scores();
  const std::vector<float> scores = c.scores;
  for (auto _ : state) {
    state.PauseTiming();
    c.scores = scores;
    state.ResumeTiming();
    ops::AttentionSoftmax(c.scores.data(), c.rows, 0, kHeads, c.inv_sum.data());
    benchmark::DoNotOptimize(c.inv_sum.data());
  }
  SetCounters(state, 0, 0);
}

void BM_WeightedSum(benchmark::State &state) {
  Case c(state);
  c.Scores();
  ops::AttentionSoftmax(c.scores.data(), c.rows, 0, kHeads, c.inv_sum.data());
  for (auto _ : state) {
    c.WeightedSum();
    benchmark::DoNotOptimize(c.out.data());
    c.Next();
  }
  SetCounters(state, c.kv_bytes() / 2, 1.0 * kHeads * kHeadDim * static_cast<double>(c.rows));
}

// rows, KV heads, f16, copies.
void Shapes(benchmark::internal::Benchmark *b) {
  for (int64_t f16 : {0, 1}) {
    for (int64_t kv_heads : {1, 2}) b->Args({16384, kv_heads, f16, 1});
  }
  b->Args({4096, 1, 0, 1});
  // From DRAM: 8 caches of 32 MiB (E2B f16) to 128 MiB (E4B f32).
  for (int64_t f16 : {0, 1}) {
    for (int64_t kv_heads : {1, 2}) b->Args({16384, kv_heads, f16, 8});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Threads(1)->Threads(2);
}

BENCHMARK(BM_Whole)->Apply(Shapes);
BENCHMARK(BM_Scores)->Apply(Shapes);
BENCHMARK(BM_Softmax)->Apply(Shapes);
BENCHMARK(BM_WeightedSum)->Apply(Shapes);

}  // namespace
}  // namespace cortiq

BENCHMARK_MAIN();
