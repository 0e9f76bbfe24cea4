// Tests of the C API (runtime/cortiq.h, libcortiq.so) on the compiled tiny-a artifacts: golden
// logits, every error path (NULL handles, sizes, token ids, context, bad artifacts and state
// buffers), two sessions on one model in two threads, truncate vs fresh runs across the sliding
// window, save/restore round trips, the observer hook and the C++ wrapper (cortiq.hpp).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "runtime/artifact.h"
#include "runtime/cortiq.h"
#include "runtime/cortiq.hpp"
#include "tests/e2e/golden_data.h"

extern "C" int capi_header_c99_smoke(void);

namespace cortiq {
namespace {

using ::cortiq::api::ModelPtr;
using ::cortiq::api::SessionPtr;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kVocab = 512;  // tiny-a
constexpr int64_t kWindow = 8;   // tiny-a's sliding_window

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "/capi_" + std::to_string(getpid()) + "_" + name;
}

std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int32_t> Prefix(const std::vector<int32_t>& tokens, size_t n) {
  return std::vector<int32_t>(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(n));
}

ModelPtr OpenModel(const std::string& path) {
  cortiq_model* model = nullptr;
  const cortiq_status status = cortiq_model_open(path.c_str(), &model);
  EXPECT_EQ(status, CORTIQ_STATUS_OK) << cortiq_last_error();
  return ModelPtr(model);
}

// batch_size 1 (token by token) unless given: most tests compare runs fed in different pieces
// bit for bit, which batched prefill only matches within rounding (BatchedEval* tests).
SessionPtr NewSession(cortiq_model* model, size_t ctx_size = 64, int32_t threads = 1,
                      int64_t batch_size = 1) {
  cortiq_session_options options = cortiq_session_options_default();
  options.ctx_size = ctx_size;
  options.threads = threads;
  options.batch_size = batch_size;
  cortiq_session* session = nullptr;
  const cortiq_status status = cortiq_session_create(model, &options, &session);
  EXPECT_EQ(status, CORTIQ_STATUS_OK) << cortiq_last_error();
  return SessionPtr(session);
}

// max |a - b| over two logit arrays of the same size.
float MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Evaluates `tokens` and returns the logits after each one ([n, vocab]); empty on failure.
std::vector<float> EvalAll(cortiq_session* session, const std::vector<int32_t>& tokens) {
  std::vector<float> all(tokens.size() * kVocab);
  const cortiq_status status =
      cortiq_session_eval(session, tokens.data(), tokens.size(), all.data(), all.size());
  EXPECT_EQ(status, CORTIQ_STATUS_OK) << cortiq_last_error();
  return status == CORTIQ_STATUS_OK ? all : std::vector<float>();
}

std::vector<float> Logits(cortiq_session* session) {
  std::vector<float> logits(kVocab);
  const cortiq_status status = cortiq_session_logits(session, logits.data(), logits.size());
  EXPECT_EQ(status, CORTIQ_STATUS_OK) << cortiq_last_error();
  return logits;
}

size_t Length(cortiq_session* session) {
  size_t length = 0;
  EXPECT_EQ(cortiq_session_length(session, &length), CORTIQ_STATUS_OK);
  return length;
}

std::vector<uint8_t> Save(cortiq_session* session) {
  size_t size = 0;
  EXPECT_EQ(cortiq_session_state_size(session, &size), CORTIQ_STATUS_OK);
  std::vector<uint8_t> state(size);
  EXPECT_EQ(cortiq_session_save(session, state.data(), state.size()), CORTIQ_STATUS_OK)
      << cortiq_last_error();
  return state;
}

std::vector<float> Rows(const std::vector<float>& all, size_t first, size_t count) {
  return std::vector<float>(all.begin() + static_cast<ptrdiff_t>(first * kVocab),
                            all.begin() + static_cast<ptrdiff_t>((first + count) * kVocab));
}

class CApiTest : public testing::Test {
 protected:
  void SetUp() override {
    path_ = ArtifactPath("tiny-a-f32", "opt");
    model_ = OpenModel(path_);
    ASSERT_NE(model_, nullptr);
    golden_ = LoadGoldenCase("tiny-a-f32-T40");
    tokens_ = golden_.tokens;
    ASSERT_EQ(tokens_.size(), 40u);
  }

  // The logits after each of `continuation`, evaluated after `prefix` by a new session.
  std::vector<float> Fresh(const std::vector<int32_t>& prefix,
                           const std::vector<int32_t>& continuation, size_t ctx_size = 64) {
    SessionPtr session = NewSession(model_.get(), ctx_size);
    if (!prefix.empty()) {
      EXPECT_EQ(cortiq_session_eval(session.get(), prefix.data(), prefix.size(), nullptr, 0),
                CORTIQ_STATUS_OK)
          << cortiq_last_error();
    }
    return EvalAll(session.get(), continuation);
  }

  std::string path_;
  ModelPtr model_;
  GoldenCase golden_;
  std::vector<int32_t> tokens_;
};

// ---- Library, models ------------------------------------------------------------------------

TEST(CApiLibraryTest, VersionStatusNamesAndCHeader) {
  EXPECT_EQ(cortiq_api_version(), static_cast<uint32_t>(CORTIQ_API_VERSION));
  EXPECT_EQ(cortiq_api_version() >> 16, static_cast<uint32_t>(CORTIQ_API_VERSION_MAJOR));
  EXPECT_STREQ(cortiq_status_string(CORTIQ_STATUS_OK), "OK");
  EXPECT_STREQ(cortiq_status_string(CORTIQ_STATUS_CONTEXT_FULL), "CONTEXT_FULL");
  for (int s = CORTIQ_STATUS_OK; s <= CORTIQ_STATUS_INTERNAL; ++s) {
    EXPECT_STRNE(cortiq_status_string(static_cast<cortiq_status>(s)), "UNKNOWN") << s;
  }
  EXPECT_STREQ(cortiq_status_string(static_cast<cortiq_status>(999)), "UNKNOWN");
  EXPECT_EQ(capi_header_c99_smoke(), 0);
}

TEST_F(CApiTest, ModelInfo) {
  cortiq_model_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(cortiq_model_get_info(model_.get(), &info), CORTIQ_STATUS_OK);
  EXPECT_EQ(info.struct_size, sizeof(info));
  EXPECT_EQ(info.vocab_size, kVocab);
  EXPECT_EQ(info.hidden_size, 64);
  EXPECT_EQ(info.num_layers, 8);
  EXPECT_EQ(info.max_context, 131072);
  EXPECT_EQ(info.sliding_window, kWindow);
  EXPECT_EQ(info.weight_formats, CORTIQ_WEIGHT_F32);
  EXPECT_EQ(info.file_bytes, ReadFile(path_).size());
  EXPECT_GT(info.weight_bytes, 0u);
  EXPECT_LT(info.weight_bytes, info.file_bytes);
  EXPECT_STREQ(cortiq_last_error(), "");

  ModelPtr bf16 = OpenModel(ArtifactPath("tiny-a-bf16", "opt"));
  ASSERT_EQ(cortiq_model_get_info(bf16.get(), &info), CORTIQ_STATUS_OK);
  EXPECT_TRUE(info.weight_formats & CORTIQ_WEIGHT_BF16);
}

TEST_F(CApiTest, ModelInfoStructSize) {
  // A newer caller's larger struct: known fields filled, the rest zeroed.
  struct Larger {
    cortiq_model_info info;
    uint64_t future[4];
  } larger;
  std::memset(&larger, 0xab, sizeof(larger));
  larger.info.struct_size = sizeof(larger);
  ASSERT_EQ(cortiq_model_get_info(model_.get(), &larger.info), CORTIQ_STATUS_OK);
  EXPECT_EQ(larger.info.vocab_size, kVocab);
  EXPECT_EQ(larger.info.struct_size, sizeof(larger));
  for (uint64_t v : larger.future) EXPECT_EQ(v, 0u);

  cortiq_model_info info{};
  info.struct_size = sizeof(info) - 8;
  EXPECT_EQ(cortiq_model_get_info(model_.get(), &info), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("struct_size"));
  info.struct_size = size_t{1} << 40;  // uninitialized garbage
  EXPECT_EQ(cortiq_model_get_info(model_.get(), &info), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_get_info(model_.get(), nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
}

TEST_F(CApiTest, VerifyNamesDamagedWeights) {
  EXPECT_EQ(cortiq_model_verify(model_.get(), 0), CORTIQ_STATUS_OK) << cortiq_last_error();
  EXPECT_EQ(cortiq_model_verify(model_.get(), 2), CORTIQ_STATUS_OK) << cortiq_last_error();
  EXPECT_STREQ(cortiq_last_error(), "");
  EXPECT_EQ(cortiq_model_verify(nullptr, 1), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), StartsWith("cortiq_model_verify: model is NULL"));
  EXPECT_EQ(cortiq_model_verify(model_.get(), -1), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_verify(model_.get(), 257), CORTIQ_STATUS_INVALID_ARGUMENT);

  // A bit flipped in the first and in the last weight: the model opens and runs, and only
  // cortiq_model_verify tells.
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(path_);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  const Plan& plan = (*artifact)->plan();
  std::string bytes = ReadFile(path_);
  const uint64_t weights = (*artifact)->header().weights_offset;
  bytes[weights + plan.weights.front().offset + 5] ^= 0x20;
  bytes[weights + plan.weights.back().offset] ^= 0x01;
  const std::string damaged = TempPath("damaged.cortiq");
  WriteFile(damaged, bytes);
  ModelPtr model = OpenModel(damaged);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(cortiq_model_verify(model.get(), 1), CORTIQ_STATUS_CORRUPT_DATA);
  const std::string message = cortiq_last_error();
  EXPECT_THAT(message, StartsWith("cortiq_model_verify: " + damaged + ": 2 of "));
  EXPECT_THAT(message, HasSubstr("weight 0 '" + plan.weights.front().name + "'"));
  EXPECT_THAT(message, HasSubstr(absl::StrCat("weight ", plan.weights.size() - 1, " '",
                                              plan.weights.back().name, "'")));
  api::Model wrapped(damaged);
  try {
    wrapped.Verify(2);
    ADD_FAILURE() << "Verify did not throw";
  } catch (const api::Error& e) {
    EXPECT_EQ(e.status(), CORTIQ_STATUS_CORRUPT_DATA);
  }
  std::remove(damaged.c_str());
}

TEST_F(CApiTest, OpenErrors) {
  cortiq_model* const kSentinel = reinterpret_cast<cortiq_model*>(0x1);
  cortiq_model* model = kSentinel;
  EXPECT_EQ(cortiq_model_open(nullptr, &model), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_open(path_.c_str(), nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);

  const std::string missing = TempPath("missing.cortiq");
  EXPECT_EQ(cortiq_model_open(missing.c_str(), &model), CORTIQ_STATUS_NOT_FOUND);
  EXPECT_THAT(cortiq_last_error(), HasSubstr(missing));
  EXPECT_EQ(cortiq_model_open(testing::TempDir().c_str(), &model), CORTIQ_STATUS_CORRUPT_DATA);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("not a regular file"));

  const std::string good = ReadFile(path_);
  const std::string bad = TempPath("bad.cortiq");
  const auto expect_open = [&](const std::string& bytes, cortiq_status want,
                               const std::string& message) {
    WriteFile(bad, bytes);
    EXPECT_EQ(cortiq_model_open(bad.c_str(), &model), want) << message;
    EXPECT_THAT(cortiq_last_error(), HasSubstr(message));
  };
  expect_open("", CORTIQ_STATUS_CORRUPT_DATA, bad);
  expect_open("hello, this is not a model at all; " + std::string(100, 'x'),
              CORTIQ_STATUS_CORRUPT_DATA, "not a cortiq artifact");
  expect_open(good.substr(0, good.size() / 2), CORTIQ_STATUS_CORRUPT_DATA, "truncated");
  std::string flipped = good;
  flipped[kArtifactHeaderSize + 100] ^= 0x40;  // inside the metadata
  expect_open(flipped, CORTIQ_STATUS_CORRUPT_DATA, "checksum");
  std::string newer = good;
  newer[8] = static_cast<char>(kArtifactVersionMajor + 1);  // version_major
  expect_open(newer, CORTIQ_STATUS_UNSUPPORTED_VERSION, "newer");
  std::remove(bad.c_str());
  EXPECT_EQ(model, kSentinel) << "outputs are left unchanged on error";
}

// Every load of cortiq_model_open_with_options gives the golden logits, the same bits as
// cortiq_model_open (which maps).
TEST_F(CApiTest, OpenWithOptionsLoadsGiveTheSameLogits) {
  const GoldenCase c = LoadGoldenCase("tiny-a-f32-T40");
  SessionPtr mapped_session = NewSession(model_.get(), c.tokens.size());
  const std::vector<float> mapped = EvalAll(mapped_session.get(), c.tokens);
  // -1: NULL options (the default load).
  for (int32_t load : {-1, int32_t{CORTIQ_LOAD_MAP}, int32_t{CORTIQ_LOAD_READ_MATRICES},
                       int32_t{CORTIQ_LOAD_READ}}) {
    cortiq_model_options options = cortiq_model_options_default();
    options.load = load;
    cortiq_model* model = nullptr;
    ASSERT_EQ(cortiq_model_open_with_options(path_.c_str(), load < 0 ? nullptr : &options, &model),
              CORTIQ_STATUS_OK)
        << cortiq_last_error();
    ModelPtr owned(model);
    SessionPtr session = NewSession(model, c.tokens.size());
    const std::vector<float> all = EvalAll(session.get(), c.tokens);
    ASSERT_EQ(all.size(), c.logits_ref.size());
    float max_diff = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      max_diff = std::max(max_diff, std::fabs(all[i] - c.logits_ref[i]));
    }
    EXPECT_LE(max_diff, 1e-3f) << "load " << load;
    EXPECT_EQ(all, mapped) << "load " << load;
  }
  // CORTIQ_LOAD_READ holds no page of the file: the file overwritten in place after the open
  // (which a mapping would see) changes nothing.
  const std::string copy = TempPath("read.cortiq");
  WriteFile(copy, ReadFile(path_));
  cortiq_model_options read = cortiq_model_options_default();
  read.load = CORTIQ_LOAD_READ;
  cortiq_model* model = nullptr;
  ASSERT_EQ(cortiq_model_open_with_options(copy.c_str(), &read, &model), CORTIQ_STATUS_OK)
      << cortiq_last_error();
  ModelPtr owned(model);
  {
    std::fstream file(copy, std::ios::binary | std::ios::in | std::ios::out);
    const std::string zeros(ReadFile(copy).size(), '\0');
    file.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    ASSERT_TRUE(file.good());
  }
  SessionPtr session = NewSession(model, c.tokens.size());
  EXPECT_EQ(EvalAll(session.get(), c.tokens), mapped);
  std::remove(copy.c_str());

  const cortiq_model_options defaults = cortiq_model_options_default();
  EXPECT_EQ(defaults.struct_size, sizeof(cortiq_model_options));
  EXPECT_EQ(defaults.load, CORTIQ_LOAD_READ_MATRICES);
  EXPECT_EQ(defaults.reserved, 0);
}

TEST_F(CApiTest, OpenWithOptionsErrors) {
  cortiq_model* const kSentinel = reinterpret_cast<cortiq_model*>(0x1);
  cortiq_model* model = kSentinel;
  const auto expect_invalid = [&](const cortiq_model_options* options, const std::string& what) {
    EXPECT_EQ(cortiq_model_open_with_options(path_.c_str(), options, &model),
              CORTIQ_STATUS_INVALID_ARGUMENT)
        << what;
    EXPECT_THAT(cortiq_last_error(), StartsWith("cortiq_model_open_with_options"));
    EXPECT_THAT(cortiq_last_error(), HasSubstr(what));
  };
  cortiq_model_options options = cortiq_model_options_default();
  options.load = 3;
  expect_invalid(&options, "options->load is 3");
  options.load = -1;
  expect_invalid(&options, "options->load is -1");
  options = cortiq_model_options_default();
  options.reserved = 7;
  expect_invalid(&options, "options->reserved must be 0");
  options = cortiq_model_options_default();
  options.struct_size = sizeof(size_t);
  expect_invalid(&options, "options->struct_size is 8");
  // A newer header's struct: accepted while its extra fields are zero.
  struct Newer {
    cortiq_model_options base;
    int64_t future;
  } newer{cortiq_model_options_default(), 0};
  newer.base.struct_size = sizeof(Newer);
  newer.future = 1;
  expect_invalid(&newer.base, "unknown to this library");
  newer.future = 0;
  cortiq_model* opened = nullptr;
  EXPECT_EQ(cortiq_model_open_with_options(path_.c_str(), &newer.base, &opened), CORTIQ_STATUS_OK)
      << cortiq_last_error();
  ModelPtr owned(opened);
  EXPECT_EQ(cortiq_model_open_with_options(nullptr, nullptr, &model),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_model_open_with_options(path_.c_str(), nullptr, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  const std::string missing = TempPath("missing.cortiq");
  EXPECT_EQ(cortiq_model_open_with_options(missing.c_str(), nullptr, &model),
            CORTIQ_STATUS_NOT_FOUND);
  EXPECT_THAT(cortiq_last_error(), HasSubstr(missing));
  EXPECT_EQ(model, kSentinel) << "outputs are left unchanged on error";
}

// ---- Eval and logits ------------------------------------------------------------------------

TEST_F(CApiTest, GoldenLogitsOfEveryPosition) {
  for (const std::string& name : {"tiny-a-f32-T6", "tiny-a-f32-T40"}) {
    const GoldenCase c = LoadGoldenCase(name);
    SessionPtr session = NewSession(model_.get(), c.tokens.size());
    const std::vector<float> all = EvalAll(session.get(), c.tokens);
    ASSERT_EQ(all.size(), c.logits_ref.size());
    float max_diff = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      max_diff = std::max(max_diff, std::fabs(all[i] - c.logits_ref[i]));
    }
    EXPECT_LE(max_diff, 1e-3f) << name;
    EXPECT_EQ(Logits(session.get()), Rows(all, c.tokens.size() - 1, 1)) << name;
    EXPECT_EQ(Length(session.get()), c.tokens.size());
  }
}

TEST_F(CApiTest, BatchesAndLogitsOptionsAgree) {
  SessionPtr whole = NewSession(model_.get());
  const std::vector<float> all = EvalAll(whole.get(), tokens_);
  // Without all_logits only the last token runs the LM head: same last logits.
  SessionPtr last_only = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_eval(last_only.get(), tokens_.data(), tokens_.size(), nullptr, 0),
            CORTIQ_STATUS_OK);
  EXPECT_EQ(Logits(last_only.get()), Rows(all, tokens_.size() - 1, 1));
  // Uneven batches, one token at a time included.
  SessionPtr pieces = NewSession(model_.get());
  size_t at = 0;
  for (size_t n : {1, 7, 1, 13, 18}) {
    EXPECT_EQ(EvalAll(pieces.get(), std::vector<int32_t>(tokens_.begin() + at,
                                                          tokens_.begin() + at + n)),
              Rows(all, at, n))
        << "batch at " << at;
    at += n;
  }
  EXPECT_EQ(Length(pieces.get()), tokens_.size());
  // n_tokens = 0 is a no-op (tokens may be NULL).
  EXPECT_EQ(cortiq_session_eval(pieces.get(), nullptr, 0, nullptr, 0), CORTIQ_STATUS_OK);
  EXPECT_EQ(Length(pieces.get()), tokens_.size());
  EXPECT_EQ(Logits(pieces.get()), Rows(all, tokens_.size() - 1, 1));
}

const std::vector<int32_t> kContinuation = {5, 400, 17, 99, 250, 3, 77, 128, 311, 42, 8, 260};

// Batched prefill (batch_size 0 = the compiled maximum, and 4): whole calls, uneven pieces and
// last-only logits agree with token by token within 1e-4; a truncation that must recompute
// the sliding windows gives the same continuation within 1e-4.
TEST_F(CApiTest, BatchedEvalMatchesTokenByToken) {
  const std::vector<float> want = Fresh({}, tokens_);
  for (int64_t batch_size : {0, 4}) {
    SCOPED_TRACE(batch_size);
    SessionPtr whole = NewSession(model_.get(), 64, 2, batch_size);
    EXPECT_LE(MaxDiff(EvalAll(whole.get(), tokens_), want), 1e-4f);
    SessionPtr last_only = NewSession(model_.get(), 64, 1, batch_size);
    ASSERT_EQ(cortiq_session_eval(last_only.get(), tokens_.data(), tokens_.size(), nullptr, 0),
              CORTIQ_STATUS_OK);
    EXPECT_LE(MaxDiff(Logits(last_only.get()), Rows(want, tokens_.size() - 1, 1)), 1e-4f);
    SessionPtr pieces = NewSession(model_.get(), 64, 1, batch_size);
    size_t at = 0;
    for (size_t n : {1, 7, 1, 13, 18}) {
      EXPECT_LE(MaxDiff(EvalAll(pieces.get(), std::vector<int32_t>(tokens_.begin() + at,
                                                                     tokens_.begin() + at + n)),
                         Rows(want, at, n)),
                1e-4f)
          << "batch at " << at;
      at += n;
    }
    ASSERT_EQ(cortiq_session_truncate(pieces.get(), 9), CORTIQ_STATUS_OK);
    EXPECT_LE(MaxDiff(EvalAll(pieces.get(), kContinuation),
                       Fresh(Prefix(tokens_, 9), kContinuation)),
              1e-4f);
  }
}

// A state saved by a session with one batch size restores into a session with another: the
// saved rows are the window the next position reads, not the whole ring.
TEST_F(CApiTest, StateMovesBetweenBatchSizes) {
  const std::vector<float> want = Fresh(Prefix(tokens_, 25), kContinuation);
  for (const auto& [from, to] : {std::pair<int64_t, int64_t>{0, 1}, {1, 0}, {5, 1}, {1, 5},
                                 {0, 7}}) {
    SCOPED_TRACE(::testing::Message() << from << " -> " << to);
    SessionPtr source = NewSession(model_.get(), 64, 1, from);
    ASSERT_FALSE(EvalAll(source.get(), Prefix(tokens_, 25)).empty());
    size_t size = 0;
    ASSERT_EQ(cortiq_session_state_size(source.get(), &size), CORTIQ_STATUS_OK);
    std::vector<uint8_t> state(size);
    ASSERT_EQ(cortiq_session_save(source.get(), state.data(), state.size()),
              CORTIQ_STATUS_OK)
        << cortiq_last_error();
    SessionPtr target = NewSession(model_.get(), 64, 1, to);
    ASSERT_EQ(cortiq_session_restore(target.get(), state.data(), size), CORTIQ_STATUS_OK)
        << cortiq_last_error();
    EXPECT_LE(MaxDiff(EvalAll(target.get(), kContinuation), want), 1e-4f);
  }
}

TEST_F(CApiTest, BatchSizeOption) {
  cortiq_session_options options = cortiq_session_options_default();
  options.batch_size = -1;
  cortiq_session* session = nullptr;
  EXPECT_EQ(cortiq_session_create(model_.get(), &options, &session),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("batch_size"));
  // A struct from API 1.0 (ending after `threads`) is accepted: batch_size is taken as 0.
  options = cortiq_session_options_default();
  options.struct_size = offsetof(cortiq_session_options, batch_size);
  ASSERT_EQ(cortiq_session_create(model_.get(), &options, &session), CORTIQ_STATUS_OK)
      << cortiq_last_error();
  cortiq_session_free(session);
}

TEST_F(CApiTest, EvalErrorsEvaluateNothing) {
  SessionPtr session = NewSession(model_.get(), 8);
  const std::vector<int32_t> three = {2, 80, 78};
  ASSERT_FALSE(EvalAll(session.get(), three).empty());
  const std::vector<float> logits = Logits(session.get());
  std::vector<float> out(10 * kVocab);

  const auto expect_error = [&](cortiq_status status, const std::vector<int32_t>& tokens,
                                float* all, size_t count, const std::string& message) {
    EXPECT_EQ(cortiq_session_eval(session.get(), tokens.data(), tokens.size(), all, count),
              status)
        << message;
    EXPECT_THAT(cortiq_last_error(), HasSubstr(message));
    EXPECT_EQ(Length(session.get()), 3u) << message;
    EXPECT_EQ(Logits(session.get()), logits) << message;
  };
  expect_error(CORTIQ_STATUS_INVALID_ARGUMENT, {5, 511, 512}, nullptr, 0,
               "tokens[2] = 512 is out of range [0, 512)");
  expect_error(CORTIQ_STATUS_INVALID_ARGUMENT, {-1}, nullptr, 0, "tokens[0] = -1");
  expect_error(CORTIQ_STATUS_INVALID_ARGUMENT, {std::numeric_limits<int32_t>::max()}, nullptr, 0,
               "out of range");
  expect_error(CORTIQ_STATUS_INVALID_ARGUMENT, {5, 6}, out.data(), 2 * kVocab - 1,
               "all_logits holds 1023 floats");
  expect_error(CORTIQ_STATUS_CONTEXT_FULL, {1, 2, 3, 4, 5, 6}, nullptr, 0,
               "6 tokens at position 3 exceed the context size 8 (5 positions left)");
  EXPECT_EQ(cortiq_session_eval(session.get(), nullptr, 2, nullptr, 0),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  // The count is checked against the context before any id is read: a count far past the
  // array's end is CONTEXT_FULL, with no read of the array (the sanitizer build would see one).
  const int32_t one = 5;
  EXPECT_EQ(cortiq_session_eval(session.get(), &one, size_t{1} << 40, nullptr, 0),
            CORTIQ_STATUS_CONTEXT_FULL);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("1099511627776 tokens at position 3"));
  EXPECT_EQ(Length(session.get()), 3u);
  EXPECT_EQ(cortiq_session_eval(nullptr, three.data(), 3, nullptr, 0),
            CORTIQ_STATUS_INVALID_ARGUMENT);

  // Filling the context exactly works; one more token does not.
  const std::vector<int32_t> five = {1, 2, 3, 4, 5};
  EXPECT_EQ(cortiq_session_eval(session.get(), five.data(), 5, nullptr, 0), CORTIQ_STATUS_OK);
  EXPECT_EQ(Length(session.get()), 8u);
  EXPECT_EQ(cortiq_session_eval(session.get(), five.data(), 1, nullptr, 0),
            CORTIQ_STATUS_CONTEXT_FULL);
  EXPECT_EQ(Length(session.get()), 8u);
}

TEST_F(CApiTest, LogitsErrors) {
  SessionPtr session = NewSession(model_.get());
  std::vector<float> out(kVocab);
  EXPECT_EQ(cortiq_session_logits(session.get(), out.data(), out.size()),
            CORTIQ_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("no logits"));
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), 3, nullptr, 0), CORTIQ_STATUS_OK);
  EXPECT_EQ(cortiq_session_logits(session.get(), out.data(), kVocab - 1),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("out holds 511 floats, vocab_size is 512"));
  EXPECT_EQ(cortiq_session_logits(session.get(), nullptr, kVocab),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_session_logits(session.get(), out.data(), out.size()), CORTIQ_STATUS_OK);
  EXPECT_EQ(cortiq_session_reset(session.get()), CORTIQ_STATUS_OK);
  EXPECT_EQ(cortiq_session_logits(session.get(), out.data(), out.size()),
            CORTIQ_STATUS_FAILED_PRECONDITION);
}

// ---- Sessions -------------------------------------------------------------------------------

TEST_F(CApiTest, SessionOptions) {
  cortiq_session* session = nullptr;
  size_t ctx = 0;
  // NULL options: the defaults (4096 positions, clamped to the model).
  ASSERT_EQ(cortiq_session_create(model_.get(), nullptr, &session), CORTIQ_STATUS_OK);
  SessionPtr defaults(session);
  EXPECT_EQ(cortiq_session_context_size(defaults.get(), &ctx), CORTIQ_STATUS_OK);
  EXPECT_EQ(ctx, 4096u);
  // A huge ctx_size is clamped to max_position_embeddings.
  SessionPtr huge = NewSession(model_.get(), std::numeric_limits<size_t>::max());
  EXPECT_EQ(cortiq_session_context_size(huge.get(), &ctx), CORTIQ_STATUS_OK);
  EXPECT_EQ(ctx, 131072u);

  cortiq_session* const kSentinel = reinterpret_cast<cortiq_session*>(0x1);
  session = kSentinel;
  cortiq_session_options options = cortiq_session_options_default();
  for (int32_t threads : {-1, 257}) {
    options.threads = threads;
    EXPECT_EQ(cortiq_session_create(model_.get(), &options, &session),
              CORTIQ_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(cortiq_last_error(), HasSubstr("threads"));
  }
  options = cortiq_session_options_default();
  options.struct_size = 8;
  EXPECT_EQ(cortiq_session_create(model_.get(), &options, &session),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("struct_size"));
  // A newer caller's options: unknown fields must be zero.
  struct Larger {
    cortiq_session_options options;
    uint64_t future;
  } larger;
  std::memset(&larger, 0, sizeof(larger));
  larger.options = cortiq_session_options_default();
  larger.options.struct_size = sizeof(larger);
  larger.options.ctx_size = 16;
  cortiq_session* created = nullptr;
  ASSERT_EQ(cortiq_session_create(model_.get(), &larger.options, &created), CORTIQ_STATUS_OK);
  SessionPtr newer(created);
  EXPECT_EQ(cortiq_session_context_size(newer.get(), &ctx), CORTIQ_STATUS_OK);
  EXPECT_EQ(ctx, 16u);
  larger.future = 1;
  EXPECT_EQ(cortiq_session_create(model_.get(), &larger.options, &session),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("unknown to this library"));
  EXPECT_EQ(cortiq_session_create(nullptr, nullptr, &session), CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_session_create(model_.get(), nullptr, nullptr),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(session, kSentinel);
}

TEST_F(CApiTest, NullHandlesAreErrors) {
  size_t size = 0;
  float f = 0;
  uint8_t byte = 0;
  const int32_t token = 2;
  const cortiq_status invalid = CORTIQ_STATUS_INVALID_ARGUMENT;
  EXPECT_EQ(cortiq_session_eval(nullptr, &token, 1, nullptr, 0), invalid);
  EXPECT_EQ(cortiq_session_logits(nullptr, &f, 1), invalid);
  EXPECT_EQ(cortiq_session_length(nullptr, &size), invalid);
  EXPECT_EQ(cortiq_session_context_size(nullptr, &size), invalid);
  EXPECT_EQ(cortiq_session_reset(nullptr), invalid);
  EXPECT_EQ(cortiq_session_truncate(nullptr, 0), invalid);
  EXPECT_EQ(cortiq_session_state_size(nullptr, &size), invalid);
  EXPECT_EQ(cortiq_session_save(nullptr, &byte, 1), invalid);
  EXPECT_EQ(cortiq_session_restore(nullptr, &byte, 1), invalid);
  EXPECT_EQ(cortiq_session_set_observer(nullptr, nullptr, nullptr), invalid);
  EXPECT_EQ(cortiq_model_get_info(nullptr, nullptr), invalid);
  EXPECT_THAT(cortiq_last_error(), StartsWith("cortiq_model_get_info: "));
  SessionPtr session = NewSession(model_.get());
  EXPECT_EQ(cortiq_session_length(session.get(), nullptr), invalid);
  EXPECT_EQ(cortiq_session_context_size(session.get(), nullptr), invalid);
  EXPECT_EQ(cortiq_session_state_size(session.get(), nullptr), invalid);
  EXPECT_EQ(cortiq_session_save(session.get(), nullptr, 1000), invalid);
  EXPECT_EQ(cortiq_session_restore(session.get(), nullptr, 1000), invalid);
  cortiq_model_close(nullptr);
  cortiq_session_free(nullptr);
}

TEST_F(CApiTest, LastErrorIsPerThread) {
  EXPECT_EQ(cortiq_session_reset(nullptr), CORTIQ_STATUS_INVALID_ARGUMENT);
  std::string other;
  std::thread thread([&] {
    size_t length = 0;
    SessionPtr session = NewSession(model_.get());
    EXPECT_EQ(cortiq_session_length(session.get(), &length), CORTIQ_STATUS_OK);
    other = cortiq_last_error();
  });
  thread.join();
  EXPECT_EQ(other, "");
  EXPECT_THAT(cortiq_last_error(), HasSubstr("cortiq_session_reset: session is NULL"));
}

TEST_F(CApiTest, TwoSessionsInTwoThreadsMatchSequentialRuns) {
  // Sequential references: the golden tokens and their reverse, 1 and 2 threads.
  std::vector<int32_t> reversed(tokens_.rbegin(), tokens_.rend());
  const std::vector<float> want_a = Fresh({}, tokens_);
  const std::vector<float> want_b = Fresh({}, reversed);
  for (int32_t threads : {1, 2}) {
    std::vector<float> got_a, got_b;
    {
      SessionPtr a = NewSession(model_.get(), 64, threads);
      SessionPtr b = NewSession(model_.get(), 64, threads);
      // Several rounds per thread, with resets, to overlap the two sessions' evaluations.
      std::thread ta([&] {
        for (int round = 0; round < 5; ++round) {
          cortiq_session_reset(a.get());
          got_a = EvalAll(a.get(), tokens_);
        }
      });
      std::thread tb([&] {
        for (int round = 0; round < 5; ++round) {
          cortiq_session_reset(b.get());
          got_b = EvalAll(b.get(), reversed);
        }
      });
      ta.join();
      tb.join();
    }
    EXPECT_EQ(got_a, want_a) << threads << " threads per session";
    EXPECT_EQ(got_b, want_b) << threads << " threads per session";
  }
}

// A host that forks after creating a session (Python multiprocessing's default start method)
// uses the session in the child: its 2-thread pool must work there (it used to wait forever for
// the parent's worker threads, which a child does not have). The child runs under alarm(), so a
// hang fails as SIGALRM; it checks its logits bit for bit against a reference computed before
// the fork and reports through its exit status.
TEST_F(CApiTest, SessionCreatedBeforeForkWorksInTheChild) {
  const std::vector<int32_t> prefix = Prefix(tokens_, 10);
  const std::vector<int32_t> rest(tokens_.begin() + 10, tokens_.end());
  const std::vector<float> want = Fresh(prefix, rest);
  for (const int64_t batch_size : {int64_t{1}, int64_t{0}}) {
    SCOPED_TRACE(batch_size);
    SessionPtr session = NewSession(model_.get(), 64, /*threads=*/2, batch_size);
    ASSERT_EQ(cortiq_session_eval(session.get(), prefix.data(), prefix.size(), nullptr, 0),
              CORTIQ_STATUS_OK)
        << cortiq_last_error();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(30);
      std::vector<float> got(rest.size() * kVocab);
      const cortiq_status status =
          cortiq_session_eval(session.get(), rest.data(), rest.size(), got.data(), got.size());
      if (status != CORTIQ_STATUS_OK) _exit(2);
      // Batched prefill is within rounding of token by token, not bit-identical.
      const float tolerance = batch_size == 1 ? 0.0f : 1e-4f;
      float worst = 0;
      for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
      _exit(worst <= tolerance ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                   << " (SIGALRM = " << SIGALRM << ": it hung)";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "2: eval failed, 3: wrong logits";
    // The parent's session is unaffected.
    const std::vector<float> parent = EvalAll(session.get(), rest);
    EXPECT_LE(MaxDiff(parent, want), batch_size == 1 ? 0.0f : 1e-4f);
  }
}

TEST_F(CApiTest, SessionOutlivesClosedModel) {
  ModelPtr model = OpenModel(path_);
  SessionPtr session = NewSession(model.get());
  model.reset();  // cortiq_model_close: the session keeps the mapping
  EXPECT_EQ(EvalAll(session.get(), tokens_), Fresh({}, tokens_));
}

// ---- Truncate -------------------------------------------------------------------------------

// A continuation longer than the window, different from the golden tokens.

TEST_F(CApiTest, TruncateMatchesFreshRunsAcrossTheSlidingWindow) {
  // fresh[L]: the continuation's logits after the first L golden tokens.
  std::vector<std::vector<float>> fresh;
  for (size_t length = 0; length <= tokens_.size(); ++length) {
    fresh.push_back(Fresh(Prefix(tokens_, length), kContinuation));
  }
  SessionPtr session = NewSession(model_.get());
  for (size_t evaluated : {1, 3, 7, 8, 9, 10, 16, 17, 25, 40}) {
    for (size_t length = 0; length <= evaluated; ++length) {
      ASSERT_EQ(cortiq_session_reset(session.get()), CORTIQ_STATUS_OK);
      ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), evaluated, nullptr, 0),
                CORTIQ_STATUS_OK);
      ASSERT_EQ(cortiq_session_truncate(session.get(), length), CORTIQ_STATUS_OK)
          << cortiq_last_error();
      EXPECT_EQ(Length(session.get()), length);
      EXPECT_EQ(EvalAll(session.get(), kContinuation), fresh[length])
          << "evaluated " << evaluated << ", truncated to " << length;
    }
  }
}

TEST_F(CApiTest, RepeatedTruncationsMatchFreshRuns) {
  // Chains of truncations without evaluations in between: every cut must account for the rows
  // the earlier positions overwrote.
  SessionPtr session = NewSession(model_.get());
  const std::vector<std::vector<size_t>> chains = {
      {39, 38, 37, 30}, {25, 24, 20}, {20, 19, 12, 11, 3}, {17, 16}, {9, 8, 7, 1}};
  for (const std::vector<size_t>& chain : chains) {
    ASSERT_EQ(cortiq_session_reset(session.get()), CORTIQ_STATUS_OK);
    ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), tokens_.size(), nullptr, 0),
              CORTIQ_STATUS_OK);
    for (size_t length : chain) {
      ASSERT_EQ(cortiq_session_truncate(session.get(), length), CORTIQ_STATUS_OK);
    }
    EXPECT_EQ(EvalAll(session.get(), kContinuation), Fresh(Prefix(tokens_, chain.back()),
                                                           kContinuation))
        << "chain ending at " << chain.back();
  }
}

TEST_F(CApiTest, TruncateErrorsAndLogits) {
  SessionPtr session = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), 10, nullptr, 0),
            CORTIQ_STATUS_OK);
  const std::vector<float> logits = Logits(session.get());
  EXPECT_EQ(cortiq_session_truncate(session.get(), 11), CORTIQ_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("length 11 is beyond the session's length 10"));
  EXPECT_EQ(Length(session.get()), 10u);
  // To the current length: a no-op that keeps the logits.
  EXPECT_EQ(cortiq_session_truncate(session.get(), 10), CORTIQ_STATUS_OK);
  EXPECT_EQ(Logits(session.get()), logits);
  // Shorter: no logits until the next eval.
  EXPECT_EQ(cortiq_session_truncate(session.get(), 9), CORTIQ_STATUS_OK);
  std::vector<float> out(kVocab);
  EXPECT_EQ(cortiq_session_logits(session.get(), out.data(), out.size()),
            CORTIQ_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(cortiq_session_truncate(session.get(), 0), CORTIQ_STATUS_OK);
  EXPECT_EQ(Length(session.get()), 0u);
}

// ---- Save / restore -------------------------------------------------------------------------

TEST_F(CApiTest, SaveResetRestoreContinueEqualsUninterrupted) {
  for (size_t split : {0, 1, 5, 8, 9, 20, 33}) {
    SessionPtr session = NewSession(model_.get());
    ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), split, nullptr, 0),
              CORTIQ_STATUS_OK);
    const std::vector<uint8_t> state = Save(session.get());
    const std::vector<int32_t> rest(tokens_.begin() + split, tokens_.end());
    const std::vector<float> uninterrupted = EvalAll(session.get(), rest);

    ASSERT_EQ(cortiq_session_reset(session.get()), CORTIQ_STATUS_OK);
    ASSERT_EQ(cortiq_session_restore(session.get(), state.data(), state.size()),
              CORTIQ_STATUS_OK)
        << cortiq_last_error();
    EXPECT_EQ(Length(session.get()), split);
    if (split > 0) {
      EXPECT_EQ(Logits(session.get()), Rows(Fresh({}, Prefix(tokens_, split)), split - 1, 1));
    }
    EXPECT_EQ(EvalAll(session.get(), rest), uninterrupted) << "split " << split;

    // Into other sessions: another context size (holding the state) and thread count.
    for (size_t ctx : {size_t{40}, size_t{4096}}) {
      SessionPtr other = NewSession(model_.get(), ctx, 2);
      ASSERT_EQ(cortiq_session_restore(other.get(), state.data(), state.size()),
                CORTIQ_STATUS_OK)
          << cortiq_last_error();
      EXPECT_EQ(EvalAll(other.get(), rest), uninterrupted) << "split " << split << ", ctx " << ctx;
    }
  }
}

TEST_F(CApiTest, SaveAfterTruncateAndTruncateAfterRestore) {
  // Truncating by one keeps the overwritten ring row's position out of the state's valid range;
  // a restored session must recompute when cut further.
  SessionPtr session = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), 30, nullptr, 0),
            CORTIQ_STATUS_OK);
  ASSERT_EQ(cortiq_session_truncate(session.get(), 29), CORTIQ_STATUS_OK);
  const std::vector<uint8_t> state = Save(session.get());
  for (size_t length : {29, 28, 25, 21, 20, 10, 0}) {
    SessionPtr other = NewSession(model_.get(), 48);
    ASSERT_EQ(cortiq_session_restore(other.get(), state.data(), state.size()), CORTIQ_STATUS_OK);
    ASSERT_EQ(cortiq_session_truncate(other.get(), length), CORTIQ_STATUS_OK);
    EXPECT_EQ(EvalAll(other.get(), kContinuation),
              Fresh(Prefix(tokens_, length), kContinuation))
        << "restored at 29, truncated to " << length;
  }
}

TEST_F(CApiTest, SaveAfterTruncateToZero) {
  // Truncating to 0 forgets the positions written before: the rows of the new sequence are all
  // in the state.
  SessionPtr session = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), 30, nullptr, 0),
            CORTIQ_STATUS_OK);
  ASSERT_EQ(cortiq_session_truncate(session.get(), 0), CORTIQ_STATUS_OK);
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data() + 5, 10, nullptr, 0),
            CORTIQ_STATUS_OK);
  const std::vector<uint8_t> state = Save(session.get());
  SessionPtr other = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_restore(other.get(), state.data(), state.size()), CORTIQ_STATUS_OK)
      << cortiq_last_error();
  const std::vector<int32_t> history(tokens_.begin() + 5, tokens_.begin() + 15);
  EXPECT_EQ(EvalAll(other.get(), kContinuation), Fresh(history, kContinuation));
  ASSERT_EQ(cortiq_session_truncate(session.get(), 6), CORTIQ_STATUS_OK);
  EXPECT_EQ(EvalAll(session.get(), kContinuation), Fresh(Prefix(history, 6), kContinuation));
}

TEST_F(CApiTest, RandomEditsMatchFreshRuns) {
  // Random evals, truncations, resets and save/restore into the other of two sessions (different
  // context sizes); every eval's logits must equal a fresh run of the same history.
  std::mt19937 rng(1234);
  const auto uniform = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n)(rng); };
  SessionPtr sessions[2] = {NewSession(model_.get(), 48), NewSession(model_.get(), 64)};
  int current = 0;
  std::vector<int32_t> history;
  for (int op = 0; op < 400; ++op) {
    cortiq_session* s = sessions[current].get();
    const size_t kind = uniform(9);
    if (kind <= 4) {
      std::vector<int32_t> more(1 + uniform(8));
      if (history.size() + more.size() > 48) {
        ASSERT_EQ(cortiq_session_truncate(s, 0), CORTIQ_STATUS_OK);
        history.clear();
      }
      for (int32_t& t : more) t = static_cast<int32_t>(uniform(kVocab - 1));
      EXPECT_EQ(EvalAll(s, more), Fresh(history, more)) << "op " << op;
      history = Concat(history, more);
    } else if (kind <= 7) {
      const size_t length = uniform(history.size());
      ASSERT_EQ(cortiq_session_truncate(s, length), CORTIQ_STATUS_OK);
      history.resize(length);
    } else if (kind == 8) {
      const std::vector<uint8_t> state = Save(s);
      current = 1 - current;
      ASSERT_EQ(cortiq_session_restore(sessions[current].get(), state.data(), state.size()),
                CORTIQ_STATUS_OK)
          << cortiq_last_error();
    } else {
      ASSERT_EQ(cortiq_session_reset(s), CORTIQ_STATUS_OK);
      history.clear();
    }
    ASSERT_EQ(Length(sessions[current].get()), history.size()) << "op " << op;
  }
}

TEST_F(CApiTest, StateSizeAndSaveErrors) {
  SessionPtr session = NewSession(model_.get());
  size_t empty_size = 0;
  ASSERT_EQ(cortiq_session_state_size(session.get(), &empty_size), CORTIQ_STATUS_OK);
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), 20, nullptr, 0),
            CORTIQ_STATUS_OK);
  size_t size = 0;
  ASSERT_EQ(cortiq_session_state_size(session.get(), &size), CORTIQ_STATUS_OK);
  // Header 80 + 4 caches x 32 (first, count, width, KV type); per position: the full cache (2 x
  // 64 floats) and 4 tokens bytes; the 3 sliding caches hold 8 positions of 2 x 32 floats; plus
  // the logits.
  EXPECT_EQ(empty_size, 80u + 4 * 32);
  EXPECT_EQ(size, 80u + 4 * 32 + 20 * (2 * 64 * 4 + 4) + 3 * 8 * (2 * 32 * 4) + kVocab * 4);
  std::vector<uint8_t> buf(size + 16, 0xee);
  EXPECT_EQ(cortiq_session_save(session.get(), buf.data(), size - 1),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("the state needs"));
  ASSERT_EQ(cortiq_session_save(session.get(), buf.data(), buf.size()), CORTIQ_STATUS_OK);
  EXPECT_EQ(buf[size], 0xee) << "exactly state_size bytes are written";
  // Restore wants exactly the saved size.
  EXPECT_EQ(cortiq_session_restore(session.get(), buf.data(), buf.size()),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("pass exactly the saved size"));
  EXPECT_EQ(cortiq_session_restore(session.get(), buf.data(), 10),
            CORTIQ_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(cortiq_session_restore(session.get(), buf.data(), size), CORTIQ_STATUS_OK);
}

TEST_F(CApiTest, CorruptedStatesAreRejectedAndLeaveTheSessionUntouched) {
  SessionPtr source = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_eval(source.get(), tokens_.data(), 12, nullptr, 0), CORTIQ_STATUS_OK);
  const std::vector<uint8_t> state = Save(source.get());

  SessionPtr target = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_eval(target.get(), tokens_.data() + 20, 5, nullptr, 0),
            CORTIQ_STATUS_OK);
  const std::vector<float> target_logits = Logits(target.get());
  // Every single-bit flip, in every byte of the state.
  std::vector<uint8_t> bad = state;
  for (size_t i = 0; i < bad.size(); ++i) {
    bad[i] ^= static_cast<uint8_t>(1u << (i % 8));
    const cortiq_status status = cortiq_session_restore(target.get(), bad.data(), bad.size());
    bad[i] = state[i];
    ASSERT_NE(status, CORTIQ_STATUS_OK) << "flipped byte " << i;
    if (i >= 32) {
      // Past magic, checksum, version, byte order and size: the checksum catches it.
      ASSERT_EQ(status, CORTIQ_STATUS_CORRUPT_DATA) << "byte " << i << ": " << cortiq_last_error();
    }
  }
  EXPECT_EQ(Length(target.get()), 5u);
  EXPECT_EQ(Logits(target.get()), target_logits);
  EXPECT_EQ(EvalAll(target.get(), kContinuation),
            Fresh(std::vector<int32_t>(tokens_.begin() + 20, tokens_.begin() + 25),
                  kContinuation));

  // Specific header fields.
  bad = state;
  bad[0] = 'X';
  EXPECT_EQ(cortiq_session_restore(target.get(), bad.data(), bad.size()),
            CORTIQ_STATUS_CORRUPT_DATA);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("not a cortiq session state"));
  bad = state;
  bad[16] = 3;  // version (newer than this library's 2)
  EXPECT_EQ(cortiq_session_restore(target.get(), bad.data(), bad.size()),
            CORTIQ_STATUS_UNSUPPORTED_VERSION);
  bad = state;
  std::reverse(bad.begin() + 20, bad.begin() + 24);  // byte-order mark
  EXPECT_EQ(cortiq_session_restore(target.get(), bad.data(), bad.size()),
            CORTIQ_STATUS_UNSUPPORTED_VERSION);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("byte order"));
  bad = state;
  bad[bad.size() / 2] ^= 1;
  EXPECT_EQ(cortiq_session_restore(target.get(), bad.data(), bad.size()),
            CORTIQ_STATUS_CORRUPT_DATA);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("checksum mismatch"));
  // Truncated buffers.
  for (size_t size = 0; size < state.size(); size += 97) {
    EXPECT_NE(cortiq_session_restore(target.get(), state.data(), size), CORTIQ_STATUS_OK);
  }
  EXPECT_EQ(Length(target.get()), 5u + kContinuation.size());
}

TEST_F(CApiTest, StatesOfOtherModelsOrLongerContextsAreRejected) {
  SessionPtr source = NewSession(model_.get());
  ASSERT_EQ(cortiq_session_eval(source.get(), tokens_.data(), 20, nullptr, 0), CORTIQ_STATUS_OK);
  const std::vector<uint8_t> state = Save(source.get());

  for (const auto& [model, mode] : {std::pair<std::string, std::string>{"tiny-a-f32", "no-opt"},
                                    {"tiny-a-bf16", "opt"}}) {
    ModelPtr other = OpenModel(ArtifactPath(model, mode));
    SessionPtr session = NewSession(other.get());
    EXPECT_EQ(cortiq_session_restore(session.get(), state.data(), state.size()),
              CORTIQ_STATUS_MODEL_MISMATCH)
        << model << "." << mode;
    EXPECT_THAT(cortiq_last_error(), HasSubstr("different model"));
  }
  // Same plan, other weights: a copy of the artifact with one weight byte changed (the weights
  // are outside the plan checksum; the sampled weight digest tells them apart).
  const std::string copy = TempPath("other-weights.cortiq");
  std::string bytes = ReadFile(path_);
  const uint64_t weights_offset = Artifact::Open(path_).value()->header().weights_offset;
  bytes[weights_offset + 5] ^= 0x01;
  WriteFile(copy, bytes);
  ModelPtr other = OpenModel(copy);
  SessionPtr session = NewSession(other.get());
  EXPECT_EQ(cortiq_session_restore(session.get(), state.data(), state.size()),
            CORTIQ_STATUS_MODEL_MISMATCH);
  std::remove(copy.c_str());

  SessionPtr small = NewSession(model_.get(), 16);
  EXPECT_EQ(cortiq_session_restore(small.get(), state.data(), state.size()),
            CORTIQ_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("20 positions; this session's context size is 16"));
}

// ---- Non-finite logits ----------------------------------------------------------------------

TEST_F(CApiTest, NumericErrorKeepsEarlierTokensAndTheSessionUsable) {
  // A copy of the artifact whose per-layer embedding row of token 7 is NaN (weights are not
  // checksummed): evaluating token 7 gives NaN logits.
  constexpr int32_t kPoisoned = 7;
  const std::unique_ptr<Artifact> artifact = Artifact::Open(path_).value();
  const Plan& plan = artifact->plan();
  const auto it = std::find_if(plan.weights.begin(), plan.weights.end(), [](const WeightEntry& w) {
    return w.name == "model.language_model.embed_tokens_per_layer.weight";
  });
  ASSERT_NE(it, plan.weights.end());
  ASSERT_EQ(it->format, WeightFormat::kF32);
  std::string bytes = ReadFile(path_);
  const size_t row_floats = static_cast<size_t>(it->shape[1]);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 0; i < row_floats; ++i) {
    std::memcpy(&bytes[artifact->header().weights_offset + it->offset +
                       (kPoisoned * row_floats + i) * 4],
                &nan, 4);
  }
  const std::string poisoned_path = TempPath("nan.cortiq");
  WriteFile(poisoned_path, bytes);
  ModelPtr poisoned = OpenModel(poisoned_path);
  std::remove(poisoned_path.c_str());  // the mapping stays valid
  {
    // Batched: the rows before the poisoned token are kept, with their logits.
    SessionPtr batched = NewSession(poisoned.get(), 64, 1, /*batch_size=*/0);
    ASSERT_FALSE(EvalAll(batched.get(), Prefix(tokens_, 12)).empty());
    const std::vector<int32_t> batch = {5, 6, kPoisoned, 8};
    std::vector<float> all(batch.size() * kVocab);
    EXPECT_EQ(cortiq_session_eval(batched.get(), batch.data(), batch.size(), all.data(),
                                  all.size()),
              CORTIQ_STATUS_NUMERIC_ERROR);
    EXPECT_THAT(cortiq_last_error(), HasSubstr("tokens[2] (position 14)"));
    EXPECT_EQ(Length(batched.get()), 14u);
    const std::vector<float> want = Fresh(Prefix(tokens_, 12), {5, 6});
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(all[i], want[i], 1e-4f) << i;
  }
  {
    // Batched, without all_logits: only the last token's logits are computed, so a failure is
    // the last token's, and every token before it (the poisoned one included) stays evaluated.
    SessionPtr batched = NewSession(poisoned.get(), 64, 1, /*batch_size=*/0);
    ASSERT_EQ(cortiq_session_eval(batched.get(), tokens_.data(), 12, nullptr, 0),
              CORTIQ_STATUS_OK);
    const std::vector<int32_t> batch = {5, 6, kPoisoned, 8};
    EXPECT_EQ(cortiq_session_eval(batched.get(), batch.data(), batch.size(), nullptr, 0),
              CORTIQ_STATUS_NUMERIC_ERROR);
    EXPECT_THAT(cortiq_last_error(), HasSubstr("tokens[3] (position 15)"));
    EXPECT_THAT(cortiq_last_error(), HasSubstr("3 tokens of the call were evaluated"));
    EXPECT_EQ(Length(batched.get()), 15u);
    std::vector<float> out(kVocab);
    EXPECT_EQ(cortiq_session_logits(batched.get(), out.data(), out.size()),
              CORTIQ_STATUS_FAILED_PRECONDITION);
    // The evaluated positions are the history: cutting before the poisoned token recovers.
    ASSERT_EQ(cortiq_session_truncate(batched.get(), 14), CORTIQ_STATUS_OK);
    EXPECT_LE(MaxDiff(EvalAll(batched.get(), kContinuation),
                      Fresh(Concat(Prefix(tokens_, 12), {5, 6}), kContinuation)),
              1e-4f);
  }
  SessionPtr session = NewSession(poisoned.get());

  // Tokens 0..11 (no 7 among them), then a batch whose third token is 7.
  std::vector<int32_t> prefix = Prefix(tokens_, 12);
  ASSERT_EQ(std::count(prefix.begin(), prefix.end(), kPoisoned), 0);
  ASSERT_FALSE(EvalAll(session.get(), prefix).empty());
  const std::vector<int32_t> batch = {5, 6, kPoisoned, 8};
  std::vector<float> all(batch.size() * kVocab);
  EXPECT_EQ(cortiq_session_eval(session.get(), batch.data(), batch.size(), all.data(),
                                all.size()),
            CORTIQ_STATUS_NUMERIC_ERROR);
  EXPECT_THAT(cortiq_last_error(), HasSubstr("tokens[2] (position 14)"));
  EXPECT_EQ(Length(session.get()), 14u);  // 5 and 6 were evaluated, 7 was not
  std::vector<float> out(kVocab);
  EXPECT_EQ(cortiq_session_logits(session.get(), out.data(), out.size()),
            CORTIQ_STATUS_FAILED_PRECONDITION);
  // The session goes on as if 7 had never been fed, also after cuts into the window that the
  // failed evaluation wrote to.
  const std::vector<int32_t> history = Concat(prefix, {5, 6});
  EXPECT_EQ(EvalAll(session.get(), kContinuation), Fresh(history, kContinuation));
  for (size_t length : {13, 8}) {
    ASSERT_EQ(cortiq_session_truncate(session.get(), 14), CORTIQ_STATUS_OK);
    ASSERT_EQ(cortiq_session_eval(session.get(), batch.data(), batch.size(), nullptr, 0),
              CORTIQ_STATUS_NUMERIC_ERROR);
    ASSERT_EQ(cortiq_session_truncate(session.get(), length), CORTIQ_STATUS_OK);
    EXPECT_EQ(EvalAll(session.get(), kContinuation), Fresh(Prefix(history, length), kContinuation))
        << "truncated to " << length;
    ASSERT_EQ(cortiq_session_reset(session.get()), CORTIQ_STATUS_OK);
    ASSERT_FALSE(EvalAll(session.get(), history).empty());
  }
}

// ---- Observer -------------------------------------------------------------------------------

struct Observed {
  cortiq_session* session = nullptr;
  std::vector<std::string> names;
  std::vector<int64_t> positions;
  std::vector<std::vector<float>> data;
  cortiq_status reentrant = CORTIQ_STATUS_OK;
  cortiq_status reentrant_null = CORTIQ_STATUS_OK;
};

void Observe(void* user, const char* name, int64_t position, const float* data, size_t count) {
  auto& o = *static_cast<Observed*>(user);
  o.names.push_back(name);
  o.positions.push_back(position);
  o.data.emplace_back(data, data + count);
  size_t length = 0;
  o.reentrant = cortiq_session_length(o.session, &length);  // must not re-enter
  // Busy and given NULL: BUSY wins (cortiq.h, "Thread safety").
  o.reentrant_null = cortiq_session_length(o.session, nullptr);
}

TEST_F(CApiTest, ObserverSeesEveryLayerOfEveryToken) {
  SessionPtr session = NewSession(model_.get());
  Observed observed;
  observed.session = session.get();
  ASSERT_EQ(cortiq_session_set_observer(session.get(), &Observe, &observed), CORTIQ_STATUS_OK);
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), 3, nullptr, 0), CORTIQ_STATUS_OK);
  ASSERT_EQ(observed.names.size(), 3u * 8);
  for (size_t i = 0; i < observed.names.size(); ++i) {
    EXPECT_EQ(observed.names[i], "layer." + std::to_string(i % 8));
    EXPECT_EQ(observed.positions[i], static_cast<int64_t>(i / 8));
    ASSERT_EQ(observed.data[i].size(), 64u);
    EXPECT_TRUE(std::all_of(observed.data[i].begin(), observed.data[i].end(),
                            [](float v) { return std::isfinite(v); }));
  }
  EXPECT_NE(observed.data[7], observed.data[15]) << "positions differ";
  EXPECT_EQ(observed.reentrant, CORTIQ_STATUS_BUSY);
  EXPECT_EQ(observed.reentrant_null, CORTIQ_STATUS_BUSY);
  // Truncate (even recomputing) and restore do not call it; removing it stops the calls.
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data() + 3, 20, nullptr, 0),
            CORTIQ_STATUS_OK);
  observed.names.clear();
  ASSERT_EQ(cortiq_session_truncate(session.get(), 2), CORTIQ_STATUS_OK);
  const std::vector<uint8_t> state = Save(session.get());
  ASSERT_EQ(cortiq_session_restore(session.get(), state.data(), state.size()), CORTIQ_STATUS_OK);
  EXPECT_TRUE(observed.names.empty());
  ASSERT_EQ(cortiq_session_set_observer(session.get(), nullptr, nullptr), CORTIQ_STATUS_OK);
  ASSERT_EQ(cortiq_session_eval(session.get(), tokens_.data(), 1, nullptr, 0), CORTIQ_STATUS_OK);
  EXPECT_TRUE(observed.names.empty());
}

// ---- C++ wrapper ----------------------------------------------------------------------------

TEST_F(CApiTest, CppWrapper) {
  api::Model model(path_);
  EXPECT_EQ(model.Info().vocab_size, kVocab);
  {
    cortiq_model_options bad = cortiq_model_options_default();
    bad.load = 9;
    try {
      api::Model read(path_, bad);
      ADD_FAILURE() << "no exception";
    } catch (const api::Error& e) {
      EXPECT_EQ(e.status(), CORTIQ_STATUS_INVALID_ARGUMENT);
      EXPECT_THAT(e.what(), HasSubstr("options->load is 9"));
    }
    api::Model read(path_, cortiq_model_options_default());
    EXPECT_EQ(read.Info().vocab_size, kVocab);
  }
  cortiq_session_options options = cortiq_session_options_default();
  options.ctx_size = 64;
  options.batch_size = 1;  // compared bit for bit with Fresh (token by token)
  api::Session session(model, options);
  EXPECT_EQ(session.ContextSize(), 64u);
  const std::vector<float> all = session.EvalAll(tokens_);
  EXPECT_EQ(all, Fresh({}, tokens_));
  EXPECT_EQ(session.Logits(), Rows(all, tokens_.size() - 1, 1));
  session.Truncate(20);
  const std::vector<uint8_t> state = session.Save();
  session.Reset();
  EXPECT_EQ(session.Length(), 0u);
  session.Restore(state);
  EXPECT_EQ(session.Length(), 20u);
  session.Eval(std::vector<int32_t>{1, 2, 3});
  EXPECT_EQ(session.Length(), 23u);
  try {
    session.Eval(std::vector<int32_t>{static_cast<int32_t>(kVocab)});
    ADD_FAILURE() << "no exception";
  } catch (const api::Error& e) {
    EXPECT_EQ(e.status(), CORTIQ_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("INVALID_ARGUMENT: cortiq_session_eval: tokens[0] = 512"));
  }
  EXPECT_THROW(api::Model("/nonexistent/model.cortiq"), api::Error);
}

}  // namespace
}  // namespace cortiq
