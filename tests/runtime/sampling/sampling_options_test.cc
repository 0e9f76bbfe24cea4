// Tests of runtime/sampling/sampling_options.cc: llama.cpp's defaults, a model's
// generation_config over them, and every validation message.
#include "runtime/sampling/sampling_options.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace sampling {
namespace {

using ::testing::HasSubstr;

TEST(SamplingOptionsTest, DefaultsAreLlamaCpps) {
  // common_params_sampling in llama.cpp common/common.h.
  const SamplingOptions o = DefaultSamplingOptions();
  EXPECT_EQ(o.temperature, 0.8f);
  EXPECT_EQ(o.top_k, 40);
  EXPECT_EQ(o.top_p, 0.95f);
  EXPECT_EQ(o.min_p, 0.05f);
  EXPECT_EQ(o.typical_p, 1.0f);
  EXPECT_EQ(o.repeat_penalty, 1.0f);
  EXPECT_EQ(o.repeat_last_n, 64);
  EXPECT_EQ(o.frequency_penalty, 0.0f);
  EXPECT_EQ(o.presence_penalty, 0.0f);
  EXPECT_FALSE(o.seed.has_value());
  EXPECT_TRUE(o.logit_bias.empty());
  EXPECT_EQ(o.min_keep, 0);
}

TEST(SamplingOptionsTest, Gemma4GenerationConfig) {
  GenerationConfigSampling gemma;  // google/gemma-4 generation_config.json
  gemma.do_sample = true;
  gemma.temperature = 1.0f;
  gemma.top_p = 0.95f;
  gemma.top_k = 64;
  const SamplingOptions o = DefaultSamplingOptions(gemma);
  EXPECT_EQ(o.temperature, 1.0f);
  EXPECT_EQ(o.top_k, 64);
  EXPECT_EQ(o.top_p, 0.95f);
  EXPECT_EQ(o.min_p, 0.05f);  // not in the file: llama.cpp's
  EXPECT_EQ(o.repeat_last_n, 64);
  EXPECT_TRUE(ValidateSamplingOptions(o, 262144).ok());
}

TEST(SamplingOptionsTest, EveryModelFieldOverrides) {
  GenerationConfigSampling m;
  m.temperature = 0.6f;
  m.top_k = 20;
  m.top_p = 0.8f;
  m.min_p = 0.0f;
  m.typical_p = 0.9f;
  m.repetition_penalty = 1.05f;
  m.repeat_last_n = 256;
  const SamplingOptions o = DefaultSamplingOptions(m);
  EXPECT_EQ(o.temperature, 0.6f);
  EXPECT_EQ(o.top_k, 20);
  EXPECT_EQ(o.top_p, 0.8f);
  EXPECT_EQ(o.min_p, 0.0f);
  EXPECT_EQ(o.typical_p, 0.9f);
  EXPECT_EQ(o.repeat_penalty, 1.05f);
  EXPECT_EQ(o.repeat_last_n, 256);
}

TEST(SamplingOptionsTest, DoSampleFalseIsGreedyAndAbsentIsNot) {
  GenerationConfigSampling m;
  m.do_sample = false;
  m.temperature = 0.7f;
  EXPECT_EQ(DefaultSamplingOptions(m).temperature, 0.0f);
  GenerationConfigSampling none;  // e.g. the golden tiny models: only token ids
  EXPECT_EQ(DefaultSamplingOptions(none).temperature, 0.8f);
}

absl::Status With(void (*change)(SamplingOptions&)) {
  SamplingOptions o;
  change(o);
  return ValidateSamplingOptions(o, 1000);
}

TEST(SamplingOptionsTest, ValidationNamesTheOption) {
  EXPECT_TRUE(ValidateSamplingOptions(SamplingOptions(), 1).ok());
  EXPECT_THAT(ValidateSamplingOptions(SamplingOptions(), 0).message(),
              HasSubstr("vocab_size must be >= 1, got 0"));
  struct Case {
    void (*change)(SamplingOptions&);
    const char* message;
  };
  const Case cases[] = {
      {[](SamplingOptions& o) { o.temperature = -1; }, "temperature must be >= 0 and finite"},
      {[](SamplingOptions& o) { o.temperature = NAN; }, "temperature must be >= 0"},
      {[](SamplingOptions& o) { o.temperature = INFINITY; }, "got inf"},
      {[](SamplingOptions& o) { o.top_k = -1; }, "top_k must be >= 0 (0: off), got -1"},
      {[](SamplingOptions& o) { o.top_p = 1.5f; }, "top_p must be in (0, 1], got 1.5"},
      {[](SamplingOptions& o) { o.top_p = 0; }, "top_p must be in (0, 1], got 0"},
      {[](SamplingOptions& o) { o.top_p = NAN; }, "top_p must be in (0, 1], got nan"},
      {[](SamplingOptions& o) { o.min_p = -0.1f; }, "min_p must be in [0, 1], got -0.1"},
      {[](SamplingOptions& o) { o.min_p = 2; }, "min_p must be in [0, 1], got 2"},
      {[](SamplingOptions& o) { o.typical_p = 0; }, "typical_p must be in (0, 1], got 0"},
      {[](SamplingOptions& o) { o.repeat_penalty = 0; }, "repeat_penalty must be > 0"},
      {[](SamplingOptions& o) { o.repeat_penalty = INFINITY; }, "repeat_penalty must be > 0"},
      {[](SamplingOptions& o) { o.repeat_last_n = -2; }, "repeat_last_n must be >= -1"},
      {[](SamplingOptions& o) { o.frequency_penalty = NAN; }, "frequency_penalty must be finite"},
      {[](SamplingOptions& o) { o.presence_penalty = -INFINITY; },
       "presence_penalty must be finite, got -inf"},
      {[](SamplingOptions& o) {
         o.logit_bias = {{5, 1.0f}, {1000, 1.0f}};
       },
       "logit_bias[1]: token 1000 is out of range [0, 1000)"},
      {[](SamplingOptions& o) {
         o.logit_bias = {{-3, 1.0f}};
       },
       "token -3 is out of range"},
      {[](SamplingOptions& o) {
         o.logit_bias = {{3, NAN}};
       },
       "logit_bias[0]: bias of token 3 must be finite or -inf, got nan"},
      {[](SamplingOptions& o) {
         o.logit_bias = {{3, INFINITY}};
       },
       "got inf"},
      {[](SamplingOptions& o) { o.min_keep = -1; }, "min_keep must be >= 0, got -1"},
  };
  for (const Case& c : cases) {
    const absl::Status s = With(c.change);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
}

TEST(SamplingOptionsTest, EdgeValuesThatAreValid) {
  SamplingOptions o;
  o.temperature = 0;  // greedy
  o.top_k = 0;
  o.top_p = 1;
  o.min_p = 1;
  o.typical_p = 1;
  o.repeat_last_n = -1;
  o.frequency_penalty = -2;
  o.presence_penalty = 2;
  o.logit_bias = {{0, -INFINITY}, {999, -100.0f}};
  EXPECT_TRUE(ValidateSamplingOptions(o, 1000).ok());
}

}  // namespace
}  // namespace sampling
}  // namespace cortiq
