// Reference stages (see reference_sampler.h).
#include "tests/runtime/sampling/reference_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace cortiq {
namespace sampling {
namespace reference {
namespace {

bool Canonical(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Keeps the items whose id is in `kept`, in the set's order.
Set KeepIds(Set set, const std::vector<int32_t>& kept) {
  int32_t max_id = 0;
  for (const Candidate& c : set.items) max_id = std::max(max_id, c.id);
  std::vector<char> keep(static_cast<size_t>(max_id) + 1, 0);
  for (int32_t id : kept) keep[static_cast<size_t>(id)] = 1;
  std::vector<Candidate> out;
  for (const Candidate& c : set.items) {
    if (keep[static_cast<size_t>(c.id)]) out.push_back(c);
  }
  set.items = out;
  return set;
}

}  // namespace

Set AllTokens(const std::vector<float>& logits) {
  Set set;
  for (size_t i = 0; i < logits.size(); ++i)
    set.items.push_back({static_cast<int32_t>(i), logits[i]});
  return set;
}

std::vector<int32_t> Ids(const Set& set) {
  std::vector<int32_t> ids;
  for (const Candidate& c : set.items) ids.push_back(c.id);
  return ids;
}

std::vector<int32_t> SortedIds(const Set& set) {
  std::vector<int32_t> ids = Ids(set);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<double> Probabilities(const Set& set, double temperature) {
  double max = -std::numeric_limits<double>::infinity();
  for (const Candidate& c : set.items) max = std::max(max, c.logit);
  std::vector<double> p;
  double sum = 0;
  for (const Candidate& c : set.items) {
    p.push_back(std::exp((c.logit - max) / temperature));
    sum += p.back();
  }
  for (double& x : p) x /= sum;
  return p;
}

Set TopK(Set set, int32_t k) {
  if (k <= 0 || k >= static_cast<int32_t>(set.items.size())) return set;
  std::sort(set.items.begin(), set.items.end(), Canonical);
  set.items.resize(static_cast<size_t>(k));
  set.sorted = true;
  return set;
}

Set TypicalP(Set set, double p, int32_t min_keep) {
  if (p >= 1.0 || set.items.size() <= 1) return set;
  const std::vector<double> prob = Probabilities(set);
  double entropy = 0;
  for (double q : prob) {
    if (q > 0) entropy -= q * std::log(q);
  }
  struct Scored {
    double score;
    int32_t id;
    double prob;
  };
  std::vector<Scored> scored;
  for (size_t i = 0; i < prob.size(); ++i) {
    const double score = prob[i] > 0 ? std::fabs(-std::log(prob[i]) - entropy)
                                     : std::numeric_limits<double>::infinity();
    scored.push_back({score, set.items[i].id, prob[i]});
  }
  std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return a.score < b.score || (a.score == b.score && a.id < b.id);
  });
  std::vector<int32_t> kept;
  double sum = 0;
  for (size_t i = 0; i < scored.size(); ++i) {
    sum += scored[i].prob;
    kept.push_back(scored[i].id);
    if (sum > p && static_cast<int64_t>(i) + 1 >= min_keep) break;
  }
  return KeepIds(set, kept);
}

Set TopP(Set set, double p, int32_t min_keep) {
  if (p >= 1.0 || set.items.size() <= 1) return set;
  std::vector<Candidate> order = set.items;
  std::sort(order.begin(), order.end(), Canonical);
  Set sorted_set{order, true};
  const std::vector<double> prob = Probabilities(sorted_set);
  std::vector<int32_t> kept;
  double sum = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    sum += prob[i];
    kept.push_back(order[i].id);
    if (sum >= p && static_cast<int64_t>(i) + 1 >= min_keep) break;
  }
  return KeepIds(set, kept);
}

Set MinP(Set set, double p, int32_t min_keep) {
  if (p <= 0.0 || set.items.size() <= 1) return set;
  const std::vector<double> prob = Probabilities(set);
  const double max = *std::max_element(prob.begin(), prob.end());
  std::vector<int32_t> kept;
  for (size_t i = 0; i < prob.size(); ++i) {
    if (prob[i] >= p * max) kept.push_back(set.items[i].id);
  }
  if (static_cast<int64_t>(kept.size()) < min_keep) {
    std::vector<Candidate> order = set.items;
    std::sort(order.begin(), order.end(), Canonical);
    kept.clear();
    for (int64_t i = 0; i < min_keep && i < static_cast<int64_t>(order.size()); ++i) {
      kept.push_back(order[static_cast<size_t>(i)].id);
    }
  }
  return KeepIds(set, kept);
}

std::vector<float> AdjustedLogits(std::vector<float> logits, const SamplingOptions& options,
                                  const std::vector<int32_t>& history) {
  for (const LogitBias& b : options.logit_bias) logits[static_cast<size_t>(b.token)] += b.bias;
  if (options.repeat_last_n == 0) return logits;
  size_t begin = 0;
  if (options.repeat_last_n > 0 && history.size() > static_cast<size_t>(options.repeat_last_n)) {
    begin = history.size() - static_cast<size_t>(options.repeat_last_n);
  }
  std::map<int32_t, int> count;
  for (size_t i = begin; i < history.size(); ++i) ++count[history[i]];
  for (const auto& [token, c] : count) {
    float& l = logits[static_cast<size_t>(token)];
    l = l <= 0 ? l * options.repeat_penalty : l / options.repeat_penalty;
    l -= static_cast<float>(c) * options.frequency_penalty + options.presence_penalty;
  }
  return logits;
}

Set ChainCandidates(const std::vector<float>& adjusted_logits, const SamplingOptions& options) {
  Set set = AllTokens(adjusted_logits);
  set = TopK(set, options.top_k);
  set = TypicalP(set, options.typical_p, options.min_keep);
  set = TopP(set, options.top_p, options.min_keep);
  set = MinP(set, options.min_p, options.min_keep);
  return set;
}

int32_t DrawWithUniform(const Set& set, double temperature, double u) {
  const std::vector<double> prob = Probabilities(set, temperature);
  double sum = 0;
  for (size_t i = 0; i < prob.size(); ++i) {
    sum += prob[i];
    if (sum > u) return set.items[i].id;
  }
  for (size_t i = prob.size(); i-- > 0;) {
    if (prob[i] > 0) return set.items[i].id;
  }
  return set.items.back().id;
}

}  // namespace reference
}  // namespace sampling
}  // namespace cortiq
