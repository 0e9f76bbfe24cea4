// TokenCandidates (see token_candidates.h).
#include "runtime/sampling/token_candidates.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/target_clones.h"
#include "runtime/sampling/portable_exp.h"

namespace cortiq {
namespace sampling {

namespace {

// +inf and positive NaNs order at or above kOrderedInf; negative NaNs below kOrderedMinusInf.
const int32_t kOrderedInf = OrderedFloatBits(std::numeric_limits<float>::infinity());
const int32_t kOrderedMinusInf = OrderedFloatBits(-std::numeric_limits<float>::infinity());

}  // namespace

CORTIQ_TARGET_CLONES
LogitsScan ScanLogits(absl::Span<const float> logits) {
  const float* x = logits.data();
  const int64_t n = static_cast<int64_t>(logits.size());
  int32_t max = std::numeric_limits<int32_t>::min();
  int32_t min = std::numeric_limits<int32_t>::max();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = OrderedFloatBits(x[i]);
    max = v > max ? v : max;
    min = v < min ? v : min;
  }
  if (n == 0) return {-std::numeric_limits<float>::infinity(), false};
  return {FloatFromOrderedBits(max), max >= kOrderedInf || min < kOrderedMinusInf};
}

absl::Status CheckLogitValues(absl::Span<const float> logits) {
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!(logits[i] < std::numeric_limits<float>::infinity())) {
      return absl::InvalidArgumentError(
          absl::StrCat("logits[", i, "] is ", std::isnan(logits[i]) ? "NaN" : "+inf"));
    }
  }
  return absl::OkStatus();
}

TokenCandidates::TokenCandidates(int32_t vocab_size)
    : id(static_cast<size_t>(vocab_size)),
      logit(static_cast<size_t>(vocab_size)),
      weight(static_cast<size_t>(vocab_size)),
      ranked(static_cast<size_t>(vocab_size)),
      key(static_cast<size_t>(vocab_size)),
      bucket(static_cast<size_t>(vocab_size)) {}

CORTIQ_TARGET_CLONES
absl::Status TokenCandidates::Load(absl::Span<const float> logits) {
  const int64_t n = vocab_size();
  if (static_cast<int64_t>(logits.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits has ", logits.size(), " entries, the vocabulary has ", n));
  }
  // One pass copies, finds the maximum and checks (see ScanLogits), on local pointers (no
  // aliasing with the vectors' members) so that it vectorizes.
  const float* source = logits.data();
  float* out_logit = logit.data();
  int32_t* out_id = id.data();
  int32_t max = std::numeric_limits<int32_t>::min();
  int32_t min = std::numeric_limits<int32_t>::max();
  for (int64_t i = 0; i < n; ++i) {
    const float x = source[i];
    const int32_t v = OrderedFloatBits(x);
    max = v > max ? v : max;
    min = v < min ? v : min;
    out_logit[i] = x;
    out_id[i] = static_cast<int32_t>(i);
  }
  size = n;
  sorted = false;
  has_weights = false;
  if (max >= kOrderedInf || min < kOrderedMinusInf) {
    size = 0;
    return CheckLogitValues(logits);
  }
  SetMaxLogit(FloatFromOrderedBits(max));
  return absl::OkStatus();
}

float TokenCandidates::MaxLogit() const {
  if (!max_logit_valid_) {
    max_logit_ = ScanLogits(absl::MakeConstSpan(logit.data(), static_cast<size_t>(size))).max;
    max_logit_valid_ = true;
  }
  return max_logit_;
}

void TokenCandidates::EnsureWeights() {
  if (has_weights) return;
  weight_shift = MaxLogit();
  PortableExpShifted(logit.data(), size, weight_shift, 1.0f, weight.data());
  has_weights = true;
}

CORTIQ_TARGET_CLONES
double TokenCandidates::WeightSum() const {
  double partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const float* w = weight.data();
  int64_t i = 0;
  for (; i + 8 <= size; i += 8) {
    for (int j = 0; j < 8; ++j) partial[j] += static_cast<double>(w[i + j]);
  }
  for (int j = 0; i < size; ++i, ++j) partial[j] += static_cast<double>(w[i]);
  return ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
         ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

}  // namespace sampling
}  // namespace cortiq
