// Scheduler: the slots of cortiq-server and the one thread that runs the model for all of them
// (continuous batching, as llama-server's slots).
//
// Each of `parallel` slots is a Sequence with its own KV cache. A submitted job waits in a
// bounded queue until a slot is free; it takes the free slot whose history shares the longest
// prefix with its prompt (then the least recently used), keeps that prefix (a chat client resends
// the whole conversation every turn: only the new tokens are evaluated) and evaluates the rest of
// its prompt in chunks of `prefill_chunk` tokens. Every iteration of the thread runs at most one
// prefill chunk (of the slot that started first) and then one decode step of every slot that is
// generating, all of them in ONE batched evaluation (Sequence::EvalAcross: the weights are read
// once per step for all slots). So a running stream waits at most one prefill chunk for its next
// token, whatever arrives.
//
// Sampling, stop strings and text decoding are per slot (a Sampler, a StopCondition and a
// text::StreamDecoder, as runtime/generation's Generate uses them), so every slot's tokens equal
// what Generate would give it alone, up to the float rounding between batched and token-by-token
// evaluation. Results go to the job's JobHandle, which the HTTP thread of the request waits on; the
// thread never waits for a client, so a slow client does not slow the others (its events queue up
// in its handle).
#ifndef CORTIQ_SERVER_SCHEDULER_H_
#define CORTIQ_SERVER_SCHEDULER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/artifact.h"
#include "runtime/generation/generator.h"
#include "runtime/sampling/sampler.h"
#include "runtime/generation/thought_channel.h"
#include "runtime/sampling/stop_condition.h"
#include "runtime/sequence.h"
#include "runtime/text/tokenizer.h"
#include "server/token_logprobs.h"

namespace cortiq::server {

struct SchedulerOptions {
  // Slots: jobs generating at the same time, each with its own KV cache of session.ctx_size.
  int parallel = 1;
  // The sessions of the slots (ctx_size, threads, kv_type, batch_size).
  SessionOptions session;
  // Prompt tokens per prefill step; 0 = the sessions' batch size. Smaller chunks let running
  // streams go on sooner while a long prompt is evaluated.
  int64_t prefill_chunk = 0;
  // Jobs that may wait for a slot; one more is refused (Submit: ResourceExhausted).
  int max_queued = 16;
  // Where to write one line per finished job (slot, prompt / cached / generated tokens, times,
  // how it ended), as llama-server logs its requests; null: nowhere.
  std::FILE* log = nullptr;
};

// What a job asks: the prompt's ids and how to generate after it.
struct Job {
  std::vector<int32_t> prompt;  // non-empty, at most ctx_size ids in [0, vocab_size)
  sampling::SamplingOptions sampling;
  std::vector<int32_t> end_of_generation_ids;
  std::vector<std::string> stop;
  int64_t max_tokens = -1;  // -1: until end of generation or a full context
  bool ignore_eos = false;
  int top_logprobs = -1;  // -1: no log probabilities; else the sampled token's and this many more
  // Route the reply's thought channel (<|channel>thought\n...<channel|>, Gemma 4) to
  // JobEvent::reasoning instead of the text (chat completions; runtime/generation/
  // thought_channel.h). Only where the tokenizer has the markers.
  bool split_thoughts = false;
};

// A token's log probabilities and where its text starts in the reply.
struct PlacedLogprobs {
  TokenLogprobs logprobs;
  // Characters (code points) of the reply's text before this token's (OpenAI completions'
  // text_offset, relative to the reply).
  size_t text_offset = 0;
};

// What became final with one sampled token, as the client sees it.
struct JobEvent {
  std::string text;  // text final by now (may be empty: held back for a stop string or UTF-8)
  // Job::split_thoughts: the thought channel's text final by now (stop strings do not apply).
  std::string reasoning;
  // Job::top_logprobs >= 0: those of the answer's tokens (not the thought channel's) whose text
  // is final by now, in order, so that a chunk's logprobs are those of its text: a token whose
  // text a stop string holds back comes with the text that releases it (possibly with later
  // ones), and one whose text a matched stop string cuts off entirely never comes.
  std::vector<PlacedLogprobs> logprobs;
};

// The end of a job.
struct JobResult {
  // An evaluation error (the events so far were valid), Cancelled (JobHandle::Cancel), or
  // Unavailable (Shutdown).
  absl::Status status;
  FinishReason reason = FinishReason::kMaxTokens;
  int64_t prompt_tokens = 0;      // the prompt's length
  int64_t cached_tokens = 0;      // of them, kept from the slot's history (not evaluated)
  int64_t completion_tokens = 0;  // sampled tokens (an end-of-generation token included)
  int64_t reasoning_tokens = 0;   // of them, the thought channel's (markers included)
  int slot = -1;
  double queue_seconds = 0;        // waiting for a slot
  double prompt_seconds = 0;       // from getting a slot to the first token
  double generation_seconds = 0;   // from the first token to the end
};

// The link between a job's HTTP request and the scheduler thread. Thread-safe.
class JobHandle {
 public:
  // Waits until there are events or the result, or `timeout` has passed; moves the events into
  // *events (appended) and, once the job is over and every event was taken, the result into
  // *result. True when *result was set.
  bool Wait(std::vector<JobEvent>* events, std::optional<JobResult>* result,
            std::chrono::milliseconds timeout);
  // Asks the scheduler to stop the job (the client went away): its slot is freed before the next
  // step. The result is then Cancelled.
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  friend class Scheduler;
  void Push(JobEvent event);
  void Finish(JobResult result);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<JobEvent> events_;
  std::optional<JobResult> result_;
  std::atomic<bool> cancelled_{false};
};

// Counters for GET /metrics (Prometheus); totals since start.
struct SchedulerStats {
  int slots = 0;
  int slots_busy = 0;
  int queued = 0;
  uint64_t jobs_started = 0;
  uint64_t jobs_finished = 0;
  uint64_t jobs_cancelled = 0;
  uint64_t prompt_tokens = 0;       // prompt tokens evaluated
  uint64_t cached_prompt_tokens = 0;  // prompt tokens kept from a slot's history
  uint64_t generated_tokens = 0;
  uint64_t decode_steps = 0;        // batched decode evaluations
  double prompt_seconds = 0;        // spent evaluating prompts
  double decode_seconds = 0;        // spent in decode steps (evaluation and sampling)
  // Generated tokens per second over the decode steps of the last few seconds (all slots).
  double recent_tokens_per_second = 0;
};

class Scheduler {
 public:
  // Creates the slots' sequences on `artifact` (which, and `tokenizer`, must outlive the
  // scheduler) and starts the thread. `tokenizer` may be null (then jobs produce no text).
  // Errors: InvalidArgument for parallel < 1 or max_queued < 0; Sequence::Create's.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(const Artifact& artifact,
                                                           const text::Tokenizer* tokenizer,
                                                           SchedulerOptions options);
  // Shutdown().
  ~Scheduler();
  // Stops the thread after its current step and ends every queued and running job (results:
  // Unavailable, "the server is shutting down"); later Submits are refused the same way. For a
  // server stopping on a signal, so that its handlers answer instead of waiting for their
  // generations to end. Idempotent (a second, concurrent call returns at once, possibly before
  // the first has finished).
  void Shutdown();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues `job`. Errors, nothing queued: InvalidArgument for an empty prompt, a prompt longer
  // than the context ("the prompt has N tokens, more than the context of C tokens"), an id out
  // of range, bad sampling options or stop strings (the message names the option);
  // ResourceExhausted "too many requests: N waiting for one of the S slots ..." (or "for the
  // only slot") when max_queued wait; Unavailable "the server is shutting down" after Shutdown.
  absl::StatusOr<std::shared_ptr<JobHandle>> Submit(Job job);

  SchedulerStats Stats() const;
  int64_t ctx_size() const { return ctx_size_; }
  int64_t vocab_size() const { return vocab_size_; }

 private:
  struct Slot;
  struct Pending;
  using Clock = std::chrono::steady_clock;

  Scheduler() = default;
  void Loop();
  // Gives queued jobs to free slots (under mutex_).
  void Admit();
  void Start(Slot& slot, Pending pending);
  // Samples from the slot's logits and emits the token; ends the job or leaves a token to
  // evaluate.
  void OnLogits(Slot& slot);
  void End(Slot& slot, FinishReason reason, absl::Status status = absl::OkStatus());
  // Writes `r`'s line to options_.log.
  void LogJob(const JobResult& r) const;
  // Records a sampled answer token's place: `content` is the text its decoding released,
  // `held_before` / `held_after` what the decoder held back before it and whether it holds
  // some after it (a run of byte tokens); its `logprobs` (if asked for) wait in held_logprobs
  // until ReleaseLogprobs gives them out with their text.
  void PlaceLogprobs(Slot& slot, std::optional<TokenLogprobs> logprobs, const std::string& content,
                     const std::string& held_before, bool held_after);
  // Counts `event`'s text as given to the client and moves into event.logprobs the held
  // logprobs whose text is now all out; `final` (the reply is whole, or cut by a stop string):
  // also those whose text starts in it, dropping the rest.
  void ReleaseLogprobs(Slot& slot, JobEvent& event, bool final);
  void RunPrefillChunk();
  void RunDecodeStep();

  const text::Tokenizer* tokenizer_ = nullptr;
  SchedulerOptions options_;
  int64_t ctx_size_ = 0;
  int64_t vocab_size_ = 0;
  int64_t prefill_chunk_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;
  uint64_t admissions_ = 0;

  mutable std::mutex mutex_;  // guards queue_, stop_, stats_, the slots' busy flags
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  SchedulerStats stats_;
  // (time, tokens) of the recent decode steps, for recent_tokens_per_second.
  std::deque<std::pair<Clock::time_point, int>> recent_;
  std::thread thread_;
};

}  // namespace cortiq::server

#endif  // CORTIQ_SERVER_SCHEDULER_H_
