// The slot scheduler (see scheduler.h).
#include "server/scheduler.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/generation/prefix_reuse.h"
#include "runtime/text/unicode.h"
#include "server/openai_response.h"

namespace cortiq::server {
namespace {

// The end of a held token's text while a run of byte tokens it belongs to is unfinished.
constexpr size_t kOpenEnd = SIZE_MAX;

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// The window of recent_tokens_per_second.
constexpr std::chrono::seconds kRecentWindow(5);

}  // namespace

bool JobHandle::Wait(std::vector<JobEvent>* events, std::optional<JobResult>* result,
                     std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return !events_.empty() || result_.has_value(); });
  while (!events_.empty()) {
    events->push_back(std::move(events_.front()));
    events_.pop_front();
  }
  if (result_.has_value()) {
    *result = std::move(result_);
    result_.reset();
    return true;
  }
  return false;
}

void JobHandle::Push(JobEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  changed_.notify_all();
}

void JobHandle::Finish(JobResult result) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    result_ = std::move(result);
  }
  changed_.notify_all();
}

// A job with its sampler and stop test made (Submit checks them).
struct Scheduler::Pending {
  Job job;
  std::shared_ptr<JobHandle> handle;
  sampling::Sampler sampler;
  sampling::StopCondition stop;
  Clock::time_point submitted;
};

struct Scheduler::Slot {
  enum class Phase { kIdle, kPrefill, kDecode };
  int index = 0;
  std::unique_ptr<Sequence> sequence;
  Phase phase = Phase::kIdle;
  uint64_t last_used = 0;  // admission count when it last took a job (LRU among equals)
  uint64_t started = 0;    // admission number of the current job (FIFO prefill)
  // The current job.
  std::optional<Pending> pending;
  std::optional<text::StreamDecoder> decoder;
  std::optional<ThoughtChannel> thought;  // Job::split_thoughts
  size_t next_prompt = 0;  // index of the first prompt token not yet evaluated
  int32_t to_eval = -1;    // kDecode: the sampled token to evaluate next
  // The answer's characters decoded so far (before any is held for a stop string) and those
  // given to the client; the logprobs of tokens whose text is not given yet, with the end of
  // their text (characters) (ReleaseLogprobs).
  size_t decoded_chars = 0;
  size_t released_chars = 0;
  std::deque<std::pair<PlacedLogprobs, size_t>> held_logprobs;
  JobResult result;
  Clock::time_point admitted, first_token;
};

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const Artifact& artifact,
                                                             const text::Tokenizer* tokenizer,
                                                             SchedulerOptions options) {
  if (options.parallel < 1) {
    return absl::InvalidArgumentError(absl::StrCat("parallel must be >= 1, got ", options.parallel));
  }
  if (options.max_queued < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the queue limit must be >= 0, got ", options.max_queued));
  }
  std::unique_ptr<Scheduler> s(new Scheduler());
  s->tokenizer_ = tokenizer;
  s->options_ = options;
  s->vocab_size_ = artifact.plan().model.vocab_size;
  for (int i = 0; i < options.parallel; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->index = i;
    CORTIQ_ASSIGN_OR_RETURN(slot->sequence, Sequence::Create(artifact, options.session));
    s->slots_.push_back(std::move(slot));
  }
  s->ctx_size_ = s->slots_[0]->sequence->ctx_size();
  const int64_t batch = s->slots_[0]->sequence->batch_size();
  // At least 3 rows where the batch allows: chunks of 2 would leave an odd prompt's last token
  // alone (PromptChunkRows), and its logits would differ from a cached prompt's.
  s->prefill_chunk_ = options.prefill_chunk > 0
                          ? std::min(std::max<int64_t>(options.prefill_chunk, 3), batch)
                          : batch;
  s->stats_.slots = options.parallel;
  s->thread_ = std::thread([p = s.get()] { p->Loop(); });
  return s;
}

Scheduler::~Scheduler() { Shutdown(); }

void Scheduler::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  // The thread ends after its current step (a prefill chunk or a decode step).
  if (thread_.joinable()) thread_.join();
  // Whatever did not finish ends with Unavailable. (The thread is gone and Submit refuses now,
  // but the lock still guards queue_ and stats_ for /metrics.)
  std::lock_guard<std::mutex> lock(mutex_);
  for (Pending& p : queue_) {
    JobResult r;
    r.status = absl::UnavailableError("the server is shutting down");
    p.handle->Finish(std::move(r));
  }
  queue_.clear();
  for (auto& slot : slots_) {
    if (slot->phase != Slot::Phase::kIdle) {
      slot->result.status = absl::UnavailableError("the server is shutting down");
      slot->pending->handle->Finish(std::move(slot->result));
      slot->pending.reset();
      slot->phase = Slot::Phase::kIdle;
    }
  }
  stats_.queued = 0;
  stats_.slots_busy = 0;
}

absl::StatusOr<std::shared_ptr<JobHandle>> Scheduler::Submit(Job job) {
  if (job.prompt.empty()) return absl::InvalidArgumentError("the prompt is empty (no tokens)");
  if (static_cast<int64_t>(job.prompt.size()) > ctx_size_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the prompt has ", job.prompt.size(), " tokens, more than the context of ", ctx_size_,
        " tokens (cortiq-server --ctx-size)"));
  }
  for (size_t i = 0; i < job.prompt.size(); ++i) {
    if (job.prompt[i] < 0 || job.prompt[i] >= vocab_size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "prompt token ", i, " = ", job.prompt[i], " is out of range [0, ", vocab_size_, ")"));
    }
  }
  CORTIQ_ASSIGN_OR_RETURN(sampling::Sampler sampler,
                          sampling::Sampler::Create(job.sampling, static_cast<int32_t>(vocab_size_)));
  CORTIQ_ASSIGN_OR_RETURN(sampling::StopCondition stop,
                          sampling::StopCondition::Create(job.end_of_generation_ids, job.stop));
  // The penalties see the prompt, as cortiq-run's (and llama.cpp's) do.
  for (int32_t id : job.prompt) CORTIQ_RETURN_IF_ERROR(sampler.Accept(id));
  auto handle = std::make_shared<JobHandle>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return absl::UnavailableError("the server is shutting down");
    // Jobs beyond the free slots wait; more than max_queued waiting are refused. (The slots'
    // phases belong to the thread; stats_.slots_busy is their count as of its last change.)
    const int free_slots = static_cast<int>(slots_.size()) - stats_.slots_busy;
    if (static_cast<int>(queue_.size()) - free_slots >= options_.max_queued) {
      const std::string slots = slots_.size() == 1
                                    ? std::string("the only slot is busy")
                                    : absl::StrCat("all ", slots_.size(), " slots are busy");
      return absl::ResourceExhaustedError(absl::StrCat(
          "too many requests: ", slots, " and ", queue_.size(), " request",
          queue_.size() == 1 ? " is" : "s are", " waiting, the most --queue allows (",
          options_.max_queued, "; cortiq-server --parallel, --queue); retry later"));
    }
    queue_.push_back(Pending{std::move(job), handle, std::move(sampler), std::move(stop),
                             Clock::now()});
    stats_.queued = static_cast<int>(queue_.size());
  }
  wake_.notify_all();
  return handle;
}

SchedulerStats Scheduler::Stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  SchedulerStats s = stats_;
  const Clock::time_point now = Clock::now();
  int tokens = 0;
  for (const auto& [t, n] : recent_) {
    if (now - t <= kRecentWindow) tokens += n;
  }
  s.recent_tokens_per_second = tokens / Seconds(kRecentWindow);
  return s;
}

void Scheduler::Loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto busy = [&] {
        for (const auto& slot : slots_) {
          if (slot->phase != Slot::Phase::kIdle) return true;
        }
        return false;
      };
      wake_.wait(lock, [&] { return stop_ || !queue_.empty() || busy(); });
      if (stop_) return;
      Admit();
    }
    // Jobs whose client went away free their slot before anything is evaluated for them.
    for (auto& slot : slots_) {
      if (slot->phase != Slot::Phase::kIdle && slot->pending->handle->cancelled()) {
        End(*slot, FinishReason::kInterrupted, absl::CancelledError("the client disconnected"));
      }
    }
    RunPrefillChunk();
    RunDecodeStep();
  }
}

void Scheduler::Admit() {
  while (!queue_.empty()) {
    if (queue_.front().handle->cancelled()) {
      JobResult r;
      r.status = absl::CancelledError("the client disconnected");
      queue_.front().handle->Finish(std::move(r));
      queue_.pop_front();
      ++stats_.jobs_cancelled;
      continue;
    }
    // The free slot whose history shares the most with the prompt, then the least recently used.
    Slot* best = nullptr;
    size_t best_common = 0;
    for (auto& slot : slots_) {
      if (slot->phase != Slot::Phase::kIdle) continue;
      const size_t common =
          CommonPrefixLength(slot->sequence->history(), queue_.front().job.prompt);
      if (best == nullptr || common > best_common ||
          (common == best_common && slot->last_used < best->last_used)) {
        best = slot.get();
        best_common = common;
      }
    }
    if (best == nullptr) break;
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    ++stats_.jobs_started;
    Start(*best, std::move(p));
  }
  stats_.queued = static_cast<int>(queue_.size());
  int busy = 0;
  for (const auto& slot : slots_) busy += slot->phase != Slot::Phase::kIdle;
  stats_.slots_busy = busy;
}

void Scheduler::Start(Slot& slot, Pending pending) {
  slot.admitted = Clock::now();
  slot.last_used = ++admissions_;
  slot.started = admissions_;
  slot.result = JobResult();
  slot.result.slot = slot.index;
  slot.result.prompt_tokens = static_cast<int64_t>(pending.job.prompt.size());
  slot.result.queue_seconds = Seconds(slot.admitted - pending.submitted);
  slot.pending.emplace(std::move(pending));
  slot.decoder.reset();
  slot.thought.reset();
  slot.decoded_chars = slot.released_chars = 0;
  slot.held_logprobs.clear();
  if (tokenizer_ != nullptr) {
    text::DecodeOptions decode;
    decode.skip_special_tokens = true;
    slot.decoder.emplace(tokenizer_, decode);
    if (slot.pending->job.split_thoughts) slot.thought = ThoughtChannel::ForTokenizer(*tokenizer_);
  }
  slot.pending->stop.Reset();
  slot.phase = Slot::Phase::kPrefill;
  // Keep the common prefix, but evaluate at least the last two prompt tokens, in one batch
  // (ReusablePrefixLength): a cached prompt then gives the first token a fresh one gives.
  const std::vector<int32_t>& prompt = slot.pending->job.prompt;
  const size_t keep = ReusablePrefixLength(slot.sequence->history(), prompt);
  slot.result.cached_tokens = static_cast<int64_t>(keep);
  stats_.cached_prompt_tokens += keep;
  slot.next_prompt = keep;
  if (absl::Status s = slot.sequence->Truncate(static_cast<int64_t>(keep)); !s.ok()) {
    slot.sequence->Reset();
    slot.next_prompt = 0;
    slot.result.cached_tokens = 0;
  }
}

void Scheduler::RunPrefillChunk() {
  Slot* slot = nullptr;
  for (auto& s : slots_) {
    if (s->phase == Slot::Phase::kPrefill && (slot == nullptr || s->started < slot->started)) {
      slot = s.get();
    }
  }
  if (slot == nullptr) return;
  const std::vector<int32_t>& prompt = slot->pending->job.prompt;
  const size_t n =
      PromptChunkRows(prompt.size() - slot->next_prompt, static_cast<size_t>(prefill_chunk_));
  const bool last = slot->next_prompt + n == prompt.size();
  const Clock::time_point begin = Clock::now();
  const absl::Status status =
      slot->sequence->Eval(absl::MakeConstSpan(prompt.data() + slot->next_prompt, n),
                           last ? BatchLogits::kLast : BatchLogits::kNone);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.prompt_seconds += Seconds(Clock::now() - begin);
    if (status.ok()) stats_.prompt_tokens += n;
  }
  if (!status.ok()) {
    // The sequence may hold part of the chunk: start the next job from an empty history.
    slot->sequence->Reset();
    End(*slot, FinishReason::kInterrupted, status);
    return;
  }
  slot->next_prompt += n;
  if (last) {
    slot->phase = Slot::Phase::kDecode;
    OnLogits(*slot);
  }
}

void Scheduler::RunDecodeStep() {
  std::vector<Slot*> active;
  for (auto& s : slots_) {
    if (s->phase == Slot::Phase::kDecode) active.push_back(s.get());
  }
  if (active.empty()) return;
  const Clock::time_point begin = Clock::now();
  // One batched evaluation of every generating slot (in groups of the batch size, which is at
  // least the slot count unless --batch-size made it smaller).
  const size_t group = static_cast<size_t>(active[0]->sequence->batch_size());
  for (size_t g = 0; g < active.size(); g += group) {
    std::vector<Sequence*> sequences;
    std::vector<int32_t> tokens;
    for (size_t i = g; i < std::min(active.size(), g + group); ++i) {
      sequences.push_back(active[i]->sequence.get());
      tokens.push_back(active[i]->to_eval);
    }
    std::vector<int64_t> before;
    for (Sequence* s : sequences) before.push_back(s->length());
    const absl::Status status = Sequence::EvalAcross(absl::MakeConstSpan(sequences), tokens);
    for (size_t i = 0; i < sequences.size(); ++i) {
      Slot& slot = *active[g + i];
      if (sequences[i]->length() == before[i]) {
        // Not evaluated (a non-finite row, or an argument error that cannot happen here).
        End(slot, FinishReason::kInterrupted,
            status.ok() ? absl::InternalError("decode step did not advance") : status);
        continue;
      }
      OnLogits(slot);
    }
  }
  const Clock::time_point end = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.decode_seconds += Seconds(end - begin);
  ++stats_.decode_steps;
  recent_.emplace_back(end, static_cast<int>(active.size()));
  while (!recent_.empty() && end - recent_.front().first > kRecentWindow) recent_.pop_front();
}

void Scheduler::OnLogits(Slot& slot) {
  Pending& p = *slot.pending;
  if (p.job.max_tokens == 0) {  // the prompt only (its cache stays for the next request)
    End(slot, FinishReason::kMaxTokens);
    return;
  }
  absl::StatusOr<absl::Span<const float>> logits = slot.sequence->logits();
  if (!logits.ok()) {
    End(slot, FinishReason::kInterrupted, logits.status());
    return;
  }
  absl::StatusOr<int32_t> token = p.sampler.Sample(*logits);
  if (!token.ok()) {
    End(slot, FinishReason::kInterrupted, token.status());
    return;
  }
  if (absl::Status s = p.sampler.Accept(*token); !s.ok()) {
    End(slot, FinishReason::kInterrupted, s);
    return;
  }
  if (slot.result.completion_tokens++ == 0) {
    slot.first_token = Clock::now();
    slot.result.prompt_seconds = Seconds(slot.first_token - slot.admitted);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.generated_tokens;
  }
  if (!p.job.ignore_eos && p.stop.IsEndOfGeneration(*token)) {
    End(slot, FinishReason::kEndOfGeneration);
    return;
  }
  JobEvent event;
  std::optional<TokenLogprobs> logprobs;
  if (p.job.top_logprobs >= 0) {
    logprobs = ComputeTokenLogprobs(*logits, *token, p.job.top_logprobs);
  }
  text::StreamDecoder* const decoder = slot.decoder ? &*slot.decoder : nullptr;
  ThoughtChannel* const thought = slot.thought ? &*slot.thought : nullptr;
  // Bytes of a character spelled by byte tokens are held by the decoder until the run of byte
  // tokens ends (text::StreamDecoder): the text they will print, to place the tokens' logprobs.
  const auto held_text = [&]() -> std::string {
    const text::StreamDecoder* answer = AnswerDecoder(decoder, thought);
    if (!logprobs || answer == nullptr) return std::string();
    absl::StatusOr<std::string> held = answer->HeldText();
    return held.ok() ? *std::move(held) : std::string();
  };
  const std::string held_before = held_text();
  absl::StatusOr<ThoughtSplit> split = DecodeReplyToken(decoder, thought, *token);
  if (!split.ok()) {
    End(slot, FinishReason::kInterrupted, split.status());
    return;
  }
  event.reasoning = std::move(split->reasoning);
  if (split->reasoning_token) {
    ++slot.result.reasoning_tokens;
    // The opening marker flushes the answer's held bytes (ThoughtChannel): their text is the
    // answer's, and the byte tokens that spelled it end there.
    if (!split->content.empty()) {
      PlaceLogprobs(slot, std::nullopt, split->content, held_before, /*held_after=*/false);
    }
  } else {
    const bool held_after = !held_text().empty();
    PlaceLogprobs(slot, std::move(logprobs), split->content, held_before, held_after);
  }
  absl::StatusOr<sampling::StopUpdate> pushed_stop =
      PushDecodedPiece(p.stop, AnswerDecoder(decoder, thought), split->content);
  if (!pushed_stop.ok()) {
    End(slot, FinishReason::kInterrupted, pushed_stop.status());
    return;
  }
  sampling::StopUpdate update = *std::move(pushed_stop);
  event.text = std::move(update.text);
  ReleaseLogprobs(slot, event, update.reason == sampling::StopReason::kStopString);
  p.handle->Push(std::move(event));
  if (update.reason == sampling::StopReason::kStopString) {
    End(slot, FinishReason::kStopString);
    return;
  }
  if (p.job.max_tokens >= 0 && slot.result.completion_tokens >= p.job.max_tokens) {
    End(slot, FinishReason::kMaxTokens);
    return;
  }
  if (slot.sequence->length() >= slot.sequence->ctx_size()) {
    End(slot, FinishReason::kContextFull);
    return;
  }
  slot.to_eval = *token;
}

void Scheduler::PlaceLogprobs(Slot& slot, std::optional<TokenLogprobs> logprobs,
                              const std::string& content, const std::string& held_before,
                              bool held_after) {
  const size_t chars = text::CodePointCount(content);
  size_t start = slot.decoded_chars;
  if (chars > 0 && !held_before.empty()) {
    // This token ended a run of byte tokens. If the run's text comes first as predicted, the
    // token is one after the run and its own text follows; else it was a byte token itself,
    // completing the run's characters, and starts where the run does.
    const bool after_run = absl::StartsWith(content, held_before);
    const size_t run_end = slot.decoded_chars + (after_run ? text::CodePointCount(held_before)
                                                           : chars);
    for (auto& [placed, end] : slot.held_logprobs) {
      if (end == kOpenEnd) end = run_end;
    }
    if (after_run) start = run_end;
  }
  slot.decoded_chars += chars;
  if (!logprobs) return;
  // A byte token whose character is still incomplete: its text ends when the run's does.
  const size_t end = chars == 0 && held_after ? kOpenEnd : slot.decoded_chars;
  slot.held_logprobs.emplace_back(PlacedLogprobs{*std::move(logprobs), start}, end);
}

void Scheduler::ReleaseLogprobs(Slot& slot, JobEvent& event, bool final) {
  slot.released_chars += text::CodePointCount(event.text);
  while (!slot.held_logprobs.empty()) {
    auto& [placed, end] = slot.held_logprobs.front();
    // Out when all its text is; at the end of the reply also a token cut by the stop string
    // (its text starts in what is returned); a token entirely after the cut is dropped.
    const bool out = end <= slot.released_chars ||
                     (final && placed.text_offset < slot.released_chars);
    if (!out && !final) break;
    if (out) event.logprobs.push_back(std::move(placed));
    slot.held_logprobs.pop_front();
  }
}

void Scheduler::LogJob(const JobResult& r) const {
  const std::string ended =
      r.status.ok() ? absl::StrCat("finish_reason ", OpenAiFinishReason(r.reason))
      : absl::IsCancelled(r.status) ? std::string("cancelled (the client left)")
                                    : absl::StrCat("ended: ", r.status.message());
  const double rate = r.generation_seconds > 0 && r.completion_tokens > 1
                          ? static_cast<double>(r.completion_tokens - 1) / r.generation_seconds
                          : 0.0;
  std::fprintf(options_.log,
               "cortiq-server: slot %d: prompt %lld tokens (%lld cached) in %.3f s after %.3f s "
               "queued; %lld generated in %.3f s (%.1f tokens/s); %s\n",
               r.slot, static_cast<long long>(r.prompt_tokens),
               static_cast<long long>(r.cached_tokens), r.prompt_seconds, r.queue_seconds,
               static_cast<long long>(r.completion_tokens), r.generation_seconds, rate,
               ended.c_str());
  std::fflush(options_.log);
}

void Scheduler::End(Slot& slot, FinishReason reason, absl::Status status) {
  Pending& p = *slot.pending;
  slot.result.reason = reason;
  slot.result.status = status;
  // The text held back: the decoder's incomplete bytes, then what the stop strings held.
  if (status.ok() && reason != FinishReason::kStopString) {
    // The held bytes go to the side the reply ended on.
    std::string rest;
    absl::StatusOr<ThoughtSplit> held = FinishReply(slot.decoder ? &*slot.decoder : nullptr,
                                                    slot.thought ? &*slot.thought : nullptr);
    if (held.ok()) {
      if (!held->reasoning.empty()) {
        p.handle->Push(JobEvent{std::string(), std::move(held->reasoning), {}});
      }
      rest = std::move(held->content);
    }
    sampling::StopUpdate update = p.stop.Push(-1, rest);
    std::string text = std::move(update.text);
    if (update.reason == sampling::StopReason::kStopString) {
      slot.result.reason = FinishReason::kStopString;
    } else {
      text += p.stop.Flush();
    }
    JobEvent last{std::move(text), std::string(), {}};
    // The reply is whole: every token's text is out, or cut by the stop string.
    ReleaseLogprobs(slot, last, /*final=*/true);
    if (!last.text.empty() || !last.logprobs.empty()) p.handle->Push(std::move(last));
  }
  if (slot.result.completion_tokens > 0) {
    slot.result.generation_seconds = Seconds(Clock::now() - slot.first_token);
  }
  if (options_.log != nullptr) LogJob(slot.result);
  p.handle->Finish(std::move(slot.result));
  slot.pending.reset();
  slot.decoder.reset();
  slot.thought.reset();
  slot.phase = Slot::Phase::kIdle;
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.jobs_finished;
  if (absl::IsCancelled(status)) ++stats_.jobs_cancelled;
  int busy = 0;
  for (const auto& s : slots_) busy += s->phase != Slot::Phase::kIdle;
  stats_.slots_busy = busy;
}

}  // namespace cortiq::server
