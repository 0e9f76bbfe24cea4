// EvalReusingPrefix (see prefix_reuse.h).
#include "runtime/generation/prefix_reuse.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

absl::Status NoOp(const EvaluatedToken&) { return absl::OkStatus(); }

}  // namespace

size_t CommonPrefixLength(absl::Span<const int32_t> a, absl::Span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

size_t ReusablePrefixLength(absl::Span<const int32_t> history, absl::Span<const int32_t> tokens) {
  return tokens.size() < 2 ? 0 : std::min(CommonPrefixLength(history, tokens), tokens.size() - 2);
}

absl::StatusOr<PrefixReuse> EvalReusingPrefix(Sequence& sequence,
                                              absl::Span<const int32_t> tokens,
                                              TokenObserver observer) {
  if (tokens.empty()) return absl::InvalidArgumentError("no tokens to evaluate");
  if (static_cast<int64_t>(tokens.size()) > sequence.ctx_size()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "context full: ", tokens.size(), " tokens exceed the context size ", sequence.ctx_size()));
  }
  const size_t keep = ReusablePrefixLength(sequence.history(), tokens);
  // Checked before the truncation, so that a bad id leaves the sequence as it was.
  const int64_t vocab = sequence.plan().model.vocab_size;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat("tokens[", i, "] = ", tokens[i],
                                                     " is out of range [0, ", vocab, ")"));
    }
  }
  CORTIQ_RETURN_IF_ERROR(sequence.Truncate(static_cast<int64_t>(keep)));
  CORTIQ_RETURN_IF_ERROR(sequence.Eval(tokens.subspan(keep), BatchLogits::kLast, observer));
  PrefixReuse reuse;
  reuse.reused = static_cast<int64_t>(keep);
  reuse.evaluated = static_cast<int64_t>(tokens.size() - keep);
  return reuse;
}

absl::StatusOr<PrefixReuse> EvalReusingPrefix(Sequence& sequence,
                                              absl::Span<const int32_t> tokens) {
  return EvalReusingPrefix(sequence, tokens, NoOp);
}

}  // namespace cortiq
