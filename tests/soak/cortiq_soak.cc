// cortiq-soak: a bounded stress run of one compiled model (issue 15, "Soak"), for minutes, not in
// ctest (scripts/soak.sh builds and runs it).
//
//   cortiq-soak MODEL.cortiq [--seconds N] [--workers N] [--sessions N] [--seed N] [--ctx N]
//
// What runs at once, until --seconds have passed:
// - --workers threads, each with --sessions C API sessions (cortiq.h: what hosts use) of random
//   context size, batch size and thread count on one cortiq_model, doing random operations:
//   eval of one token, of a batch (last logits, or every row's), truncate, save, restore (of a
//   state saved by any of the worker's sessions, a damaged copy of one, one too long for the
//   session), reset, an eval past the context (CONTEXT_FULL) and a bad token id
//   (INVALID_ARGUMENT); and the text path on a C++ Sequence of their own: a random text encoded
//   by the model's tokenizer (EncodePrompt), evaluated, continued by Generate with a random,
//   seeded sampler and stop strings, then restored and generated again (same tokens, same text),
//   the text equal to the tokenizer's Decode of the tokens.
// - After every operation the session is checked against a reference: a fresh Sequence (on the
//   same artifact, opened separately; random batch size) replays the session's token history,
//   and the session's logits (every row an eval returned, or the last) must be within
//   --tolerance (the golden tolerance, 1e-3) of the reference's; the session's length must be
//   the history's, and logits must be available exactly when the operations say so.
// - A thread opening and closing the model in a loop (C API: open, info, session, eval, close
//   the model before or after freeing the session, now and then cortiq_model_verify; C++:
//   Artifact::Open and the tokenizer).
// - A prober calling length / context size / state size on the workers' sessions while they
//   run: a call that overlaps another on the same session must fail with BUSY and change
//   nothing; a BUSY is counted as expected only if the other party was inside a call at the
//   time (each side counts its calls in and out), any other BUSY is an error.
//
// Report (stdout): operations per kind, resident memory (anonymous and file-backed, from
// /proc/self/status) after the first 10% of the run and at the end, the largest logit
// difference to the references, divergences and errors. Exit status 0 only if there were no
// divergence and no error.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "runtime/artifact.h"
#include "runtime/cortiq.h"
#include "runtime/generation/generator.h"
#include "runtime/generation/model_text.h"
#include "runtime/sampling/sampler.h"
#include "runtime/sampling/stop_condition.h"
#include "runtime/sequence.h"
#include "runtime/text/tokenizer.h"
#include "tools/common/flags.h"

namespace cortiq {
namespace {

using Clock = std::chrono::steady_clock;

// The kinds of operation counted in the report.
enum Op {
  kEvalOne,
  kEvalBatch,
  kEvalAllLogits,
  kTruncate,
  kSave,
  kRestore,
  kRestoreDamaged,
  kRestoreTooLong,
  kReset,
  kContextFull,
  kBadToken,
  kGenerate,
  kReferenceCheck,
  kModelCycle,
  kModelVerify,
  kProbe,
  kBusyExpected,
  kNumOps
};

const char* const kOpNames[kNumOps] = {
    "eval 1 token",        "eval batch (last logits)", "eval batch (all logits)",
    "truncate",            "save",                     "restore",
    "restore damaged",     "restore too long",         "reset",
    "eval past context",   "eval bad token id",        "text: encode+generate x2",
    "reference checks",    "model open/close cycles",  "model verify",
    "probes",              "BUSY (expected)",
};

struct Options {
  std::string model;
  int64_t seconds = 60;
  int64_t workers = 4;
  int64_t sessions = 2;
  int64_t seed = 1;
  int64_t ctx = 160;
  double tolerance = 1e-3;
  // Every session and reference token by token (batch size 1): for models whose logits amplify
  // rounding (random-weight E2B shapes: batched and token-by-token logits decorrelate within a
  // few positions), where only the same evaluation order gives comparable logits.
  bool token_by_token = false;
};

// Everything the threads share: the counters, the first errors, the stop flag.
class Report {
 public:
  void Count(Op op) { counts_[op].fetch_add(1, std::memory_order_relaxed); }
  int64_t count(Op op) const { return counts_[op].load(); }

  void Error(const std::string& what) { Record(&errors_, "error", what); }
  void Divergence(const std::string& what) { Record(&divergences_, "divergence", what); }
  int64_t errors() const { return errors_.load(); }
  int64_t divergences() const { return divergences_.load(); }

  void Difference(double d) {
    std::lock_guard<std::mutex> lock(mu_);
    max_difference_ = std::max(max_difference_, d);
  }
  double max_difference() {
    std::lock_guard<std::mutex> lock(mu_);
    return max_difference_;
  }

  std::atomic<bool> stop{false};

 private:
  void Record(std::atomic<int64_t>* counter, const char* kind, const std::string& what) {
    if (counter->fetch_add(1) < 20) {
      std::lock_guard<std::mutex> lock(mu_);
      std::fprintf(stderr, "cortiq-soak: %s: %s\n", kind, what.c_str());
    }
  }
  std::atomic<int64_t> counts_[kNumOps] = {};
  std::atomic<int64_t> errors_{0};
  std::atomic<int64_t> divergences_{0};
  std::mutex mu_;
  double max_difference_ = 0;
};

// Resident memory of this process in KiB: anonymous (heap, arenas, caches) and file-backed (the
// mapped model).
struct Rss {
  int64_t anon_kib = 0;
  int64_t file_kib = 0;
};

Rss ReadRss() {
  Rss rss;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    long long v = 0;
    if (std::sscanf(line.c_str(), "RssAnon: %lld", &v) == 1) rss.anon_kib = v;
    if (std::sscanf(line.c_str(), "RssFile: %lld", &v) == 1) rss.file_kib = v;
  }
  return rss;
}

// Counts one party's calls on a session in and out (odd: inside a call), so that the other
// party can tell whether a BUSY it got was explained by an overlapping call.
class CallCounter {
 public:
  uint64_t Snapshot() const { return n_.load(std::memory_order_seq_cst); }
  void Enter() { n_.fetch_add(1, std::memory_order_seq_cst); }
  void Leave() { n_.fetch_add(1, std::memory_order_seq_cst); }
  // Whether the counted party was inside a call at some time between snapshots `before` and
  // `after`.
  static bool Overlapped(uint64_t before, uint64_t after) {
    return (before & 1) != 0 || after != before;
  }

 private:
  std::atomic<uint64_t> n_{0};
};

// One C API session of a worker, with what the worker knows it holds.
struct TrackedSession {
  cortiq_session* session = nullptr;
  size_t ctx = 0;
  std::vector<int32_t> history;
  bool has_logits = false;
  CallCounter worker_calls;
  CallCounter prober_calls;
};

// A saved state and what it holds.
struct SavedState {
  std::vector<uint8_t> bytes;
  std::vector<int32_t> history;
  bool has_logits = false;
};

// The model, opened once for every thread: the C API handle the workers run, and the artifact
// (opened separately) of the references and the text path.
struct Shared {
  Options options;
  cortiq_model* model = nullptr;
  std::unique_ptr<Artifact> artifact;
  std::optional<text::Tokenizer> tokenizer;
  int64_t vocab = 0;
  int64_t max_batch = 1;
  Report report;
};

std::string Describe(const std::vector<int32_t>& history) {
  return absl::StrCat(history.size(), " tokens");
}

// The logits a fresh Sequence computes for `history`: every row (all = true) or the last.
absl::StatusOr<std::vector<float>> ReferenceLogits(Shared& shared, std::mt19937_64& rng,
                                                   absl::Span<const int32_t> history, bool all) {
  SessionOptions options;
  options.ctx_size = std::max<int64_t>(1, history.size());
  options.threads = 1;
  // Token by token or batched: the reference must not share the tested path's chunking.
  options.batch_size = shared.options.token_by_token ? 1 : std::uniform_int_distribution<int>(0, 1)(rng);
  absl::StatusOr<std::unique_ptr<Sequence>> seq = Sequence::Create(*shared.artifact, options);
  if (!seq.ok()) return seq.status();
  std::vector<float> out;
  const size_t vocab = static_cast<size_t>(shared.vocab);
  if (all) {
    out.reserve(history.size() * vocab);
    absl::Status s = (*seq)->Eval(history, BatchLogits::kAll, [&](const EvaluatedToken& t) {
      out.insert(out.end(), t.logits().begin(), t.logits().end());
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
  } else {
    absl::Status s = (*seq)->Eval(history, BatchLogits::kLast);
    if (!s.ok()) return s;
    absl::StatusOr<absl::Span<const float>> logits = (*seq)->logits();
    if (!logits.ok()) return logits.status();
    out.assign(logits->begin(), logits->end());
  }
  return out;
}

double MaxDifference(absl::Span<const float> a, absl::Span<const float> b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(e <= d)) d = e;  // NaN propagates as a divergence
  }
  return d;
}

class Worker {
 public:
  Worker(Shared& shared, int index)
      : shared_(shared), index_(index), rng_(shared.options.seed * 7919 + index) {}

  absl::Status Init() {
    for (int64_t s = 0; s < shared_.options.sessions; ++s) {
      auto tracked = std::make_unique<TrackedSession>();
      cortiq_session_options o = cortiq_session_options_default();
      const int64_t max_ctx = shared_.options.ctx;
      o.ctx_size = static_cast<size_t>(std::uniform_int_distribution<int64_t>(
          std::max<int64_t>(8, max_ctx / 4), max_ctx)(rng_));
      o.threads = std::uniform_int_distribution<int>(1, 2)(rng_);
      static const int64_t kBatches[] = {0, 1, 2, 3, 5};
      o.batch_size = kBatches[std::uniform_int_distribution<int>(0, 4)(rng_)];
      if (shared_.options.token_by_token) o.batch_size = 1;
      if (cortiq_session_create(shared_.model, &o, &tracked->session) != CORTIQ_STATUS_OK) {
        return absl::InternalError(absl::StrCat("cortiq_session_create: ", cortiq_last_error()));
      }
      size_t ctx = 0;
      cortiq_session_context_size(tracked->session, &ctx);
      tracked->ctx = ctx;
      sessions_.push_back(std::move(tracked));
    }
    if (shared_.tokenizer) {
      SessionOptions o;
      o.ctx_size = shared_.options.ctx;
      o.threads = 1;
      if (shared_.options.token_by_token) o.batch_size = 1;
      absl::StatusOr<std::unique_ptr<Sequence>> seq = Sequence::Create(*shared_.artifact, o);
      if (!seq.ok()) return seq.status();
      text_sequence_ = *std::move(seq);
    }
    return absl::OkStatus();
  }

  ~Worker() {
    for (auto& s : sessions_) cortiq_session_free(s->session);
  }

  // The sessions a prober may call into (they live as long as the worker).
  std::vector<TrackedSession*> sessions() {
    std::vector<TrackedSession*> out;
    for (auto& s : sessions_) out.push_back(s.get());
    return out;
  }

  void Run() {
    while (!shared_.report.stop.load()) {
      TrackedSession& s = *sessions_[Uniform(0, sessions_.size() - 1)];
      const int dice = Uniform(0, 99);
      if (dice < 22) {
        EvalOp(s, 1, false);
      } else if (dice < 40) {
        // Batches of 2 .. 24 tokens: one chunk or several (sessions have batch sizes 1 .. 5 or
        // the compiled maximum).
        EvalOp(s, Uniform(2, 24), false);
      } else if (dice < 48) {
        EvalOp(s, Uniform(1, 12), true);
      } else if (dice < 58) {
        TruncateOp(s);
      } else if (dice < 66) {
        SaveOp(s);
      } else if (dice < 76) {
        RestoreOp(s);
      } else if (dice < 80) {
        ResetOp(s);
      } else if (dice < 83) {
        ContextFullOp(s);
      } else if (dice < 86) {
        BadTokenOp(s);
      } else if (text_sequence_ != nullptr) {
        GenerateOp();
      }
    }
  }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  std::string Where(const TrackedSession& s, const char* op) const {
    return absl::StrCat("worker ", index_, " session ctx ", s.ctx, " (", Describe(s.history),
                        "): ", op);
  }

  // Calls `call` on `s` as the worker: retried while it fails with a BUSY that an overlapping
  // prober call explains; an unexplained BUSY is an error (and returned as is).
  template <typename F>
  cortiq_status Call(TrackedSession& s, const char* what, F call) {
    for (;;) {
      const uint64_t before = s.prober_calls.Snapshot();
      s.worker_calls.Enter();
      const cortiq_status status = call();
      s.worker_calls.Leave();
      const uint64_t after = s.prober_calls.Snapshot();
      if (status != CORTIQ_STATUS_BUSY) return status;
      if (!CallCounter::Overlapped(before, after)) {
        shared_.report.Error(absl::StrCat(Where(s, what), ": BUSY with no other call running"));
        return status;
      }
      shared_.report.Count(kBusyExpected);
    }
  }

  void Expect(TrackedSession& s, const char* what, cortiq_status got, cortiq_status want) {
    if (got != want) {
      shared_.report.Error(absl::StrCat(Where(s, what), ": ", cortiq_status_string(got),
                                        " (expected ", cortiq_status_string(want),
                                        "): ", cortiq_last_error()));
    }
  }

  std::vector<int32_t> RandomTokens(int64_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int32_t& id : t) id = static_cast<int32_t>(Uniform(0, shared_.vocab - 1));
    return t;
  }

  // Makes room for `n` tokens in `s` (a reset or a truncation) when the context cannot hold them.
  void MakeRoom(TrackedSession& s, int64_t n) {
    if (static_cast<int64_t>(s.history.size()) + n <= static_cast<int64_t>(s.ctx)) return;
    if (Uniform(0, 1) == 0) {
      ResetOp(s);
    } else {
      const int64_t keep = std::max<int64_t>(0, static_cast<int64_t>(s.ctx) - n);
      DoTruncate(s, static_cast<size_t>(Uniform(0, keep)));
    }
  }

  void EvalOp(TrackedSession& s, int64_t n, bool all) {
    n = std::min<int64_t>(n, s.ctx);
    MakeRoom(s, n);
    const std::vector<int32_t> tokens = RandomTokens(n);
    std::vector<float> rows;
    if (all) rows.assign(static_cast<size_t>(n * shared_.vocab), NAN);
    const size_t old_length = s.history.size();
    const cortiq_status status = Call(s, "eval", [&] {
      return cortiq_session_eval(s.session, tokens.data(), tokens.size(),
                                 all ? rows.data() : nullptr, rows.size());
    });
    Expect(s, "eval", status, CORTIQ_STATUS_OK);
    if (status != CORTIQ_STATUS_OK) return Resync(s);
    s.history.insert(s.history.end(), tokens.begin(), tokens.end());
    s.has_logits = true;
    shared_.report.Count(all ? kEvalAllLogits : n == 1 ? kEvalOne : kEvalBatch);
    Check(s, all ? &rows : nullptr, old_length);
  }

  void DoTruncate(TrackedSession& s, size_t length) {
    const cortiq_status status =
        Call(s, "truncate", [&] { return cortiq_session_truncate(s.session, length); });
    Expect(s, "truncate", status, CORTIQ_STATUS_OK);
    if (status != CORTIQ_STATUS_OK) return Resync(s);
    if (length != s.history.size()) s.has_logits = false;
    s.history.resize(length);
    shared_.report.Count(kTruncate);
  }

  void TruncateOp(TrackedSession& s) {
    // Cut one token, a few, or back to somewhere random; now and then past the end (OUT_OF_RANGE).
    if (Uniform(0, 9) == 0) {
      const cortiq_status status = Call(s, "truncate past the end", [&] {
        return cortiq_session_truncate(s.session, s.history.size() + 1);
      });
      Expect(s, "truncate past the end", status, CORTIQ_STATUS_OUT_OF_RANGE);
      return Check(s, nullptr, 0);
    }
    const size_t n = s.history.size();
    size_t length = n;
    switch (Uniform(0, 2)) {
      case 0: length = n > 0 ? n - 1 : 0; break;
      case 1: length = n - std::min<size_t>(n, Uniform(0, 12)); break;
      default: length = Uniform(0, n); break;
    }
    DoTruncate(s, length);
    Check(s, nullptr, 0);
  }

  void SaveOp(TrackedSession& s) {
    size_t size = 0;
    cortiq_status status =
        Call(s, "state size", [&] { return cortiq_session_state_size(s.session, &size); });
    Expect(s, "state size", status, CORTIQ_STATUS_OK);
    if (status != CORTIQ_STATUS_OK) return;
    SavedState state;
    state.bytes.resize(size);
    status = Call(s, "save", [&] { return cortiq_session_save(s.session, state.bytes.data(), size); });
    Expect(s, "save", status, CORTIQ_STATUS_OK);
    if (status != CORTIQ_STATUS_OK) return;
    state.history = s.history;
    state.has_logits = s.has_logits;
    if (saved_.size() < 4) {
      saved_.push_back(std::move(state));
    } else {
      saved_[Uniform(0, saved_.size() - 1)] = std::move(state);
    }
    shared_.report.Count(kSave);
    Check(s, nullptr, 0);  // saving changes nothing
  }

  void RestoreOp(TrackedSession& s) {
    if (saved_.empty()) return SaveOp(s);
    const SavedState& state = saved_[Uniform(0, saved_.size() - 1)];
    if (Uniform(0, 5) == 0) {
      // A damaged copy: rejected, and the session untouched.
      std::vector<uint8_t> damaged = state.bytes;
      damaged[Uniform(0, damaged.size() - 1)] ^= static_cast<uint8_t>(1u << Uniform(0, 7));
      const cortiq_status status = Call(s, "restore damaged", [&] {
        return cortiq_session_restore(s.session, damaged.data(), damaged.size());
      });
      if (status == CORTIQ_STATUS_OK) {
        // A flipped bit in a logit or cache row that the checksum should have caught.
        shared_.report.Error(absl::StrCat(Where(s, "restore damaged"),
                                          ": a damaged state was accepted"));
        return Resync(s);
      }
      shared_.report.Count(kRestoreDamaged);
      return Check(s, nullptr, 0);
    }
    const cortiq_status status = Call(s, "restore", [&] {
      return cortiq_session_restore(s.session, state.bytes.data(), state.bytes.size());
    });
    if (state.history.size() > s.ctx) {
      Expect(s, "restore too long", status, CORTIQ_STATUS_OUT_OF_RANGE);
      shared_.report.Count(kRestoreTooLong);
      return Check(s, nullptr, 0);
    }
    Expect(s, "restore", status, CORTIQ_STATUS_OK);
    if (status != CORTIQ_STATUS_OK) return Resync(s);
    s.history = state.history;
    s.has_logits = state.has_logits;
    shared_.report.Count(kRestore);
    Check(s, nullptr, 0);
  }

  void ResetOp(TrackedSession& s) {
    const cortiq_status status = Call(s, "reset", [&] { return cortiq_session_reset(s.session); });
    Expect(s, "reset", status, CORTIQ_STATUS_OK);
    s.history.clear();
    s.has_logits = false;
    shared_.report.Count(kReset);
    Check(s, nullptr, 0);
  }

  void ContextFullOp(TrackedSession& s) {
    const size_t room = s.ctx - s.history.size();
    // More tokens than the array holds: the count is checked before any id is read.
    const int32_t one = 0;
    const cortiq_status status = Call(s, "eval past the context", [&] {
      return cortiq_session_eval(s.session, &one, room + 1 + Uniform(0, 1 << 20), nullptr, 0);
    });
    Expect(s, "eval past the context", status, CORTIQ_STATUS_CONTEXT_FULL);
    shared_.report.Count(kContextFull);
    Check(s, nullptr, 0);
  }

  void BadTokenOp(TrackedSession& s) {
    const int64_t n = std::min<int64_t>(Uniform(1, 4), s.ctx);
    MakeRoom(s, n);
    std::vector<int32_t> tokens = RandomTokens(n);
    tokens[Uniform(0, n - 1)] = Uniform(0, 1) ? static_cast<int32_t>(shared_.vocab) : -1;
    const cortiq_status status = Call(s, "eval bad token", [&] {
      return cortiq_session_eval(s.session, tokens.data(), tokens.size(), nullptr, 0);
    });
    Expect(s, "eval bad token", status, CORTIQ_STATUS_INVALID_ARGUMENT);
    shared_.report.Count(kBadToken);
    Check(s, nullptr, 0);
  }

  // Re-reads the session's length after an unexpected failure, so that later checks compare
  // against what it holds (the history is cut to it; logits are unknown).
  void Resync(TrackedSession& s) {
    size_t length = 0;
    if (Call(s, "length", [&] { return cortiq_session_length(s.session, &length); }) ==
        CORTIQ_STATUS_OK) {
      s.history.resize(std::min(length, s.history.size()));
    }
    ResetOp(s);
  }

  // The reference check: length, logits availability, and the logits against a fresh replay
  // (rows[first..] of an all-logits eval too).
  void Check(TrackedSession& s, const std::vector<float>* rows, size_t first_row) {
    shared_.report.Count(kReferenceCheck);
    size_t length = 0;
    cortiq_status status =
        Call(s, "length", [&] { return cortiq_session_length(s.session, &length); });
    Expect(s, "length", status, CORTIQ_STATUS_OK);
    if (length != s.history.size()) {
      shared_.report.Divergence(absl::StrCat(Where(s, "length"), ": the session has ", length));
      return;
    }
    std::vector<float> logits(static_cast<size_t>(shared_.vocab));
    status = Call(s, "logits",
                  [&] { return cortiq_session_logits(s.session, logits.data(), logits.size()); });
    if (!s.has_logits) {
      Expect(s, "logits", status, CORTIQ_STATUS_FAILED_PRECONDITION);
      return;
    }
    Expect(s, "logits", status, CORTIQ_STATUS_OK);
    if (status != CORTIQ_STATUS_OK) return;
    const bool all = rows != nullptr;
    absl::StatusOr<std::vector<float>> reference = ReferenceLogits(shared_, rng_, s.history, all);
    if (!reference.ok()) {
      shared_.report.Error(absl::StrCat(Where(s, "reference"), ": ", reference.status().ToString()));
      return;
    }
    const size_t vocab = static_cast<size_t>(shared_.vocab);
    const absl::Span<const float> ref_last =
        absl::MakeConstSpan(*reference).subspan(reference->size() - vocab);
    Compare(s, "last logits", logits, ref_last);
    if (all) {
      const size_t n = s.history.size() - first_row;
      Compare(s, "all-logits rows", *rows,
              absl::MakeConstSpan(*reference).subspan(first_row * vocab, n * vocab));
    }
  }

  void Compare(const TrackedSession& s, const char* what, absl::Span<const float> got,
               absl::Span<const float> want) {
    const double d = MaxDifference(got, want);
    shared_.report.Difference(d);
    if (!(d <= shared_.options.tolerance)) {
      shared_.report.Divergence(absl::StrCat(Where(s, what), ": max |difference| ", d,
                                             " to a fresh replay of the history"));
    }
  }

  // The text path: a random text encoded (EncodePrompt), evaluated, continued by Generate; the
  // state restored and the same generation run again: the same tokens and text. The text must be
  // the tokenizer's Decode of the tokens; the Sequence is checked against a replay.
  void GenerateOp() {
    static const char* const kTexts[] = {
        "The capital of France is", "Hello", " ", "a\nb\n\nc", "日本語のテキスト",
        "<start_of_turn>user\nhi<end_of_turn>", "emoji 🙂🙃 and ümlauts", "1234567890",
        "<bos>already", "\t\t tabs",
    };
    std::string input = kTexts[Uniform(0, std::size(kTexts) - 1)];
    if (Uniform(0, 1)) input += kTexts[Uniform(0, std::size(kTexts) - 1)];
    const text::Tokenizer& tokenizer = *shared_.tokenizer;
    Sequence& seq = *text_sequence_;
    absl::StatusOr<std::vector<int32_t>> prompt = EncodePrompt(tokenizer, input);
    if (!prompt.ok()) {
      shared_.report.Error(absl::StrCat("EncodePrompt: ", prompt.status().ToString()));
      return;
    }
    const int64_t max_tokens = Uniform(1, 12);
    if (seq.length() + static_cast<int64_t>(prompt->size()) + max_tokens > seq.ctx_size()) {
      seq.Reset();
    }
    // A tokenizer larger than the model's vocabulary could give ids the model lacks.
    for (int32_t& id : *prompt) id = std::min<int32_t>(id, shared_.vocab - 1);
    if (absl::Status st = seq.Eval(*prompt, BatchLogits::kLast); !st.ok()) {
      shared_.report.Error(absl::StrCat("text: eval of the prompt: ", st.ToString()));
      seq.Reset();
      return;
    }
    std::vector<uint8_t> state(seq.StateSize());
    if (absl::Status st = seq.Save(absl::MakeSpan(state)); !st.ok()) {
      shared_.report.Error(absl::StrCat("text: save: ", st.ToString()));
      return;
    }
    sampling::SamplingOptions options = ModelSamplingOptions(tokenizer);
    options.temperature = Uniform(0, 2) == 0 ? 0.0f : 0.8f;
    options.seed = static_cast<uint64_t>(Uniform(0, 1 << 30));
    options.repeat_penalty = Uniform(0, 1) ? 1.0f : 1.1f;
    for (const sampling::LogitBias& ban : UntokenizableIdBans(shared_.vocab, tokenizer)) {
      options.logit_bias.push_back(ban);
    }
    std::vector<std::string> stops;
    if (Uniform(0, 2) == 0) stops = {"e", "\n\n", "ü"};
    GenerateOptions generate;
    generate.max_tokens = max_tokens;
    generate.ignore_eos = Uniform(0, 3) == 0;
    const int64_t length_before = seq.length();
    GenerationResult runs[2];
    for (int run = 0; run < 2; ++run) {
      if (run == 1) {
        if (absl::Status st = seq.Restore(state); !st.ok()) {
          shared_.report.Error(absl::StrCat("text: restore: ", st.ToString()));
          return;
        }
      }
      absl::StatusOr<sampling::Sampler> sampler =
          sampling::Sampler::Create(options, static_cast<int32_t>(shared_.vocab));
      absl::StatusOr<sampling::StopCondition> stop =
          sampling::StopCondition::Create(EndOfGenerationIds(tokenizer), stops);
      if (!sampler.ok() || !stop.ok()) {
        shared_.report.Error(absl::StrCat("text: sampler/stop: ", sampler.status().ToString(),
                                          stop.status().ToString()));
        return;
      }
      for (const int32_t id : seq.history()) (void)sampler->Accept(id);
      std::string streamed;
      absl::StatusOr<GenerationResult> result =
          Generate(seq, &tokenizer, *sampler, *stop, generate, [&](absl::string_view piece) {
            streamed.append(piece.data(), piece.size());
            return absl::OkStatus();
          });
      if (!result.ok()) {
        shared_.report.Error(absl::StrCat("text: Generate: ", result.status().ToString()));
        seq.Reset();
        return;
      }
      if (streamed != result->text) {
        shared_.report.Divergence("text: the streamed text differs from the result's text");
      }
      if (seq.length() != length_before + result->evaluated ||
          result->evaluated != std::max<int64_t>(0, result->tokens.size() - 1)) {
        shared_.report.Divergence(absl::StrCat("text: length ", seq.length(), " after ",
                                               result->evaluated, " evaluated from ",
                                               length_before));
      }
      runs[run] = *std::move(result);
    }
    if (runs[0].tokens != runs[1].tokens || runs[0].text != runs[1].text) {
      shared_.report.Divergence("text: the same seeded generation after a restore differs");
    }
    // The text is the decoding of the tokens (an end-of-generation token is not printed), unless
    // a stop string cut it.
    if (runs[0].reason != FinishReason::kStopString) {
      std::vector<int32_t> shown = runs[0].tokens;
      if (runs[0].reason == FinishReason::kEndOfGeneration) shown.pop_back();
      text::DecodeOptions decode;
      decode.skip_special_tokens = true;
      absl::StatusOr<std::string> decoded = tokenizer.Decode(shown, decode);
      if (!decoded.ok() || *decoded != runs[0].text) {
        shared_.report.Divergence(absl::StrCat(
            "text: Decode of the generated tokens differs from the streamed text: '",
            decoded.ok() ? *decoded : decoded.status().ToString(), "' vs '", runs[0].text, "'"));
      }
    } else if (runs[0].stop_string < 0 ||
               runs[0].text.find(stops[runs[0].stop_string]) != std::string::npos) {
      shared_.report.Divergence("text: a stop string was printed");
    }
    shared_.report.Count(kGenerate);
    // The Sequence against a replay of its history.
    shared_.report.Count(kReferenceCheck);
    absl::StatusOr<absl::Span<const float>> logits = seq.logits();
    if (!logits.ok()) return;  // a generation of one token evaluates nothing after the prompt
    std::vector<int32_t> history(seq.history().begin(), seq.history().end());
    absl::StatusOr<std::vector<float>> reference = ReferenceLogits(shared_, rng_, history, false);
    if (!reference.ok()) {
      shared_.report.Error(absl::StrCat("text: reference: ", reference.status().ToString()));
      return;
    }
    const double d = MaxDifference(*logits, *reference);
    shared_.report.Difference(d);
    if (!(d <= shared_.options.tolerance)) {
      shared_.report.Divergence(absl::StrCat("text: the Sequence's logits after Generate: max "
                                             "|difference| ",
                                             d, " to a replay"));
    }
  }

  Shared& shared_;
  int index_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<TrackedSession>> sessions_;
  std::vector<SavedState> saved_;
  std::unique_ptr<Sequence> text_sequence_;
};

// Calls read-only functions on the workers' sessions while the workers run.
void Probe(Shared& shared, const std::vector<TrackedSession*>& sessions) {
  std::mt19937_64 rng(shared.options.seed + 12345);
  while (!shared.report.stop.load()) {
    TrackedSession& s = *sessions[std::uniform_int_distribution<size_t>(0, sessions.size() - 1)(rng)];
    const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
    size_t value = 0;
    const uint64_t before = s.worker_calls.Snapshot();
    s.prober_calls.Enter();
    cortiq_status status = kind == 0   ? cortiq_session_length(s.session, &value)
                           : kind == 1 ? cortiq_session_context_size(s.session, &value)
                                       : cortiq_session_state_size(s.session, &value);
    s.prober_calls.Leave();
    const uint64_t after = s.worker_calls.Snapshot();
    shared.report.Count(kProbe);
    if (status == CORTIQ_STATUS_BUSY) {
      if (CallCounter::Overlapped(before, after)) {
        shared.report.Count(kBusyExpected);
      } else {
        shared.report.Error("probe: BUSY with no other call running");
      }
    } else if (status != CORTIQ_STATUS_OK) {
      shared.report.Error(absl::StrCat("probe: ", cortiq_status_string(status), ": ",
                                       cortiq_last_error()));
    } else if (kind == 1 && value != s.ctx) {
      shared.report.Divergence(absl::StrCat("probe: context size ", value, ", created with ", s.ctx));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(
        std::uniform_int_distribution<int>(0, 2000)(rng)));
  }
}

// Opens and closes the model in a loop: each cycle's logits for a fixed prompt equal the first
// cycle's within the tolerance (they are computed the same way: bit-identical in practice).
void CycleModel(Shared& shared) {
  std::mt19937_64 rng(shared.options.seed + 777);
  const std::vector<int32_t> prompt = {2, 5, 7, 11, 13};
  std::vector<int32_t> tokens;
  for (const int32_t t : prompt) tokens.push_back(static_cast<int32_t>(t % shared.vocab));
  std::vector<float> first;
  for (int64_t cycle = 0; !shared.report.stop.load(); ++cycle) {
    cortiq_model* model = nullptr;
    if (cortiq_model_open(shared.options.model.c_str(), &model) != CORTIQ_STATUS_OK) {
      shared.report.Error(absl::StrCat("cycle: open: ", cortiq_last_error()));
      return;
    }
    cortiq_model_info info = {};
    info.struct_size = sizeof(info);
    if (cortiq_model_get_info(model, &info) != CORTIQ_STATUS_OK || info.vocab_size != shared.vocab) {
      shared.report.Error(absl::StrCat("cycle: info: ", cortiq_last_error()));
    }
    if (cycle % 16 == 3) {
      if (cortiq_model_verify(model, 1) != CORTIQ_STATUS_OK) {
        shared.report.Error(absl::StrCat("cycle: verify: ", cortiq_last_error()));
      }
      shared.report.Count(kModelVerify);
    }
    cortiq_session_options o = cortiq_session_options_default();
    o.ctx_size = 16;
    o.batch_size = shared.options.token_by_token ? 1 : std::uniform_int_distribution<int>(0, 1)(rng);
    cortiq_session* session = nullptr;
    if (cortiq_session_create(model, &o, &session) != CORTIQ_STATUS_OK) {
      shared.report.Error(absl::StrCat("cycle: session: ", cortiq_last_error()));
      cortiq_model_close(model);
      return;
    }
    const bool close_first = std::uniform_int_distribution<int>(0, 1)(rng);
    if (close_first) cortiq_model_close(model);  // deferred until the session is freed
    std::vector<float> logits(static_cast<size_t>(shared.vocab));
    if (cortiq_session_eval(session, tokens.data(), tokens.size(), nullptr, 0) !=
            CORTIQ_STATUS_OK ||
        cortiq_session_logits(session, logits.data(), logits.size()) != CORTIQ_STATUS_OK) {
      shared.report.Error(absl::StrCat("cycle: eval: ", cortiq_last_error()));
    } else if (first.empty()) {
      first = logits;
    } else {
      const double d = MaxDifference(logits, first);
      if (!(d <= shared.options.tolerance)) {
        shared.report.Divergence(absl::StrCat("cycle ", cycle, ": logits differ by ", d));
      }
    }
    cortiq_session_free(session);
    if (!close_first) cortiq_model_close(model);
    // The C++ side: the artifact and its tokenizer, opened and dropped.
    {
      absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(shared.options.model);
      if (!artifact.ok()) {
        shared.report.Error(absl::StrCat("cycle: Artifact::Open: ", artifact.status().ToString()));
      } else if (!(*artifact)->tokenizer_section().empty()) {
        absl::StatusOr<text::Tokenizer> tokenizer = LoadArtifactTokenizer(**artifact);
        if (!tokenizer.ok()) {
          shared.report.Error(absl::StrCat("cycle: tokenizer: ", tokenizer.status().ToString()));
        } else if (!tokenizer->Encode("cycle").ok()) {
          shared.report.Error("cycle: tokenizer: encode failed");
        }
      }
    }
    shared.report.Count(kModelCycle);
  }
}

absl::Status Soak(Options options) {
  Shared shared;
  shared.options = options;
  if (cortiq_model_open(options.model.c_str(), &shared.model) != CORTIQ_STATUS_OK) {
    return absl::InvalidArgumentError(cortiq_last_error());
  }
  absl::StatusOr<std::unique_ptr<Artifact>> artifact = Artifact::Open(options.model);
  if (!artifact.ok()) return artifact.status();
  shared.artifact = *std::move(artifact);
  shared.vocab = shared.artifact->plan().model.vocab_size;
  shared.max_batch = shared.artifact->plan().max_batch;
  if (!shared.artifact->tokenizer_section().empty()) {
    absl::StatusOr<text::Tokenizer> tokenizer = LoadArtifactTokenizer(*shared.artifact);
    if (!tokenizer.ok()) return tokenizer.status();
    shared.tokenizer.emplace(*std::move(tokenizer));
  } else {
    std::fprintf(stderr, "cortiq-soak: %s has no tokenizer: the text path is left out\n",
                 options.model.c_str());
  }

  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<TrackedSession*> all_sessions;
  for (int64_t w = 0; w < options.workers; ++w) {
    workers.push_back(std::make_unique<Worker>(shared, static_cast<int>(w)));
    if (absl::Status s = workers.back()->Init(); !s.ok()) return s;
    for (TrackedSession* s : workers.back()->sessions()) all_sessions.push_back(s);
  }
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->Run(); });
  threads.emplace_back([&] { Probe(shared, all_sessions); });
  threads.emplace_back([&] { CycleModel(shared); });

  // The first RSS after a tenth of the run (every session allocated, the model's pages touched),
  // the last at the end; the peak of the samples in between.
  const auto deadline = start + std::chrono::seconds(options.seconds);
  const auto warm = start + std::chrono::milliseconds(options.seconds * 100);
  std::this_thread::sleep_until(warm);
  const Rss warm_rss = ReadRss();
  Rss peak = warm_rss;
  int64_t last_report = -1;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const Rss r = ReadRss();
    peak.anon_kib = std::max(peak.anon_kib, r.anon_kib);
    peak.file_kib = std::max(peak.file_kib, r.file_kib);
    const int64_t elapsed =
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
    if (elapsed / 30 != last_report) {
      last_report = elapsed / 30;
      std::fprintf(stderr, "cortiq-soak: %llds, %lld reference checks, anon RSS %lld KiB\n",
                   static_cast<long long>(elapsed),
                   static_cast<long long>(shared.report.count(kReferenceCheck)),
                   static_cast<long long>(r.anon_kib));
    }
  }
  shared.report.stop.store(true);
  for (std::thread& t : threads) t.join();
  const Rss end_rss = ReadRss();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  Report& report = shared.report;
  std::printf("cortiq-soak: %s, %.0f s, %lld workers x %lld C API sessions (ctx <= %lld, "
              "max batch %lld%s), tolerance %g\n",
              options.model.c_str(), seconds, static_cast<long long>(options.workers),
              static_cast<long long>(options.sessions), static_cast<long long>(options.ctx),
              static_cast<long long>(shared.max_batch),
              options.token_by_token ? ", token by token" : "", options.tolerance);
  for (int op = 0; op < kNumOps; ++op) {
    std::printf("  %-28s %10lld\n", kOpNames[op], static_cast<long long>(report.count(Op(op))));
  }
  std::printf("  RSS anon  after 10%%: %8lld KiB  end: %8lld KiB  peak: %8lld KiB\n",
              static_cast<long long>(warm_rss.anon_kib), static_cast<long long>(end_rss.anon_kib),
              static_cast<long long>(peak.anon_kib));
  std::printf("  RSS file  after 10%%: %8lld KiB  end: %8lld KiB  peak: %8lld KiB\n",
              static_cast<long long>(warm_rss.file_kib), static_cast<long long>(end_rss.file_kib),
              static_cast<long long>(peak.file_kib));
  std::printf("  max |logit difference| to the references: %g\n", report.max_difference());
  std::printf("  divergences: %lld  errors: %lld\n", static_cast<long long>(report.divergences()),
              static_cast<long long>(report.errors()));
  workers.clear();
  cortiq_model_close(shared.model);
  if (report.divergences() != 0 || report.errors() != 0) {
    return absl::InternalError(absl::StrCat(report.divergences(), " divergences, ",
                                            report.errors(), " errors"));
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  Options options;
  Flags flags("cortiq-soak", "MODEL.cortiq [options]",
              "A bounded stress run of one model: concurrent C API sessions doing random "
              "eval/truncate/save/restore/reset, each step checked against a fresh replay; the "
              "text path; the model opened and closed in a loop. Reports operations, RSS, "
              "divergences and errors; exit status 1 on any divergence or error.");
  flags.AddInt("--seconds", "N", &options.seconds, 1, 24 * 3600, "how long to run (default: 60)");
  flags.AddInt("--workers", "N", &options.workers, 1, 64, "worker threads (default: 4)");
  flags.AddInt("--sessions", "N", &options.sessions, 1, 16,
               "C API sessions per worker (default: 2)");
  flags.AddInt("--seed", "N", &options.seed, 0, INT32_MAX, "seed of the random operations");
  flags.AddInt("--ctx", "N", &options.ctx, 8, 1 << 20,
               "largest context size of a session; each gets one in [N/4, N] (default: 160)");
  flags.AddDouble("--tolerance", "X", &options.tolerance, 0, 1,
                  "largest |logit difference| to a replay (default: 1e-3, the golden tolerance)");
  flags.AddBool("--token-by-token", &options.token_by_token,
                "every session and reference evaluates token by token (batch size 1): for models "
                "that amplify rounding so much (random-weight E2B shapes) that batched and "
                "token-by-token logits cannot be compared");
  std::vector<std::string> positional = flags.ParseOrExit(argc, argv);
  if (positional.size() != 1) {
    std::fprintf(stderr, "cortiq-soak: give one MODEL.cortiq (see --help)\n");
    return 2;
  }
  options.model = positional[0];
  absl::Status status = Soak(options);
  if (!status.ok()) {
    std::fprintf(stderr, "cortiq-soak: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace cortiq

int main(int argc, char** argv) { return cortiq::Main(argc, argv); }
