// Tests of the C API's text and sampling calls (cortiq.h API 1.3) on the compiled tiny-a
// artifact: tokenize / detokenize / pieces / the stream decoder / special tokens / the chat
// format agree with the runtime's tokenizer and renderer (tested against Hugging Face tokenizers
// and the official template elsewhere); greedy sampling picks the argmax of the golden float64
// logits; seeded sampling equals the C++ sampler chain; every call's NULL and bad-argument
// errors; a model without a tokenizer; the C++ wrappers.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact.h"
#include "runtime/cortiq.h"
#include "runtime/cortiq.hpp"
#include "runtime/generation/model_text.h"
#include "runtime/sampling/sampler.h"
#include "tests/e2e/golden_data.h"

namespace cortiq {
namespace {

using ::cortiq::api::ModelPtr;
using ::cortiq::api::SessionPtr;
using ::testing::HasSubstr;

ModelPtr OpenModel(const std::string& path) {
  cortiq_model* model = nullptr;
  EXPECT_EQ(cortiq_model_open(path.c_str(), &model), CORTIQ_STATUS_OK) << cortiq_last_error();
  return ModelPtr(model);
}

class CApiTextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ArtifactPath("tiny-a-f32", "opt");
    model_ = OpenModel(path_);
    ASSERT_NE(model_, nullptr);
    absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path_);
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    artifact_ = *std::move(artifact);
    absl::StatusOr<text::Tokenizer> tokenizer = LoadArtifactTokenizer(*artifact_);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_.emplace(*std::move(tokenizer));
  }
  std::vector<int32_t> Tokenize(const std::string& text, int add_special) {
    size_t n = 0;
    EXPECT_EQ(cortiq_tokenize(model_.get(), text.data(), text.size(), add_special, nullptr, 0, &n),
              CORTIQ_STATUS_OK)
        << cortiq_last_error();
    std::vector<int32_t> ids(n);
    size_t m = 0;
    EXPECT_EQ(cortiq_tokenize(model_.get(), text.data(), text.size(), add_special, ids.data(),
                              ids.size(), &m),
              CORTIQ_STATUS_OK)
        << cortiq_last_error();
    EXPECT_EQ(m, n);
    return ids;
  }
  std::string Detokenize(const std::vector<int32_t>& ids, int skip_special) {
    size_t length = 0;
    EXPECT_EQ(cortiq_detokenize(model_.get(), ids.data(), ids.size(), skip_special, nullptr, 0,
                                &length),
              CORTIQ_STATUS_OK)
        << cortiq_last_error();
    std::string text(length + 1, 'x');
    EXPECT_EQ(cortiq_detokenize(model_.get(), ids.data(), ids.size(), skip_special, &text[0],
                                text.size(), &length),
              CORTIQ_STATUS_OK);
    EXPECT_EQ(text[length], '\0');
    text.resize(length);
    return text;
  }

  std::string path_;
  ModelPtr model_;
  std::unique_ptr<Artifact> artifact_;
  std::optional<text::Tokenizer> tokenizer_;
};

const std::vector<std::string>& Texts() {
  static const std::vector<std::string> texts = {
      "Hello world", "  two  spaces\tand a tab\r\n", "héllo wörld — 日本語 🙂👍🏽",
      "<start_of_turn>user\nHi<end_of_turn>", "<bos>already has bos", "", "a\0b"};
  return texts;
}

// The ids are the runtime tokenizer's: Encode, or EncodePrompt with add_special (no second
// <bos> for a text that starts with it); detokenize inverts them.
TEST_F(CApiTextTest, TokenizeAndDetokenizeAreTheModelTokenizers) {
  for (std::string text : Texts()) {
    if (text == "a") text = std::string("a\0b", 3);
    EXPECT_EQ(Tokenize(text, 0), *tokenizer_->Encode(text)) << text;
    EXPECT_EQ(Tokenize(text, 1), *EncodePrompt(*tokenizer_, text)) << text;
    const std::vector<int32_t> ids = Tokenize(text, 0);
    EXPECT_EQ(Detokenize(ids, 0), *tokenizer_->Decode(ids)) << text;
    text::DecodeOptions skip;
    skip.skip_special_tokens = true;
    EXPECT_EQ(Detokenize(ids, 1), *tokenizer_->Decode(ids, skip)) << text;
  }
  // Fixed facts of the tiny-a vocabulary (Gemma's ids): <bos> = 2 first, once.
  EXPECT_EQ(Tokenize("Hi", 1).front(), 2);
  EXPECT_EQ(Tokenize("<bos>Hi", 1), Tokenize("<bos>Hi", 0));
  EXPECT_EQ(Tokenize("<bos>Hi", 0).front(), 2);
  EXPECT_EQ(Detokenize({2}, 0), "<bos>");
  EXPECT_EQ(Detokenize({2}, 1), "");
  // The golden prompt's ids come back from their own text.
  const GoldenCase c = LoadGoldenCase("tiny-a-f32-T6");
  const std::vector<int32_t> rest(c.tokens.begin() + 1, c.tokens.end());
  EXPECT_EQ(Detokenize(c.tokens, 0), "<bos>" + Detokenize(rest, 0));
}

TEST_F(CApiTextTest, TokenizeSizeQueryAndShortBuffers) {
  const std::string text = "Hello world, hello again";
  size_t n = 0;
  ASSERT_EQ(cortiq_tokenize(model_.get(), text.data(), text.size(), 1, nullptr, 0, &n),
            CORTIQ_STATUS_OK);
  ASSERT_GT(n, 2u);
  std::vector<int32_t> ids(n, -7);
  size_t m = 12345;
  EXPECT_EQ(cortiq_tokenize(model_.get(), text.data(), text.size(), 1, ids.data(), n - 1, &m),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("cortiq_tokenize: tokens holds"));
  EXPECT_EQ(m, 12345u);  // outputs untouched on failure
  EXPECT_EQ(ids[0], -7);
  size_t length = 0;
  ASSERT_EQ(cortiq_detokenize(model_.get(), ids.data(), 0, 0, nullptr, 0, &length),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(length, 0u);
  const std::vector<int32_t> hello = Tokenize("Hello", 0);
  ASSERT_EQ(cortiq_detokenize(model_.get(), hello.data(), hello.size(), 0, nullptr, 0, &length),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(length, 5u);
  char buffer[5];
  EXPECT_EQ(cortiq_detokenize(model_.get(), hello.data(), hello.size(), 0, buffer, 5, &length),
            CORTIQ_STATUS_INVALID_ARGUMENT);  // no room for the NUL
  EXPECT_THAT(cortiq_last_error(), HasSubstr("6 are needed"));
}

TEST_F(CApiTextTest, BadArgumentsAreErrors) {
  size_t n = 0;
  int32_t id = 0;
  int flag = 0;
  const char* text = nullptr;
  char buffer[64];
  EXPECT_EQ(cortiq_tokenize(nullptr, "a", 1, 0, nullptr, 0, &n), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("model is NULL"));
  EXPECT_EQ(cortiq_tokenize(model_.get(), "a", 1, 0, nullptr, 0, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_tokenize(model_.get(), nullptr, 3, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_tokenize(model_.get(), nullptr, 0, 0, nullptr, 0, &n), CORTIQ_STATUS_OK);
  EXPECT_EQ(cortiq_tokenize(model_.get(), "\xff\xfe", 2, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("UTF-8"));

  const int32_t bad[] = {5, 100000};
  EXPECT_EQ(cortiq_detokenize(model_.get(), bad, 2, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("tokens[1] = 100000 is outside"));
  const int32_t negative = -1;
  EXPECT_EQ(cortiq_detokenize(model_.get(), &negative, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_detokenize(model_.get(), nullptr, 2, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_detokenize(nullptr, bad, 1, 0, nullptr, 0, &n), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_detokenize(model_.get(), bad, 1, 0, nullptr, 0, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);

  EXPECT_EQ(cortiq_token_piece(model_.get(), -3, buffer, sizeof(buffer), &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_piece(model_.get(), 1 << 30, buffer, sizeof(buffer), &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_piece(nullptr, 2, buffer, sizeof(buffer), &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_piece(model_.get(), 2, buffer, sizeof(buffer), nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_piece(model_.get(), 2, buffer, 3, &n), CORTIQ_STATUS_INVALID_ARGUMENT);

  EXPECT_EQ(cortiq_model_special_token(model_.get(), 9, &id),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("kind 9 is not a cortiq_token_kind"));
  EXPECT_EQ(cortiq_model_special_token(model_.get(), -1, &id), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("kind -1 is not a cortiq_token_kind"));
  EXPECT_EQ(cortiq_model_special_token(nullptr, CORTIQ_TOKEN_BOS, &id),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_BOS, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_is_end_of_generation(model_.get(), 512, &flag),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_is_end_of_generation(model_.get(), -1, &flag),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_is_end_of_generation(nullptr, 1, &flag), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_is_end_of_generation(model_.get(), 1, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_is_end_of_turn(model_.get(), 512, &flag), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("token 512 is outside [0, 512)"));
  EXPECT_EQ(cortiq_token_is_end_of_turn(model_.get(), -1, &flag), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_is_end_of_turn(nullptr, 1, &flag), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_token_is_end_of_turn(model_.get(), 1, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);

  const cortiq_chat_message no_content[] = {{"user", nullptr}};
  EXPECT_EQ(cortiq_model_chat_format(model_.get(), no_content, 1, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("messages[0].content is NULL"));
  const cortiq_chat_message no_role[] = {{nullptr, "x"}};
  EXPECT_EQ(cortiq_model_chat_format(model_.get(), no_role, 1, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_chat_format(model_.get(), nullptr, 2, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_chat_format(model_.get(), nullptr, 0, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);  // no messages
  const cortiq_chat_message tool[] = {{"user", "x"}, {"tool", "{}"}};
  EXPECT_EQ(cortiq_model_chat_format(model_.get(), tool, 2, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("message 1: tool calls, tool responses and tool "
                                             "messages are not supported"));
  EXPECT_EQ(cortiq_model_chat_format(nullptr, tool, 1, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_chat_format(model_.get(), tool, 1, 1, 0, nullptr, 0, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);

  cortiq_decoder* decoder = nullptr;
  EXPECT_EQ(cortiq_decoder_create(nullptr, 1, &decoder), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_decoder_create(model_.get(), 1, nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(cortiq_decoder_create(model_.get(), 1, &decoder), CORTIQ_STATUS_OK);
  EXPECT_EQ(cortiq_decoder_push(decoder, 512, &text, &n), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_decoder_push(decoder, 5, nullptr, &n), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_decoder_push(decoder, 5, &text, nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_decoder_push(nullptr, 5, &text, &n), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_decoder_finish(nullptr, &text, &n), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_decoder_finish(decoder, nullptr, &n), CORTIQ_STATUS_INVALID_ARGUMENT);
  cortiq_decoder_free(decoder);
  cortiq_decoder_free(nullptr);

  cortiq_sampler* sampler = nullptr;
  cortiq_sampler_options options;
  EXPECT_EQ(cortiq_sampler_default_options(nullptr, &options), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_default_options(model_.get(), nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_create(nullptr, nullptr, &sampler), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_create(model_.get(), nullptr, nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(cortiq_sampler_default_options(model_.get(), &options), CORTIQ_STATUS_OK);
  options.top_p = 1.5f;
  EXPECT_EQ(cortiq_sampler_create(model_.get(), &options, &sampler),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("top_p must be in (0, 1], got 1.5"));
  ASSERT_EQ(cortiq_sampler_default_options(model_.get(), &options), CORTIQ_STATUS_OK);
  options.struct_size = 8;
  EXPECT_EQ(cortiq_sampler_create(model_.get(), &options, &sampler),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("struct_size"));
  ASSERT_EQ(cortiq_sampler_create(model_.get(), nullptr, &sampler), CORTIQ_STATUS_OK);
  EXPECT_EQ(cortiq_sampler_accept(sampler, 512), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_accept(sampler, -1), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_accept(nullptr, 1), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_reset(nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  uint64_t seed = 0;
  EXPECT_EQ(cortiq_sampler_seed(nullptr, &seed), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_seed(sampler, nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_sample(sampler, nullptr, &id), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_sample(nullptr, nullptr, &id), CORTIQ_STATUS_INVALID_ARGUMENT);
  cortiq_session* session = nullptr;
  ASSERT_EQ(cortiq_session_create(model_.get(), nullptr, &session), CORTIQ_STATUS_OK);
  EXPECT_EQ(cortiq_sampler_sample(sampler, session, nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_sampler_sample(sampler, session, &id), CORTIQ_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("no logits"));
  cortiq_session_free(session);
  cortiq_sampler_free(sampler);
  cortiq_sampler_free(nullptr);
}

// Pushing the ids one by one gives whole characters only, and all of it equals detokenize.
TEST_F(CApiTextTest, DecoderStreamsWholeCharacters) {
  for (const std::string& text : Texts()) {
    const std::vector<int32_t> ids = Tokenize(text, 1);
    for (int skip : {0, 1}) {
      api::Decoder decoder(api::Model(path_), skip != 0);
      std::string streamed;
      for (const int32_t id : ids) {
        const std::string piece = decoder.Push(id);
        // Never a partial UTF-8 sequence at the end of a piece.
        if (!piece.empty()) {
          size_t i = piece.size();
          size_t back = 0;
          while (i > 0 && (static_cast<unsigned char>(piece[i - 1]) & 0xC0) == 0x80) --i, ++back;
          ASSERT_GT(i, 0u);
          const unsigned char lead = static_cast<unsigned char>(piece[i - 1]);
          const size_t need = lead < 0x80 ? 0 : lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
          EXPECT_EQ(back, need) << text;
        }
        streamed += piece;
      }
      streamed += decoder.Finish();
      EXPECT_EQ(streamed, Detokenize(ids, skip)) << text;
    }
  }
}

TEST_F(CApiTextTest, PiecesSpecialTokensAndEndOfGeneration) {
  char piece[64];
  size_t length = 0;
  for (const int32_t id : {0, 2, 5, 100, 511}) {
    ASSERT_EQ(cortiq_token_piece(model_.get(), id, piece, sizeof(piece), &length),
              CORTIQ_STATUS_OK);
    EXPECT_EQ(std::string(piece, length), std::string(*tokenizer_->TokenString(id))) << id;
  }
  int32_t id = 0;
  ASSERT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_BOS, &id), CORTIQ_STATUS_OK);
  EXPECT_EQ(id, 2);
  ASSERT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_EOS, &id), CORTIQ_STATUS_OK);
  EXPECT_EQ(id, 1);
  ASSERT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_END_OF_TURN, &id),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(id, *tokenizer_->TokenToId("<turn|>"));
  const int32_t turn_end = id;
  ASSERT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_PAD, &id), CORTIQ_STATUS_OK);
  EXPECT_EQ(id, tokenizer_->config().pad_id.value_or(-1));
  ASSERT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_UNK, &id), CORTIQ_STATUS_OK);
  EXPECT_EQ(id, tokenizer_->config().unk_id.value_or(-1));
  // tiny-a's generation_config.json lists eos_token_id [1]: a plain completion stops at <eos>
  // only (as cortiq-run without --chat), a chat turn also at <turn|> (as cortiq-chat).
  ASSERT_NE(turn_end, 1);
  for (int32_t t = 0; t < 512; ++t) {
    int result = -1;
    ASSERT_EQ(cortiq_token_is_end_of_generation(model_.get(), t, &result), CORTIQ_STATUS_OK);
    EXPECT_EQ(result, t == 1 ? 1 : 0) << t;
    result = -1;
    ASSERT_EQ(cortiq_token_is_end_of_turn(model_.get(), t, &result), CORTIQ_STATUS_OK);
    EXPECT_EQ(result, t == 1 || t == turn_end ? 1 : 0) << t;
  }
}

// The thought channel's markers (API 1.5): Gemma 4's ids in a vocabulary that has them (the
// cortiq-synth model's tokenizer is Gemma 4-shaped), -1 in one that does not (tiny-a's).
TEST_F(CApiTextTest, ThoughtChannelTokens) {
  int32_t id = 0;
  ASSERT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_CHANNEL_OPEN, &id),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(id, -1);
  ASSERT_EQ(cortiq_model_special_token(model_.get(), CORTIQ_TOKEN_CHANNEL_CLOSE, &id),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(id, -1);
  EXPECT_EQ(cortiq_model_special_token(model_.get(), 7, &id), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("kind 7 is not a cortiq_token_kind (0..6)"));

  ModelPtr synth = OpenModel(std::string(CORTIQ_ARTIFACT_DIR) + "/synth-tiny.cortiq");
  ASSERT_NE(synth, nullptr) << cortiq_last_error();
  ASSERT_EQ(cortiq_model_special_token(synth.get(), CORTIQ_TOKEN_CHANNEL_OPEN, &id),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(id, 100);
  ASSERT_EQ(cortiq_model_special_token(synth.get(), CORTIQ_TOKEN_CHANNEL_CLOSE, &id),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(id, 101);
  char piece[32];
  size_t length = 0;
  ASSERT_EQ(cortiq_token_piece(synth.get(), 100, piece, sizeof(piece), &length),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(std::string(piece, length), "<|channel>");
}

TEST_F(CApiTextTest, ChatFormatIsTheGemma4Rendering) {
  const cortiq_chat_message messages[] = {
      {"system", "  Be brief. "}, {"user", "Hi"}, {"assistant", "<|channel>thought\nhmm<channel|>Hello!"},
      {"user", "Bye"}};
  for (int thinking : {0, 1}) {
    for (int generation_prompt : {0, 1}) {
      size_t length = 0;
      ASSERT_EQ(cortiq_model_chat_format(model_.get(), messages, 4, generation_prompt, thinking,
                                         nullptr, 0, &length),
                CORTIQ_STATUS_OK)
          << cortiq_last_error();
      std::string text(length + 1, '\0');
      ASSERT_EQ(cortiq_model_chat_format(model_.get(), messages, 4, generation_prompt, thinking,
                                         &text[0], text.size(), &length),
                CORTIQ_STATUS_OK);
      text.resize(length);
      const std::string expected = absl::StrCat(
          "<bos><|turn>system\n", thinking ? "<|think|>\n" : "",
          "Be brief.<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\nHello!<turn|>\n"
          "<|turn>user\nBye<turn|>\n",
          generation_prompt ? "<|turn>model\n" : "");
      EXPECT_EQ(text, expected);
    }
  }
}

// Greedy sampling through the C API picks the argmax of the golden float64 logits after the
// golden prompt, for every prefix; the sampler's tokens feed a generation loop like cortiq-run's.
TEST_F(CApiTextTest, GreedySamplingFollowsTheGoldenArgmax) {
  const GoldenCase c = LoadGoldenCase("tiny-a-f32-T40");
  cortiq_sampler_options options;
  ASSERT_EQ(cortiq_sampler_default_options(model_.get(), &options), CORTIQ_STATUS_OK);
  options.temperature = 0.0f;
  cortiq_sampler* sampler = nullptr;
  ASSERT_EQ(cortiq_sampler_create(model_.get(), &options, &sampler), CORTIQ_STATUS_OK);
  cortiq_session_options so = cortiq_session_options_default();
  so.batch_size = 1;
  cortiq_session* session = nullptr;
  ASSERT_EQ(cortiq_session_create(model_.get(), &so, &session), CORTIQ_STATUS_OK);
  int agree = 0;
  for (size_t k = 0; k < c.tokens.size(); ++k) {
    ASSERT_EQ(cortiq_session_eval(session, &c.tokens[k], 1, nullptr, 0), CORTIQ_STATUS_OK);
    int32_t token = -1;
    ASSERT_EQ(cortiq_sampler_sample(sampler, session, &token), CORTIQ_STATUS_OK);
    const float* row = c.logits_ref.data() + k * 512;
    const int32_t argmax = static_cast<int32_t>(std::max_element(row, row + 512) - row);
    // A near tie in the reference may round either way in f32.
    std::vector<float> sorted(row, row + 512);
    std::sort(sorted.rbegin(), sorted.rend());
    if (sorted[0] - sorted[1] > 1e-3f) {
      EXPECT_EQ(token, argmax) << "position " << k;
      ++agree;
    }
    ASSERT_EQ(cortiq_sampler_accept(sampler, token), CORTIQ_STATUS_OK);
  }
  EXPECT_GT(agree, 30);
  cortiq_session_free(session);
  cortiq_sampler_free(sampler);
}

// Seeded sampling with the model's defaults draws what the C++ sampler chain draws with the same
// options and bans; reset repeats the draws; a random seed is reported.
TEST_F(CApiTextTest, SeededSamplingEqualsTheSamplerChain) {
  cortiq_sampler_options options;
  ASSERT_EQ(cortiq_sampler_default_options(model_.get(), &options), CORTIQ_STATUS_OK);
  const sampling::SamplingOptions defaults = ModelSamplingOptions(*tokenizer_);
  EXPECT_EQ(options.struct_size, sizeof(options));
  EXPECT_EQ(options.temperature, defaults.temperature);
  EXPECT_EQ(options.top_k, defaults.top_k);
  EXPECT_EQ(options.top_p, defaults.top_p);
  EXPECT_EQ(options.min_p, defaults.min_p);
  EXPECT_EQ(options.repeat_last_n, defaults.repeat_last_n);
  EXPECT_EQ(options.seed, CORTIQ_SEED_RANDOM);
  options.seed = 99;
  options.repeat_penalty = 1.3f;
  api::Model model(path_);
  api::Sampler sampler(model, options);
  EXPECT_EQ(sampler.Seed(), 99u);
  sampling::SamplingOptions o = defaults;
  o.seed = 99;
  o.repeat_penalty = 1.3f;
  absl::StatusOr<sampling::Sampler> reference = sampling::Sampler::Create(o, 512);
  ASSERT_TRUE(reference.ok());
  api::Session session(model);
  const std::vector<int32_t> prompt = model.Tokenize("Once upon a time");
  session.Eval(prompt);
  for (const int32_t id : prompt) {
    sampler.Accept(id);
    ASSERT_TRUE(reference->Accept(id).ok());
  }
  std::vector<int32_t> drawn;
  for (int i = 0; i < 32; ++i) {
    const std::vector<float> logits = session.Logits();
    const int32_t token = sampler.Sample(session);
    EXPECT_EQ(token, *reference->Sample(logits)) << i;
    sampler.Accept(token);
    ASSERT_TRUE(reference->Accept(token).ok());
    drawn.push_back(token);
    session.Eval({token});
  }
  // Reset and the same prompt and logits: the same draws.
  sampler.Reset();
  session.Reset();
  session.Eval(prompt);
  for (const int32_t id : prompt) sampler.Accept(id);
  for (int i = 0; i < 32; ++i) {
    const int32_t token = sampler.Sample(session);
    ASSERT_EQ(token, drawn[i]) << i;
    sampler.Accept(token);
    session.Eval({token});
  }
  api::Sampler random(model);
  EXPECT_NE(random.Seed(), CORTIQ_SEED_RANDOM);
}

// The C++ wrappers: the same as the C calls.
TEST_F(CApiTextTest, CppWrappers) {
  api::Model model(path_);
  EXPECT_EQ(model.Tokenize("Hello world"), Tokenize("Hello world", 1));
  EXPECT_EQ(model.Tokenize("Hello world", false), Tokenize("Hello world", 0));
  EXPECT_EQ(model.Detokenize(model.Tokenize("Hello world"), true), "Hello world");
  EXPECT_EQ(model.Detokenize(model.Tokenize("Hello world")), "<bos>Hello world");
  EXPECT_EQ(model.TokenPiece(2), "<bos>");
  EXPECT_EQ(model.SpecialToken(CORTIQ_TOKEN_BOS), 2);
  EXPECT_TRUE(model.IsEndOfGeneration(1));
  EXPECT_FALSE(model.IsEndOfGeneration(2));
  EXPECT_FALSE(model.IsEndOfGeneration(*tokenizer_->TokenToId("<turn|>")));
  EXPECT_TRUE(model.IsEndOfTurn(*tokenizer_->TokenToId("<turn|>")));
  EXPECT_TRUE(model.IsEndOfTurn(1));
  EXPECT_FALSE(model.IsEndOfTurn(2));
  EXPECT_EQ(model.ChatFormat({{"user", "Hi"}}), "<bos><|turn>user\nHi<turn|>\n<|turn>model\n");
  EXPECT_EQ(model.DefaultSamplerOptions().top_k, ModelSamplingOptions(*tokenizer_).top_k);
  try {
    model.TokenPiece(-1);
    ADD_FAILURE() << "no error";
  } catch (const api::Error& e) {
    EXPECT_EQ(e.status(), CORTIQ_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("cortiq_token_piece"));
  }
}

// A model compiled without a tokenizer opens and runs; its text calls say why they cannot work,
// its sampler works on ids with llama.cpp's defaults and nothing ends generation.
TEST(CApiNoTokenizerTest, TextCallsFailWithFailedPrecondition) {
  const std::string path = CORTIQ_NO_TOKENIZER_ARTIFACT;
  ModelPtr model = OpenModel(path);
  ASSERT_NE(model, nullptr);
  size_t n = 0;
  int32_t id = 0;
  EXPECT_EQ(cortiq_tokenize(model.get(), "a", 1, 1, nullptr, 0, &n),
            CORTIQ_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("has no tokenizer"));
  EXPECT_EQ(cortiq_detokenize(model.get(), &id, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(cortiq_token_piece(model.get(), 0, nullptr, 0, &n), CORTIQ_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(cortiq_model_special_token(model.get(), CORTIQ_TOKEN_BOS, &id),
            CORTIQ_STATUS_FAILED_PRECONDITION);
  const cortiq_chat_message m[] = {{"user", "x"}};
  EXPECT_EQ(cortiq_model_chat_format(model.get(), m, 1, 1, 0, nullptr, 0, &n),
            CORTIQ_STATUS_FAILED_PRECONDITION);
  cortiq_decoder* decoder = nullptr;
  EXPECT_EQ(cortiq_decoder_create(model.get(), 0, &decoder), CORTIQ_STATUS_FAILED_PRECONDITION);
  int result = -1;
  ASSERT_EQ(cortiq_token_is_end_of_generation(model.get(), 1, &result), CORTIQ_STATUS_OK);
  EXPECT_EQ(result, 0);
  result = -1;
  ASSERT_EQ(cortiq_token_is_end_of_turn(model.get(), 1, &result), CORTIQ_STATUS_OK);
  EXPECT_EQ(result, 0);
  cortiq_sampler_options options;
  ASSERT_EQ(cortiq_sampler_default_options(model.get(), &options), CORTIQ_STATUS_OK);
  EXPECT_EQ(options.temperature, sampling::SamplingOptions().temperature);
  cortiq_sampler* sampler = nullptr;
  ASSERT_EQ(cortiq_sampler_create(model.get(), nullptr, &sampler), CORTIQ_STATUS_OK);
  cortiq_sampler_free(sampler);
}

}  // namespace
}  // namespace cortiq
