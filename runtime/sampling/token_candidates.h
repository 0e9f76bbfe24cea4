// TokenCandidates: the tokens still in the running during one sampling step (llama.cpp's
// llama_token_data_array, src/llama-sampling.cpp), as a structure of arrays so the passes over a
// whole vocabulary vectorize, plus the total order every stage uses to break ties.
#ifndef CORTIQ_RUNTIME_SAMPLING_TOKEN_CANDIDATES_H_
#define CORTIQ_RUNTIME_SAMPLING_TOKEN_CANDIDATES_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace cortiq {
namespace sampling {

// The canonical order of candidates: higher logit first, and among equal logits the lower token
// id first. It is total (logits are never NaN here), so every selection and sort over it has one
// answer on every standard library ("ties go to the lowest id").
inline bool CanonicalBefore(float logit_a, int32_t id_a, float logit_b, int32_t id_b) {
  return logit_a > logit_b || (logit_a == logit_b && id_a < id_b);
}

// The float's bits as an int32 in the order of the floats (a < b iff OrderedFloatBits(a) <
// OrderedFloatBits(b) for non-NaN a, b, except that -0 orders just below +0): negative floats
// have their magnitude bits flipped. GCC vectorizes integer minima, maxima and comparisons but
// not float ones (unless -ffinite-math-only), so the whole-vocabulary scans run on these.
inline int32_t OrderedFloatBits(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits ^ ((bits >> 31) & 0x7FFFFFFF);
}
inline float FloatFromOrderedBits(int32_t ordered) {
  const int32_t bits = ordered ^ ((ordered >> 31) & 0x7FFFFFFF);
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

// The largest of `logits` and whether any entry is NaN or +inf, in one vectorized pass.
struct LogitsScan {
  float max;
  bool has_nan_or_inf;
};
LogitsScan ScanLogits(absl::Span<const float> logits);

// OK, or InvalidArgument naming the first entry of `logits` that is NaN or +inf
// ("logits[17] is NaN") — the error of TokenCandidates::Load.
absl::Status CheckLogitValues(absl::Span<const float> logits);

// The candidates of one step: entries [0, size) of `id`, `logit` and (when has_weights) `weight`
// belong to the set; the arrays keep their capacity (the vocabulary size) so a step allocates
// nothing. The order of the entries is the order the draw visits them: the canonical order once
// top-k has cut the set (`sorted`), token id order otherwise (after Load, and every stage that
// removes candidates from an unsorted set keeps id order).
struct TokenCandidates {
  // Allocates room for `vocab_size` (>= 1) tokens.
  explicit TokenCandidates(int32_t vocab_size);

  // Token ids, in [0, vocab_size); distinct.
  std::vector<int32_t> id;
  // The token's logit (f32): the model's, then changed by logit bias and penalties. Never NaN
  // or +inf; -inf marks a banned token. Code that changes an entry calls InvalidateMaxLogit.
  std::vector<float> logit;
  // Softmax numerators, exp(logit - weight_shift) (PortableExp), valid when has_weights.
  // Stages that only remove candidates keep them valid; ones that change logits clear the flag.
  std::vector<float> weight;
  int64_t size = 0;
  // Entries are in the canonical order (CanonicalBefore).
  bool sorted = false;
  bool has_weights = false;
  // The logit the weights were computed relative to (the maximum at that time).
  float weight_shift = 0.0f;

  // Working memory of the stages (truncation.cc), sized with the arrays so that a step
  // allocates nothing: a candidate with its sort key, and one f32 key per candidate.
  struct RankedEntry {
    float key;
    int32_t id;
    float weight;
  };
  std::vector<RankedEntry> ranked;
  std::vector<float> key;
  std::vector<uint16_t> bucket;

  // Resets the set to every token, in id order, with the given logits ([vocab_size] f32).
  // Errors: InvalidArgument if logits.size() != vocab_size, or naming the first entry that is
  // NaN or +inf ("logits[17] is NaN"). -inf is allowed (a masked token).
  absl::Status Load(absl::Span<const float> logits);

  int32_t vocab_size() const { return static_cast<int32_t>(id.size()); }

  // The largest logit of the set (-inf if every candidate is -inf). size >= 1. Kept from Load
  // or the last call until InvalidateMaxLogit (stages that change logits or remove candidates
  // call it; the ones that know the new maximum call SetMaxLogit).
  float MaxLogit() const;
  void SetMaxLogit(float max) {
    max_logit_ = max;
    max_logit_valid_ = true;
  }
  void InvalidateMaxLogit() { max_logit_valid_ = false; }

  // Computes weight[i] = PortableExp(logit[i] - MaxLogit()) for the set and sets has_weights
  // (no-op if already set). The maximum must be finite.
  void EnsureWeights();

  // Sum of weight[0, size), in f64, in a fixed order (eight interleaved partial sums, added
  // pairwise), so the total is the same on every machine. has_weights must be set.
  double WeightSum() const;

  // Keeps the entries for which keep(i) is true, in their order. keep(i) is called once per
  // index, in increasing order, and may read entry i of the arrays (not yet moved then) or any
  // scratch array indexed like them.
  template <typename Keep>
  void KeepIf(Keep keep) {
    // Branch-free (every entry is copied to the next free slot, which advances only if kept):
    // which entries survive is as unpredictable as the data, and a mispredicted branch per
    // entry cost more than the copies.
    int32_t* ids = id.data();
    float* logits = logit.data();
    float* weights = weight.data();
    int64_t kept = 0;
    if (has_weights) {
      for (int64_t i = 0; i < size; ++i) {
        const bool k = keep(i);
        ids[kept] = ids[i];
        logits[kept] = logits[i];
        weights[kept] = weights[i];
        kept += k;
      }
    } else {
      for (int64_t i = 0; i < size; ++i) {
        const bool k = keep(i);
        ids[kept] = ids[i];
        logits[kept] = logits[i];
        kept += k;
      }
    }
    size = kept;
    InvalidateMaxLogit();
  }

 private:
  mutable float max_logit_ = 0.0f;
  mutable bool max_logit_valid_ = false;
};

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_TOKEN_CANDIDATES_H_
