// FormatPerf and PromptProgress (see perf_report.h).
#include "tools/common/perf_report.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cortiq {
namespace {

// "    6 tokens (    0.21 ms per token,  4878.05 tokens per second)".
std::string Rate(double seconds, int64_t n, const char* unit) {
  std::string out = absl::StrFormat("%10.2f ms / %5d %-6s", seconds * 1e3, n, unit);
  if (n > 0 && seconds > 0) {
    absl::StrAppendFormat(&out, " (%8.2f ms per token, %8.2f tokens per second)",
                          seconds * 1e3 / static_cast<double>(n),
                          static_cast<double>(n) / seconds);
  }
  return out;
}

}  // namespace

std::string FormatPerf(const PerfCounters& p) {
  std::string out;
  if (p.load_seconds >= 0) {
    absl::StrAppendFormat(&out, "       load time = %10.2f ms\n", p.load_seconds * 1e3);
  }
  if (p.verify_seconds >= 0) {
    absl::StrAppendFormat(&out, "     verify time = %10.2f ms\n", p.verify_seconds * 1e3);
  }
  absl::StrAppend(&out, "prompt eval time = ", Rate(p.prompt_seconds, p.prompt_tokens, "tokens"),
                  "\n");
  if (p.prompt_reused >= 0) {
    absl::StrAppendFormat(&out, "    prompt cache = %5d tokens reused\n", p.prompt_reused);
  }
  absl::StrAppend(&out, "       eval time = ", Rate(p.eval_seconds, p.evaluated, "runs"), "\n");
  if (p.generated > 0 && p.first_token_seconds >= 0) {
    absl::StrAppendFormat(&out, "first token time = %10.2f ms\n", p.first_token_seconds * 1e3);
  }
  absl::StrAppendFormat(&out, "      total time = %10.2f ms / %5d tokens (%d generated)\n",
                        p.total_seconds * 1e3, p.prompt_tokens + p.generated, p.generated);
  return out;
}

PromptProgress::PromptProgress(int64_t total, int64_t batch_size,
                               const std::atomic<bool>* interrupt)
    : total_(total),
      batch_size_(batch_size < 1 ? 1 : batch_size),
      interrupt_(interrupt),
      show_(total > batch_size_ && isatty(STDERR_FILENO) == 1) {}

absl::Status PromptProgress::operator()(const EvaluatedToken& token) {
  if (interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed)) {
    return absl::CancelledError("interrupted");
  }
  const int64_t done = static_cast<int64_t>(token.index()) + 1;
  if (show_ && (done % batch_size_ == 0 || done == total_)) {
    std::fprintf(stderr, "\rprompt: %lld/%lld tokens", static_cast<long long>(done),
                 static_cast<long long>(total_));
    std::fflush(stderr);
    shown_ = true;
  }
  return absl::OkStatus();
}

void PromptProgress::Done() {
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
}

}  // namespace cortiq
