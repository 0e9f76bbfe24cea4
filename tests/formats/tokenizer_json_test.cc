// ParseTokenizerJson (formats/tokenizer_json.h): what it reads (both merge spellings, repeated
// merges, every component), and bad input → errors naming the file and field, never a crash.
#include "formats/tokenizer_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cortiq {
namespace {

using testing::HasSubstr;

// A small BPE tokenizer.json with `merges` (JSON text) and optional extra top-level members.
std::string Json(const std::string& merges, const std::string& extra = "",
                 const std::string& model_extra = "") {
  return absl::StrCat(R"({"version":"1.0",)", extra,
                      R"("model":{"type":"BPE","unk_token":"<unk>","byte_fallback":true,)",
                      model_extra,
                      R"("vocab":{"<unk>":0,"a":1,"b":2,"ab":3,"c":4,"abc":5},"merges":)", merges,
                      "}}");
}

std::string Error(const std::string& json) {
  absl::StatusOr<text::TokenizerSpec> spec = ParseTokenizerJson(json, "t.json");
  EXPECT_FALSE(spec.ok());
  return std::string(spec.status().message());
}

TEST(TokenizerJson, BothMergeSpellings) {
  for (const std::string merges : {std::string(R"(["a b","ab c"])"),
                                   std::string(R"([["a","b"],["ab","c"]])")}) {
    absl::StatusOr<text::TokenizerSpec> spec = ParseTokenizerJson(Json(merges), "t.json");
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_EQ(spec->model.merges.size(), 2u);
    EXPECT_EQ(spec->model.merges[0].left, 1);
    EXPECT_EQ(spec->model.merges[0].right, 2);
    EXPECT_EQ(spec->model.merges[0].result, 3);
    EXPECT_EQ(spec->model.merges[1].result, 5);
    EXPECT_EQ(spec->model.merges[1].rank, 1u);
    EXPECT_EQ(spec->model.unk_id, 0);
    EXPECT_TRUE(spec->model.byte_fallback);
    EXPECT_EQ(spec->tokens.size(), 6u);
  }
}

TEST(TokenizerJson, RepeatedMergeKeepsItsLastRank) {
  // tokenizers collects the merges into a map: the last rank of a pair wins.
  absl::StatusOr<text::TokenizerSpec> spec =
      ParseTokenizerJson(Json(R"(["a b","ab c","a b"])"), "t.json");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->model.merges.size(), 2u);
  EXPECT_EQ(spec->model.merges[0].rank, 2u);
}

TEST(TokenizerJson, ReadsEveryComponent) {
  const std::string extra = R"(
    "added_tokens":[{"id":0,"content":"<unk>","special":true,"normalized":false},
                    {"id":6,"content":"<x>","lstrip":true,"rstrip":true,"single_word":true}],
    "normalizer":{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Prepend","prepend":"_"},
                  {"type":"Replace","pattern":{"Regex":" +"},"content":"_"}]},
    "pre_tokenizer":{"type":"Sequence","pretokenizers":[
        {"type":"Split","pattern":{"String":"_"},"behavior":"MergedWithNext","invert":false},
        {"type":"Metaspace","replacement":"_","prepend_scheme":"first","split":false}]},
    "post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},
        {"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["a"]}}},
    "decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"_"},"content":" "},
        {"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},)";
  absl::StatusOr<text::TokenizerSpec> spec = ParseTokenizerJson(Json("[]", extra), "t.json");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->added_tokens.size(), 2u);
  EXPECT_TRUE(spec->added_tokens[1].lstrip && spec->added_tokens[1].rstrip &&
              spec->added_tokens[1].single_word && spec->added_tokens[1].normalized);
  EXPECT_EQ(spec->tokens.size(), 7u);  // the added token <x> (id 6) extends the table
  EXPECT_EQ(spec->tokens[6].piece, "<x>");
  ASSERT_TRUE(spec->normalizer.has_value());
  EXPECT_EQ(spec->normalizer->children.size(), 3u);
  ASSERT_TRUE(spec->pre_tokenizer.has_value());
  EXPECT_EQ(spec->pre_tokenizer->children[0].behavior, text::SplitBehavior::kMergedWithNext);
  EXPECT_EQ(spec->pre_tokenizer->children[1].prepend_scheme, text::PrependScheme::kFirst);
  ASSERT_EQ(spec->post_processor.single.size(), 2u);
  EXPECT_THAT(spec->post_processor.single[0].ids, testing::ElementsAre(1));
  EXPECT_EQ(spec->bos_id, 1);
  ASSERT_TRUE(spec->decoder.has_value());
  EXPECT_EQ(spec->decoder->children[3].start, 1u);
}

TEST(TokenizerJson, ErrorsNameTheField) {
  EXPECT_THAT(Error("{"), HasSubstr("t.json: malformed JSON"));
  EXPECT_THAT(Error("[]"), HasSubstr("t.json: tokenizer.json must be a JSON object, got an array"));
  EXPECT_THAT(Error(R"({"version":"1.0"})"), HasSubstr("t.json: model: missing"));
  EXPECT_THAT(Error(Json(R"(["a x"])")), HasSubstr("model.merges[0]: unknown piece \"x\""));
  EXPECT_THAT(Error(Json(R"(["a b c"])")),
              HasSubstr("model.merges[0]: \"a b c\" is not two pieces separated by one space"));
  EXPECT_THAT(Error(Json(R"([["a"]])")), HasSubstr("model.merges[0]: must be two strings, got 1"));
  EXPECT_THAT(Error(Json(R"(["b c"])")),
              HasSubstr("model.merges[0]: the merged piece \"bc\" is not in the vocabulary"));
  EXPECT_THAT(Error(Json(R"([7])")), HasSubstr("model.merges[0]: must be a string"));
  EXPECT_THAT(Error(Json("[]", "", R"("dropout":0.1,)")), HasSubstr("model.dropout"));
  EXPECT_THAT(Error(R"({"model":{"type":"WordPiece","vocab":{}}})"),
              HasSubstr("model.type: \"WordPiece\" is not supported (supported: BPE)"));
  EXPECT_THAT(Error(Json("[]", R"("pre_tokenizer":{"type":"ByteLevel"},)")),
              HasSubstr("pre_tokenizer: type \"ByteLevel\" is not supported (supported: "
                        "Sequence, Split, Metaspace)"));
  EXPECT_THAT(Error(Json("[]", R"("normalizer":{"type":"Lowercase"},)")),
              HasSubstr("normalizer: type \"Lowercase\" is not supported"));
  EXPECT_THAT(Error(Json("[]", R"("decoder":{"type":"Metaspace"},)")),
              HasSubstr("decoder: type \"Metaspace\" is not supported"));
  EXPECT_THAT(Error(Json("[]", R"("post_processor":{"type":"ByteLevel"},)")),
              HasSubstr("post_processor: type \"ByteLevel\" is not supported"));
  EXPECT_THAT(Error(Json("[]", R"("truncation":{"max_length":512},)")),
              HasSubstr("truncation: must be null"));
  EXPECT_THAT(Error(Json("[]", R"("pre_tokenizer":{"type":"Split","pattern":{"String":"x"},"behavior":"Sideways"},)")),
              HasSubstr("pre_tokenizer.behavior: \"Sideways\" is not one of"));
  EXPECT_THAT(Error(Json("[]", R"("added_tokens":[{"id":-1,"content":"x"}],)")),
              HasSubstr("added_tokens[0].id: -1 is out of range"));
  EXPECT_THAT(Error(Json("[]", R"("added_tokens":[{"id":99999999,"content":"x"}],)")),
              HasSubstr("added_tokens[0].id"));
  EXPECT_THAT(Error(Json("[]", R"("added_tokens":[{"id":3,"content":""}],)")),
              HasSubstr("added_tokens[0].content: is empty"));
  EXPECT_THAT(Error(Json("[]", R"("added_tokens":[{"id":1,"content":"<a>"},{"id":1,"content":"<b>"}],)")),
              HasSubstr("added_tokens[1].id: 1 is also the id of added_tokens[0] \"<a>\""));
  EXPECT_THAT(Error(R"({"model":{"type":"BPE","vocab":{"a":0,"b":0},"merges":[]}})"),
              HasSubstr("model.vocab: id 0 is given to both"));
  EXPECT_THAT(Error(R"({"model":{"type":"BPE","vocab":{"a":-3},"merges":[]}})"),
              HasSubstr("model.vocab: the id of \"a\" (-3) is not an integer"));
  EXPECT_THAT(Error(R"({"model":{"type":"BPE","vocab":{"a":0,"b":16000000},"merges":[]}})"),
              HasSubstr("model.vocab: the largest id 16000000 is far beyond the 2 tokens named"));
  EXPECT_THAT(Error(R"({"model":{"type":"BPE","vocab":{"a":0,"a":1},"merges":[]}})"),
              HasSubstr("duplicate key \"a\""));
  EXPECT_THAT(Error(R"({"model":{"type":"BPE","unk_token":"<u>","vocab":{"a":0},"merges":[]}})"),
              HasSubstr("model.unk_token: \"<u>\" is not in the vocabulary"));
  EXPECT_THAT(Error(Json("[]", R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>"}}],"special_tokens":{}},)")),
              HasSubstr("post_processor.single[0]: special token \"<s>\" is not in special_tokens"));
}

TEST(TokenizerJson, DeepNestingAndHugeInputAreRejectedCleanly) {
  const std::string deep = Json("[]", absl::StrCat(R"("normalizer":)", std::string(100000, '['),
                                                   std::string(100000, ']'), ","));
  EXPECT_THAT(Error(deep), HasSubstr("nesting deeper than 64 levels"));
  std::string nested_sequence = R"({"type":"NFC"})";
  for (int i = 0; i < 40; ++i) {
    nested_sequence = absl::StrCat(R"({"type":"Sequence","normalizers":[)", nested_sequence, "]}");
  }
  // 40 Sequence levels = 81 JSON levels: over the JSON depth limit too.
  EXPECT_THAT(Error(Json("[]", absl::StrCat(R"("normalizer":)", nested_sequence, ","))),
              HasSubstr("nesting deeper"));
  // A million tiny objects in added_tokens: read one at a time, rejected on the first bad one.
  std::string many = R"("added_tokens":[)";
  for (int i = 0; i < 200000; ++i) absl::StrAppend(&many, R"({"id":1,"content":"a"},)");
  absl::StrAppend(&many, R"({"id":"x"}],)");
  EXPECT_THAT(Error(Json("[]", many)), HasSubstr("added_tokens[200000].id: must be an integer"));
}

}  // namespace
}  // namespace cortiq
