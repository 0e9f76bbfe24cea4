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

TEST(GgufTokenizer, ErrorsNameTheKey) {
  EXPECT_THAT(Error(Build("no_model", {"tokenizer.ggml.model"}, [](GgufBuilder&) {})),
              HasSubstr("tokenizer.ggml.model: missing"));
  EXPECT_THAT(Error(Build("llama", {"tokenizer.ggml.model"},
                          [](GgufBuilder& b) { b.Str("tokenizer.ggml.model", "gpt2"); })),
              HasSubstr("tokenizer.ggml.model \"gpt2\" is not supported (supported: gemma4)"));
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
