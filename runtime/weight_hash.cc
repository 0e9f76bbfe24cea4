// The weights' chunk hashes: computing them (HashWeightChunks) and checking a plan's weights
// against them on a thread pool (VerifyWeightHashes). See weight_hash.h.
#include "runtime/weight_hash.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/xxh3.h"
#include "runtime/plan.h"
#include "runtime/thread_pool.h"

namespace cortiq {
namespace {

// At most this many damaged weights are named in one error (the count says how many there are).
constexpr size_t kMaxNamed = 16;

// One chunk to check.
struct Chunk {
  int32_t weight;
  uint64_t index;  // of the chunk inside its weight
};

struct VerifyTask {
  const Plan* plan;
  const uint8_t* section;
  const std::vector<Chunk>* chunks;
  std::vector<uint8_t>* damaged;  // [chunks], 1 where the hash differs; each written by one thread
  std::atomic<size_t> next{0};
};

void VerifyChunks(void* context, int /*thread_index*/) {
  VerifyTask& task = *static_cast<VerifyTask*>(context);
  const uint64_t chunk_bytes = task.plan->weight_hash_chunk_bytes;
  for (size_t i = task.next.fetch_add(1, std::memory_order_relaxed); i < task.chunks->size();
       i = task.next.fetch_add(1, std::memory_order_relaxed)) {
    const Chunk& c = (*task.chunks)[i];
    const WeightEntry& w = task.plan->weights[static_cast<size_t>(c.weight)];
    const uint64_t begin = c.index * chunk_bytes;
    const uint64_t size = std::min(chunk_bytes, w.size_bytes - begin);
    const uint64_t hash = Xxh3_64(task.section + w.offset + begin, static_cast<size_t>(size));
    (*task.damaged)[i] = hash != w.xxh3_64[c.index] ? 1 : 0;
  }
}

}  // namespace

std::vector<uint64_t> HashWeightChunks(const uint8_t* data, uint64_t size_bytes,
                                       uint64_t chunk_bytes) {
  std::vector<uint64_t> hashes(WeightHashChunks(size_bytes, chunk_bytes));
  for (uint64_t k = 0; k < hashes.size(); ++k) {
    const uint64_t begin = k * chunk_bytes;
    hashes[k] =
        Xxh3_64(data + begin, static_cast<size_t>(std::min(chunk_bytes, size_bytes - begin)));
  }
  return hashes;
}

absl::Status VerifyWeightHashes(const Plan& plan, const uint8_t* weight_section, int threads) {
  if (plan.weight_hash_chunk_bytes == 0) {
    return absl::FailedPreconditionError(
        "has no weight hashes (written before artifact format 3.1): recompile the model with "
        "this cortiq to verify its weights");
  }
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    for (uint64_t k = 0; k < plan.weights[i].xxh3_64.size(); ++k) {
      chunks.push_back(Chunk{static_cast<int32_t>(i), k});
    }
  }
  std::vector<uint8_t> damaged(chunks.size(), 0);
  VerifyTask task;
  task.plan = &plan;
  task.section = weight_section;
  task.chunks = &chunks;
  task.damaged = &damaged;
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(std::max<size_t>(
                                                       1, chunks.size()))));
  ThreadPool pool(n);
  pool.Run(VerifyChunks, &task);

  // Per damaged weight: its first and last damaged chunk (chunks are in weight order).
  std::string named;
  size_t bad_weights = 0;
  for (size_t i = 0; i < chunks.size();) {
    if (damaged[i] == 0) {
      ++i;
      continue;
    }
    const int32_t weight = chunks[i].weight;
    size_t last = i;
    size_t j = i;
    for (; j < chunks.size() && chunks[j].weight == weight; ++j) {
      if (damaged[j] != 0) last = j;
    }
    const WeightEntry& w = plan.weights[static_cast<size_t>(weight)];
    if (bad_weights < kMaxNamed) {
      const uint64_t begin = chunks[i].index * plan.weight_hash_chunk_bytes;
      const uint64_t end =
          std::min(w.size_bytes, (chunks[last].index + 1) * plan.weight_hash_chunk_bytes);
      absl::StrAppend(&named, bad_weights == 0 ? "" : ", ", "weight ", weight, " '", w.name,
                      "' (bytes [", begin, ", ", end, ") of its ", w.size_bytes, ")");
    }
    ++bad_weights;
    i = j;
  }
  if (bad_weights == 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      bad_weights, " of ", plan.weights.size(), " weights ", bad_weights == 1 ? "is" : "are",
      " corrupted (their bytes do not match the XXH3-64 hashes written with them): ", named,
      bad_weights > kMaxNamed ? absl::StrCat(" and ", bad_weights - kMaxNamed, " more") : ""));
}

}  // namespace cortiq
