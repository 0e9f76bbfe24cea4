// Log-softmax of one step's logits (see token_logprobs.h).
#include "server/token_logprobs.h"

#include <algorithm>
#include <cmath>

namespace cortiq::server {

TokenLogprobs ComputeTokenLogprobs(absl::Span<const float> logits, int32_t token, int top) {
  TokenLogprobs out;
  out.token = token;
  if (logits.empty()) return out;
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - max);
  const double log_z = max + std::log(sum);
  const auto logprob = [&](size_t i) {
    return static_cast<float>(static_cast<double>(logits[i]) - log_z);
  };
  if (token >= 0 && static_cast<size_t>(token) < logits.size()) out.logprob = logprob(token);
  const size_t k = std::min(static_cast<size_t>(std::max(top, 0)), logits.size());
  if (k == 0) return out;
  // The k best in one pass: a small sorted list (k <= 20).
  std::vector<int32_t> best;
  best.reserve(k + 1);
  const auto better = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  for (size_t i = 0; i < logits.size(); ++i) {
    const int32_t id = static_cast<int32_t>(i);
    if (best.size() == k && !better(id, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), id, better), id);
    if (best.size() > k) best.pop_back();
  }
  for (int32_t id : best) out.top.emplace_back(id, logprob(static_cast<size_t>(id)));
  return out;
}

}  // namespace cortiq::server
