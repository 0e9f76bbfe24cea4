// Tests of runtime/plan.cc: names and sizes, and ValidatePlan accepting the toy
// plans (unfused and fused) and rejecting each kind of broken plan with an
// error naming the entry at fault.
#include "runtime/plan.h"

#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/runtime/toy_model.h"

namespace cortiq {
namespace {

using ::cortiq::testing::BuildToyModel;
using ::cortiq::testing::FindWeight;
using ::cortiq::testing::ToyConfig;
using ::cortiq::testing::ToyLayer;
using ::cortiq::testing::ToyModel;
using ::testing::HasSubstr;

TEST(PlanTest, FormatAndKindNames) {
  EXPECT_EQ(WeightFormatElementSize(WeightFormat::kF32), 4u);
  EXPECT_EQ(WeightFormatElementSize(WeightFormat::kBF16), 2u);
  EXPECT_EQ(WeightFormatElementSize(static_cast<WeightFormat>(19)), 0u);
  EXPECT_EQ(WeightFormatElementSize(WeightFormat::kF16), 2u);
  EXPECT_EQ(WeightFormatElementSize(WeightFormat::kQ4_K), 0u);
  EXPECT_STREQ(WeightFormatName(WeightFormat::kF32), "f32");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kBF16), "bf16");
  EXPECT_STREQ(WeightFormatName(static_cast<WeightFormat>(19)), "unknown");
  // llama.cpp's type names in lower case, and ggml's block geometry (ggml-common.h).
  EXPECT_STREQ(WeightFormatName(WeightFormat::kF16), "f16");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kQ4_K), "q4_k");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kIQ4_XS), "iq4_xs");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kQ4_0x16), "q4_0x16");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kQ8_0x16), "q8_0x16");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kQ4_Kx16), "q4_kx16");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kQ5_Kx16), "q5_kx16");
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ8_0x16, {3, 1024}), 3u * 2 * 544);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ8_0x16, {3, 544}), 0u);  // not whole groups
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ4_0x16, {3, 1024}), 3u * 2 * 288);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ4_0x16, {3, 544}), 0u);  // not whole groups
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ4_Kx16, {3, 1536}), 3u * 3 * 296);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ4_Kx16, {3, 768}), 0u);  // not whole groups
  EXPECT_EQ(WeightFormatFromName("q6_k"), WeightFormat::kQ6_K);
  EXPECT_EQ(WeightFormatFromName("Q6_K"), std::nullopt);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ4_K, {3, 512}), 3u * 2 * 144);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ4_K, {3, 288}), 0u);  // not whole super-blocks
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ5_1, {2, 64}), 2u * 2 * 24);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kF16, {3, 5}), 30u);
  const std::pair<WeightFormat, std::pair<size_t, size_t>> blocks[] = {
      {WeightFormat::kQ4_1, {32, 20}},    {WeightFormat::kQ5_0, {32, 22}},
      {WeightFormat::kQ5_1, {32, 24}},    {WeightFormat::kQ2_K, {256, 84}},
      {WeightFormat::kQ3_K, {256, 110}},  {WeightFormat::kQ4_K, {256, 144}},
      {WeightFormat::kQ5_K, {256, 176}},  {WeightFormat::kQ6_K, {256, 210}},
      {WeightFormat::kIQ4_NL, {32, 18}},  {WeightFormat::kIQ4_XS, {256, 136}},
      {WeightFormat::kQ4_0x16, {512, 288}},  // 16 Q4_0 blocks regrouped
      {WeightFormat::kQ8_0x16, {512, 544}},  // 16 Q8_0 blocks regrouped
      {WeightFormat::kQ4_Kx16, {512, 296}},  // 2 Q4_K super-blocks, scales unpacked
      {WeightFormat::kQ5_Kx16, {512, 360}},  // 2 Q5_K super-blocks, scales unpacked
  };
  for (const auto& [format, geometry] : blocks) {
    EXPECT_TRUE(IsBlockFormat(format)) << WeightFormatName(format);
    EXPECT_EQ(WeightFormatBlockElements(format), geometry.first) << WeightFormatName(format);
    EXPECT_EQ(WeightFormatBlockBytes(format), geometry.second) << WeightFormatName(format);
  }
  EXPECT_FALSE(IsBlockFormat(WeightFormat::kF16));
  EXPECT_STREQ(StepKindName(StepKind::kEmbedding), "embedding");
  EXPECT_STREQ(StepKindName(StepKind::kRmsNorm), "rms_norm");
  EXPECT_STREQ(StepKindName(StepKind::kKvAppend), "kv_append");
  EXPECT_STREQ(StepKindName(StepKind::kLayerScalar), "layer_scalar");
  EXPECT_STREQ(StepKindName(StepKind::kLmHead), "lm_head");
  EXPECT_STREQ(StepKindName(StepKind::kGeluTanhMul), "gelu_tanh_mul");
  EXPECT_STREQ(StepKindName(StepKind::kResidualRmsNorm), "residual_rms_norm");
  EXPECT_STREQ(StepKindName(static_cast<StepKind>(0)), "unknown");
  WeightEntry w;
  w.shape = {3, 5, 7};
  EXPECT_EQ(w.num_elements(), 105);
  w.shape = {};
  EXPECT_EQ(w.num_elements(), 1);
}

TEST(PlanTest, BlockFormatSizes) {
  // llama.cpp blocks: 32 weights in 34 (Q8_0) or 18 (Q4_0) bytes.
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ8_0, {3, 64}), 3u * 2 * 34);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ4_0, {3, 64}), 3u * 2 * 18);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kQ8_0, {3, 48}), 0u);  // rows not whole blocks
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kF32, {3, 5}), 60u);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kBF16, {3, 5}), 30u);
  EXPECT_EQ(WeightFormatBytes(WeightFormat::kF32, {0, 5}), 0u);
  EXPECT_EQ(WeightFormatBytes(static_cast<WeightFormat>(9), {4}), 0u);
  EXPECT_TRUE(IsBlockFormat(WeightFormat::kQ4_0));
  EXPECT_FALSE(IsBlockFormat(WeightFormat::kBF16));
  EXPECT_STREQ(WeightFormatName(WeightFormat::kQ8_0), "q8_0");
  EXPECT_STREQ(WeightFormatName(WeightFormat::kQ4_0), "q4_0");
}

TEST(PlanTest, AcceptsToyPlans) {
  for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kBF16}) {
    for (int variant = 0; variant < 4; ++variant) {
      ToyConfig config;
      config.format = format;
      config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1},
                       ToyLayer{true, 3, 0}, ToyLayer{false, 0, 1}};
      config.post_norms = variant & 1;
      config.fused = variant & 2;
      const ToyModel toy = BuildToyModel(config);
      EXPECT_TRUE(ValidatePlan(toy.plan, toy.section_bytes).ok())
          << ValidatePlan(toy.plan, toy.section_bytes) << " variant "
          << variant;
    }
  }
}

// The fused steps accept every exact aliasing of the result with an operand:
// out == in0 (in place on the residual / gate), out == in1, and in0 == in1 ==
// out.
TEST(PlanTest, AcceptsWeightHashesOfEveryChunkSize) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}};
  ToyModel toy = BuildToyModel(config);
  for (uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20, uint64_t{1} << 30}) {
    toy.plan.weight_hash_chunk_bytes = chunk;
    for (WeightEntry& w : toy.plan.weights) w.xxh3_64.assign((w.size_bytes + chunk - 1) / chunk, 7);
    EXPECT_TRUE(ValidatePlan(toy.plan, toy.section_bytes).ok())
        << ValidatePlan(toy.plan, toy.section_bytes);
  }
}

TEST(PlanTest, AcceptsFusedStepsInPlace) {
  ToyConfig config;
  config.post_norms = true;
  config.fused = true;
  const ToyModel toy = BuildToyModel(config);
  for (StepKind kind : {StepKind::kGeluTanhMul, StepKind::kResidualRmsNorm}) {
    for (int alias = 0; alias < 3; ++alias) {
      Plan plan = toy.plan;
      for (Step& s : plan.steps) {
        if (s.kind != kind) continue;
        if (alias == 0) s.out = s.in0;
        if (alias == 1) s.out = s.in1;
        if (alias == 2) s.in0 = s.in1 = s.out;
      }
      EXPECT_TRUE(ValidatePlan(plan, toy.section_bytes).ok())
          << StepKindName(kind) << " alias " << alias << ": "
          << ValidatePlan(plan, toy.section_bytes);
    }
  }
}

// Every step after the last kv_append runs on the logits rows only (nothing on all rows reads it):
// what mark-rows gives for a plan whose last layers share caches.
TEST(PlanTest, AcceptsLogitsRowsAfterTheLastKvAppend) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}, ToyLayer{true, 3, 0},
                   ToyLayer{false, 0, 1}};
  ToyModel toy = BuildToyModel(config);
  size_t last_append = 0;
  for (size_t i = 0; i < toy.plan.steps.size(); ++i) {
    if (toy.plan.steps[i].kind == StepKind::kKvAppend) last_append = i;
  }
  for (size_t i = last_append + 1; i < toy.plan.steps.size(); ++i) {
    toy.plan.steps[i].rows = StepRows::kLogits;
  }
  EXPECT_TRUE(ValidatePlan(toy.plan, toy.section_bytes).ok())
      << ValidatePlan(toy.plan, toy.section_bytes);
  // One step earlier is one too many: the last kv_append reads it.
  toy.plan.steps[last_append - 1].rows = StepRows::kLogits;
  EXPECT_FALSE(ValidatePlan(toy.plan, toy.section_bytes).ok());
}

// Index of the first step of `kind` in `plan`.
size_t FirstStep(const Plan& plan, StepKind kind) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].kind == kind) return i;
  }
  ADD_FAILURE() << "no step of kind " << StepKindName(kind);
  return 0;
}

// Index of the last step of `kind` in `plan`.
size_t LastStep(const Plan& plan, StepKind kind) {
  for (size_t i = plan.steps.size(); i-- > 0;) {
    if (plan.steps[i].kind == kind) return i;
  }
  ADD_FAILURE() << "no step of kind " << StepKindName(kind);
  return 0;
}

// A new buffer entry of in's size starting one element after it (a partial
// overlap); returns its index.
int32_t ShiftedBuffer(Plan& p, int32_t in) {
  BufferEntry shifted = p.buffers[in];
  shifted.offset += 4;
  p.buffers.push_back(shifted);
  return static_cast<int32_t>(p.buffers.size() - 1);
}

// A buffer index of `n` elements in `plan` (adds one at the end of the arena if
// none).
int32_t BufferOfSize(Plan& plan, uint64_t n) {
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].num_elements == n) return static_cast<int32_t>(i);
  }
  plan.buffers.push_back(BufferEntry{plan.arena_bytes, n});
  plan.arena_bytes += 4 * n;
  return static_cast<int32_t>(plan.buffers.size() - 1);
}

struct BadPlanCase {
  const char* name;
  std::function<void(Plan&, uint64_t&)>
      mutate;            // plan and weight section bytes
  const char* expected;  // substring of the error
};

void PrintTo(const BadPlanCase& c, std::ostream* os) { *os << c.name; }

class BadPlanTest : public ::testing::TestWithParam<BadPlanCase> {};

TEST_P(BadPlanTest, IsRejected) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}};
  ToyModel toy = BuildToyModel(config);
  uint64_t section = toy.section_bytes;
  ASSERT_TRUE(ValidatePlan(toy.plan, section).ok());
  GetParam().mutate(toy.plan, section);
  const absl::Status status = ValidatePlan(toy.plan, section);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().expected));
}

const BadPlanCase kBadPlans[] = {
    {"BlockFormatGain",
     [](Plan& p, uint64_t&) {
       for (const Step& s : p.steps) {
         if (s.kind == StepKind::kRmsNorm && s.weight >= 0) {
           WeightEntry& w = p.weights[s.weight];
           w.format = WeightFormat::kQ8_0;
           w.shape = {1, w.shape[0]};
           return;
         }
       }
     },
     "q8_0"},
    {"BlockFormatSizeMismatch",
     [](Plan& p, uint64_t&) {
       for (const Step& s : p.steps) {
         if (s.kind == StepKind::kLinear) {
           p.weights[s.weight].format = WeightFormat::kQ4_0;
           return;
         }
       }
     },
     "q4_0"},
    // Weight hashes (format 3.1, runtime/weight_hash.h).
    {"HashesWithoutChunkSize",
     [](Plan& p, uint64_t&) { p.weights[0].xxh3_64 = {1}; },
     "weight 0 'embed': 1 chunk hashes, expected 0 (weight_hash_chunk_bytes is 0)"},
    {"ChunkSizeNotAPowerOfTwo",
     [](Plan& p, uint64_t&) { p.weight_hash_chunk_bytes = 6000; },
     "weight_hash_chunk_bytes = 6000 is not a power of two in [4096, 1073741824]"},
    {"ChunkSizeTooSmall",
     [](Plan& p, uint64_t&) { p.weight_hash_chunk_bytes = 2048; },
     "weight_hash_chunk_bytes = 2048"},
    {"ChunkSizeWithoutHashes",
     [](Plan& p, uint64_t&) { p.weight_hash_chunk_bytes = 4096; },
     "weight 0 'embed': 0 chunk hashes, expected "},
    {"OneHashTooMany",
     [](Plan& p, uint64_t&) {
       p.weight_hash_chunk_bytes = 4096;
       for (WeightEntry& w : p.weights) w.xxh3_64.resize((w.size_bytes + 4095) / 4096);
       p.weights.back().xxh3_64.push_back(0);
     },
     " chunk hashes, expected "},
    {"VocabZero", [](Plan& p, uint64_t&) { p.model.vocab_size = 0; },
     "vocab_size = 0"},
    {"MaxPositionsNegative",
     [](Plan& p, uint64_t&) { p.model.max_position_embeddings = -1; },
     "max_position_embeddings = -1"},
    {"BufferMisaligned", [](Plan& p, uint64_t&) { p.buffers[3].offset += 2; },
     "buffer 3: offset"},
    {"BufferPastArena",
     [](Plan& p, uint64_t&) { p.buffers[2].num_elements = p.arena_bytes; },
     "buffer 2: "},
    {"BufferOffsetOverflow",
     [](Plan& p, uint64_t&) {
       p.buffers[1].offset = ~uint64_t{0} - 3;
       p.buffers[1].num_elements = 8;
     },
     "exceed the arena"},
    {"ArenaWraps",  // (arena_bytes + 3) / 4 floats wrapped to 0 in Session
     [](Plan& p, uint64_t&) { p.arena_bytes = ~uint64_t{0}; },
     "arena_bytes = 18446744073709551615 exceeds the limit of 1099511627776 bytes"},
    {"ArenaPastLimit",
     [](Plan& p, uint64_t&) { p.arena_bytes = kMaxArenaBytes + 64; },
     "arena_bytes = 1099511627840 exceeds the limit"},
    {"BufferHugeCount",
     [](Plan& p, uint64_t&) { p.buffers[1].num_elements = uint64_t{1} << 62; },
     "exceed the arena"},
    {"OperandOutOfRange", [](Plan& p, uint64_t&) { p.steps[2].in0 = 9999; },
     "step 2 (linear): in0 (input) buffer 9999 out of range"},
    {"ResultNegative", [](Plan& p, uint64_t&) { p.steps[2].out = -7; },
     "out (result) buffer -7 out of range"},
    {"UnusedOperandSet", [](Plan& p, uint64_t&) { p.steps[2].in1 = 0; },
     "step 2 (linear): does not use in1 (must be -1)"},
    {"WeightIndexOutOfRange",
     [](Plan& p, uint64_t&) { p.steps[2].weight = 12345; },
     "weight 12345 out of range"},
    {"LinearShapeMismatch",
     [](Plan& p, uint64_t&) {
       // The q projection reads the embedding table: [1101, 64], not [64, 64].
       p.steps[2].weight = FindWeight(p, "embed");
     },
     "step 2 (linear): weight 'embed' has shape [1101, 64], expected [64, 64]"},
    {"LmHeadShapeMismatch",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kLmHead)].weight = FindWeight(p, "l0.q");
     },
     "(lm_head): weight 'l0.q'"},
    {"EmbeddingColsMismatch",
     [](Plan& p, uint64_t&) { p.steps[0].out = BufferOfSize(p, 96); },
     "step 0 (embedding): weight 'embed' has shape [1101, 64], expected [rows, "
     "96]"},
    {"EmbeddingOneDimensional",
     [](Plan& p, uint64_t&) {
       p.steps[0].weight = FindWeight(p, "l0.in_norm");
     },
     "step 0 (embedding)"},
    {"RmsNormGroupNotDividing",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kRmsNorm)].group_size = 7;
     },
     "group_size = 7 must be positive and divide in0's 64 elements"},
    {"RmsNormGroupZero",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kRmsNorm)].group_size = 0;
     },
     "group_size = 0"},
    {"RmsNormGainSize",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kRmsNorm)].weight =
           FindWeight(p, "l0.q_norm");
     },
     "gain 'l0.q_norm' has 16 elements, expected the group size 64"},
    {"RmsNormSizeMismatch",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kRmsNorm)].out = BufferOfSize(p, 32);
     },
     "in0 has 64 elements but out has 32"},
    {"RmsNormNegativeEps",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kRmsNorm)].eps = -1;
     },
     "eps = -1 must be finite and >= 0"},
    {"RopeOddHeadDim",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kRope)].head_dim = 15; },
     "head_dim = 15 must be positive, even and divide in0's 64 elements"},
    {"RopeHeadDimNotDividing",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kRope)].head_dim = 48; },
     "head_dim = 48"},
    {"RopeNoPairs",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kRope)].rotated_pairs = 0; },
     "rotated_pairs = 0 must be in [1, 8]"},
    {"RopeTooManyPairs",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kRope)].rotated_pairs = 9; },
     "rotated_pairs = 9"},
    {"RopeThetaZero",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kRope)].theta = 0; },
     "theta = 0 must be finite and > 0"},
    {"RopeWeightSet",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kRope)].weight = 0;
     },
     "does not use weight (must be -1)"},
    {"KvAppendWidth",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kKvAppend)].in1 = BufferOfSize(p, 64);
     },
     "key/value have 32/64 elements, cache 0 rows have 32"},
    {"KvAppendWithOut",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kKvAppend)].out = 0;
     },
     "(kv_append): does not use out (must be -1)"},
    {"KvAppendNoCache",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kKvAppend)].cache = 5;
     },
     "cache 5 out of range [0, 2)"},
    {"KvAppendLogitsOnly",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kKvAppend)].logits_only = true;
     },
     "cannot be logits_only"},
    {"KvAppendLogitsRows",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kKvAppend)].rows = StepRows::kLogits;
     },
     "(kv_append): a kv_append step cannot be logits_only or run on the logits rows only"},
    {"UnknownRows",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kAdd)].rows = StepRows{7}; },
     "(add): unknown rows 7"},
    {"LogitsOnlyOnAllRows",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kLmHead)].rows = StepRows::kAll; },
     "(lm_head): a logits_only step must have rows = logits"},
    {"AllRowsReadLogitsRows",
     [](Plan& p, uint64_t&) {
       // Layer 0's attention on the logits rows: its output projection (all rows, as it feeds
       // layer 1's KV) would read rows nobody computed.
       p.steps[FirstStep(p, StepKind::kAttention)].rows = StepRows::kLogits;
     },
     "runs on all rows but its in0 buffer"},
    {"AllRowsReadInPlaceLogitsRows",
     [](Plan& p, uint64_t&) {
       // The last kv_append's key written last by a logits-rows step (through the same bytes).
       const size_t append = LastStep(p, StepKind::kKvAppend);
       Step copy = p.steps[append - 1];
       copy.rows = StepRows::kLogits;
       copy.kind = StepKind::kScale;
       copy.in0 = copy.out = p.steps[append].in0;
       copy.in1 = copy.weight = copy.scalar = copy.cache = -1;
       copy.group_size = copy.head_dim = copy.rotated_pairs = copy.num_heads = copy.window = 0;
       copy.eps = copy.theta = copy.scale = copy.cap = 0;
       copy.factor = 2;
       p.steps.insert(p.steps.begin() + static_cast<std::ptrdiff_t>(append), copy);
     },
     "which runs on the logits rows only"},
    {"AttentionWindowMismatchSliding",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kAttention)].window = 4;
     },
     "window = 4, expected 3 (cache 0 is sliding)"},
    {"AttentionWindowOnFullCache",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[FirstStep(p, StepKind::kAttention)];
       s.cache = 1;
       s.window = 3;
     },
     "window = 3, expected 0 (cache 1 is full)"},
    {"AttentionHeadsNotMultipleOfKvHeads",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kAttention)].num_heads = 3;
     },
     "num_heads = 3 must be a positive multiple of cache 0's num_kv_heads 2"},
    {"AttentionSizeMismatch",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kAttention)].num_heads = 2;
     },
     "query/out have 64 elements, expected num_heads 2 * head_dim 16"},
    {"AttentionHugeHeads",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kAttention)].num_heads = int64_t{1} << 62;
     },
     "expected num_heads"},
    {"AttentionOutAliasesQuery",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[FirstStep(p, StepKind::kAttention)];
       s.out = s.in0;
     },
     "overlaps in0 buffer"},
    {"AttentionBeforeAppend",
     [](Plan& p, uint64_t&) {
       // Layer 0's attention reads layer 1's cache, which is appended later.
       Step& s = p.steps[FirstStep(p, StepKind::kAttention)];
       s.cache = 1;
       s.window = 0;
     },
     "reads cache 1 before any kv_append step writes it"},
    {"LinearOutAliasesInput",
     [](Plan& p, uint64_t&) {
       p.buffers.push_back(p.buffers[p.steps[2].in0]);
       p.steps[2].out = static_cast<int32_t>(p.buffers.size() - 1);
     },
     "overlaps in0 buffer"},
    {"AddSizeMismatch",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kAdd)].in1 = BufferOfSize(p, 96);
     },
     "in0/in1/out have 64/96/64 elements"},
    {"AddPartialOverlap",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[FirstStep(p, StepKind::kAdd)];
       BufferEntry shifted = p.buffers[s.in0];
       shifted.offset += 4;
       p.buffers.push_back(shifted);
       s.out = static_cast<int32_t>(p.buffers.size() - 1);
     },
     "partially overlaps in0"},
    {"MulWithCache",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kMul)].cache = 0;
     },
     "(mul): does not use cache (must be -1)"},
    {"LayerScalarNotScalar",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kLayerScalar)].weight =
           FindWeight(p, "l0.in_norm");
     },
     "weight 'l0.in_norm' has 64 elements, expected 1"},
    {"SoftcapZero",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kSoftcap)].cap = 0;
     },
     "cap = 0 must be finite and > 0"},
    {"ScaleNotFinite",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kScale)].factor =
           std::numeric_limits<double>::infinity();
     },
     "factor = inf is not finite"},
    {"ScalarOnLinear", [](Plan& p, uint64_t&) { p.steps[2].scalar = 0; },
     "step 2 (linear): does not use scalar (must be -1)"},
    {"ScalarOnRmsNorm",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kRmsNorm)].scalar =
           FindWeight(p, "l0.scalar");
     },
     "(rms_norm): does not use scalar (must be -1)"},
    {"ScalarOnLayerScalar",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[FirstStep(p, StepKind::kLayerScalar)];
       s.scalar = s.weight;
     },
     "(layer_scalar): does not use scalar (must be -1)"},
    // Parameters a kind does not carry are 0 (the artifact stores only the kind's own).
    {"HeadDimOnLinear", [](Plan& p, uint64_t&) { p.steps[2].head_dim = 16; },
     "step 2 (linear): does not use head_dim (must be 0), got 16"},
    {"EpsOnRope",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kRope)].eps = 1e-6; },
     "(rope): does not use eps (must be 0)"},
    {"ThetaOnAttention",
     [](Plan& p, uint64_t&) { p.steps[FirstStep(p, StepKind::kAttention)].theta = 1e4; },
     "(attention): does not use theta (must be 0)"},
    {"LinearWithCache", [](Plan& p, uint64_t&) { p.steps[2].cache = 0; },
     "step 2 (linear): does not use cache (must be -1)"},
    {"UnknownKind",
     [](Plan& p, uint64_t&) { p.steps[4].kind = static_cast<StepKind>(99); },
     "step 4: unknown kind 99"},
    {"WeightUnknownFormat",
     [](Plan& p, uint64_t&) {
       p.weights[1].format = static_cast<WeightFormat>(19);
     },
     "weight 1 'l0.in_norm': unknown format 19"},
    {"WeightSizeBytes",
     [](Plan& p, uint64_t&) { p.weights[2].size_bytes -= 4; },
     "weight 2 'l0.q': size_bytes"},
    {"WeightMisaligned", [](Plan& p, uint64_t&) { p.weights[2].offset += 32; },
     "weight 2 'l0.q': offset 282144 is not a multiple of 64"},
    {"WeightPastSection", [](Plan& p, uint64_t& section) { section -= 64; },
     "exceed the weight section"},
    {"WeightOffsetOverflow",
     [](Plan& p, uint64_t&) { p.weights[3].offset = ~uint64_t{0} - 63; },
     "exceed the weight section"},
    {"WeightZeroDimension",
     [](Plan& p, uint64_t&) { p.weights[3].shape = {0}; },
     "dimension 0 is not positive"},
    {"WeightHugeShape",
     [](Plan& p, uint64_t&) {
       p.weights[3].shape = {int64_t{1} << 40, int64_t{1} << 40};
     },
     "too many elements"},
    {"CacheNoHeads", [](Plan& p, uint64_t&) { p.caches[0].num_kv_heads = 0; },
     "cache 0: num_kv_heads 0"},
    {"SlidingCacheNoWindow", [](Plan& p, uint64_t&) { p.caches[0].window = 0; },
     "cache 0: sliding cache has window 0 (must be > 0)"},
    {"FullCacheWithWindow", [](Plan& p, uint64_t&) { p.caches[1].window = 5; },
     "cache 1: full cache has window 5 (must be 0)"},
    {"CacheLayerOutOfRange", [](Plan& p, uint64_t&) { p.caches[1].layer = 2; },
     "cache 1: layer 2 out of range [0, 2)"},
    {"LogitsBufferMissing", [](Plan& p, uint64_t&) { p.logits_buffer = -1; },
     "logits_buffer -1 out of range"},
    {"LogitsBufferWrongSize", [](Plan& p, uint64_t&) { p.logits_buffer = 0; },
     "logits_buffer 0 has 64 elements, expected vocab_size 1101"},
    {"TapOutOfRange", [](Plan& p, uint64_t&) { p.taps[1].buffer = 100000; },
     "tap 1 'layer.1': buffer 100000 out of range"},
    {"TapPathTraversal",
     [](Plan& p, uint64_t&) { p.taps[0].name = "../../etc/passwd"; },
     "tap 0: name '../../etc/passwd'"},
    {"TapSlash", [](Plan& p, uint64_t&) { p.taps[0].name = "a/b"; },
     "tap 0: name"},
    {"TapEmpty", [](Plan& p, uint64_t&) { p.taps[0].name = ""; },
     "tap 0: name"},
    {"TapDuplicate",
     [](Plan& p, uint64_t&) { p.taps[1].name = p.taps[0].name; },
     "tap 1: duplicate name 'layer.0'"},
    // The batched (prefill) form.
    {"MaxBatchZero", [](Plan& p, uint64_t&) { p.max_batch = 0; }, "max_batch = 0 must be in"},
    {"MaxBatchTooLarge", [](Plan& p, uint64_t&) { p.max_batch = kMaxBatch + 1; },
     "max_batch = 4097 must be in"},
    {"BatchedArenaTooLarge",
     [](Plan& p, uint64_t&) { p.max_batch = kMaxArenaBytes / p.arena_bytes + 1; },
     "max_batch * arena_bytes"},
    {"ViewOfLaterBuffer",
     [](Plan& p, uint64_t&) {
       p.buffers.push_back(p.buffers[0]);
       p.buffers[0].view_of = static_cast<int32_t>(p.buffers.size() - 1);
     },
     "buffer 0: view_of"},
    {"ViewOfAView",
     [](Plan& p, uint64_t&) {
       BufferEntry root = p.buffers[0];
       p.buffers.push_back(root);
       BufferEntry view = root;
       view.view_of = 0;
       p.buffers.push_back(view);
       BufferEntry view_of_view = root;
       view_of_view.view_of = static_cast<int32_t>(p.buffers.size() - 1);
       p.buffers.push_back(view_of_view);
     },
     "is not an earlier root buffer"},
    {"ViewOutsideItsRoot",
     [](Plan& p, uint64_t&) {
       BufferEntry view = p.buffers[0];
       view.view_of = 0;
       view.offset += 4;  // one float past the root's end
       p.buffers.push_back(view);
     },
     "are not inside those of buffer 0"},
    {"InPlaceOnAViewOfAnotherRoot",
     [](Plan& p, uint64_t&) {
       // An element-wise step writing over its operand's bytes through a view of another root:
       // the same bytes per token, different rows once batched.
       for (Step& s : p.steps) {
         if (s.kind != StepKind::kRmsNorm || s.out == s.in0) continue;
         BufferEntry alias = p.buffers[s.in0];
         p.buffers.push_back(p.buffers[s.in0]);  // a root holding the same bytes
         alias.view_of = static_cast<int32_t>(p.buffers.size() - 1);
         p.buffers.push_back(alias);
         s.out = static_cast<int32_t>(p.buffers.size() - 1);
         return;
       }
     },
     "overlaps"},
};

INSTANTIATE_TEST_SUITE_P(All, BadPlanTest, ::testing::ValuesIn(kBadPlans),
                         [](const ::testing::TestParamInfo<BadPlanCase>& info) {
                           return std::string(info.param.name);
                         });

// The same over the fused toy (post norms; each layer has a gelu_tanh_mul of
// [96] gate/up, a residual_rms_norm after attention (out == in1, no scalar)
// and one after the MLP (fresh out, scalar = the layer scalar)).
class BadFusedPlanTest : public ::testing::TestWithParam<BadPlanCase> {};

TEST_P(BadFusedPlanTest, IsRejected) {
  ToyConfig config;
  config.layers = {ToyLayer{true, 3, -1}, ToyLayer{false, 0, -1}};
  config.post_norms = true;
  config.fused = true;
  ToyModel toy = BuildToyModel(config);
  uint64_t section = toy.section_bytes;
  ASSERT_TRUE(ValidatePlan(toy.plan, section).ok())
      << ValidatePlan(toy.plan, section);
  GetParam().mutate(toy.plan, section);
  const absl::Status status = ValidatePlan(toy.plan, section);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(GetParam().expected));
}

const BadPlanCase kBadFusedPlans[] = {
    {"GeluTanhMulSizeMismatch",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kGeluTanhMul)].in1 = BufferOfSize(p, 64);
     },
     "(gelu_tanh_mul): in0/in1/out have 96/64/96 elements"},
    {"GeluTanhMulWithWeight",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kGeluTanhMul)].weight = 0;
     },
     "(gelu_tanh_mul): does not use weight (must be -1)"},
    {"GeluTanhMulWithWeight2",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kGeluTanhMul)].scalar =
           FindWeight(p, "l0.scalar");
     },
     "(gelu_tanh_mul): does not use scalar (must be -1)"},
    {"GeluTanhMulWithCache",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kGeluTanhMul)].cache = 0;
     },
     "(gelu_tanh_mul): does not use cache (must be -1)"},
    {"GeluTanhMulPartialOverlapGate",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[FirstStep(p, StepKind::kGeluTanhMul)];
       s.out = ShiftedBuffer(p, s.in0);
     },
     "partially overlaps in0"},
    {"GeluTanhMulPartialOverlapUp",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[FirstStep(p, StepKind::kGeluTanhMul)];
       s.out = ShiftedBuffer(p, s.in1);
     },
     "partially overlaps in1"},
    {"ResidualRmsNormGroupNotDividing",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kResidualRmsNorm)].group_size = 7;
     },
     "(residual_rms_norm): group_size = 7 must be positive and divide in1's 64 elements"},
    {"ResidualRmsNormGroupZero",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kResidualRmsNorm)].group_size = 0;
     },
     "group_size = 0"},
    {"ResidualRmsNormGainSize",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kResidualRmsNorm)].weight =
           FindWeight(p, "l0.q_norm");
     },
     "gain 'l0.q_norm' has 16 elements, expected the group size 64"},
    {"ResidualRmsNormGainOutOfRange",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kResidualRmsNorm)].weight = 4444;
     },
     "weight (gain) weight 4444 out of range"},
    {"ResidualRmsNormScalarNotScalar",
     [](Plan& p, uint64_t&) {
       p.steps[LastStep(p, StepKind::kResidualRmsNorm)].scalar =
           FindWeight(p, "l0.in_norm");
     },
     "(residual_rms_norm): scalar 'l0.in_norm' has 64 elements, expected 1"},
    {"ResidualRmsNormScalarOutOfRange",
     [](Plan& p, uint64_t&) {
       p.steps[LastStep(p, StepKind::kResidualRmsNorm)].scalar = 9999;
     },
     "scalar (scalar) weight 9999 out of range"},
    {"ResidualRmsNormScalarNegative",
     [](Plan& p, uint64_t&) {
       p.steps[LastStep(p, StepKind::kResidualRmsNorm)].scalar = -2;
     },
     "scalar (scalar) weight -2 out of range"},
    {"ResidualRmsNormNegativeEps",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kResidualRmsNorm)].eps = -1e-6;
     },
     "eps = -1e-06 must be finite and >= 0"},
    {"ResidualRmsNormNanEps",
     [](Plan& p, uint64_t&) {
       p.steps[FirstStep(p, StepKind::kResidualRmsNorm)].eps =
           std::numeric_limits<double>::quiet_NaN();
     },
     "eps = nan"},
    {"ResidualRmsNormSizeMismatch",
     [](Plan& p, uint64_t&) {
       p.steps[LastStep(p, StepKind::kResidualRmsNorm)].in0 =
           BufferOfSize(p, 96);
     },
     "in0/in1/out have 96/64/64 elements; they must be equal"},
    {"ResidualRmsNormMissingResidual",
     [](Plan& p, uint64_t&) {
       p.steps[LastStep(p, StepKind::kResidualRmsNorm)].in0 = -1;
     },
     "in0 (residual) buffer -1 out of range"},
    {"ResidualRmsNormWithCache",
     [](Plan& p, uint64_t&) {
       p.steps[LastStep(p, StepKind::kResidualRmsNorm)].cache = 1;
     },
     "(residual_rms_norm): does not use cache (must be -1)"},
    {"ResidualRmsNormPartialOverlapResidual",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[LastStep(p, StepKind::kResidualRmsNorm)];
       s.out = ShiftedBuffer(p, s.in0);
     },
     "partially overlaps in0"},
    {"ResidualRmsNormPartialOverlapX",
     [](Plan& p, uint64_t&) {
       Step& s = p.steps[LastStep(p, StepKind::kResidualRmsNorm)];
       s.out = ShiftedBuffer(p, s.in1);
     },
     "partially overlaps in1"},
};

INSTANTIATE_TEST_SUITE_P(All, BadFusedPlanTest,
                         ::testing::ValuesIn(kBadFusedPlans),
                         [](const ::testing::TestParamInfo<BadPlanCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace cortiq
