// DefaultSamplingOptions and ValidateSamplingOptions (see sampling_options.h).
#include "runtime/sampling/sampling_options.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace cortiq {
namespace sampling {

SamplingOptions DefaultSamplingOptions(const GenerationConfigSampling& model) {
  SamplingOptions options;
  if (model.temperature) options.temperature = *model.temperature;
  if (model.top_k) options.top_k = *model.top_k;
  if (model.top_p) options.top_p = *model.top_p;
  if (model.min_p) options.min_p = *model.min_p;
  if (model.typical_p) options.typical_p = *model.typical_p;
  if (model.repetition_penalty) options.repeat_penalty = *model.repetition_penalty;
  if (model.repeat_last_n) options.repeat_last_n = *model.repeat_last_n;
  if (model.do_sample && !*model.do_sample) options.temperature = 0.0f;
  return options;
}

absl::Status ValidateSamplingOptions(const SamplingOptions& options, int32_t vocab_size) {
  auto invalid = [](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (vocab_size < 1) return invalid("vocab_size must be >= 1, got ", vocab_size);
  if (!(options.temperature >= 0.0f) || std::isinf(options.temperature)) {
    return invalid("temperature must be >= 0 and finite (0: greedy), got ", options.temperature);
  }
  if (options.top_k < 0) return invalid("top_k must be >= 0 (0: off), got ", options.top_k);
  if (!(options.top_p > 0.0f && options.top_p <= 1.0f)) {
    return invalid("top_p must be in (0, 1], got ", options.top_p);
  }
  if (!(options.min_p >= 0.0f && options.min_p <= 1.0f)) {
    return invalid("min_p must be in [0, 1], got ", options.min_p);
  }
  if (!(options.typical_p > 0.0f && options.typical_p <= 1.0f)) {
    return invalid("typical_p must be in (0, 1], got ", options.typical_p);
  }
  if (!(options.repeat_penalty > 0.0f) || std::isinf(options.repeat_penalty)) {
    return invalid("repeat_penalty must be > 0 and finite (1: off), got ", options.repeat_penalty);
  }
  if (options.repeat_last_n < -1) {
    return invalid("repeat_last_n must be >= -1 (-1: every accepted token, 0: off), got ",
                   options.repeat_last_n);
  }
  if (!std::isfinite(options.frequency_penalty)) {
    return invalid("frequency_penalty must be finite, got ", options.frequency_penalty);
  }
  if (!std::isfinite(options.presence_penalty)) {
    return invalid("presence_penalty must be finite, got ", options.presence_penalty);
  }
  for (size_t e = 0; e < options.logit_bias.size(); ++e) {
    const LogitBias& entry = options.logit_bias[e];
    if (entry.token < 0 || entry.token >= vocab_size) {
      return invalid("logit_bias[", e, "]: token ", entry.token, " is out of range [0, ",
                     vocab_size, ")");
    }
    if (std::isnan(entry.bias) || entry.bias == INFINITY) {
      return invalid("logit_bias[", e, "]: bias of token ", entry.token,
                     " must be finite or -inf, got ", entry.bias);
    }
  }
  if (options.min_keep < 0) return invalid("min_keep must be >= 0, got ", options.min_keep);
  return absl::OkStatus();
}

}  // namespace sampling
}  // namespace cortiq
