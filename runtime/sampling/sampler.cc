// Sampler (see sampler.h).
#include "runtime/sampling/sampler.h"

#include <limits>
#include <random>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/sampling/draw.h"
#include "runtime/sampling/logit_bias.h"
#include "runtime/sampling/truncation.h"

namespace cortiq {
namespace sampling {
namespace {

uint64_t RandomSeed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ static_cast<uint64_t>(device());
}

}  // namespace

Sampler::Sampler(const SamplingOptions& options, int32_t vocab_size, uint64_t seed)
    : options_(options),
      seed_(seed),
      rng_(seed),
      penalties_(options.repeat_last_n, options.repeat_penalty, options.frequency_penalty,
                 options.presence_penalty),
      candidates_(vocab_size) {
  candidates_.size = 0;
}

absl::StatusOr<Sampler> Sampler::Create(const SamplingOptions& options, int32_t vocab_size) {
  CORTIQ_RETURN_IF_ERROR(ValidateSamplingOptions(options, vocab_size));
  return Sampler(options, vocab_size, options.seed ? *options.seed : RandomSeed());
}

absl::StatusOr<int32_t> Sampler::Sample(absl::Span<const float> logits) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  TokenCandidates& c = candidates_;
  const bool greedy = options_.temperature == 0.0f;
  const bool adjusted =
      !options_.logit_bias.empty() || (penalties_.active() && penalties_.window_size() > 0);
  if (!adjusted && greedy && options_.typical_p >= 1.0f &&
      static_cast<int64_t>(logits.size()) == c.vocab_size()) {
    // The other truncations always keep the most likely token: one scan, no copy.
    c.size = 0;
    const LogitsScan scan = ScanLogits(logits);
    if (scan.has_nan_or_inf) return CheckLogitValues(logits);
    if (!(scan.max > kNegInf)) {
      return absl::FailedPreconditionError("every logit is -inf: no token can be sampled");
    }
    int64_t first = 0;
    while (logits[first] != scan.max) ++first;
    return static_cast<int32_t>(first);
  }
  if (adjusted) {
    CORTIQ_RETURN_IF_ERROR(c.Load(logits));
    CORTIQ_RETURN_IF_ERROR(ApplyLogitBias(options_.logit_bias, &c));
    CORTIQ_RETURN_IF_ERROR(penalties_.Apply(&c));
  } else {
    CORTIQ_RETURN_IF_ERROR(LoadTopK(logits, options_.top_k, &c));  // Load if top_k is off
  }
  // NaN and +inf are rejected above; a set of only -inf (every token banned) has no token.
  if (!((c.sorted ? c.logit[0] : c.MaxLogit()) > kNegInf)) {
    return absl::FailedPreconditionError(
        options_.logit_bias.empty()
            ? "every logit is -inf: no token can be sampled"
            : "every logit is -inf after logit_bias: no token can be sampled");
  }
  if (greedy && options_.typical_p >= 1.0f) return ArgmaxToken(c);
  ApplyTopK(options_.top_k, &c);
  ApplyTypicalP(options_.typical_p, options_.min_keep, &c);
  ApplyTopP(options_.top_p, options_.min_keep, &c);
  ApplyMinP(options_.min_p, options_.min_keep, &c);
  if (greedy) return ArgmaxToken(c);
  return DrawToken(options_.temperature, &rng_, &c);
}

absl::Status Sampler::Accept(int32_t token) {
  if (token < 0 || token >= vocab_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token ", token, " is out of range [0, ", vocab_size(), ")"));
  }
  penalties_.Accept(token);
  return absl::OkStatus();
}

void Sampler::Reset() {
  penalties_.Reset();
  rng_ = Xoshiro256StarStar(seed_);
}

void Sampler::ResetHistory() { penalties_.Reset(); }

absl::Status Sampler::set_generator_state(const std::array<uint64_t, 4>& state) {
  if (!rng_.set_state(state)) {
    return absl::InvalidArgumentError("the sampler's generator state is all zero");
  }
  return absl::OkStatus();
}

}  // namespace sampling
}  // namespace cortiq
