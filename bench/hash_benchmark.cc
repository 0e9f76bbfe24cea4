// Speed of the weights' integrity hashes (runtime/weight_hash.h): XXH3-64 on one core per
// variant (base/xxh3.h), and Artifact::VerifyWeights as `--verify` runs it over a mapped file.
//
//   build/bin/cortiq-hash-benchmark [--benchmark_filter=...]
//
// BM_Xxh3/<variant>/<bytes>: 1 MiB chunks (the artifact's chunk size) over a buffer of <bytes>:
// 1 MiB stays in L2 (the hash's compute speed), 256 MiB is 8x the 32 MiB L3 here, so every pass
// streams from DRAM (what verifying a large model costs). Single-threaded: bytes/s over CPU time.
// BM_VerifyMapped/<threads>: Artifact::VerifyWeights of a 256 MiB artifact (256 weights of 1 MiB)
// written to a temporary file and mapped, its pages in the page cache (a model opened again, or
// just compiled); real time, so the 2-thread figure shows the split.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/xxh3.h"
#include "benchmark/benchmark.h"
#include "runtime/artifact.h"
#include "runtime/plan.h"

namespace cortiq {
namespace xxh3_internal {
uint64_t Xxh3_64Baseline(const void* data, size_t size);
#if defined(__x86_64__)
uint64_t Xxh3_64Avx2(const void* data, size_t size);
uint64_t Xxh3_64Avx512(const void* data, size_t size);
#endif
}  // namespace xxh3_internal
namespace {

constexpr size_t kChunk = size_t{1} << 20;

std::vector<uint8_t> RandomBytes(size_t n) {
  std::vector<uint8_t> bytes(n);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::memcpy(bytes.data() + i, &x, std::min<size_t>(8, n - i));
  }
  return bytes;
}

template <uint64_t (*Hash)(const void*, size_t)>
void BM_Xxh3(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t> data = RandomBytes(bytes);
  uint64_t sink = 0;
  for (auto _ : state) {
    for (size_t at = 0; at < bytes; at += kChunk) sink += Hash(data.data() + at, kChunk);
  }
  benchmark::DoNotOptimize(sink);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void Sizes(benchmark::internal::Benchmark* b) { b->Arg(1 << 20)->Arg(256 << 20); }

BENCHMARK_TEMPLATE(BM_Xxh3, Xxh3_64)->Name("BM_Xxh3/dispatched")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Xxh3, xxh3_internal::Xxh3_64Baseline)->Name("BM_Xxh3/sse2")->Apply(Sizes);
#if defined(__x86_64__)
BENCHMARK_TEMPLATE(BM_Xxh3, xxh3_internal::Xxh3_64Avx2)->Name("BM_Xxh3/avx2")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Xxh3, xxh3_internal::Xxh3_64Avx512)->Name("BM_Xxh3/avx512")->Apply(Sizes);
#endif

// A 256 MiB artifact of 256 f32 weights [512, 512] (1 MiB each) behind a one-step plan.
std::string WriteBigArtifact() {
  const std::string path = absl::StrCat("/tmp/cortiq-hash-benchmark-", getpid(), ".cortiq");
  Plan plan;
  plan.model.vocab_size = 512;
  plan.model.hidden_size = 512;
  plan.model.num_hidden_layers = 1;
  plan.model.max_position_embeddings = 16;
  for (int i = 0; i < 256; ++i) {
    WeightEntry w;
    w.name = absl::StrCat("weight.", i);
    w.shape = {512, 512};
    plan.weights.push_back(w);
  }
  BufferEntry out;
  out.num_elements = 512;
  plan.buffers.push_back(out);
  Step embedding;
  embedding.kind = StepKind::kEmbedding;
  embedding.out = 0;
  embedding.weight = 0;
  embedding.scale = 1;
  plan.steps.push_back(embedding);
  plan.logits_buffer = 0;
  plan.arena_bytes = 4 * 512;
  const std::vector<uint8_t> bytes = RandomBytes(kChunk);
  const absl::Status status = WriteArtifact(path, plan, [&](size_t, uint8_t* dst) {
    std::memcpy(dst, bytes.data(), bytes.size());
    return absl::OkStatus();
  });
  if (!status.ok()) {
    std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(), status.ToString().c_str());
    std::abort();
  }
  return path;
}

void BM_VerifyMapped(benchmark::State& state) {
  const std::string path = WriteBigArtifact();
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path);
  if (!artifact.ok()) {
    state.SkipWithError(artifact.status().ToString().c_str());
    return;
  }
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const absl::Status status = (*artifact)->VerifyWeights(threads);
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>((*artifact)->header().weights_size));
  std::remove(path.c_str());
}
BENCHMARK(BM_VerifyMapped)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cortiq

BENCHMARK_MAIN();
