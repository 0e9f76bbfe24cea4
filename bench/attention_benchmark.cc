// Decode attention of one query over a long full-attention cache
// (ops/attention.h), one thread: the whole computation (AttentionRingHeads) and
// each of the two phases the session shares between threads when a window has
// at least a softmax block per thread (AttentionBlocks over the softmax blocks,
// AttentionMergeBlocks); BM_HeadsShare is the other split, each thread a share
// of the heads over every row (the session's for shorter windows). Shapes of the
// E-series full-attention layers (global_head_dim 512): E2B 8 query heads over 1
// KV head, E4B 8 over 2.
//
//   build/bin/cortiq-attention-benchmark [--benchmark_filter=...]
//
// Arguments: rows (context positions), KV heads, KV type (0 f32, 1 f16), copies:
// with 1 the same cache every iteration (from cache where it fits: 4096 rows,
// or a large L3), with more each iteration reads the next of that many caches,
// as a token does (the layers in between evict it): from DRAM. The `/threads:2`
// rows run the same on both cores at once (each its own caches), the read
// bandwidth two decode threads share; BM_BlocksShare's /threads:2 rows give each
// thread its share of the blocks, as the session's decode split does (a token's
// attention phase with two threads).
// Counters: bytes/s is the key and value bytes the phase reads (each KV row
// once), so it sets the phase against the machine's read bandwidth; MAC/s the
// multiply-adds (2 * heads * head_dim per row).
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
  std::vector<float> q, k, v, scores, partials, out, scratch;
  std::vector<uint16_t> k16, v16;

  explicit Case(const benchmark::State &state)
      : rows(static_cast<size_t>(state.range(0))),
        kv_heads(static_cast<size_t>(state.range(1))),
        f16(state.range(2) != 0),
        copies(static_cast<size_t>(state.range(3))),
        q(kHeads * kHeadDim),
        scores(ops::AttentionBlockScoreFloats(rows, kHeads)),
        partials(ops::AttentionPartialFloats(rows, kHeads, kHeadDim)),
        out(kHeads * kHeadDim),
        scratch(ops::AttentionScratchFloats(rows, kHeads, kHeadDim)) {
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
  // The partials of the softmax blocks [b0, b1).
  void Blocks(size_t b0, size_t b1) {
    if (f16) {
      ops::AttentionBlocksF16(q.data(), K16(), V16(), rows, 0, rows, kHeads, kv_heads, kHeadDim,
                              scale(), 0, kHeads, b0, b1, scores.data(), partials.data());
    } else {
      ops::AttentionBlocks(q.data(), K(), V(), rows, 0, rows, kHeads, kv_heads, kHeadDim,
                           scale(), 0, kHeads, b0, b1, scores.data(), partials.data());
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

void BM_Blocks(benchmark::State &state) {
  Case c(state);
  const size_t blocks = ops::AttentionRowBlockCount(c.rows);
  for (auto _ : state) {
    c.Blocks(0, blocks);
    benchmark::DoNotOptimize(c.partials.data());
    c.Next();
  }
  SetCounters(state, c.kv_bytes(), 2.0 * kHeads * kHeadDim * static_cast<double>(c.rows));
}

// Thread i of n: the blocks [i * blocks / n, (i + 1) * blocks / n), as Session::ParallelFor
// deals them. The counters are per thread (Google Benchmark adds the threads' rates).
void BM_BlocksShare(benchmark::State &state) {
  Case c(state);
  const size_t blocks = ops::AttentionRowBlockCount(c.rows);
  const size_t i = static_cast<size_t>(state.thread_index());
  const size_t n = static_cast<size_t>(state.threads());
  const size_t b0 = blocks * i / n, b1 = blocks * (i + 1) / n;
  for (auto _ : state) {
    c.Blocks(b0, b1);
    benchmark::DoNotOptimize(c.partials.data());
    c.Next();
  }
  const double rows = static_cast<double>(c.rows) * static_cast<double>(b1 - b0) /
                      static_cast<double>(blocks);
  SetCounters(state, static_cast<int64_t>(static_cast<double>(c.kv_bytes()) * (b1 - b0) / blocks),
              2.0 * kHeads * kHeadDim * rows);
}

// Thread i of n: the heads [i * 8 / n, (i + 1) * 8 / n) over every row (AttentionRingHeads), as
// the session splits one query when there are as many KV heads as threads (E4B: 2).
void BM_HeadsShare(benchmark::State &state) {
  Case c(state);
  const size_t i = static_cast<size_t>(state.thread_index());
  const size_t n = static_cast<size_t>(state.threads());
  const size_t h0 = kHeads * i / n, h1 = kHeads * (i + 1) / n;
  for (auto _ : state) {
    if (c.f16) {
      ops::AttentionRingHeadsF16(c.q.data(), c.K16(), c.V16(), c.rows, 0, c.rows, kHeads,
                                 c.kv_heads, kHeadDim, c.scale(), h0, h1, c.scratch.data(),
                                 c.out.data());
    } else {
      ops::AttentionRingHeads(c.q.data(), c.K(), c.V(), c.rows, 0, c.rows, kHeads, c.kv_heads,
                              kHeadDim, c.scale(), h0, h1, c.scratch.data(), c.out.data());
    }
    benchmark::DoNotOptimize(c.out.data());
    c.Next();
  }
  SetCounters(state, c.kv_bytes() * static_cast<int64_t>(h1 - h0) / static_cast<int64_t>(kHeads),
              2.0 * static_cast<double>(h1 - h0) * kHeadDim * static_cast<double>(c.rows));
}

void BM_Merge(benchmark::State &state) {
  Case c(state);
  c.Blocks(0, ops::AttentionRowBlockCount(c.rows));
  for (auto _ : state) {
    ops::AttentionMergeBlocks(c.partials.data(), c.rows, kHeads, kHeadDim, 0, kHeads,
                              c.out.data());
    benchmark::DoNotOptimize(c.out.data());
  }
  SetCounters(state, 0, 0);
}

// rows, KV heads, f16, copies.
void Shapes(benchmark::internal::Benchmark *b) {
  for (int64_t f16 : {0, 1}) {
    for (int64_t kv_heads : {1, 2}) b->Args({16384, kv_heads, f16, 1});
  }
  b->Args({4096, 1, 0, 1});
  // One softmax block (1 MiB of f16 keys and values): from L2, the arithmetic alone.
  b->Args({512, 1, 1, 1});
  // From DRAM: 8 caches of 32 MiB (E2B f16) to 128 MiB (E4B f32).
  for (int64_t f16 : {0, 1}) {
    for (int64_t kv_heads : {1, 2}) b->Args({16384, kv_heads, f16, 8});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Threads(1)->Threads(2);
}

BENCHMARK(BM_Whole)->Apply(Shapes);
BENCHMARK(BM_Blocks)->Apply(Shapes);
BENCHMARK(BM_BlocksShare)->Apply(Shapes);
BENCHMARK(BM_HeadsShare)->Apply(Shapes);
BENCHMARK(BM_Merge)->Apply(Shapes);

}  // namespace
}  // namespace cortiq

BENCHMARK_MAIN();
