// ApplyLogitBias (see logit_bias.h).
#include "runtime/sampling/logit_bias.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace cortiq {
namespace sampling {

absl::Status ApplyLogitBias(absl::Span<const LogitBias> biases, TokenCandidates* candidates) {
  const int32_t vocab_size = candidates->vocab_size();
  for (size_t e = 0; e < biases.size(); ++e) {
    const LogitBias& entry = biases[e];
    if (entry.token < 0 || entry.token >= vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("logit_bias[", e, "]: token ", entry.token,
                                                     " is out of range [0, ", vocab_size, ")"));
    }
    float& logit = candidates->logit[entry.token];
    const float biased = logit + entry.bias;
    if (!(biased < std::numeric_limits<float>::infinity())) {
      return absl::InvalidArgumentError(absl::StrCat("logit_bias[", e, "]: bias ", entry.bias,
                                                     " on token ", entry.token, " (logit ", logit,
                                                     ") gives ", biased));
    }
    logit = biased;
  }
  if (!biases.empty()) {
    candidates->has_weights = false;
    candidates->sorted = false;
    candidates->InvalidateMaxLogit();
  }
  return absl::OkStatus();
}

}  // namespace sampling
}  // namespace cortiq
