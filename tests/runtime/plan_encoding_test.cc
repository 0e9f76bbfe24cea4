// Tests of runtime/plan_encoding.cc: round trips of every record and step kind, the record
// sizes that let a minor version append fields (longer records skipped, shorter ones
// defaulted, trailing sections of a newer minor), the format 2.0 reader, and every truncation
// and corruption failing cleanly with the field and byte offset.
#include "runtime/plan_encoding.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/plan_test_util.h"
#include "tests/runtime/toy_model.h"

namespace cortiq {
namespace {

using ::cortiq::testing::BuildToyModel;
using ::cortiq::testing::ToyConfig;
using ::cortiq::testing::ToyLayer;
using ::cortiq::testing::ToyModel;
using ::testing::HasSubstr;
using ::testing::StartsWith;

ToyModel Toy() {
  ToyConfig config;
  config.layers = {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 4, 0}};
  return BuildToyModel(config);
}

// Both toys: every step kind occurs in one of them.
ToyModel FusedToy() {
  ToyConfig config;
  config.format = WeightFormat::kBF16;
  config.post_norms = true;
  config.fused = true;
  config.layers = {ToyLayer{true, 4, -1}, ToyLayer{false, 0, -1}};
  return BuildToyModel(config);
}

absl::StatusOr<Plan> Parse(const std::string& bytes, uint32_t major = kPlanFormatMajor,
                           uint32_t minor = kPlanFormatMinor) {
  return ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), major, minor);
}

uint64_t Load(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return v;
}

void Store(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

// Re-encodes a format 3 plan with every record's fields replaced by edit(section, fields)
// (section: "model", "weight", "buffer", "cache", "step", "tap" or "plan"), walking the
// records by their sizes as plan_encoding.h describes them.
std::string EditRecords(const std::string& bytes,
                        const std::function<std::string(const std::string&, std::string)>& edit) {
  std::string out;
  size_t pos = 0;
  const auto record = [&](const std::string& section) {
    const size_t n = Load(bytes, pos, 4);
    const std::string fields = edit(section, bytes.substr(pos + 4, n));
    Store(&out, fields.size(), 4);
    out += fields;
    pos += 4 + n;
  };
  record("model");
  for (const char* section : {"weight", "buffer", "cache", "step", "tap"}) {
    const uint64_t count = Load(bytes, pos, 8);
    out += bytes.substr(pos, 8);
    pos += 8;
    for (uint64_t i = 0; i < count; ++i) record(section);
  }
  record("plan");
  return out + bytes.substr(pos);
}

// Gives every weight of `plan` chunk hashes (format 3.1) as the writer would for chunks of 4 KiB,
// with arbitrary values.
void AddHashes(Plan* plan) {
  plan->weight_hash_chunk_bytes = 4096;
  uint64_t value = 0x0123456789abcdefull;
  for (WeightEntry& w : plan->weights) {
    w.xxh3_64.resize((w.size_bytes + 4095) / 4096);
    for (uint64_t& h : w.xxh3_64) h = value = value * 6364136223846793005ull + 1442695040888963407ull;
  }
}

TEST(PlanEncodingTest, RoundTripsEveryRecordAndKind) {
  for (ToyModel toy : {Toy(), FusedToy()}) {
    AddHashes(&toy.plan);
    toy.plan.max_batch = 77;
    BufferEntry view = toy.plan.buffers[0];
    view.view_of = 0;
    toy.plan.buffers.push_back(view);
    const std::string bytes = SerializePlan(toy.plan);
    absl::StatusOr<Plan> back = Parse(bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectPlansEqual(toy.plan, *back);
  }
}

TEST(PlanEncodingTest, StepRecordsHoldEveryField) {
  const ToyModel toy = FusedToy();
  int with_scalar = 0;
  for (const Step& s : toy.plan.steps) with_scalar += s.scalar >= 0;
  ASSERT_EQ(with_scalar, 2);  // one per layer (the MLP residual), carried as any field
  // A step record: u32 size + kind (4) + 6 operands (4) + 5 integer and 5 double parameters (8)
  // + logits_only (1) + rows (4) = 4 + 113 bytes.
  Plan one_more = toy.plan;
  one_more.steps.push_back(toy.plan.steps.back());
  EXPECT_EQ(SerializePlan(one_more).size(), SerializePlan(toy.plan).size() + 4 + 113);
}

TEST(PlanEncodingTest, LongerRecordsOfANewerMinorAreSkippedNotOfThisMinor) {
  const ToyModel toy = Toy();
  const std::string bytes = SerializePlan(toy.plan);
  // Fields appended to every record, as a minor version may.
  const std::string longer = EditRecords(
      bytes, [](const std::string&, std::string fields) { return fields + "newfield"; });
  ASSERT_GT(longer.size(), bytes.size());
  absl::StatusOr<Plan> back = Parse(longer, 3, kPlanFormatMinor + 1);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectPlansEqual(toy.plan, *back);
  // This build's own minor writes exactly its fields: bytes after them are an error (so that a
  // file of this version re-serializes to its own bytes), as is a record that ends early.
  EXPECT_THAT(std::string(Parse(longer, 3, kPlanFormatMinor).status().message()),
              HasSubstr("bytes after its last field"));
  const std::string shorter = EditRecords(bytes, [](const std::string& record, std::string fields) {
    // Without its last field, weight_hash_chunk_bytes (u64).
    return record == "plan" ? fields.substr(0, fields.size() - 8) : fields;
  });
  EXPECT_THAT(std::string(Parse(shorter, 3, kPlanFormatMinor).status().message()),
              HasSubstr("plan.weight_hash_chunk_bytes"));
  // Something after the last record (here the 3.1 section list): skipped for a newer minor only.
  const std::vector<SectionEntry> sections = {{"tokenizer", 4096, 100}};
  const std::string appended = SerializeMetadata(toy.plan, sections) + std::string("later", 5);
  absl::StatusOr<Plan> newer = Parse(appended, 3, kPlanFormatMinor + 1);
  ASSERT_TRUE(newer.ok()) << newer.status();
  ExpectPlansEqual(toy.plan, *newer);
  EXPECT_THAT(std::string(Parse(appended, 3, kPlanFormatMinor).status().message()),
              HasSubstr("5 unexpected trailing bytes"));
}

// 3.1: the section list after the plan record round-trips; none is written when there are no
// sections, and a 3.0 file (no list) has none.
TEST(PlanEncodingTest, SectionList) {
  const ToyModel toy = Toy();
  const std::vector<SectionEntry> sections = {{"tokenizer", 4096, 123}, {"later", 8192, 0}};
  const std::string bytes = SerializeMetadata(toy.plan, sections);
  // u64 count, then per record u32 size + name (u32 length + bytes) + offset + size.
  EXPECT_EQ(bytes.size(), SerializePlan(toy.plan).size() + 8 + (4 + 4 + 9 + 16) + (4 + 4 + 5 + 16));
  absl::StatusOr<ArtifactMetadata> back = ParseMetadata(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 3, 1);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectPlansEqual(toy.plan, back->plan);
  ASSERT_EQ(back->sections.size(), 2u);
  EXPECT_EQ(back->sections[0].name, "tokenizer");
  EXPECT_EQ(back->sections[0].offset, 4096u);
  EXPECT_EQ(back->sections[0].size, 123u);
  EXPECT_EQ(back->sections[1].name, "later");
  const std::string plain = SerializePlan(toy.plan);
  for (uint32_t minor : {0u, 1u}) {
    absl::StatusOr<ArtifactMetadata> none = ParseMetadata(
        reinterpret_cast<const uint8_t*>(plain.data()), plain.size(), 3, minor);
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_TRUE(none->sections.empty());
  }
  // A 3.0 reader's view of a 3.1 file is its plan; a 3.0 file may not carry the list.
  EXPECT_THAT(std::string(Parse(bytes, 3, 0).status().message()),
              HasSubstr("unexpected trailing bytes"));
  // Every truncation of the list is an error naming it.
  for (size_t n = plain.size() + 1; n < bytes.size(); ++n) {
    const absl::Status status =
        ParseMetadata(reinterpret_cast<const uint8_t*>(bytes.data()), n, 3, 1).status();
    ASSERT_FALSE(status.ok()) << n;
    EXPECT_THAT(std::string(status.message()), HasSubstr("section")) << n;
  }
}

TEST(PlanEncodingTest, ShorterRecordsOfAnOlderMinorKeepTheDefaults) {
  const ToyModel toy = Toy();
  const std::string bytes = SerializePlan(toy.plan);
  // Step records without their last field (rows: a 3.0 record), then without logits_only, then
  // without cap too.
  int head_steps = 0;
  for (const Step& s : toy.plan.steps) head_steps += s.logits_only;
  ASSERT_EQ(head_steps, 3);
  for (size_t drop : {size_t{4}, size_t{5}, size_t{13}}) {
    const std::string shorter =
        EditRecords(bytes, [&](const std::string& section, std::string fields) {
          return section == "step" ? fields.substr(0, fields.size() - drop) : fields;
        });
    absl::StatusOr<Plan> back = Parse(shorter, 3, 0);
    ASSERT_TRUE(back.ok()) << back.status();
    for (size_t i = 0; i < back->steps.size(); ++i) {
      const Step& want = toy.plan.steps[i];
      EXPECT_EQ(back->steps[i].logits_only, drop == 4 && want.logits_only) << i;
      // Without rows, a step runs on the logits rows iff it is logits_only (as 3.0 ran it).
      EXPECT_EQ(back->steps[i].rows, back->steps[i].logits_only ? StepRows::kLogits
                                                                : StepRows::kAll)
          << i;
      EXPECT_EQ(back->steps[i].cap, drop == 13 ? 0.0 : want.cap) << i;
      EXPECT_EQ(back->steps[i].factor, want.factor) << i;
    }
  }
  // A record that ends inside a field is an error.
  const std::string cut = EditRecords(bytes, [](const std::string& section, std::string fields) {
    return section == "step" ? fields.substr(0, fields.size() - 9) : fields;
  });
  EXPECT_THAT(std::string(Parse(cut).status().message()),
              HasSubstr("step.cap at byte "));
  EXPECT_THAT(std::string(Parse(cut).status().message()),
              HasSubstr("crosses the end of its record"));
}

TEST(PlanEncodingTest, Format3_0RecordsHaveNoWeightHashes) {
  // 3.1 appended the chunk hashes to the weight record (u32 count + u64 each) and their chunk
  // size to the plan record (u64): without them (a 3.0 file) the plan is the same, hashless.
  ToyModel toy = Toy();
  AddHashes(&toy.plan);
  ASSERT_GT(toy.plan.weights[0].xxh3_64.size(), 0u);
  size_t weight = 0;
  const std::string v3_0 = EditRecords(
      SerializePlan(toy.plan), [&](const std::string& section, std::string fields) {
        if (section == "weight") {
          return fields.substr(0, fields.size() - 4 - 8 * toy.plan.weights[weight++].xxh3_64.size());
        }
        return section == "plan" ? fields.substr(0, fields.size() - 8) : fields;
      });
  absl::StatusOr<Plan> back = Parse(v3_0, 3, 0);
  ASSERT_TRUE(back.ok()) << back.status();
  Plan hashless = toy.plan;
  hashless.weight_hash_chunk_bytes = 0;
  for (WeightEntry& w : hashless.weights) w.xxh3_64.clear();
  ExpectPlansEqual(hashless, *back);
  EXPECT_TRUE(ValidatePlan(*back, toy.section_bytes).ok());
}

TEST(PlanEncodingTest, RejectsAHashCountPastTheRecord) {
  ToyModel toy = Toy();
  AddHashes(&toy.plan);
  // The first weight's hash count (the last field's first 4 bytes) made huge.
  bool first = true;
  const std::string hostile = EditRecords(
      SerializePlan(toy.plan), [&](const std::string& section, std::string fields) {
        if (section == "weight" && first) {
          first = false;
          const size_t at = fields.size() - 4 - 8 * toy.plan.weights[0].xxh3_64.size();
          fields[at + 3] = 0x40;
        }
        return fields;
      });
  EXPECT_THAT(std::string(Parse(hostile).status().message()),
              HasSubstr("metadata: weight.xxh3_64 at byte "));
}

TEST(PlanEncodingTest, ReadsFormat2) {
  for (const ToyModel& toy : {Toy(), FusedToy()}) {
    absl::StatusOr<Plan> back = Parse(SerializePlanV2ForTest(toy.plan), 2, 0);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectPlansEqual(toy.plan, *back);
  }
}

TEST(PlanEncodingTest, RejectsVersionsItDoesNotRead) {
  const std::string bytes = SerializePlan(Toy().plan);
  for (const auto& [major, minor] :
       {std::pair<uint32_t, uint32_t>{1, 0}, {2, 1}, {4, 0}}) {
    const absl::Status status = Parse(bytes, major, minor).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()),
                StartsWith(absl::StrCat("metadata: format v", major, ".", minor,
                                        " is not read by this build")));
  }
}

TEST(PlanEncodingTest, RejectsEveryTruncation) {
  const std::string bytes = SerializePlan(Toy().plan);
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<Plan> plan =
        ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()), n, kPlanFormatMajor, kPlanFormatMinor);
    ASSERT_FALSE(plan.ok()) << "prefix of " << n << " bytes";
    EXPECT_THAT(std::string(plan.status().message()), StartsWith("metadata: "));
  }
}

TEST(PlanEncodingTest, RejectsTrailingBytes) {
  std::string bytes = SerializePlan(Toy().plan);
  bytes.push_back('\0');
  absl::StatusOr<Plan> plan =
      ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  // In 3.1 bytes after the plan record are the section list: one byte is a truncated count.
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("section count"));
  plan = ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 3, 0);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("1 unexpected trailing bytes"));
}

TEST(PlanEncodingTest, RejectsLongString) {
  std::string bytes = SerializePlan(Toy().plan);
  bytes[4 + 3] = 0x7f;  // source length (after the model record's size): 0x7f000003
  absl::StatusOr<Plan> plan =
      ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("metadata: model.source at byte 4: string of"));
}

TEST(PlanEncodingTest, RejectsLongRecord) {
  std::string bytes = SerializePlan(Toy().plan);
  bytes[3] = 0x7f;  // the model record's size
  absl::StatusOr<Plan> plan =
      ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("metadata: model record size at byte 0: record of"));
}

TEST(PlanEncodingTest, RandomCorruptionNeverCrashes) {
  // Flipped bytes anywhere: parse + validate either fail cleanly or yield a
  // plan that passes ValidatePlan (e.g. a changed eps), never crash or allocate
  // without bound; in both formats.
  ToyModel toy = Toy();
  AddHashes(&toy.plan);
  for (uint32_t major : {3u, 2u}) {
    const std::string good =
        major == 3 ? SerializePlan(toy.plan) : SerializePlanV2ForTest(toy.plan);
    std::mt19937 rng(7);
    for (int trial = 0; trial < 3000; ++trial) {
      std::string bytes = good;
      const int flips = 1 + trial % 4;
      for (int f = 0; f < flips; ++f) {
        bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
      }
      absl::StatusOr<Plan> plan = ParsePlan(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            bytes.size(), major,
                                            major == 3 ? kPlanFormatMinor : 0);
      if (plan.ok()) (void)ValidatePlan(*plan, toy.section_bytes);
    }
  }
}

}  // namespace
}  // namespace cortiq
