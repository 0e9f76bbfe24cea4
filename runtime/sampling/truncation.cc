// Top-k, typical-p, top-p and min-p (see truncation.h).
#include "runtime/sampling/truncation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "runtime/sampling/portable_exp.h"

namespace cortiq {
namespace sampling {
namespace {

using RankedEntry = TokenCandidates::RankedEntry;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Top-k's buffer holds 2k entries (at least 128): cutting it back to k whenever it fills keeps
// the threshold close to the true k-th logit from early on (so that most blocks are skipped),
// and each cut costs O(k) for k insertions, so the whole pass stays linear.
constexpr int64_t kMinTopKBuffer = 128;

// Top-p on an unsorted set of more than kNucleusProbeMinSize first tries whether the nucleus
// lies within the kNucleusProbe most likely candidates (one top-k selection); only if not does
// it build the histogram.
constexpr int64_t kNucleusProbe = 256;
constexpr int64_t kNucleusProbeMinSize = 4 * kNucleusProbe;

// FindMassCut's histogram: 16 buckets per unit of key (for top-p a unit is one nat of logit, so
// the weights inside a bucket differ by at most e^(1/16) = 1.065x) over 64 units; keys further
// from the smallest all share the last bucket (their weights are < e^-64 of the largest).
constexpr int kBucketsPerUnit = 16;
constexpr int kBuckets = 1024;

// Descending logit, then ascending id (CanonicalBefore), with the logit in `key`.
inline bool LogitOrder(const RankedEntry& a, const RankedEntry& b) {
  return CanonicalBefore(a.key, a.id, b.key, b.id);
}
// Ascending key, then ascending id.
inline bool KeyOrder(const RankedEntry& a, const RankedEntry& b) {
  return a.key < b.key || (a.key == b.key && a.id < b.id);
}

// The position of the cut found by FindMassCut: the last kept entry in (key, id) order.
struct Cut {
  float key;
  int32_t id;
};

// Finds the shortest prefix of the candidates in ascending (key_of(i), id[i]) order whose
// weights sum to >= target (> target if `strict`) and that has >= min_keep entries. Returns
// false if no prefix qualifies (keep everything). `origin` is <= every key. Linear: a histogram
// of the keys (a monotone bucket index) gives each bucket's weight; buckets are accumulated in
// order up to the one that reaches the target, and only that bucket's candidates are sorted and
// walked (the next ones too if rounding — bucket sums are added in id order, the walk in key
// order — leaves the target just out of reach). has_weights must be set; keys are never NaN.
template <typename KeyOf>
bool FindMassCut(TokenCandidates* c, KeyOf key_of, float origin, double target, bool strict,
                 int64_t min_keep, Cut* cut) {
  const int64_t n = c->size;
  auto reached = [&](double sum) { return strict ? sum > target : sum >= target; };
  // The bucket of every candidate first (elementwise: vectorizes), then the sums by bucket in
  // two interleaved histograms (consecutive candidates often share a bucket, and one histogram
  // would chain their additions through memory).
  uint16_t* bucket = c->bucket.data();
  for (int64_t i = 0; i < n; ++i) {
    float v = (key_of(i) - origin) * static_cast<float>(kBucketsPerUnit);  // >= 0, maybe inf
    v = v < static_cast<float>(kBuckets - 1) ? v : static_cast<float>(kBuckets - 1);
    bucket[i] = static_cast<uint16_t>(v);
  }
  std::array<std::array<double, kBuckets>, 2> mass{};
  std::array<std::array<int32_t, kBuckets>, 2> count{};
  const float* weight = c->weight.data();
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    mass[0][bucket[i]] += static_cast<double>(weight[i]);
    ++count[0][bucket[i]];
    mass[1][bucket[i + 1]] += static_cast<double>(weight[i + 1]);
    ++count[1][bucket[i + 1]];
  }
  if (i < n) {
    mass[0][bucket[i]] += static_cast<double>(weight[i]);
    ++count[0][bucket[i]];
  }
  double sum = 0.0;
  int64_t before = 0;  // entries in the buckets already passed
  for (int b = 0; b < kBuckets; ++b) {
    const int64_t bucket_count = int64_t{count[0][b]} + count[1][b];
    if (bucket_count == 0) continue;
    const double bucket_mass = mass[0][b] + mass[1][b];
    if (!reached(sum + bucket_mass) || before + bucket_count < min_keep) {
      sum += bucket_mass;
      before += bucket_count;
      continue;
    }
    RankedEntry* members = c->ranked.data();
    int64_t m = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (bucket[j] == b) members[m++] = {key_of(j), c->id[j], weight[j]};
    }
    std::sort(members, members + m, KeyOrder);
    for (int64_t j = 0; j < m; ++j) {
      sum += static_cast<double>(members[j].weight);
      if (reached(sum) && before + j + 1 >= min_keep) {
        *cut = {members[j].key, members[j].id};
        return true;
      }
    }
    before += m;  // rounding: the target is in a later bucket
  }
  return false;
}

// Keeps the entries at or before `cut` in (key_of(i), id) order. Branch-free, on
// OrderedFloatBits images (key + 0 turns -0 into +0, so equal floats have equal images): which
// entries stay is as unpredictable as the data.
template <typename KeyOf>
void KeepUpToCut(KeyOf key_of, Cut cut, TokenCandidates* c) {
  const int32_t* id = c->id.data();
  const int32_t cut_image = OrderedFloatBits(cut.key + 0.0f);
  c->KeepIf([&](int64_t i) {
    const int32_t image = OrderedFloatBits(key_of(i) + 0.0f);
    return (image < cut_image) | ((image == cut_image) & (id[i] <= cut.id));
  });
}

// Top-k walks the logits in blocks of this many: one vectorized test per block, so the few
// blocks that hold a candidate cost a scalar walk and the others about one cycle per logit.
constexpr int64_t kTopKBlock = 32;

struct BlockTest {
  bool hit;  // some logit >= the threshold (OrderedFloatBits images)
  bool odd;  // some logit NaN or +inf
};

// Kept out of line: inlined into SelectTopK's loop, GCC no longer vectorizes it.
[[gnu::noinline]] BlockTest TestBlock(const float* logit, int64_t count, int32_t threshold,
                                      int32_t ordered_inf, int32_t ordered_minus_inf) {
  int hit = 0;
  int odd = 0;
  for (int64_t j = 0; j < count; ++j) {
    const int32_t v = OrderedFloatBits(logit[j]);
    hit |= v >= threshold;
    odd |= (v >= ordered_inf) | (v < ordered_minus_inf);
  }
  return {hit != 0, odd != 0};
}

// The k (< n) entries first in the canonical order among n candidates (logit[i], id[i], with
// id[i] = i if `id` is null, and weight[i] = 0 if `weight` is null), into buffer[0, k) sorted.
// NaN and +inf entries are never selected; returns whether there was any. One pass: the first
// `capacity` entries fill the buffer; then blocks of kTopKBlock are tested against the running
// threshold (the k-th best so far, which only gets better) with one vectorized comparison, and
// only a block holding a candidate is walked; the buffer is cut back to k with nth_element
// whenever it fills.
bool SelectTopK(const float* logit, const int32_t* id, const float* weight, int64_t n, int64_t k,
                RankedEntry* buffer) {
  const int64_t capacity = std::min(n, std::max<int64_t>(2 * k, kMinTopKBuffer));
  auto id_of = [id](int64_t i) { return id ? id[i] : static_cast<int32_t>(i); };
  auto weight_of = [weight](int64_t i) { return weight ? weight[i] : 0.0f; };
  bool bad = false;
  int64_t m = 0;
  int64_t i = 0;
  for (; i < capacity; ++i) {
    if (!(logit[i] < kInf)) {
      bad = true;
      continue;
    }
    buffer[m++] = {logit[i], id_of(i), weight_of(i)};
  }
  if (i < n && m > k) {
    std::nth_element(buffer, buffer + (k - 1), buffer + m, LogitOrder);
    m = k;
  }
  float threshold_logit = m >= k ? buffer[k - 1].key : -kInf;
  int32_t threshold_id = m >= k ? buffer[k - 1].id : std::numeric_limits<int32_t>::max();
  const int32_t ordered_inf = OrderedFloatBits(kInf);
  const int32_t ordered_minus_inf = OrderedFloatBits(-kInf);
  // A threshold of +-0 is compared as -0, the lower image, so that no block holding -0 or +0
  // (equal as floats) is skipped.
  auto ordered_threshold = [&] {
    return OrderedFloatBits(threshold_logit == 0.0f ? -0.0f : threshold_logit);
  };
  int32_t threshold_image = ordered_threshold();
  for (; i < n; i += kTopKBlock) {
    const int64_t end = std::min(i + kTopKBlock, n);
    const BlockTest test =
        TestBlock(logit + i, end - i, threshold_image, ordered_inf, ordered_minus_inf);
    bad |= test.odd;
    if (!test.hit && !test.odd) continue;
    for (int64_t j = i; j < end; ++j) {
      if (!(logit[j] < kInf)) continue;
      if (!CanonicalBefore(logit[j], id_of(j), threshold_logit, threshold_id)) continue;
      buffer[m++] = {logit[j], id_of(j), weight_of(j)};
      if (m == capacity) {
        std::nth_element(buffer, buffer + (k - 1), buffer + m, LogitOrder);
        m = k;
        threshold_logit = buffer[k - 1].key;
        threshold_id = buffer[k - 1].id;
        threshold_image = ordered_threshold();
      }
    }
  }
  if (m > k) std::nth_element(buffer, buffer + (k - 1), buffer + m, LogitOrder);
  std::sort(buffer, buffer + std::min(m, k), LogitOrder);
  return bad;
}

// Keeps the first `k` (< size) entries of the canonical order, in their current order.
void KeepCanonicalFirst(int64_t k, TokenCandidates* c) {
  RankedEntry* entries = c->ranked.data();
  for (int64_t i = 0; i < c->size; ++i) entries[i] = {c->logit[i], c->id[i], 0.0f};
  std::nth_element(entries, entries + (k - 1), entries + c->size, LogitOrder);
  const RankedEntry last = entries[k - 1];
  const float* logit = c->logit.data();
  const int32_t* id = c->id.data();
  c->KeepIf([&](int64_t i) { return !CanonicalBefore(last.key, last.id, logit[i], id[i]); });
}

}  // namespace

void ApplyTopK(int32_t k, TokenCandidates* c) {
  const int64_t n = c->size;
  if (k <= 0 || k >= n) return;
  if (c->sorted) {
    c->size = k;
    return;
  }
  RankedEntry* buffer = c->ranked.data();
  SelectTopK(c->logit.data(), c->id.data(), c->has_weights ? c->weight.data() : nullptr, n, k,
             buffer);
  for (int64_t j = 0; j < k; ++j) {
    c->logit[j] = buffer[j].key;
    c->id[j] = buffer[j].id;
    c->weight[j] = buffer[j].weight;
  }
  c->size = k;
  c->sorted = true;
  c->SetMaxLogit(c->logit[0]);
}

absl::Status LoadTopK(absl::Span<const float> logits, int32_t k, TokenCandidates* c) {
  const int64_t n = c->vocab_size();
  if (k <= 0 || k >= n || static_cast<int64_t>(logits.size()) != n) return c->Load(logits);
  RankedEntry* buffer = c->ranked.data();
  if (SelectTopK(logits.data(), nullptr, nullptr, n, k, buffer)) {
    c->size = 0;
    return CheckLogitValues(logits);
  }
  for (int64_t j = 0; j < k; ++j) {
    c->logit[j] = buffer[j].key;
    c->id[j] = buffer[j].id;
  }
  c->size = k;
  c->sorted = true;
  c->has_weights = false;
  c->SetMaxLogit(c->logit[0]);
  return absl::OkStatus();
}

void ApplyTypicalP(float p, int32_t min_keep, TokenCandidates* c) {
  if (p >= 1.0f || c->size <= 1) return;
  c->EnsureWeights();
  const int64_t n = c->size;
  const float shift = c->weight_shift;
  const float* logit = c->logit.data();
  const float* weight = c->weight.data();
  // E[d] = sum w_i d_i / sum w_i over the candidates of nonzero weight (0 * inf is taken as 0),
  // in eight fixed partial sums like WeightSum.
  double partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    const double term = static_cast<double>(weight[i]) * static_cast<double>(shift - logit[i]);
    partial[i & 7] += weight[i] > 0.0f ? term : 0.0;
  }
  const double weighted_d = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
                            ((partial[4] + partial[5]) + (partial[6] + partial[7]));
  const double total = c->WeightSum();
  const double mean_d = weighted_d / total;
  float* key = c->key.data();
  for (int64_t i = 0; i < n; ++i) {
    key[i] = weight[i] > 0.0f
                 ? static_cast<float>(std::fabs(static_cast<double>(shift - logit[i]) - mean_d))
                 : kInf;
  }
  auto key_of = [key](int64_t i) { return key[i]; };
  Cut cut;
  if (FindMassCut(c, key_of, 0.0f, static_cast<double>(p) * total, /*strict=*/true, min_keep,
                  &cut)) {
    KeepUpToCut(key_of, cut, c);
  }
}

void ApplyTopP(float p, int32_t min_keep, TokenCandidates* c) {
  if (p >= 1.0f || c->size <= 1) return;
  c->EnsureWeights();
  const int64_t n = c->size;
  const double target = static_cast<double>(p) * c->WeightSum();
  if (c->sorted) {  // the canonical order is the array order: walk the prefix
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      sum += static_cast<double>(c->weight[i]);
      if (sum >= target && i + 1 >= min_keep) {
        c->size = i + 1;
        return;
      }
    }
    return;
  }
  if (n > kNucleusProbeMinSize) {
    // Most nuclei are small: walk the kNucleusProbe most likely candidates first (SelectTopK,
    // carrying the weights) and write the prefix back in id order (an unsorted set is in id
    // order) — no pass over the set beyond the selection.
    RankedEntry* top = c->ranked.data();
    SelectTopK(c->logit.data(), c->id.data(), c->weight.data(), n, kNucleusProbe, top);
    double sum = 0.0;
    for (int64_t j = 0; j < kNucleusProbe; ++j) {
      sum += static_cast<double>(top[j].weight);
      if (sum >= target && j + 1 >= min_keep) {
        const float max = top[0].key;
        std::sort(top, top + (j + 1),
                  [](const RankedEntry& a, const RankedEntry& b) { return a.id < b.id; });
        for (int64_t e = 0; e <= j; ++e) {
          c->id[e] = top[e].id;
          c->logit[e] = top[e].key;
          c->weight[e] = top[e].weight;
        }
        c->size = j + 1;
        c->SetMaxLogit(max);
        return;
      }
    }
  }
  // Ascending -logit is descending logit: the canonical order. The weights' shift is >= every
  // logit of the set, so -shift is <= every key.
  const float* logit = c->logit.data();
  auto key_of = [logit](int64_t i) { return -logit[i]; };
  Cut cut;
  if (FindMassCut(c, key_of, -c->weight_shift, target, /*strict=*/false, min_keep, &cut)) {
    KeepUpToCut(key_of, cut, c);
  }
}

void ApplyMinP(float p, int32_t min_keep, TokenCandidates* c) {
  if (p <= 0.0f || c->size <= 1) return;
  c->EnsureWeights();
  const int64_t n = c->size;
  const float* weight = c->weight.data();
  // The largest weight is the maximum logit's, computed exactly as when it was stored.
  const float max_weight = PortableExp(c->MaxLogit() - c->weight_shift);
  const double threshold = static_cast<double>(p) * static_cast<double>(max_weight);
  auto passes = [&](int64_t i) { return static_cast<double>(weight[i]) >= threshold; };
  if (min_keep <= 1) {  // the most likely candidate always passes (p <= 1)
    c->KeepIf(passes);
    return;
  }
  int64_t passing = 0;
  for (int64_t i = 0; i < n; ++i) passing += passes(i);
  if (passing >= min_keep) {
    if (passing < n) c->KeepIf(passes);
    return;
  }
  if (min_keep < n) KeepCanonicalFirst(min_keep, c);
}

}  // namespace sampling
}  // namespace cortiq
