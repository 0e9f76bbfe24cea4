// ReadGgufTokenizer (formats/gguf_tokenizer.h) on GGUFs built from the golden tiny one with
// damaged tokenizer keys: each error names the file and the key. (That the golden GGUFs tokenize
// like their tokenizer.json is tested in tests/text against tokenizers.js's ids.)
#include "formats/gguf_tokenizer.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/formats/gguf_test_util.h"

namespace cortiq {
namespace {

using testing::HasSubstr;
using testing_gguf::GgufBuilder;

const std::string kGolden = std::string(CORTIQ_TEST_DATA_DIR) + "/models/tiny-a-f32.gguf";

// A GGUF with the golden file's tokenizer keys, `edit` applied to the builder afterwards.
// `skip`: a key left out; `replace`: keys rewritten by `edit`.
std::string Build(const std::string& name, const std::vector<std::string>& drop,
                  const std::function<void(GgufBuilder&)>& edit) {
  absl::StatusOr<GgufFile> golden = GgufFile::Open(kGolden, false);
  GgufBuilder b;
  for (const GgufKeyValue& kv : golden->metadata()) {
    if (kv.key.rfind("tokenizer.", 0) != 0) continue;
    if (std::find(drop.begin(), drop.end(), kv.key) != drop.end()) continue;
    b.Value(kv.key, kv.value);
  }
  edit(b);
  const std::string path = testing::TempDir() + "/" + name + ".gguf";
  std::ofstream(path, std::ios::binary) << b.Build();
  return path;
}

std::string Error(const std::string& path) {
  absl::StatusOr<GgufFile> file = GgufFile::Open(path, false);
  if (!file.ok()) return std::string(file.status().message());
  absl::StatusOr<text::TokenizerSpec> spec = ReadGgufTokenizer(*file);
  EXPECT_FALSE(spec.ok());
  return std::string(spec.status().message());
}

TEST(GgufTokenizer, ReadsTheGoldenVocabulary) {
  absl::StatusOr<GgufFile> file = GgufFile::Open(kGolden, false);
  absl::StatusOr<text::TokenizerSpec> spec = ReadGgufTokenizer(*file);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->tokens.size(), 512u);
  EXPECT_EQ(spec->model.merges.size(), 189u);
  EXPECT_EQ(spec->bos_id, 2);
  EXPECT_EQ(spec->model.unk_id, 3);
  EXPECT_EQ(spec->added_tokens.size(), 14u);  // the CONTROL tokens 0-13
  EXPECT_TRUE(spec->added_tokens[5].special);
  EXPECT_EQ(spec->added_tokens[5].content, "<|turn>");
}

// llama.cpp's general.sampling.* keys become the generation defaults; the golden file has none
// (its generation_config.json gives no sampling fields).
TEST(GgufTokenizer, ReadsSamplingDefaults) {
  absl::StatusOr<GgufFile> golden = GgufFile::Open(kGolden, false);
  absl::StatusOr<text::TokenizerSpec> plain = ReadGgufTokenizer(*golden);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->generation.temperature.has_value());
  EXPECT_FALSE(plain->generation.min_p.has_value());

  const std::string path = Build("sampling", {}, [](GgufBuilder& b) {
    b.F32("general.sampling.temp", 1.0f);
    b.F32("general.sampling.top_p", 0.95f);
    b.I32("general.sampling.top_k", 64);
    b.F32("general.sampling.min_p", 0.0f);
    b.F32("general.sampling.penalty_repeat", 1.1f);
    b.I32("general.sampling.penalty_last_n", 128);
    b.Str("general.sampling.sequence", "top_k;top_p;temp");  // not read
  });
  absl::StatusOr<GgufFile> file = GgufFile::Open(path, false);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<text::TokenizerSpec> spec = ReadGgufTokenizer(*file);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->generation.temperature, 1.0f);
  EXPECT_EQ(spec->generation.top_p, 0.95f);
  EXPECT_EQ(spec->generation.top_k, 64);
  EXPECT_EQ(spec->generation.min_p, 0.0f);  // a declared 0 is kept
  EXPECT_EQ(spec->generation.repetition_penalty, 1.1f);
  EXPECT_EQ(spec->generation.repeat_last_n, 128);
  EXPECT_FALSE(spec->generation.typical_p.has_value());

  EXPECT_THAT(Error(Build("sampling_type", {},
                          [](GgufBuilder& b) { b.Str("general.sampling.temp", "hot"); })),
              HasSubstr("general.sampling.temp: must be a number"));
  EXPECT_THAT(Error(Build("sampling_k_type", {},
                          [](GgufBuilder& b) { b.F32("general.sampling.top_k", 4.5f); })),
              HasSubstr("general.sampling.top_k: must be an integer"));
}

TEST(GgufTokenizer, ErrorsNameTheKey) {
  EXPECT_THAT(Error(Build("no_model", {"tokenizer.ggml.model"}, [](GgufBuilder&) {})),
              HasSubstr("tokenizer.ggml.model: missing"));
  EXPECT_THAT(Error(Build("llama", {"tokenizer.ggml.model"},
                          [](GgufBuilder& b) { b.Str("tokenizer.ggml.model", "gpt2"); })),
              HasSubstr("tokenizer.ggml.model \"gpt2\" is not supported (supported: gemma4, llama)"));
  EXPECT_THAT(Error(Build("short_scores", {"tokenizer.ggml.scores"},
                          [](GgufBuilder& b) {
                            b.Array<float>("tokenizer.ggml.scores", GgufValueType::kF32,
                                           std::vector<float>(511, 0.0f));
                          })),
              HasSubstr("tokenizer.ggml.scores: has 511 entries but tokenizer.ggml.tokens has 512"));
  EXPECT_THAT(Error(Build("long_types", {"tokenizer.ggml.token_type"},
                          [](GgufBuilder& b) {
                            b.Array<int32_t>("tokenizer.ggml.token_type", GgufValueType::kI32,
                                             std::vector<int32_t>(513, 1));
                          })),
              HasSubstr("tokenizer.ggml.token_type: has 513 entries"));
  EXPECT_THAT(Error(Build("bad_merge", {"tokenizer.ggml.merges"},
                          [](GgufBuilder& b) {
                            b.StrArray("tokenizer.ggml.merges", {"\xE2\x96\x81 t", "zz q"});
                          })),
              HasSubstr("tokenizer.ggml.merges[1]: unknown piece \"zz\""));
  EXPECT_THAT(Error(Build("merge_no_space", {"tokenizer.ggml.merges"},
                          [](GgufBuilder& b) { b.StrArray("tokenizer.ggml.merges", {"ab"}); })),
              HasSubstr("tokenizer.ggml.merges[0]: \"ab\" is not \"a b\""));
  EXPECT_THAT(Error(Build("bos_range", {"tokenizer.ggml.bos_token_id"},
                          [](GgufBuilder& b) { b.U32("tokenizer.ggml.bos_token_id", 512); })),
              HasSubstr("tokenizer.ggml.bos_token_id: 512 is out of range [0, 512)"));
  EXPECT_THAT(Error(Build("tokens_type", {"tokenizer.ggml.tokens"},
                          [](GgufBuilder& b) {
                            b.Array<int32_t>("tokenizer.ggml.tokens", GgufValueType::kI32, {1, 2});
                          })),
              HasSubstr("tokenizer.ggml.tokens: must be an array of strings"));
  EXPECT_THAT(Error(Build("template_type", {},
                          [](GgufBuilder& b) { b.U32("tokenizer.chat_template", 3); })),
              HasSubstr("tokenizer.chat_template: must be a string"));
}

}  // namespace
}  // namespace cortiq
