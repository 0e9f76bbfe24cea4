// The weights' chunk hashes (runtime/weight_hash.h) on the golden artifacts compiled by
// cortiq-compile: an intact artifact verifies; a flipped bit in any weight still opens (the
// header checksum covers header and plan only) but fails Artifact::VerifyWeights with DataLoss
// naming that weight and the byte range holding the bit; several damaged weights are all named.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/weight_hash.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<char> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// "weight I 'NAME' (bytes [A, B) of its S)" with A <= byte < B, as VerifyWeightHashes names a
// damaged weight whose first and last damaged chunk are the one holding `byte`.
std::string Named(const Plan& plan, size_t i, uint64_t byte) {
  const WeightEntry& w = plan.weights[i];
  const uint64_t chunk = plan.weight_hash_chunk_bytes;
  const uint64_t begin = byte / chunk * chunk;
  const uint64_t end = std::min(w.size_bytes, begin + chunk);
  return absl::StrCat("weight ", i, " '", w.name, "' (bytes [", begin, ", ", end, ") of its ",
                      w.size_bytes, ")");
}

class WeightIntegrityTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    source_ = GetParam();
    auto artifact = Artifact::Open(source_);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    artifact_ = std::move(*artifact);
  }
  // The weights to damage: the first, one in the middle, the last and the largest.
  std::vector<size_t> Targets() const {
    const std::vector<WeightEntry>& weights = artifact_->plan().weights;
    size_t largest = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (weights[i].size_bytes > weights[largest].size_bytes) largest = i;
    }
    return {0, weights.size() / 2, weights.size() - 1, largest};
  }

  std::string source_;
  std::unique_ptr<Artifact> artifact_;
};

std::string ArtifactCase(const std::string& model, const std::string& mode) {
  return ArtifactPath(model, mode);
}

TEST_P(WeightIntegrityTest, IntactArtifactVerifies) {
  const Plan& plan = artifact_->plan();
  EXPECT_EQ(plan.weight_hash_chunk_bytes, kWeightHashChunkBytes);
  for (const WeightEntry& w : plan.weights) {
    EXPECT_EQ(w.xxh3_64,
              HashWeightChunks(artifact_->weight_data(static_cast<int32_t>(&w - &plan.weights[0])),
                               w.size_bytes, plan.weight_hash_chunk_bytes))
        << w.name;
  }
  for (int threads : {1, 2, 3}) {
    EXPECT_TRUE(artifact_->VerifyWeights(threads).ok()) << artifact_->VerifyWeights(threads);
  }
}

TEST_P(WeightIntegrityTest, EveryFlippedBitInAWeightFileIsCaughtAndNamed) {
  const Plan& plan = artifact_->plan();
  const uint64_t weights_offset = artifact_->header().weights_offset;
  const std::vector<char> intact = ReadAll(source_);
  // Tests run as parallel processes: a name of this process's own.
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/weight_integrity_flipped_", getpid(), ".cortiq");
  std::mt19937_64 rng(15);
  std::vector<std::string> named;
  std::vector<char> all = intact;  // every flip at once
  for (size_t i : Targets()) {
    const WeightEntry& w = plan.weights[i];
    const uint64_t byte = rng() % w.size_bytes;
    const int bit = static_cast<int>(rng() % 8);
    std::vector<char> bytes = intact;
    bytes[weights_offset + w.offset + byte] ^= static_cast<char>(1 << bit);
    all[weights_offset + w.offset + byte] ^= static_cast<char>(1 << bit);
    WriteAll(path, bytes);
    auto damaged = Artifact::Open(path);
    ASSERT_TRUE(damaged.ok()) << "the checksum does not cover the weights: " << damaged.status();
    for (int threads : {1, 2}) {
      const absl::Status status = (*damaged)->VerifyWeights(threads);
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
      EXPECT_THAT(std::string(status.message()), StartsWith(path + ": 1 of "));
      EXPECT_THAT(std::string(status.message()), HasSubstr(Named(plan, i, byte)))
          << "bit " << bit << " of byte " << byte;
    }
    if (std::find(named.begin(), named.end(), Named(plan, i, byte)) == named.end()) {
      named.push_back(Named(plan, i, byte));
    }
  }
  WriteAll(path, all);
  auto damaged = Artifact::Open(path);
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  const absl::Status status = (*damaged)->VerifyWeights(2);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat(named.size(), " of ", plan.weights.size(),
                                     " weights are corrupted")));
  for (const std::string& n : named) EXPECT_THAT(std::string(status.message()), HasSubstr(n));
  std::remove(path.c_str());
}

// The defect that motivated the hashes: of 300 random bit flips in the weights most changed the
// logits silently. Each one is now caught (over a copy of the weight section in memory).
TEST_P(WeightIntegrityTest, ThreeHundredRandomFlipsAreEachCaught) {
  const Plan& plan = artifact_->plan();
  std::vector<uint8_t> section(artifact_->weight_section(),
                               artifact_->weight_section() + artifact_->header().weights_size);
  ASSERT_TRUE(VerifyWeightHashes(plan, section.data(), 1).ok());
  uint64_t hashed = 0;
  for (const WeightEntry& w : plan.weights) hashed += w.size_bytes;
  std::mt19937_64 rng(300);
  for (int trial = 0; trial < 300; ++trial) {
    // A byte of some weight, uniformly over the hashed bytes.
    uint64_t pick = rng() % hashed;
    size_t i = 0;
    while (pick >= plan.weights[i].size_bytes) pick -= plan.weights[i++].size_bytes;
    const uint8_t mask = static_cast<uint8_t>(1u << (rng() % 8));
    section[plan.weights[i].offset + pick] ^= mask;
    const absl::Status status = VerifyWeightHashes(plan, section.data(), 2);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << "trial " << trial;
    EXPECT_THAT(std::string(status.message()), HasSubstr(Named(plan, i, pick)))
        << "trial " << trial;
    section[plan.weights[i].offset + pick] ^= mask;
  }
  EXPECT_TRUE(VerifyWeightHashes(plan, section.data(), 2).ok());
}

TEST_P(WeightIntegrityTest, BytesBetweenWeightsAreNotHashed) {
  // Alignment padding is read by nothing: flipping it changes no result and is not an error.
  const Plan& plan = artifact_->plan();
  std::vector<uint8_t> section(artifact_->weight_section(),
                               artifact_->weight_section() + artifact_->header().weights_size);
  int padded = 0;
  for (size_t i = 0; i + 1 < plan.weights.size(); ++i) {
    const uint64_t end = plan.weights[i].offset + plan.weights[i].size_bytes;
    if (end < plan.weights[i + 1].offset) {
      section[end] ^= 0xff;
      ++padded;
    }
  }
  ASSERT_GT(padded, 0);
  EXPECT_TRUE(VerifyWeightHashes(plan, section.data(), 2).ok());
}

INSTANTIATE_TEST_SUITE_P(GoldenArtifacts, WeightIntegrityTest,
                         testing::Values(ArtifactCase("tiny-a-f32", "opt"),
                                         ArtifactCase("tiny-a-bf16", "no-opt"),
                                         ArtifactCase("tiny-a-f32", "gguf"),
                                         std::string(CORTIQ_ARTIFACT_DIR) +
                                             "/tiny-a-bf16.q4_0.cortiq"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(info.param.rfind('/') + 1);
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace cortiq
