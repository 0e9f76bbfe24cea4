// The tokenizer against an independent implementation: ids and decoded text of tokenizers.js
// (@huggingface/tokenizers, generated offline by tests/tools/reference/encode.mjs) for the
// corpora tests/data/tokenizer/{corpus,random}.jsonl, with the golden tiny tokenizer and the
// real 262,144-token Gemma 3 tokenizer; the golden GGUFs give the ids of their tokenizer.json;
// the stream decoder's output equals Decode at every token boundary.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_util.h"
#include "formats/gguf.h"
#include "formats/gguf_tokenizer.h"
#include "formats/json_util.h"
#include "formats/tokenizer_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/unicode.h"

namespace cortiq {
namespace {

using text::TokenId;
using text::Tokenizer;

const std::string kData = CORTIQ_TEST_DATA_DIR;
const std::string kGemma3 = CORTIQ_GEMMA3_TOKENIZER_DIR;

struct Reference {
  std::string text;
  std::vector<TokenId> ids;
  std::vector<TokenId> ids_special;
  std::string decoded;
};

std::vector<TokenId> Ids(const llvm::json::Value* v) {
  std::vector<TokenId> ids;
  for (const llvm::json::Value& e : *v->getAsArray()) ids.push_back(*e.getAsInteger());
  return ids;
}

// Reads corpus `name` and the reference output of `tokenizer` ("tiny" or "gemma3") for it.
std::vector<Reference> ReadReference(const std::string& tokenizer, const std::string& name) {
  const std::string dir = kData + "/tokenizer/";
  const std::string corpus = *ReadFileToString(dir + name + ".jsonl", 1 << 30);
  const std::string ref =
      *ReadFileToString(dir + tokenizer + "_" + name + "_ref.jsonl", 1 << 30);
  std::vector<std::string> texts;
  for (absl::string_view line : absl::StrSplit(corpus, '\n', absl::SkipEmpty())) {
    texts.push_back(*ParseJsonString(line));
  }
  std::vector<Reference> out;
  size_t i = 0;
  for (absl::string_view line : absl::StrSplit(ref, '\n', absl::SkipEmpty())) {
    absl::StatusOr<llvm::json::Value> v = ParseJson(line, "reference");
    EXPECT_TRUE(v.ok()) << v.status();
    const llvm::json::Object& o = *v->getAsObject();
    Reference r;
    r.text = texts.at(i++);
    r.ids = Ids(o.get("ids"));
    r.ids_special = Ids(o.get("ids_special"));
    r.decoded = o.getString("decoded")->str();
    out.push_back(std::move(r));
  }
  EXPECT_EQ(out.size(), texts.size());
  return out;
}

std::string Shown(const std::string& text) {
  return text.size() > 60 ? text.substr(0, 60) + "..." : text;
}

std::string WithoutBom(std::string s) {
  size_t at;
  while ((at = s.find("\xEF\xBB\xBF")) != std::string::npos) s.erase(at, 3);
  return s;
}

void ExpectMatches(const Tokenizer& tokenizer, const std::vector<Reference>& refs) {
  ASSERT_FALSE(refs.empty());
  for (size_t i = 0; i < refs.size(); ++i) {
    const Reference& r = refs[i];
    absl::StatusOr<std::vector<TokenId>> ids = tokenizer.Encode(r.text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, r.ids) << "line " << i + 1 << ": " << Shown(r.text);
    absl::StatusOr<std::vector<TokenId>> with_special =
        tokenizer.Encode(r.text, {.add_special_tokens = true});
    ASSERT_TRUE(with_special.ok());
    EXPECT_EQ(*with_special, r.ids_special) << "line " << i + 1;
    absl::StatusOr<std::string> decoded = tokenizer.Decode(r.ids);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    // tokenizers.js turns byte runs into text with TextDecoder, which drops a byte-order mark
    // (U+FEFF) at the start of a run; the Rust tokenizers (String::from_utf8) and cortiq keep it.
    EXPECT_EQ(WithoutBom(*decoded), WithoutBom(r.decoded)) << "line " << i + 1;
    if (r.text.find("\xEF\xBB\xBF") == std::string::npos) EXPECT_EQ(*decoded, r.decoded);
  }
}

// Streams `ids` one by one: every output is valid UTF-8, the outputs so far are a prefix of the
// full decode at every token boundary, and all of them together are the full decode.
void ExpectStreamsLikeDecode(const Tokenizer& tokenizer, const std::vector<TokenId>& ids,
                             text::DecodeOptions options = {}) {
  const std::string full = *tokenizer.Decode(ids, options);
  text::StreamDecoder stream(&tokenizer, options);
  std::string so_far;
  for (size_t k = 0; k < ids.size(); ++k) {
    absl::StatusOr<std::string> out = stream.Push(ids[k]);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(text::FindInvalidUtf8(*out), std::string::npos) << "after token " << k;
    so_far += *out;
    ASSERT_EQ(full.compare(0, so_far.size(), so_far), 0) << "after token " << k;
  }
  absl::StatusOr<std::string> rest = stream.Finish();
  ASSERT_TRUE(rest.ok());
  so_far += *rest;
  EXPECT_EQ(so_far, full);
}

absl::StatusOr<Tokenizer> LoadDir(const std::string& dir) {
  absl::StatusOr<text::TokenizerSpec> spec = ReadCheckpointTokenizer(dir);
  if (!spec.ok()) return spec.status();
  return Tokenizer::FromSpec(*spec);
}

TEST(TinyTokenizer, MatchesTokenizersJsOnTheCorpus) {
  absl::StatusOr<Tokenizer> t = LoadDir(kData + "/models/tiny-a-f32");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectMatches(*t, ReadReference("tiny", "corpus"));
  ExpectMatches(*t, ReadReference("tiny", "random"));
}

TEST(TinyTokenizer, GoldenGgufsTokenizeLikeTheirTokenizerJson) {
  for (const char* name : {"tiny-a-f32.gguf", "tiny-a-bf16.gguf"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<GgufFile> gguf = GgufFile::Open(kData + "/models/" + name, false);
    ASSERT_TRUE(gguf.ok()) << gguf.status();
    absl::StatusOr<text::TokenizerSpec> spec = ReadGgufTokenizer(*gguf);
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<Tokenizer> t = Tokenizer::FromSpec(*spec);
    ASSERT_TRUE(t.ok()) << t.status();
    ExpectMatches(*t, ReadReference("tiny", "corpus"));
    ExpectMatches(*t, ReadReference("tiny", "random"));
    EXPECT_THAT(t->config().generation.eos_token_ids, testing::ElementsAre(1, 6));
  }
}

// The Gemma 3 checks share one load of the 33 MB tokenizer.json (each ctest test is a process).
void MatchesTokenizersJsOnTheCorpus(const Tokenizer* tokenizer_) {
  EXPECT_EQ(tokenizer_->vocab_size(), 262145u);  // 262,144 pieces + <image_soft_token>
  EXPECT_EQ(tokenizer_->section().num_merges(), 514906u);
  ExpectMatches(*tokenizer_, ReadReference("gemma3", "corpus"));
}

void MatchesTokenizersJsOnRandomText(const Tokenizer* tokenizer_) {
  ExpectMatches(*tokenizer_, ReadReference("gemma3", "random"));
}

void KnownIds(const Tokenizer* tokenizer_) {
  // The ids the issue names: <bos> Hello , (tokenizers.js agrees, see the corpus references).
  EXPECT_EQ(*tokenizer_->Decode({2, 9259, 236764}), "<bos>Hello,");
  EXPECT_THAT(*tokenizer_->Encode("Hello,", {.add_special_tokens = true}),
              testing::ElementsAre(2, 9259, 236764));
  EXPECT_EQ(*tokenizer_->Decode({2, 9259, 236764}, {.skip_special_tokens = true}), "Hello,");
}

void StreamDecoderEqualsDecodeAtEveryTokenBoundary(const Tokenizer* tokenizer_) {
  for (const Reference& r : ReadReference("gemma3", "corpus")) {
    SCOPED_TRACE(Shown(r.text));
    ExpectStreamsLikeDecode(*tokenizer_, r.ids);
    ExpectStreamsLikeDecode(*tokenizer_, r.ids_special, {.skip_special_tokens = true});
  }
}

void StreamDecoderHoldsBackSplitCharacters(const Tokenizer* tokenizer_) {
  // Every character of this text is spelled with byte-fallback tokens in some runs: split it at
  // every byte, encode each byte as its <0xXX> token with normal tokens between, and check each
  // prefix of the stream is complete UTF-8.
  const std::string text = "a€b😀c\xC3\xA9";  // 1, 3, 1, 4, 1, 2 bytes
  const auto byte_token = [&](unsigned char b) {
    const char* hex = "0123456789ABCDEF";
    return *tokenizer_->TokenToId(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
  };
  std::vector<TokenId> ids;
  for (const char c : text) {
    const unsigned char b = static_cast<unsigned char>(c);
    ids.push_back(b < 0x80 ? *tokenizer_->TokenToId(std::string(1, c)) : byte_token(b));
  }
  EXPECT_EQ(*tokenizer_->Decode(ids), text);
  ExpectStreamsLikeDecode(*tokenizer_, ids);
  text::StreamDecoder stream(tokenizer_);
  std::vector<std::string> outputs;
  for (TokenId id : ids) outputs.push_back(*stream.Push(id));
  outputs.push_back(*stream.Finish());
  // a, then € only once its run ends (at b), and so on.
  EXPECT_THAT(outputs, testing::ElementsAre("a", "", "", "", "€b", "", "", "", "", "😀c", "", "",
                                            "é"));
  // A run that is not valid UTF-8 decodes to one U+FFFD per byte, in the stream too.
  const std::vector<TokenId> bad = {*tokenizer_->TokenToId("<0xE2>"),
                                    *tokenizer_->TokenToId("<0x82>"),
                                    *tokenizer_->TokenToId("a")};
  EXPECT_EQ(*tokenizer_->Decode(bad), "\xEF\xBF\xBD\xEF\xBF\xBD" "a");
  ExpectStreamsLikeDecode(*tokenizer_, bad);
}

// A run of byte tokens longer than StreamDecoder::kMaxHeldBackBytes (a model looping on one)
// streams as its characters complete instead of only when the run ends.
void StreamDecoderStreamsLongByteRuns(const Tokenizer* tokenizer_) {
  const auto id = [&](const char* piece) { return *tokenizer_->TokenToId(piece); };
  constexpr size_t kHeld = text::StreamDecoder::kMaxHeldBackBytes;
  const std::string kReplacement = "\xEF\xBF\xBD";
  {
    // 'y' as <0x79>, 40 times: nothing for 16 tokens, then the 17 bytes so far, then each one.
    text::StreamDecoder stream(tokenizer_);
    std::vector<TokenId> ids(40, id("<0x79>"));
    for (size_t k = 0; k < ids.size(); ++k) {
      const std::string out = *stream.Push(ids[k]);
      EXPECT_EQ(out, k < kHeld ? "" : k == kHeld ? std::string(kHeld + 1, 'y') : "y") << k;
    }
    EXPECT_EQ(*stream.Finish(), "");
    EXPECT_TRUE(stream.streamed_long_byte_run());
    // A valid run streams to exactly its decoding.
    ExpectStreamsLikeDecode(*tokenizer_, ids);
  }
  {
    // In a long run, a character split over byte tokens waits for its last byte; a byte that
    // starts no well-formed sequence is one U+FFFD at once; an unfinished character at the end
    // of the run is U+FFFD (as Decode has it) with the token that ends the run.
    text::StreamDecoder stream(tokenizer_);
    std::vector<std::string> outputs;
    for (size_t k = 0; k < kHeld + 1; ++k) outputs.push_back(*stream.Push(id("<0x79>")));
    for (const char* piece : {"<0xE2>", "<0x82>", "<0xAC>", "<0x80>", "<0x79>", "<0xF0>", "a"}) {
      outputs.push_back(*stream.Push(id(piece)));
    }
    outputs.push_back(*stream.Finish());
    const std::vector<std::string> tail(outputs.end() - 8, outputs.end());
    EXPECT_THAT(tail, testing::ElementsAre("", "", "€", kReplacement, "y", "",
                                           kReplacement + "a", ""));
    EXPECT_EQ(outputs[kHeld], std::string(kHeld + 1, 'y'));
  }
  {
    // HeldText: what Finish would give now, without taking it: the held run's text ("a\n" spelled
    // <0x61> <0x0A>; U+FFFD per byte once an invalid byte joins the run), then nothing after the
    // run ends with a normal token.
    text::StreamDecoder stream(tokenizer_);
    EXPECT_EQ(*stream.HeldText(), "");
    EXPECT_EQ(*stream.Push(id("<0x61>")), "");
    EXPECT_EQ(*stream.Push(id("<0x0A>")), "");
    EXPECT_EQ(*stream.HeldText(), "a\n");
    EXPECT_EQ(*stream.HeldText(), "a\n");  // unchanged by asking
    EXPECT_EQ(*stream.Push(id("<0x80>")), "");
    EXPECT_EQ(*stream.HeldText(), kReplacement + kReplacement + kReplacement);
    EXPECT_EQ(*stream.Push(id("a")), kReplacement + kReplacement + kReplacement + "a");
    EXPECT_EQ(*stream.HeldText(), "");
    EXPECT_EQ(*stream.Push(id("<0x0A>")), "");
    EXPECT_EQ(*stream.Finish(), "\n");
  }
  {
    // Runs of kMaxHeldBackBytes or fewer stay whole, even when they are not valid UTF-8: the
    // stream equals Decode, one U+FFFD per byte.
    std::vector<TokenId> ids(kHeld - 1, id("<0x79>"));
    ids.push_back(id("<0x80>"));
    ids.push_back(id("a"));
    ExpectStreamsLikeDecode(*tokenizer_, ids);
    text::StreamDecoder stream(tokenizer_);
    for (const TokenId t : ids) (void)*stream.Push(t);
    EXPECT_FALSE(stream.streamed_long_byte_run());
  }
}

TEST(Gemma3Tokenizer, MatchesTokenizersJsAndStreams) {
  absl::StatusOr<text::TokenizerSpec> spec = ReadCheckpointTokenizer(kGemma3);
  ASSERT_TRUE(spec.ok()) << spec.status();
  // Gemma 3's tokenizer_config: eos_token <end_of_turn> (106), the chat template.
  EXPECT_EQ(spec->eos_id, 106);
  EXPECT_EQ(spec->chat_template.source, "tokenizer_config.json");
  EXPECT_NE(spec->chat_template.text.find("<start_of_turn>"), std::string::npos);
  absl::StatusOr<Tokenizer> t = Tokenizer::FromSpec(*spec);
  ASSERT_TRUE(t.ok()) << t.status();
  {
    SCOPED_TRACE("corpus");
    MatchesTokenizersJsOnTheCorpus(&*t);
  }
  {
    SCOPED_TRACE("random");
    MatchesTokenizersJsOnRandomText(&*t);
  }
  {
    SCOPED_TRACE("heldout");  // tests/tools/reference/make_heldout.py
    ExpectMatches(*t, ReadReference("gemma3", "heldout"));
  }
  KnownIds(&*t);
  StreamDecoderEqualsDecodeAtEveryTokenBoundary(&*t);
  StreamDecoderHoldsBackSplitCharacters(&*t);
  StreamDecoderStreamsLongByteRuns(&*t);
}

TEST(TinyTokenizer, StreamDecoderEqualsDecodeOnTheCorpus) {
  absl::StatusOr<Tokenizer> t = LoadDir(kData + "/models/tiny-a-f32");
  ASSERT_TRUE(t.ok()) << t.status();
  for (const Reference& r : ReadReference("tiny", "corpus")) {
    SCOPED_TRACE(Shown(r.text));
    ExpectStreamsLikeDecode(*t, r.ids);
  }
  StreamDecoderStreamsLongByteRuns(&*t);
}

TEST(TinyTokenizer, RoundTripsTextWithoutTheSpaceMarker) {
  absl::StatusOr<Tokenizer> t = LoadDir(kData + "/models/tiny-a-f32");
  ASSERT_TRUE(t.ok()) << t.status();
  for (const Reference& r : ReadReference("tiny", "random")) {
    if (r.text.find("\xE2\x96\x81") != std::string::npos) continue;  // "▁" decodes to " "
    EXPECT_EQ(*t->Decode(*t->Encode(r.text)), r.text);
  }
}

TEST(CheckpointTokenizer, ReadsGenerationAndTokenizerConfigs) {
  absl::StatusOr<text::TokenizerSpec> spec = ReadCheckpointTokenizer(kData + "/models/tiny-a-f32");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->bos_id, 2);
  EXPECT_EQ(spec->eos_id, 1);
  EXPECT_EQ(spec->pad_id, 0);
  EXPECT_THAT(spec->generation.eos_token_ids, testing::ElementsAre(1));
}

// generation_config.json's sampling fields (transformers GenerationConfig names), as Gemma 4's
// and other models' files spell them; errors name the file and the field.
TEST(CheckpointTokenizer, ReadsSamplingFields) {
  absl::StatusOr<text::TokenizerSpec> spec = ReadCheckpointTokenizer(kData + "/models/tiny-a-f32");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(ApplyGenerationConfig(
                  R"({"do_sample": true, "temperature": 1.0, "top_p": 0.95, "top_k": 64,
                      "min_p": 0.05, "typical_p": 0.9, "repetition_penalty": 1.05,
                      "eos_token_id": [1, 6]})",
                  "generation_config.json", &*spec)
                  .ok());
  const text::GenerationDefaults& g = spec->generation;
  EXPECT_EQ(g.do_sample, true);
  EXPECT_EQ(g.temperature, 1.0f);
  EXPECT_EQ(g.top_p, 0.95f);
  EXPECT_EQ(g.top_k, 64);
  EXPECT_EQ(g.min_p, 0.05f);
  EXPECT_EQ(g.typical_p, 0.9f);
  EXPECT_EQ(g.repetition_penalty, 1.05f);
  EXPECT_THAT(g.eos_token_ids, testing::ElementsAre(1, 6));
  const absl::Status bad =
      ApplyGenerationConfig(R"({"min_p": 2})", "generation_config.json", &*spec);
  EXPECT_EQ(std::string(bad.message()), "generation_config.json: min_p: must be in [0, 1]");
  EXPECT_FALSE(
      ApplyGenerationConfig(R"({"repetition_penalty": "x"})", "g.json", &*spec).ok());
}

// SentencePiece GGUFs (tokenizer.ggml.model = "llama", written with gguf-py by
// tests/tools/reference/make_spm_ggufs.py: 6261 pieces with scores that often tie, 256 byte
// pieces, CONTROL and USER_DEFINED tokens) against llama.cpp's llama-tokenize (llm_tokenizer_spm;
// tests/tools/reference/spm_reference.py) on the corpora and tests/data/tokenizer/spm/extra.jsonl:
// with add_space_prefix and bos, and without either. Decoding gives the text back where no
// special token, unk or literal "▁" is involved; the stream decoder agrees with Decode.
absl::StatusOr<Tokenizer> LoadGguf(const std::string& path) {
  absl::StatusOr<GgufFile> gguf = GgufFile::Open(path, false);
  if (!gguf.ok()) return gguf.status();
  absl::StatusOr<text::TokenizerSpec> spec = ReadGgufTokenizer(*gguf);
  if (!spec.ok()) return spec.status();
  return Tokenizer::FromSpec(*spec);
}

void ExpectMatchesLlamaCpp(const std::string& name) {
  const std::string dir = kData + "/tokenizer/spm/";
  absl::StatusOr<Tokenizer> t = LoadGguf(dir + name + ".gguf");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->config().model_type, text::ModelType::kSpm);
  const std::string ref = *ReadFileToString(dir + name + "_ref.jsonl", 1 << 30);
  size_t line_number = 0, round_trips = 0;
  for (absl::string_view line : absl::StrSplit(ref, '\n', absl::SkipEmpty())) {
    ++line_number;
    absl::StatusOr<llvm::json::Value> v = ParseJson(line, "reference");
    ASSERT_TRUE(v.ok()) << v.status();
    const llvm::json::Object& o = *v->getAsObject();
    const std::string text = o.getString("text")->str();
    const std::vector<TokenId> expected = Ids(o.get("ids"));
    absl::StatusOr<std::vector<TokenId>> ids = t->Encode(text, {.add_special_tokens = true});
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, expected) << name << " line " << line_number << ": " << Shown(text);
    // The text back, but for the bos the file adds (a special token, skipped).
    const text::DecodeOptions skip{.skip_special_tokens = true};
    // Added tokens (special or not) and unk are left out: the space prefix after an added
    // token is a real space in the decoded text.
    const bool adds_bos = !t->config().post_processor.single.empty();
    const TokenId bos = t->config().bos_id.value_or(-1);
    bool plain = text.find("\xE2\x96\x81") == std::string::npos;
    for (size_t k = 0; k < ids->size(); ++k) {
      const TokenId id = (*ids)[k];
      plain &= (k == 0 && adds_bos && id == bos) ||
               ((t->section().flags(id) & text::kTokenAdded) == 0 && id != 0);
    }
    if (plain) {
      ++round_trips;
      EXPECT_EQ(*t->Decode(*ids, skip), text) << name << " line " << line_number;
    }
    // (The Strip decoder makes streaming re-decode the text per token: short texts only.)
    if (text.size() < 2000) ExpectStreamsLikeDecode(*t, *ids, skip);
  }
  EXPECT_EQ(line_number, 82u + 300u + 29u);
  EXPECT_GT(round_trips, 300u);
}

TEST(SpmGguf, WithSpacePrefixMatchesLlamaCpp) { ExpectMatchesLlamaCpp("spm-prefix"); }
TEST(SpmGguf, WithoutSpacePrefixMatchesLlamaCpp) { ExpectMatchesLlamaCpp("spm-noprefix"); }

// The merge order of llm_tokenizer_spm (score, then leftmost) on a hand-made vocabulary; a
// character that is no piece and has no byte pieces becomes one unk token (llama.cpp would
// throw); a word of 100k characters (O(n log n)).
TEST(SpmGguf, UnknownCharacterWithoutBytePiecesIsUnk) {
  text::TokenizerSpec spec;
  spec.model.type = text::ModelType::kSpm;
  spec.model.unk_id = 0;
  const std::vector<std::pair<std::string, float>> pieces = {
      {"<unk>", 0}, {"a", -1}, {"b", -1}, {"ab", -2}, {"ba", -1}, {"\xE2\x96\x81", -1},
      {"aa", -1}};
  for (const auto& [piece, score] : pieces) {
    text::TokenEntry e;
    e.piece = piece;
    e.in_model = true;
    e.score = score;
    spec.tokens.push_back(e);
  }
  absl::StatusOr<Tokenizer> t = Tokenizer::FromSpec(spec);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->section().Score(3), -2.0f);
  // "aba": "ba" (-1) outscores "ab" (-2) and merges first; "a" + "ba" is no piece.
  EXPECT_EQ(*t->Encode("aba"), (std::vector<TokenId>{1, 4}));
  // Equal scores: the leftmost pair first, so "aaa" is "aa" + "a", not "a" + "aa".
  EXPECT_EQ(*t->Encode("aaa"), (std::vector<TokenId>{6, 1}));
  EXPECT_EQ(*t->Encode("a\xC3\xA9" "b"), (std::vector<TokenId>{1, 0, 2}));
  const std::vector<TokenId> long_word = *t->Encode(std::string(100000, 'a') + "b");
  ASSERT_EQ(long_word.size(), 50001u);
  EXPECT_EQ(long_word[49999], 6);
  EXPECT_EQ(long_word.back(), 2);
}

}  // namespace
}  // namespace cortiq
