// Tests of formats/model_config: tiny-a, E2B and E4B configs (values and derived
// per-layer quantities, spec §1 and §3.3), both config.json forms, defaults, and one case per
// validation error, each checked to name its field.
#include "formats/model_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/formats/interrupt_guard.h"

namespace cortiq {
namespace {

using ::testing::HasSubstr;

// The status message as std::string (absl::string_view prints as a char array in gtest).
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

constexpr LayerType S = LayerType::kSliding;
constexpr LayerType F = LayerType::kFull;

std::string ReadTestFile(const std::string& relative_path) {
  std::ifstream in(absl::StrCat(CORTIQ_TEST_DATA_DIR, "/", relative_path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A valid text-only config (tiny-a's values) as field → JSON literal; tests override or drop
// fields and render it with Render().
std::map<std::string, std::string> TinyFields() {
  return {
      {"model_type", "\"gemma4_text\""},
      {"architectures", "[\"Gemma4ForCausalLM\"]"},
      {"vocab_size", "512"},
      {"hidden_size", "64"},
      {"intermediate_size", "128"},
      {"num_hidden_layers", "8"},
      {"num_attention_heads", "4"},
      {"num_key_value_heads", "2"},
      {"head_dim", "16"},
      {"global_head_dim", "32"},
      {"sliding_window", "8"},
      {"num_kv_shared_layers", "4"},
      {"hidden_size_per_layer_input", "16"},
      {"vocab_size_per_layer_input", "512"},
      {"final_logit_softcapping", "30.0"},
      {"layer_types",
       "[\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", "
       "\"full_attention\", \"sliding_attention\", \"sliding_attention\", "
       "\"sliding_attention\", \"full_attention\"]"},
      {"rope_parameters",
       "{\"full_attention\": {\"partial_rotary_factor\": 0.25, \"rope_theta\": 1000000.0, "
       "\"rope_type\": \"proportional\"}, \"sliding_attention\": {\"rope_theta\": 10000.0, "
       "\"rope_type\": \"default\"}}"},
  };
}

std::string Render(const std::map<std::string, std::string>& fields) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : fields) parts.push_back(absl::StrCat("\"", key, "\": ", value));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string WithFields(std::map<std::string, std::string> overrides,
                       const std::set<std::string>& removed = {}) {
  std::map<std::string, std::string> fields = TinyFields();
  for (const auto& [key, value] : overrides) fields[key] = value;
  for (const std::string& key : removed) fields.erase(key);
  return Render(fields);
}

// Wraps a text-only config into the multimodal form.
std::string Multimodal(const std::string& text_config) {
  return absl::StrCat(
      "{\"architectures\": [\"Gemma4ForConditionalGeneration\"], \"model_type\": \"gemma4\", "
      "\"tie_word_embeddings\": true, \"vision_config\": {\"hidden_size\": 16}, "
      "\"text_config\": ",
      text_config, "}");
}

TEST(ModelConfigTest, TinyA) {
  for (const char* model : {"tiny-a-f32", "tiny-a-bf16"}) {
    absl::StatusOr<Gemma4TextConfig> config =
        LoadGemma4TextConfig(absl::StrCat(CORTIQ_TEST_DATA_DIR, "/models/", model));
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->vocab_size, 512);
    EXPECT_EQ(config->hidden_size, 64);
    EXPECT_EQ(config->intermediate_size, 128);
    EXPECT_EQ(config->num_hidden_layers, 8);
    EXPECT_EQ(config->num_attention_heads, 4);
    EXPECT_EQ(config->num_key_value_heads, 2);
    EXPECT_EQ(config->head_dim, 16);
    EXPECT_EQ(config->global_head_dim, 32);
    EXPECT_EQ(config->sliding_window, 8);
    EXPECT_EQ(config->num_kv_shared_layers, 4);
    EXPECT_EQ(config->hidden_size_per_layer_input, 16);
    EXPECT_EQ(config->vocab_size_per_layer_input, 512);
    EXPECT_EQ(config->max_position_embeddings, 131072);
    EXPECT_DOUBLE_EQ(config->rms_norm_eps, 1e-6);
    ASSERT_TRUE(config->final_logit_softcapping.has_value());
    EXPECT_DOUBLE_EQ(*config->final_logit_softcapping, 30.0);
    EXPECT_TRUE(config->tie_word_embeddings);
    EXPECT_FALSE(config->use_double_wide_mlp);
    EXPECT_EQ(config->hidden_activation, "gelu_pytorch_tanh");
    EXPECT_EQ(config->layer_types, (std::vector<LayerType>{S, S, S, F, S, S, S, F}));
    EXPECT_EQ(config->rope_sliding.rope_type, "default");
    EXPECT_DOUBLE_EQ(config->rope_sliding.rope_theta, 1e4);
    EXPECT_DOUBLE_EQ(config->rope_sliding.partial_rotary_factor, 1.0);
    EXPECT_EQ(config->rope_full.rope_type, "proportional");
    EXPECT_DOUBLE_EQ(config->rope_full.rope_theta, 1e6);
    EXPECT_DOUBLE_EQ(config->rope_full.partial_rotary_factor, 0.25);

    EXPECT_EQ(config->first_kv_shared_layer(), 4);
    const int64_t sources[] = {0, 1, 2, 3, 2, 2, 2, 3};
    for (int64_t layer = 0; layer < 8; ++layer) {
      SCOPED_TRACE(layer);
      EXPECT_EQ(config->is_kv_shared(layer), layer >= 4);
      EXPECT_EQ(config->kv_source_layer(layer), sources[layer]);
      const bool full = layer == 3 || layer == 7;
      EXPECT_EQ(config->layer_head_dim(layer), full ? 32 : 16);
      EXPECT_EQ(config->rotated_pairs(layer), full ? 4 : 8);
      EXPECT_EQ(config->layer_intermediate_size(layer), 128);
      EXPECT_EQ(&config->rope(layer), full ? &config->rope_full : &config->rope_sliding);
    }
  }
}

TEST(ModelConfigTest, E2B) {
  absl::StatusOr<Gemma4TextConfig> config =
      ParseGemma4TextConfig(ReadTestFile("configs/e2b.json"), "e2b.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->vocab_size, 262144);
  EXPECT_EQ(config->hidden_size, 1536);
  EXPECT_EQ(config->num_hidden_layers, 35);
  EXPECT_EQ(config->num_key_value_heads, 1);
  EXPECT_TRUE(config->use_double_wide_mlp);
  EXPECT_EQ(config->first_kv_shared_layer(), 15);
  for (int64_t layer = 0; layer < 35; ++layer) {
    SCOPED_TRACE(layer);
    const bool full = layer % 5 == 4;  // F at 4, 9, ..., 34.
    EXPECT_EQ(config->layer_types[layer], full ? F : S);
    EXPECT_EQ(config->layer_head_dim(layer), full ? 512 : 256);
    EXPECT_EQ(config->rotated_pairs(layer), full ? 64 : 128);
    EXPECT_EQ(config->is_kv_shared(layer), layer >= 15);
    EXPECT_EQ(config->kv_source_layer(layer), layer < 15 ? layer : (full ? 14 : 13));
    EXPECT_EQ(config->layer_intermediate_size(layer), layer < 15 ? 6144 : 12288);
  }
}

TEST(ModelConfigTest, E4B) {
  absl::StatusOr<Gemma4TextConfig> config =
      ParseGemma4TextConfig(ReadTestFile("configs/e4b.json"), "e4b.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->hidden_size, 2560);
  EXPECT_EQ(config->num_hidden_layers, 42);
  EXPECT_EQ(config->num_key_value_heads, 2);
  EXPECT_FALSE(config->use_double_wide_mlp);
  EXPECT_EQ(config->first_kv_shared_layer(), 24);
  for (int64_t layer = 0; layer < 42; ++layer) {
    SCOPED_TRACE(layer);
    const bool full = layer % 6 == 5;  // F at 5, 11, ..., 41.
    EXPECT_EQ(config->layer_types[layer], full ? F : S);
    EXPECT_EQ(config->layer_head_dim(layer), full ? 512 : 256);
    EXPECT_EQ(config->rotated_pairs(layer), full ? 64 : 128);
    EXPECT_EQ(config->kv_source_layer(layer), layer < 24 ? layer : (full ? 23 : 22));
    EXPECT_EQ(config->layer_intermediate_size(layer), 10240);
  }
}

TEST(ModelConfigTest, MultimodalAndTextOnlyFormsAgree) {
  const std::string text_only = ReadTestFile("configs/e2b.json");
  absl::StatusOr<Gemma4TextConfig> a = ParseGemma4TextConfig(text_only, "text.json");
  absl::StatusOr<Gemma4TextConfig> b = ParseGemma4TextConfig(Multimodal(text_only), "mm.json");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->layer_types, b->layer_types);
  EXPECT_EQ(a->num_kv_shared_layers, b->num_kv_shared_layers);
  EXPECT_EQ(a->intermediate_size, b->intermediate_size);
  EXPECT_EQ(a->use_double_wide_mlp, b->use_double_wide_mlp);
}

TEST(ModelConfigTest, TieWordEmbeddingsFallsBackToTopLevel) {
  const std::string text = WithFields({}, {"model_type"});
  std::string json = Multimodal(text);
  json.replace(json.find("\"tie_word_embeddings\": true"), 27, "\"tie_word_embeddings\": false");
  absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(json, "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->tie_word_embeddings);
}

TEST(ModelConfigTest, DefaultsFromHfClass) {
  // Only the required fields: everything else takes Gemma4TextConfig's defaults.
  absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(
      "{\"vocab_size\": 262144, \"hidden_size\": 1536, \"intermediate_size\": 6144, "
      "\"num_hidden_layers\": 35, \"num_attention_heads\": 8, \"num_key_value_heads\": 1}",
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->head_dim, 256);
  EXPECT_EQ(config->global_head_dim, 512);
  EXPECT_EQ(config->sliding_window, 512);
  EXPECT_EQ(config->num_kv_shared_layers, 0);
  EXPECT_EQ(config->hidden_size_per_layer_input, 256);
  EXPECT_EQ(config->vocab_size_per_layer_input, 262144);
  EXPECT_EQ(config->max_position_embeddings, 131072);
  EXPECT_DOUBLE_EQ(config->rms_norm_eps, 1e-6);
  EXPECT_FALSE(config->final_logit_softcapping.has_value());
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_FALSE(config->use_double_wide_mlp);
  EXPECT_EQ(config->rope_sliding.rope_type, "default");
  EXPECT_DOUBLE_EQ(config->rope_sliding.rope_theta, 1e4);
  EXPECT_EQ(config->rope_full.rope_type, "proportional");
  EXPECT_DOUBLE_EQ(config->rope_full.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(config->rope_full.partial_rotary_factor, 0.25);
  ASSERT_EQ(config->layer_types.size(), 35u);
  for (int64_t layer = 0; layer < 35; ++layer) {
    // (i+1) % 6 pattern, last layer forced to full as HF does.
    const bool full = (layer + 1) % 6 == 0 || layer == 34;
    EXPECT_EQ(config->layer_types[layer], full ? F : S) << layer;
  }
  EXPECT_EQ(config->first_kv_shared_layer(), 35);
  EXPECT_FALSE(config->is_kv_shared(34));
  EXPECT_EQ(config->kv_source_layer(34), 34);
}

TEST(ModelConfigTest, NullSoftcapMeansNone) {
  absl::StatusOr<Gemma4TextConfig> config =
      ParseGemma4TextConfig(WithFields({{"final_logit_softcapping", "null"}}), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->final_logit_softcapping.has_value());
}

// field → value of config.defaulted, checking that each names `file`.
std::map<std::string, std::string> Defaulted(const Gemma4TextConfig& config,
                                             const std::string& file = "config.json") {
  std::map<std::string, std::string> out;
  for (const DefaultedField& d : config.defaulted) {
    EXPECT_EQ(d.file, file) << d.field;
    EXPECT_TRUE(out.emplace(d.field, d.value).second) << "twice: " << d.field;
  }
  return out;
}

// Absent fields that change the math keep HF's defaults (they are the semantics) but are
// recorded, so that cortiq-compile can warn (and refuse with --strict-config): before, a config
// without sliding_window or num_kv_shared_layers silently compiled another model.
TEST(ModelConfigTest, AbsentFieldsThatChangeTheMathAreRecorded) {
  for (const char* model : {"tiny-a-f32", "tiny-a-bf16"}) {
    absl::StatusOr<Gemma4TextConfig> config =
        LoadGemma4TextConfig(absl::StrCat(CORTIQ_TEST_DATA_DIR, "/models/", model));
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_TRUE(config->defaulted.empty()) << config->defaulted.front().field;
  }
  // Multimodal form: paths under text_config., tie_word_embeddings given at the top level.
  absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(
      Multimodal(WithFields({{"rms_norm_eps", "1e-6"},
                             {"use_double_wide_mlp", "false"},
                             {"hidden_activation", "\"gelu_pytorch_tanh\""},
                             {"attention_k_eq_v", "false"}},
                            {"sliding_window", "num_kv_shared_layers", "final_logit_softcapping",
                             "head_dim"})),
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->sliding_window, 512);
  EXPECT_EQ(config->num_kv_shared_layers, 0);
  EXPECT_FALSE(config->final_logit_softcapping.has_value());
  EXPECT_EQ(Defaulted(*config),
            (std::map<std::string, std::string>{
                {"text_config.head_dim", "256"},
                {"text_config.sliding_window", "512"},
                {"text_config.num_kv_shared_layers", "0"},
                {"text_config.final_logit_softcapping", "none (null)"}}));
  // An explicit null softcap is a choice, not a default; a null size field is absent.
  config = ParseGemma4TextConfig(
      WithFields({{"final_logit_softcapping", "null"}, {"sliding_window", "null"}}),
      "dir/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  const std::map<std::string, std::string> text_only = Defaulted(*config, "dir/config.json");
  EXPECT_EQ(text_only.count("final_logit_softcapping"), 0u);
  EXPECT_EQ(text_only.at("sliding_window"), "512");
  EXPECT_EQ(text_only.at("tie_word_embeddings"), "true");
  EXPECT_EQ(text_only.at("rms_norm_eps"), "1e-06");
  // Only the required fields: every math-relevant default is listed.
  config = ParseGemma4TextConfig(
      "{\"vocab_size\": 262144, \"hidden_size\": 1536, \"intermediate_size\": 6144, "
      "\"num_hidden_layers\": 35, \"num_attention_heads\": 8, \"num_key_value_heads\": 1}",
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  const std::map<std::string, std::string> all = Defaulted(*config);
  for (const char* field :
       {"head_dim", "global_head_dim", "sliding_window", "num_kv_shared_layers",
        "hidden_size_per_layer_input", "vocab_size_per_layer_input", "rms_norm_eps",
        "final_logit_softcapping", "tie_word_embeddings", "use_double_wide_mlp",
        "hidden_activation", "attention_k_eq_v", "layer_types", "rope_parameters"}) {
    EXPECT_EQ(all.count(field), 1u) << field;
  }
  EXPECT_EQ(all.size(), 14u);
  EXPECT_EQ(all.count("max_position_embeddings"), 0u);  // bounds the context only
  EXPECT_EQ(all.at("rope_parameters"),
            "sliding_attention {default, rope_theta 10000, partial_rotary_factor 1}, "
            "full_attention {proportional, rope_theta 1e+06, partial_rotary_factor 0.25}");
  EXPECT_EQ(all.at("global_head_dim"), "512");
  // rope_parameters given without the full-attention partial_rotary_factor: HF's default 1 (all
  // pairs rotated) instead of the E-series' 0.25 changes every full-attention layer, so it is
  // recorded (it compiled silently before); the "default" rope, whose factor must be 1, is not.
  config = ParseGemma4TextConfig(
      WithFields({{"rope_parameters",
                   "{\"full_attention\": {\"rope_type\": \"proportional\", \"rope_theta\": "
                   "1000000.0}, \"sliding_attention\": {\"rope_type\": \"default\", "
                   "\"rope_theta\": 10000.0}}"}}),
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rope_full.partial_rotary_factor, 1.0);
  const std::map<std::string, std::string> rope = Defaulted(*config);
  EXPECT_EQ(rope.at("rope_parameters.full_attention.partial_rotary_factor"), "1");
  EXPECT_EQ(rope.count("rope_parameters.sliding_attention.partial_rotary_factor"), 0u);
}

TEST(ModelConfigTest, OlderRopeThetaFields) {
  absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(
      WithFields({{"rope_theta", "500000.0"}, {"rope_local_base_freq", "20000.0"}},
                 {"rope_parameters"}),
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_DOUBLE_EQ(config->rope_full.rope_theta, 5e5);
  EXPECT_DOUBLE_EQ(config->rope_sliding.rope_theta, 2e4);
  EXPECT_EQ(config->rope_full.rope_type, "proportional");
}

TEST(ModelConfigTest, IntegralDoublesAreIntegers) {
  absl::StatusOr<Gemma4TextConfig> config =
      ParseGemma4TextConfig(WithFields({{"hidden_size", "64.0"}}), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->hidden_size, 64);
}

// Random corruptions of a real config.json give a status (ok or not), never a crash or hang.
TEST(ModelConfigTest, CorruptedConfigsNeverCrash) {
  const std::string original = ReadTestFile("models/tiny-a-f32/config.json");
  std::mt19937 rng(11);
  const char kJsonChars[] = "{}[]\",:0123456789-e.\" tfn";
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string text = original;
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations; ++m) {
      text[rng() % text.size()] = kJsonChars[rng() % (sizeof(kJsonChars) - 1)];
    }
    if (rng() % 5 == 0) text.resize(rng() % text.size());
    absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(text, "config.json");
    if (config.ok()) {
      // Whatever parses is valid: the derived helpers work on every layer.
      for (int64_t layer = 0; layer < config->num_hidden_layers; ++layer) {
        EXPECT_LE(config->kv_source_layer(layer), layer);
        EXPECT_GE(config->rotated_pairs(layer), 0);
      }
    } else {
      EXPECT_THAT(Msg(config.status()), HasSubstr("config.json: "));
    }
  }
}

TEST(ModelConfigTest, MissingFileIsNotFound) {
  absl::StatusOr<Gemma4TextConfig> config = LoadGemma4TextConfig("/nonexistent/dir");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(config.status()), HasSubstr("/nonexistent/dir/config.json"));
}

TEST(ModelConfigTest, ExampleMessageFromTheBrief) {
  absl::StatusOr<Gemma4TextConfig> config =
      ParseGemma4TextConfig(Multimodal(WithFields({{"num_kv_shared_layers", "8"}})), "config.json");
  EXPECT_EQ(Msg(config.status()),
            "config.json: text_config.num_kv_shared_layers (8) must be < num_hidden_layers (8)");
}

// One invalid config and what its error must say.
struct ErrorCase {
  std::string label;
  std::string json;
  std::string expected_substring;  // the field (with its path) or the problem
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
};

std::ostream& operator<<(std::ostream& os, const ErrorCase& c) { return os << c.label; }

class ModelConfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ModelConfigErrorTest, NamesTheField) {
  const ErrorCase& c = GetParam();
  absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(c.json, "config.json");
  ASSERT_FALSE(config.ok()) << c.label;
  EXPECT_EQ(config.status().code(), c.code) << config.status();
  EXPECT_THAT(Msg(config.status()), HasSubstr(c.expected_substring));
  EXPECT_THAT(Msg(config.status()), HasSubstr("config.json: "));
}

const char kSevenTypes[] =
    "[\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", \"full_attention\", "
    "\"sliding_attention\", \"sliding_attention\", \"full_attention\"]";
const char kLastSliding[] =
    "[\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", \"full_attention\", "
    "\"sliding_attention\", \"sliding_attention\", \"full_attention\", \"sliding_attention\"]";
const char kOneFullAtEnd[] =
    "[\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", \"sliding_attention\", "
    "\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", \"full_attention\"]";
const char kUnknownType[] =
    "[\"sliding_attention\", \"sliding_attention\", \"local_attention\", \"full_attention\", "
    "\"sliding_attention\", \"sliding_attention\", \"sliding_attention\", \"full_attention\"]";

std::string Rope(const std::string& sliding, const std::string& full) {
  return absl::StrCat("{\"sliding_attention\": ", sliding, ", \"full_attention\": ", full, "}");
}
const char kSlidingRope[] = "{\"rope_type\": \"default\", \"rope_theta\": 10000.0}";
const char kFullRope[] =
    "{\"rope_type\": \"proportional\", \"rope_theta\": 1000000.0, \"partial_rotary_factor\": 0.25}";

std::vector<ErrorCase> ErrorCases() {
  constexpr auto kUnimplemented = absl::StatusCode::kUnimplemented;
  std::vector<ErrorCase> cases = {
      {"MalformedJson", "{\"hidden_size\": 64,\n \"vocab_size\": }", "malformed JSON: [2:"},
      {"NotAnObject", "[1, 2]", "top level must be a JSON object"},
      {"DeepNesting", std::string(100000, '['), "nesting deeper than"},
      {"DuplicateField", "{\"hidden_size\": 64, \"vocab_size\": 8, \"hidden_size\": 65}",
       "malformed JSON: duplicate key \"hidden_size\""},
      {"InvalidUtf8", "{\"model_type\": \"\xff\xfe\"}", "malformed JSON"},
      {"WrongModelType", WithFields({{"model_type", "\"llama\""}}), "model_type (\"llama\")"},
      {"MultimodalWithoutTextConfig", "{\"model_type\": \"gemma4\"}",
       "missing required field text_config"},
      {"TextConfigNotObject", "{\"model_type\": \"gemma4\", \"text_config\": 5}",
       "text_config must be an object, got a number"},
      {"StringForInteger", WithFields({{"hidden_size", "\"64\""}}),
       "hidden_size must be an integer, got a string"},
      {"FractionForInteger", WithFields({{"num_attention_heads", "4.5"}}),
       "num_attention_heads must be an integer, got a number"},
      {"StringForNumber", WithFields({{"rms_norm_eps", "\"tiny\""}}),
       "rms_norm_eps must be a number"},
      {"NumberForBool", WithFields({{"tie_word_embeddings", "1"}}),
       "tie_word_embeddings must be a boolean"},
      {"NumberForString", WithFields({{"hidden_activation", "3"}}),
       "hidden_activation must be a string"},
      {"SoftcapNotNumber", WithFields({{"final_logit_softcapping", "\"30\""}}),
       "final_logit_softcapping must be a number or null"},
      {"LayerTypesNotArray", WithFields({{"layer_types", "\"sliding_attention\""}}),
       "layer_types must be an array"},
      {"LayerTypeNotString", WithFields({{"layer_types", "[1]"}}),
       "layer_types[0] must be a string"},
      {"UnknownLayerType", WithFields({{"layer_types", kUnknownType}}),
       "layer_types[2] (\"local_attention\")"},
      {"LayerTypesLength", WithFields({{"layer_types", kSevenTypes}}),
       "layer_types has 7 entries but num_hidden_layers is 8"},
      {"LastLayerSliding", WithFields({{"layer_types", kLastSliding}}),
       "layer_types[7] (last layer) must be \"full_attention\""},
      {"ZeroHiddenSize", WithFields({{"hidden_size", "0"}}), "hidden_size (0) must be > 0"},
      {"NegativeVocab", WithFields({{"vocab_size", "-1"}}), "vocab_size (-1) must be > 0"},
      {"ZeroHeadDim", WithFields({{"head_dim", "0"}}), "head_dim (0) must be > 0"},
      {"ZeroGlobalHeadDim", WithFields({{"global_head_dim", "0"}}), "global_head_dim (0)"},
      {"ZeroKvHeads", WithFields({{"num_key_value_heads", "0"}}), "num_key_value_heads (0)"},
      {"ZeroWindow", WithFields({{"sliding_window", "0"}}), "sliding_window (0)"},
      {"ZeroPle", WithFields({{"hidden_size_per_layer_input", "0"}}),
       "hidden_size_per_layer_input (0)"},
      {"ZeroPleVocab", WithFields({{"vocab_size_per_layer_input", "0"}}),
       "vocab_size_per_layer_input (0)"},
      {"ZeroIntermediate", WithFields({{"intermediate_size", "0"}}), "intermediate_size (0)"},
      {"ZeroPositions", WithFields({{"max_position_embeddings", "0"}}),
       "max_position_embeddings (0)"},
      {"HugeLayerCount", WithFields({{"num_hidden_layers", "1000000000"}}),
       "num_hidden_layers (1000000000) must be <= 1024"},
      {"HugeLayerCountDefaultTypes", WithFields({{"num_hidden_layers", "1e15"}}, {"layer_types"}),
       "num_hidden_layers (1000000000000000) must be <= 1024"},
      {"HugeVocab", WithFields({{"vocab_size", "1000000000000"}}), "vocab_size (1000000000000)"},
      {"HugeInteger", WithFields({{"hidden_size", "1e300"}}), "hidden_size must be an integer"},
      {"OddHeadDim", WithFields({{"head_dim", "15"}}), "head_dim (15) must be even"},
      {"HeadsNotMultiple", WithFields({{"num_key_value_heads", "3"}}),
       "num_attention_heads (4) must be a multiple of num_key_value_heads (3)"},
      {"NegativeShared", WithFields({{"num_kv_shared_layers", "-1"}}),
       "num_kv_shared_layers (-1) must be >= 0"},
      {"AllShared", WithFields({{"num_kv_shared_layers", "8"}}),
       "num_kv_shared_layers (8) must be < num_hidden_layers (8)"},
      {"SharedWithoutSource",
       WithFields({{"layer_types", kOneFullAtEnd}, {"num_kv_shared_layers", "4"}}),
       "num_kv_shared_layers (4) makes layer 7 (full_attention) KV-shared, but no KV-owning "
       "layer before 4"},
      {"RopeNotObject", WithFields({{"rope_parameters", "[]"}}),
       "rope_parameters must be an object"},
      {"RopeEntryMissingType", WithFields({{"rope_parameters", Rope("{}", kFullRope)}}),
       "missing required field rope_parameters.sliding_attention.rope_type"},
      {"RopeMissingFull",
       WithFields(
           {{"rope_parameters", absl::StrCat("{\"sliding_attention\": ", kSlidingRope, "}")}}),
       "missing required field rope_parameters.full_attention"},
      {"RopeFlatForm",
       WithFields({{"rope_parameters", "{\"rope_type\": \"default\", \"rope_theta\": 1.0}"}}),
       "missing required field rope_parameters.sliding_attention"},
      {"UnknownRopeType",
       WithFields({{"rope_parameters",
                    Rope(kSlidingRope, "{\"rope_type\": \"yarn\", \"rope_theta\": 1e6}")}}),
       "rope_parameters.full_attention.rope_type (\"yarn\") must be \"default\" or "
       "\"proportional\""},
      {"RopeThetaNegative",
       WithFields({{"rope_parameters",
                    Rope("{\"rope_type\": \"default\", \"rope_theta\": -1}", kFullRope)}}),
       "rope_parameters.sliding_attention.rope_theta (-1)"},
      {"RopeThetaString",
       WithFields({{"rope_parameters",
                    Rope("{\"rope_type\": \"default\", \"rope_theta\": \"x\"}", kFullRope)}}),
       "rope_parameters.sliding_attention.rope_theta must be a number"},
      {"PartialRotaryZero",
       WithFields(
           {{"rope_parameters", Rope(kSlidingRope,
                                     "{\"rope_type\": \"proportional\", \"rope_theta\": 1e6, "
                                     "\"partial_rotary_factor\": 0}")}}),
       "rope_parameters.full_attention.partial_rotary_factor (0) must be in (0, 1]"},
      {"PartialRotaryAboveOne",
       WithFields(
           {{"rope_parameters", Rope(kSlidingRope,
                                     "{\"rope_type\": \"proportional\", \"rope_theta\": 1e6, "
                                     "\"partial_rotary_factor\": 1.5}")}}),
       "partial_rotary_factor (1.5) must be in (0, 1]"},
      {"PartialDefaultRope",
       WithFields({{"rope_parameters", Rope("{\"rope_type\": \"default\", \"rope_theta\": 1e4, "
                                            "\"partial_rotary_factor\": 0.5}",
                                            kFullRope)}}),
       "rope_parameters.sliding_attention.partial_rotary_factor (0.5) must be 1", kUnimplemented},
      {"RopeScaling",
       WithFields(
           {{"rope_parameters",
             Rope("{\"rope_type\": \"default\", \"rope_theta\": 1e4, \"factor\": 8}", kFullRope)}}),
       "rope_parameters.sliding_attention.factor (8) is not supported", kUnimplemented},
      {"ZeroEps", WithFields({{"rms_norm_eps", "0"}}), "rms_norm_eps (0) must be"},
      {"ZeroSoftcap", WithFields({{"final_logit_softcapping", "0"}}),
       "final_logit_softcapping (0) must be"},
      // Values that pass "> 0 and finite" in double but not once narrowed to f32.
      {"EpsOverflowsF32", WithFields({{"rms_norm_eps", "1e300"}}),
       "rms_norm_eps (1e+300) must be a finite number > 0 in the normal f32 range"},
      {"EpsUnderflowsF32", WithFields({{"rms_norm_eps", "1e-60"}}),
       "rms_norm_eps (1e-60) must be a finite number > 0 in the normal f32 range"},
      {"EpsSubnormalF32", WithFields({{"rms_norm_eps", "1e-40"}}), "rms_norm_eps (1e-40)"},
      {"NegativeEps", WithFields({{"rms_norm_eps", "-1e-6"}}), "rms_norm_eps (-1e-06) must be"},
      {"SoftcapOverflowsF32", WithFields({{"final_logit_softcapping", "1e300"}}),
       "final_logit_softcapping (1e+300) must be a finite number > 0 in the normal f32 range"},
      {"SoftcapSubnormalF32", WithFields({{"final_logit_softcapping", "1e-45"}}),
       "final_logit_softcapping (1e-45) must be a finite number > 0 in the normal f32 range"},
      {"SoftcapAboveFltMax", WithFields({{"final_logit_softcapping", "3.5e38"}}),
       "final_logit_softcapping (3.5e+38)"},
      // A factor in (0, 1] that rotates no pair of the layer's head width.
      {"PartialRotaryRotatesNoPair",
       WithFields(
           {{"rope_parameters", Rope(kSlidingRope,
                                     "{\"rope_type\": \"proportional\", \"rope_theta\": 1e6, "
                                     "\"partial_rotary_factor\": 0.01}")}}),
       "rope_parameters.full_attention.partial_rotary_factor (0.01) × global_head_dim (32) / 2 "
       "rotates no pair: it must be at least 0.0625"},
      {"PartialRotaryRotatesNoPairSliding",
       WithFields(
           {{"rope_parameters", Rope("{\"rope_type\": \"proportional\", \"rope_theta\": 1e4, "
                                     "\"partial_rotary_factor\": 0.1}",
                                     kFullRope)}}),
       "rope_parameters.sliding_attention.partial_rotary_factor (0.1) × head_dim (16) / 2 rotates "
       "no pair"},
      {"MultimodalPartialRotaryPath",
       Multimodal(WithFields(
           {{"rope_parameters", Rope(kSlidingRope,
                                     "{\"rope_type\": \"proportional\", \"rope_theta\": 1e6, "
                                     "\"partial_rotary_factor\": 0.01}")}})),
       "text_config.rope_parameters.full_attention.partial_rotary_factor (0.01) × "
       "text_config.global_head_dim (32)"},
      // θ below 1: an inverted spectrum, and for a tiny θ frequencies that overflow to inf.
      {"RopeThetaTiny",
       WithFields({{"rope_parameters",
                    Rope("{\"rope_type\": \"default\", \"rope_theta\": 5e-324}", kFullRope)}}),
       "rope_parameters.sliding_attention.rope_theta (4.94066e-324) must be a finite number >= 1"},
      {"RopeThetaBelowOne",
       WithFields(
           {{"rope_parameters", Rope(kSlidingRope,
                                     "{\"rope_type\": \"proportional\", \"rope_theta\": 0.5, "
                                     "\"partial_rotary_factor\": 0.25}")}}),
       "rope_parameters.full_attention.rope_theta (0.5) must be a finite number >= 1"},
      {"OlderRopeThetaTiny", WithFields({{"rope_theta", "1e-300"}}, {"rope_parameters"}),
       "rope_theta (1e-300) must be a finite number >= 1"},
      // Keys spelled with escapes are the same key: llvm::json would keep only one of them.
      {"DuplicateFieldEscaped", WithFields({{"vocab_size", "512, \"vocab_siz\\u0065\": 100000"}}),
       "malformed JSON: duplicate key \"vocab_siz\\u0065\" (\"vocab_size\" once its escapes are "
       "decoded)"},
      {"DuplicateFieldShortEscape", WithFields({{"hidden_size", "64, \"hidden\\u005fsize\": 65"}}),
       "duplicate key \"hidden\\u005fsize\" (\"hidden_size\""},
      {"TooLarge", WithFields({{"padding", absl::StrCat("\"", std::string(1 << 20, ' '), "\"")}}),
       "bytes, more than the limit of 1048576 for a config.json"},
      {"OtherActivation", WithFields({{"hidden_activation", "\"gelu\""}}),
       "hidden_activation (\"gelu\") is not supported", kUnimplemented},
      {"KEqV", WithFields({{"attention_k_eq_v", "true"}}),
       "attention_k_eq_v is true: shared K=V projections are not supported", kUnimplemented},
      {"Moe", WithFields({{"enable_moe_block", "true"}}),
       "enable_moe_block is true: mixture-of-experts blocks are not supported", kUnimplemented},
      {"AttentionBias", WithFields({{"attention_bias", "true"}}), "attention_bias is true",
       kUnimplemented},
      {"BidirectionalAll", WithFields({{"use_bidirectional_attention", "\"all\""}}),
       "use_bidirectional_attention", kUnimplemented},
      {"BidirectionalBogus", WithFields({{"use_bidirectional_attention", "7"}}),
       "use_bidirectional_attention must be null, \"vision\" or \"all\""},
  };
  for (const char* field : {"hidden_size", "num_hidden_layers", "num_attention_heads",
                            "num_key_value_heads", "intermediate_size", "vocab_size"}) {
    cases.push_back({absl::StrCat("Missing_", field), WithFields({}, {field}),
                     absl::StrCat("missing required field ", field)});
  }
  // The multimodal form names fields with their text_config. path.
  cases.push_back({"MultimodalPath", Multimodal(WithFields({{"head_dim", "-16"}})),
                   "text_config.head_dim (-16) must be > 0"});
  cases.push_back({"MultimodalTextModelType",
                   Multimodal(WithFields({{"model_type", "\"gemma3_text\""}})),
                   "text_config.model_type (\"gemma3_text\") must be \"gemma4_text\""});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllErrors, ModelConfigErrorTest, ::testing::ValuesIn(ErrorCases()),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           return info.param.label;
                         });

// The smallest and largest accepted values of the checks above.
TEST(ModelConfigTest, LimitsOfTheFloatChecks) {
  // floor(0.0625 · 32 / 2) = 1 pair.
  absl::StatusOr<Gemma4TextConfig> config = ParseGemma4TextConfig(
      WithFields({{"rope_parameters", Rope(kSlidingRope,
                                           "{\"rope_type\": \"proportional\", \"rope_theta\": 1, "
                                           "\"partial_rotary_factor\": 0.0625}")}}),
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->rotated_pairs(3), 1);
  EXPECT_DOUBLE_EQ(config->rope_full.rope_theta, 1.0);
  config = ParseGemma4TextConfig(
      WithFields({{"rms_norm_eps", "1.2e-38"}, {"final_logit_softcapping", "3.4e38"}}),
      "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  config = ParseGemma4TextConfig(
      WithFields({{"rms_norm_eps", "0.5"}, {"final_logit_softcapping", "1e-30"}}), "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
}

// A FIFO as config.json is rejected at once, not waited on forever.
TEST(ModelConfigTest, FifoConfigIsRejectedWithoutBlocking) {
  const InterruptGuard guard;
  const std::string dir = ::testing::TempDir() + "/cortiq_model_config_fifo";
  ::mkdir(dir.c_str(), 0755);
  ::unlink((dir + "/config.json").c_str());
  ASSERT_EQ(mkfifo((dir + "/config.json").c_str(), 0644), 0);
  absl::StatusOr<Gemma4TextConfig> config = LoadGemma4TextConfig(dir);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(config.status()), HasSubstr("/config.json: not a regular file (a FIFO)"));
}

}  // namespace
}  // namespace cortiq
