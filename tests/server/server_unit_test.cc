// The parts of cortiq-server that need no socket: request parsing (types, ranges, member names
// in the errors, unknown members ignored), the OpenAI error and response objects, the
// Prometheus text and the log probabilities (against a direct float64 log-softmax).
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/api_error.h"
#include "server/connection_threads.h"
#include "server/metrics.h"
#include "server/openai_response.h"
#include "server/request.h"
#include "server/token_logprobs.h"

namespace cortiq::server {
namespace {

using ::testing::HasSubstr;

std::optional<ApiError> Parse(ApiKind kind, const std::string& body, CompletionRequest* out) {
  return ParseCompletionRequest(kind, body, out);
}

TEST(RequestTest, ChatRequestMembers) {
  CompletionRequest r;
  ASSERT_FALSE(Parse(ApiKind::kChat, R"({
      "model": "m", "messages": [{"role": "system", "content": "be brief"},
                                 {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                                 {"role": "assistant", "content": null}],
      "stream": true, "stream_options": {"include_usage": true}, "max_tokens": 7,
      "temperature": 0.5, "top_p": 0.9, "top_k": 12, "min_p": 0.1, "seed": 42,
      "presence_penalty": 0.25, "frequency_penalty": -0.5, "stop": ["a", "", "b"],
      "logprobs": true, "top_logprobs": 3, "logit_bias": {"17": -100},
      "some_future_member": {"x": [1, 2]}, "user": "u"})",
                     &r));
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[0].content, "be brief");
  EXPECT_EQ(r.messages[1].content_kind, text::ChatMessage::ContentKind::kParts);
  EXPECT_EQ(r.messages[1].parts[0].text, "hi");
  EXPECT_EQ(r.messages[2].content_kind, text::ChatMessage::ContentKind::kNone);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.top_logprobs, 3);
  sampling::SamplingOptions o = ApplySamplingOverrides(r.sampling, sampling::SamplingOptions());
  EXPECT_EQ(o.temperature, 0.5f);
  EXPECT_EQ(o.top_p, 0.9f);
  EXPECT_EQ(o.top_k, 12);
  EXPECT_EQ(o.min_p, 0.1f);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.presence_penalty, 0.25f);
  EXPECT_EQ(o.frequency_penalty, -0.5f);
  ASSERT_EQ(o.logit_bias.size(), 1u);
  EXPECT_EQ(o.logit_bias[0].token, 17);
  EXPECT_EQ(o.logit_bias[0].bias, -100.0f);
  // Unset members keep the defaults.
  EXPECT_EQ(o.repeat_penalty, sampling::SamplingOptions().repeat_penalty);
}

TEST(RequestTest, CompletionPrompts) {
  CompletionRequest r;
  ASSERT_FALSE(Parse(ApiKind::kCompletion, R"({"prompt": "abc", "logprobs": 2})", &r));
  EXPECT_EQ(r.prompt, "abc");
  EXPECT_EQ(r.top_logprobs, 2);
  ASSERT_FALSE(Parse(ApiKind::kCompletion, R"({"prompt": ["one"]})", &r));
  EXPECT_EQ(r.prompt, "one");
  ASSERT_FALSE(Parse(ApiKind::kCompletion, R"({"prompt": [2, 5, 9], "max_tokens": null})", &r));
  EXPECT_EQ(r.prompt_ids, (std::vector<int32_t>{2, 5, 9}));
  EXPECT_EQ(r.max_tokens, -1);
  // A list of one token-id array is that prompt (OpenAI clients' list of prompts).
  CompletionRequest one;
  ASSERT_FALSE(Parse(ApiKind::kCompletion, R"({"prompt": [[2, 17, 300]]})", &one));
  EXPECT_EQ(one.prompt_ids, (std::vector<int32_t>{2, 17, 300}));
  EXPECT_EQ(r.top_logprobs, -1);
  // max_completion_tokens wins over max_tokens; 3.0 is the integer 3.
  ASSERT_FALSE(Parse(ApiKind::kChat,
                     R"({"messages": [{"role": "user", "content": "x"}],
                         "max_completion_tokens": 3.0, "max_tokens": 9})",
                     &r));
  EXPECT_EQ(r.max_tokens, 3);
}

TEST(RequestTest, ErrorsNameTheMember) {
  struct Case {
    ApiKind kind;
    std::string body;
    std::string param;
    std::string message;
  };
  const std::string m = R"("messages": [{"role": "user", "content": "x"}])";
  const std::vector<Case> cases = {
      {ApiKind::kChat, "{", "", "malformed JSON"},
      {ApiKind::kChat, "3", "", "must be a JSON object, got number"},
      // A number beyond double's range: nlohmann throws out_of_range, not parse_error.
      {ApiKind::kChat, "{" + m + R"(, "temperature": 1e400})", "", "malformed JSON"},
      {ApiKind::kChat, "{}", "messages", "'messages' is required"},
      {ApiKind::kChat, R"({"messages": []})", "messages", "'messages' is empty"},
      {ApiKind::kChat, R"({"messages": [3]})", "messages[0]", "must be an object"},
      {ApiKind::kChat, R"({"messages": [{"role": 1}]})", "messages[0].role", "must be a string"},
      {ApiKind::kChat, R"({"messages": [{"role": "tool", "content": "x"}]})", "messages[0]",
       "not supported"},
      {ApiKind::kChat, R"({"messages": [{"role": "wizard", "content": "x"}]})",
       "messages[0].role", "must be one of system, developer, user, assistant"},
      {ApiKind::kChat, R"({"messages": [{"role": "user"}]})", "messages[0].content",
       "'messages[0].content' is required for a 'user' message"},
      {ApiKind::kChat, R"({"messages": [{"role": "user", "content": "x"}, {"role": "system",
       "content": null}]})", "messages[1].content", "is required for a 'system' message"},
      {ApiKind::kChat, "", "", "malformed JSON"},
      {ApiKind::kChat, "{" + m + R"(, "temperature": "1"})", "temperature",
       "'temperature' must be a number, got string"},
      {ApiKind::kChat, "{" + m + R"(, "max_tokens": -2})", "max_tokens", "must be in [0, "},
      {ApiKind::kChat, "{" + m + R"(, "top_k": 1.5})", "top_k", "must be an integer"},
      {ApiKind::kChat, "{" + m + R"(, "stream": 1})", "stream", "must be a boolean"},
      {ApiKind::kChat, "{" + m + R"(, "stop": [1]})", "stop[0]", "must be a string"},
      {ApiKind::kChat, "{" + m + R"(, "top_logprobs": 2})", "top_logprobs",
       "needs 'logprobs': true"},
      {ApiKind::kChat, "{" + m + R"(, "logprobs": true, "top_logprobs": 21})", "top_logprobs",
       "must be in [0, 20]"},
      {ApiKind::kChat, "{" + m + R"(, "n": 3})", "n", "not supported"},
      {ApiKind::kChat, "{" + m + R"(, "tools": [{"type": "function"}]})", "tools",
       "not supported"},
      {ApiKind::kChat, "{" + m + R"(, "response_format": {"type": "json_object"}})",
       "response_format.type", "not supported"},
      {ApiKind::kChat, "{" + m + R"(, "logit_bias": {"x": 1}})", "logit_bias", "not a token id"},
      {ApiKind::kChat, "{" + m + R"(, "logit_bias": {" 5": 1}})", "logit_bias", "not a token id"},
      {ApiKind::kChat, "{" + m + R"(, "logit_bias": {"+5": 1}})", "logit_bias", "not a token id"},
      {ApiKind::kChat, "{" + m + R"(, "logit_bias": {"5": 1e300}})", "logit_bias[\"5\"]",
       "= 1e+300 is not in [-100, 100]"},
      {ApiKind::kChat, "{" + m + R"(, "logit_bias": {"5": -101}})", "logit_bias[\"5\"]",
       "= -101 is not in [-100, 100]"},
      {ApiKind::kChat, "{" + m + R"(, "tool_choice": "required"})", "tool_choice",
       "needs 'tools'"},
      {ApiKind::kChat, "{" + m + R"(, "tool_choice": {"type": "function"}})", "tool_choice",
       "needs 'tools'"},
      {ApiKind::kChat, "{" + m + R"(, "tool_choice": 5})", "tool_choice",
       "'tool_choice' must be a string or an object, got number"},
      {ApiKind::kChat, "{" + m + R"(, "stream_options": {"include_usage": true}})",
       "stream_options", "only allowed with \"stream\": true"},
      {ApiKind::kCompletion, "{}", "prompt", "'prompt' is required"},
      {ApiKind::kCompletion, R"({"prompt": 5})", "prompt", "must be a string"},
      {ApiKind::kCompletion, R"({"prompt": [1, -1]})", "prompt", "'prompt[1]' must be a token id"},
      {ApiKind::kCompletion, R"({"prompt": [[1, "x"]]})", "prompt",
       "'prompt[0][1]' must be a token id"},
      {ApiKind::kCompletion, R"({"prompt": [[]]})", "prompt", "'prompt[0]' is empty"},
      {ApiKind::kCompletion, R"({"prompt": [[1], [2]]})", "prompt", "one prompt per request"},
      {ApiKind::kCompletion, R"({"prompt": ["a", "b"]})", "prompt", "one prompt per request"},
      {ApiKind::kCompletion, R"({"prompt": "x", "echo": true})", "echo", "not supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    CompletionRequest r;
    std::optional<ApiError> e = Parse(c.kind, c.body, &r);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->type, "invalid_request_error");
    EXPECT_EQ(e->param, c.param);
    EXPECT_THAT(e->message, HasSubstr(c.message));
  }
}

TEST(RequestTest, TokenizeAndDetokenizeBodies) {
  TokenizeRequest t;
  ASSERT_FALSE(ParseTokenizeRequest(R"({"content": "Hi", "add_special": true, "with_pieces": null})",
                                    &t));
  EXPECT_EQ(t.content, "Hi");
  EXPECT_TRUE(t.add_special);
  EXPECT_FALSE(t.with_pieces);
  DetokenizeRequest d;
  ASSERT_FALSE(ParseDetokenizeRequest(R"({"tokens": [0, 5, 99]})", 100, &d));
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{0, 5, 99}));
  struct Case {
    bool tokenize;
    std::string body, param, message;
  };
  const std::vector<Case> cases = {
      {true, "[", "", "malformed JSON"},
      {true, "1e999", "", "malformed JSON"},
      {true, "[]", "", "must be a JSON object, got array"},
      {true, "{}", "content", "'content' must be a string"},
      {true, R"({"content": 1})", "content", "'content' must be a string"},
      {true, R"({"content": "x", "add_special": "yes"})", "add_special", "must be a boolean"},
      {false, R"({"tokens": 3})", "tokens", "must be an array"},
      {false, R"({"tokens": [100]})", "tokens", "'tokens[0]' must be a token id in [0, 100)"},
      {false, R"({"tokens": [1, -1]})", "tokens", "'tokens[1]'"},
      {false, R"({"tokens": [1.5]})", "tokens", "'tokens[0]'"},
      // Above INT64_MAX (nlohmann's number_unsigned): not wrapped to a small id.
      {false, R"({"tokens": [18446744073709551615]})", "tokens", "'tokens[0]'"},
      {false, R"({"tokens": [18446744073709551557]})", "tokens", "'tokens[0]'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    std::optional<ApiError> e = c.tokenize ? ParseTokenizeRequest(c.body, &t)
                                           : ParseDetokenizeRequest(c.body, 100, &d);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->param, c.param);
    EXPECT_THAT(e->message, HasSubstr(c.message));
  }
}

TEST(ApiErrorTest, BodyAndStatus) {
  const nlohmann::json body = ApiErrorBody(InvalidRequest("bad", "top_p"));
  EXPECT_EQ(body, nlohmann::json::parse(
                      R"({"error": {"message": "bad", "type": "invalid_request_error",
                                    "param": "top_p", "code": null}})"));
  EXPECT_EQ(ErrorFromStatus(absl::ResourceExhaustedError("x")).status, 503);
  EXPECT_EQ(ErrorFromStatus(absl::UnavailableError("shutting down")).status, 503);
  EXPECT_EQ(ErrorFromStatus(absl::UnavailableError("x")).type, "unavailable_error");
  EXPECT_EQ(ErrorFromStatus(absl::UnauthenticatedError("x")).status, 401);
  EXPECT_EQ(ErrorFromStatus(absl::UnauthenticatedError("x")).code, "invalid_api_key");
  EXPECT_EQ(ErrorFromStatus(absl::DataLossError("x")).status, 500);
  EXPECT_EQ(ApiErrorBody(InvalidRequest("x"))["error"]["param"], nullptr);
}

TEST(ResponseTest, ShapesAndInvalidUtf8) {
  JobResult r;
  r.prompt_tokens = 5;
  r.completion_tokens = 3;
  r.cached_tokens = 2;
  r.reason = FinishReason::kMaxTokens;
  const ResponseHeader chat{ApiKind::kChat, "chatcmpl-1", 7, "m"};
  const nlohmann::json whole = CompletionJson(chat, "hey", "", nullptr, r);
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["choices"][0]["message"]["content"], "hey");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(whole["usage"]["total_tokens"], 8);
  EXPECT_EQ(whole["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
  r.reason = FinishReason::kStopString;
  const std::string piece = "\xE2\x82";  // half of a character
  const nlohmann::json chunk = ChunkJson(chat, &piece, false, nullptr, nullptr);
  EXPECT_EQ(chunk["object"], "chat.completion.chunk");
  EXPECT_EQ(chunk["choices"][0]["finish_reason"], nullptr);
  // Never throws on invalid UTF-8: U+FFFD instead.
  EXPECT_THAT(SseData(chunk), HasSubstr("\xEF\xBF\xBD"));
  EXPECT_EQ(SseData(nlohmann::json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_EQ(OpenAiFinishReason(FinishReason::kEndOfGeneration), std::string("stop"));
  EXPECT_EQ(OpenAiFinishReason(FinishReason::kContextFull), std::string("length"));
  const ResponseHeader completion{ApiKind::kCompletion, "cmpl-1", 7, "m"};
  EXPECT_EQ(CompletionJson(completion, "x", "", nullptr, r)["choices"][0]["text"], "x");
  EXPECT_EQ(UsageChunkJson(completion, r)["choices"], nlohmann::json::array());
  EXPECT_NE(NewCompletionId(ApiKind::kChat), NewCompletionId(ApiKind::kChat));
}

TEST(ResponseTest, ReasoningContent) {
  JobResult r;
  r.prompt_tokens = 5;
  r.completion_tokens = 9;
  r.reasoning_tokens = 6;
  const ResponseHeader chat{ApiKind::kChat, "chatcmpl-1", 7, "m"};
  const nlohmann::json whole = CompletionJson(chat, "4", "2 + 2 is 4", nullptr, r);
  EXPECT_EQ(whole["choices"][0]["message"]["content"], "4");
  EXPECT_EQ(whole["choices"][0]["message"]["reasoning_content"], "2 + 2 is 4");
  EXPECT_EQ(whole["usage"]["completion_tokens"], 9);
  EXPECT_EQ(whole["usage"]["completion_tokens_details"]["reasoning_tokens"], 6);
  // No thought channel: no reasoning_content member at all.
  EXPECT_FALSE(CompletionJson(chat, "4", "", nullptr, r)["choices"][0]["message"].contains(
      "reasoning_content"));
  const std::string thought = "carry the one";
  const nlohmann::json chunk = ChunkJson(chat, nullptr, false, nullptr, nullptr, &thought);
  EXPECT_EQ(chunk["choices"][0]["delta"], (nlohmann::json{{"reasoning_content", thought}}));
  const std::string piece = "4";
  EXPECT_EQ(ChunkJson(chat, &piece, false, nullptr, nullptr)["choices"][0]["delta"],
            (nlohmann::json{{"content", "4"}}));
}

TEST(TokenLogprobsTest, MatchesFloat64LogSoftmax) {
  const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  double z = 0;
  for (float v : logits) z += std::exp(static_cast<double>(v));
  const TokenLogprobs t = ComputeTokenLogprobs(logits, 4, 3);
  EXPECT_NEAR(t.logprob, 0.5 - std::log(z), 1e-6);
  ASSERT_EQ(t.top.size(), 3u);
  // Ties by lower id first.
  EXPECT_EQ(t.top[0].first, 1);
  EXPECT_EQ(t.top[1].first, 3);
  EXPECT_EQ(t.top[2].first, 0);
  EXPECT_NEAR(t.top[2].second, 1.0 - std::log(z), 1e-6);
  EXPECT_TRUE(ComputeTokenLogprobs(logits, 0, 0).top.empty());
  EXPECT_EQ(ComputeTokenLogprobs(logits, 0, 99).top.size(), logits.size());
}

TEST(MetricsTest, PrometheusText) {
  RequestCounter counter;
  counter.Count("/v1/completions", 200);
  counter.Count("/v1/completions", 200);
  counter.Count("/x\"y", 404);
  SchedulerStats stats;
  stats.slots = 4;
  stats.slots_busy = 1;
  stats.queued = 2;
  stats.generated_tokens = 99;
  const std::string text = PrometheusText(counter.Snapshot(), stats);
  EXPECT_THAT(text, HasSubstr("cortiq_requests_total{endpoint=\"/v1/completions\",status=\"200\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("endpoint=\"/x\\\"y\""));
  EXPECT_THAT(text, HasSubstr("# TYPE cortiq_generated_tokens_total counter\ncortiq_generated_tokens_total 99\n"));
  EXPECT_THAT(text, HasSubstr("cortiq_requests_queued 2\n"));
  EXPECT_THAT(text, HasSubstr("cortiq_slots 4\n"));
  EXPECT_THAT(text, HasSubstr("cortiq_slots_busy 1\n"));
}

// Connections held open all at once get a thread each, up to the maximum (httplib's fixed
// ThreadPool ran at most its size and left the rest waiting); beyond it they wait and run when
// a thread is free; shutdown runs what is queued and joins.
TEST(ConnectionThreadsTest, AThreadPerHeldConnectionUpToTheMaximum) {
  constexpr int kHeld = 40;
  ConnectionThreads threads(kHeld);
  std::mutex mutex;
  std::condition_variable changed;
  int running = 0;
  bool release = false;
  const auto held = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    ++running;
    changed.notify_all();
    changed.wait(lock, [&] { return release; });
  };
  for (int i = 0; i < kHeld; ++i) threads.enqueue(held);
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(30), [&] { return running == kHeld; }))
        << running << " of " << kHeld << " connections running at once";
  }
  // One more waits for a free thread.
  std::atomic<bool> extra_ran{false};
  threads.enqueue([&] { extra_ran = true; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(extra_ran.load());
  EXPECT_EQ(threads.threads(), static_cast<size_t>(kHeld));
  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  changed.notify_all();
  std::atomic<int> queued_ran{0};
  for (int i = 0; i < 100; ++i) threads.enqueue([&] { ++queued_ran; });
  threads.shutdown();
  EXPECT_TRUE(extra_ran.load());
  EXPECT_EQ(queued_ran.load(), 100);
}

}  // namespace
}  // namespace cortiq::server
