// What cortiq-run and cortiq-chat tell about a generation's speed, on stderr as llama.cpp does
// (llama_perf_context_print), and the progress line of a long prompt.
#ifndef CORTIQ_TOOLS_COMMON_PERF_REPORT_H_
#define CORTIQ_TOOLS_COMMON_PERF_REPORT_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/sequence.h"

namespace cortiq {

// Times in seconds.
struct PerfCounters {
  double load_seconds = -1;   // < 0: not shown
  double verify_seconds = -1;  // weights verified (--verify), included in load; < 0: not shown
  int64_t prompt_tokens = 0;  // prompt tokens evaluated
  int64_t prompt_reused = -1;  // prompt tokens taken from the cache (cortiq-chat); < 0: not shown
  double prompt_seconds = 0;
  int64_t generated = 0;  // tokens sampled
  int64_t evaluated = 0;  // of them, fed back
  double eval_seconds = 0;
  double first_token_seconds = 0;  // from the start of the prompt's evaluation; < 0: not shown
  double total_seconds = 0;
};

// Lines like
//        load time =      12.34 ms
// prompt eval time =       1.23 ms /     6 tokens (    0.21 ms per token,  4878.05 tokens per second)
//        eval time =       3.45 ms /     7 runs   (    0.49 ms per token,  2028.99 tokens per second)
// first token time =       1.50 ms
//       total time =       5.20 ms /    14 tokens
// (plus "verify time = T ms" when verify_seconds >= 0 and "prompt cache = N tokens reused" when
// prompt_reused >= 0), each ending in '\n'.
std::string FormatPerf(const PerfCounters& perf);

// A Sequence::Eval observer for a prompt of `total` tokens: when stderr is a terminal and the
// prompt spans more than one batch, shows "prompt: N/total tokens" on stderr after each batch
// (erased by Done); if `interrupt` is set, stops the evaluation (Cancelled "interrupted").
class PromptProgress {
 public:
  PromptProgress(int64_t total, int64_t batch_size, const std::atomic<bool>* interrupt);
  ~PromptProgress() { Done(); }
  absl::Status operator()(const EvaluatedToken& token);
  // Erases the progress line, if one was shown.
  void Done();

 private:
  int64_t total_;
  int64_t batch_size_;
  const std::atomic<bool>* interrupt_;
  bool show_ = false;
  bool shown_ = false;
};

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_PERF_REPORT_H_
