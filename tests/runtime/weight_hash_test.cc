// VerifyWeightHashes and HashWeightChunks (runtime/weight_hash.h) on hand-made sections with
// several chunks per weight: the damaged range of each weight from its first to its last
// damaged chunk, every thread count, the cap on named weights, and plans without hashes.
#include "runtime/weight_hash.h"

#include <xxhash.h>  // Debian's shared libxxhash: the reference XXH3

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/plan.h"

namespace cortiq {
namespace {

using ::testing::EndsWith;
using ::testing::Not;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kChunk = 4096;

// `sizes.size()` weights of those byte sizes, 64-byte aligned one after the other in `section`
// (random bytes), hashed in chunks of kChunk by the reference XXH3.
Plan MakePlan(const std::vector<uint64_t>& sizes, std::vector<uint8_t>* section) {
  Plan plan;
  plan.weight_hash_chunk_bytes = kChunk;
  uint64_t end = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    WeightEntry w;
    w.name = absl::StrCat("w", i);
    w.offset = (end + 63) / 64 * 64;
    w.size_bytes = sizes[i];
    end = w.offset + w.size_bytes;
    plan.weights.push_back(w);
  }
  section->resize(end);
  uint64_t x = 88172645463325252ull;
  for (uint8_t& b : *section) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  for (WeightEntry& w : plan.weights) {
    for (uint64_t at = 0; at < w.size_bytes; at += kChunk) {
      w.xxh3_64.push_back(XXH3_64bits(section->data() + w.offset + at,
                                      std::min(kChunk, w.size_bytes - at)));
    }
  }
  return plan;
}

TEST(WeightHashTest, ChunksMatchTheReference) {
  std::vector<uint8_t> section;
  const Plan plan = MakePlan({1, 4095, 4096, 4097, 3 * 4096 + 5}, &section);
  for (const WeightEntry& w : plan.weights) {
    EXPECT_EQ(WeightHashChunks(w.size_bytes, kChunk), w.xxh3_64.size()) << w.name;
    EXPECT_EQ(HashWeightChunks(section.data() + w.offset, w.size_bytes, kChunk), w.xxh3_64)
        << w.name;
  }
  EXPECT_EQ(WeightHashChunks(0, kChunk), 0u);
  EXPECT_EQ(WeightHashChunks(uint64_t{1} << 40, kWeightHashChunkBytes), uint64_t{1} << 20);
}

TEST(WeightHashTest, IntactSectionVerifiesOnEveryThreadCount) {
  std::vector<uint8_t> section;
  const Plan plan = MakePlan({10000, 64, 5 * 4096, 1, 4096}, &section);
  for (int threads : {1, 2, 3, 8, 64}) {
    EXPECT_TRUE(VerifyWeightHashes(plan, section.data(), threads).ok()) << threads;
  }
}

TEST(WeightHashTest, NamesEachDamagedWeightAndItsRange) {
  std::vector<uint8_t> section;
  const Plan plan = MakePlan({10000, 64, 5 * 4096, 1, 4096}, &section);
  // w0: its last chunk [8192, 10000); w2: chunks 1 and 3, so [4096, 16384); w3: its only byte.
  section[plan.weights[0].offset + 9999] ^= 0x01;
  section[plan.weights[2].offset + 4096] ^= 0x80;
  section[plan.weights[2].offset + 3 * 4096 + 17] ^= 0x04;
  section[plan.weights[3].offset] ^= 0x40;
  for (int threads : {1, 2, 4}) {
    const absl::Status status = VerifyWeightHashes(plan, section.data(), threads);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ(std::string(status.message()),
              "3 of 5 weights are corrupted (their bytes do not match the XXH3-64 hashes written "
              "with them): weight 0 'w0' (bytes [8192, 10000) of its 10000), weight 2 'w2' "
              "(bytes [4096, 16384) of its 20480), weight 3 'w3' (bytes [0, 1) of its 1)");
  }
}

TEST(WeightHashTest, NamesTheFirstSixteenDamagedWeights) {
  std::vector<uint8_t> section;
  const Plan plan = MakePlan(std::vector<uint64_t>(20, 100), &section);
  for (const WeightEntry& w : plan.weights) section[w.offset + 50] ^= 0x02;
  const absl::Status status = VerifyWeightHashes(plan, section.data(), 2);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), StartsWith("20 of 20 weights are corrupted"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("weight 15 'w15'"));
  EXPECT_THAT(std::string(status.message()), Not(HasSubstr("weight 16 'w16'")));
  EXPECT_THAT(std::string(status.message()), EndsWith(" and 4 more"));
}

TEST(WeightHashTest, APlanWithoutHashesCannotBeVerified) {
  std::vector<uint8_t> section;
  Plan plan = MakePlan({100}, &section);
  plan.weight_hash_chunk_bytes = 0;
  plan.weights[0].xxh3_64.clear();
  const absl::Status status = VerifyWeightHashes(plan, section.data(), 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), StartsWith("has no weight hashes"));
}

TEST(WeightHashTest, APlanWithoutWeightsVerifies) {
  Plan plan;
  plan.weight_hash_chunk_bytes = kChunk;
  EXPECT_TRUE(VerifyWeightHashes(plan, nullptr, 4).ok());
}

}  // namespace
}  // namespace cortiq
