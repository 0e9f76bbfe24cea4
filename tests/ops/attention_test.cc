// Tests Attention (ops/attention.cc): the per-target kernel and the dispatched
// function on every compiled Highway target, against AttentionReference
// (double).

#include "ops/attention.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "ops/reference.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/ops/attention_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"  // after highway.h (per-target re-inclusion)
#include "ops/attention-inl.h"
#include "tests/ops/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace cortiq {
namespace ops {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct Shape {
  size_t rows, heads, kv_heads, head_dim;
};

// Error bound for head h, derived from the computation:
// - each score s_i has an absolute error d_i <= |scale| * SumErrorBound(
//   head_dim, N, 4, sum_d |q_d k_id|), plus u |s_i| for the multiply by scale;
// - the softmax turns score errors into probability errors with
//   sum_i |da_i| <= 2 max_i d_i; Exp (1 ulp), the f32 sum of the exps and the
//   1/sum add (rows + 4) u relative;
// - the f32 weighted sum of the v rows adds (rows + 2) u * max |v|;
// - the merge of the softmax blocks (ops/attention.h: kAttentionRowBlock) adds,
//   per block, its weight (Exp, 1 ulp, and a product) and a term of the sums:
//   (blocks + 4) u relative.
// Total: (2 max_i d_i + (2 rows + blocks + 12) u) * max |v| over the head's kv
// slice.
double AttentionTol(const float* q, const float* k, const float* v,
                    const Shape& s, float scale, size_t h) {
  const hn::ScalableTag<float> df;
  const size_t group = s.heads / s.kv_heads;
  const size_t stride = s.kv_heads * s.head_dim;
  const size_t off = (h / group) * s.head_dim;
  double max_d = 0.0, max_v = 0.0;
  for (size_t i = 0; i < s.rows; ++i) {
    double abs_dot = 0.0, dot = 0.0;
    for (size_t d = 0; d < s.head_dim; ++d) {
      const double p =
          static_cast<double>(q[h * s.head_dim + d]) * k[i * stride + off + d];
      abs_dot += fabs(p);
      dot += p;
      max_v =
          std::max(max_v, fabs(static_cast<double>(v[i * stride + off + d])));
    }
    const double d_i =
        fabs(scale) *
            test::SumErrorBound(s.head_dim, hn::Lanes(df), 4, abs_dot) +
        test::kU * fabs(scale * dot);
    max_d = std::max(max_d, d_i);
  }
  const double blocks = static_cast<double>(AttentionRowBlockCount(s.rows));
  return (2.0 * max_d +
          (2.0 * static_cast<double>(s.rows) + blocks + 12.0) * test::kU) *
         max_v;
}

// Runs the per-target and the dispatched kernel and compares with the
// reference.
void CheckAttention(const std::vector<float>& q, const std::vector<float>& k,
                    const std::vector<float>& v, const Shape& s, float scale) {
  const size_t out_size = s.heads * s.head_dim;
  std::vector<float> expected(out_size);
  AttentionReference(q.data(), k.data(), v.data(), s.rows, s.heads, s.kv_heads,
                     s.head_dim, scale, expected.data());
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<float> out(out_size, test::Sentinel());
    std::vector<float> scratch(AttentionScratchFloats(s.rows, s.heads, s.head_dim) + 1, test::Sentinel());
    if (variant == 0) {
      Attention(q.data(), k.data(), v.data(), s.rows, s.heads, s.kv_heads,
                s.head_dim, scale, scratch.data(), out.data());
    } else {
      ::cortiq::ops::Attention(q.data(), k.data(), v.data(), s.rows, s.heads,
                               s.kv_heads, s.head_dim, scale, scratch.data(),
                               out.data());
    }
    EXPECT_TRUE(isnan(scratch[AttentionScratchFloats(s.rows, s.heads, s.head_dim)]))
        << "scratch written past AttentionScratchFloats";
    for (size_t h = 0; h < s.heads; ++h) {
      const double tol =
          AttentionTol(q.data(), k.data(), v.data(), s, scale, h);
      for (size_t d = 0; d < s.head_dim; ++d) {
        const size_t j = h * s.head_dim + d;
        ASSERT_NEAR(out[j], expected[j], tol)
            << "head " << h << " dim " << d << " rows " << s.rows << " heads "
            << s.heads << "/" << s.kv_heads << " head_dim " << s.head_dim
            << " variant " << variant;
      }
    }
  }
}

struct Inputs {
  std::vector<float> q, k, v;
};

Inputs RandomInputs(const Shape& s, float qk_range, uint32_t seed) {
  const size_t kv = s.rows * s.kv_heads * s.head_dim;
  return {test::RandomFloats(s.heads * s.head_dim, -qk_range, qk_range, seed),
          test::RandomFloats(kv, -qk_range, qk_range, seed + 1),
          test::RandomFloats(kv, -1.0f, 1.0f, seed + 2)};
}

// MHA, GQA (8/2, Gemma-4 E4B-like 8/4), MQA (8/1); head_dim of the Gemma layers
// and odd sizes; 1 row, small counts, the sliding window (512, one softmax
// block) and beyond: two blocks, and three whose last has one row.
void TestShapes() {
  const size_t kHeads[][2] = {{1, 1}, {4, 4}, {8, 2}, {8, 4}, {8, 1}};
  const size_t kHeadDims[] = {1, 3, 20, 256, 512};
  const size_t kRows[] = {1, 2, 5, 17, 512, 600, 1025};
  uint32_t seed = 1;
  for (const auto& hk : kHeads) {
    for (size_t hd : kHeadDims) {
      for (size_t rows : kRows) {
        if (hd == 512 && rows >= 600 && hk[0] == 8 && hk[1] != 1)
          continue;  // time
        const Shape s{rows, hk[0], hk[1], hd};
        // Scores of order 1..10: q, k uniform with sum over head_dim of q k ~
        // sqrt(hd).
        const float range =
            static_cast<float>(2.0 / sqrt(sqrt(static_cast<double>(hd))));
        const Inputs in = RandomInputs(s, range, seed);
        seed += 3;
        CheckAttention(in.q, in.k, in.v, s, 1.0f);
      }
    }
  }
}

// A scale other than 1 (the usual 1/sqrt(d)) enters the scores linearly.
void TestScale() {
  const Shape s{37, 4, 2, 64};
  const Inputs in = RandomInputs(s, 1.0f, 123);
  CheckAttention(in.q, in.k, in.v, s, 0.125f);
  CheckAttention(in.q, in.k, in.v, s, 3.0f);
}

// Scores of magnitude ~1e3..1e4: without subtracting the max, exp would
// overflow. The result must be finite and match the reference (nearly one-hot).
// Over several softmax blocks, most blocks' maxima lie far below the largest
// (their weights flush to 0) and the largest can be in any block.
void TestLargeScores() {
  for (const size_t rows : {size_t{100}, size_t{1300}}) {
    const Shape s{rows, 2, 1, 64};
    const Inputs in = RandomInputs(s, 12.0f, 321 + static_cast<uint32_t>(rows));
    CheckAttention(in.q, in.k, in.v, s, 1.0f);
    std::vector<float> out(s.heads * s.head_dim),
        scratch(AttentionScratchFloats(s.rows, s.heads, s.head_dim));
    Attention(in.q.data(), in.k.data(), in.v.data(), s.rows, s.heads, s.kv_heads,
              s.head_dim, 1.0f, scratch.data(), out.data());
    for (float o : out) EXPECT_TRUE(isfinite(o));
  }
}

// Softmax blocks whose maxima differ by less and by more than the flush
// threshold (e^-40): rows of block b score 30 b below the first block's for one
// head, 30 b above it for the other, against the reference.
void TestBlockMaximaApart() {
  const Shape s{3 * kAttentionRowBlock, 2, 1, 16};
  Inputs in = RandomInputs(s, 0.5f, 909);
  // k row i = (t_i, small noise...), q_0 = (1, ...), q_1 = (-1, ...): scores +-t_i.
  for (size_t i = 0; i < s.rows; ++i) {
    const size_t block = i / kAttentionRowBlock;
    in.k[i * s.head_dim] = -30.0f * static_cast<float>(block) +
                           0.01f * static_cast<float>(i % 7);
  }
  in.q[0] = 1.0f;
  in.q[s.head_dim] = -1.0f;
  for (size_t d = 1; d < s.head_dim; ++d) {
    in.q[d] *= 0.1f;
    in.q[s.head_dim + d] *= 0.1f;
  }
  CheckAttention(in.q, in.k, in.v, s, 1.0f);
}

// One row: the softmax is exactly 1, so every head outputs its kv head's v row
// exactly. With distinct kv heads this pins the GQA/MQA mapping h -> h / (heads
// / kv_heads).
void TestOneRowSelectsKvHead() {
  const size_t kHeads[][2] = {{8, 2}, {8, 1}, {8, 8}, {6, 3}};
  for (const auto& hk : kHeads) {
    const Shape s{1, hk[0], hk[1], 24};
    const Inputs in = RandomInputs(s, 1.0f, 55);
    std::vector<float> out(s.heads * s.head_dim), scratch(AttentionScratchFloats(1, s.heads, s.head_dim));
    for (int variant = 0; variant < 2; ++variant) {
      if (variant == 0) {
        Attention(in.q.data(), in.k.data(), in.v.data(), 1, s.heads, s.kv_heads,
                  s.head_dim, 1.0f, scratch.data(), out.data());
      } else {
        ::cortiq::ops::Attention(in.q.data(), in.k.data(), in.v.data(), 1,
                                 s.heads, s.kv_heads, s.head_dim, 1.0f,
                                 scratch.data(), out.data());
      }
      const size_t group = s.heads / s.kv_heads;
      for (size_t h = 0; h < s.heads; ++h) {
        EXPECT_EQ(0,
                  memcmp(&out[h * s.head_dim], &in.v[(h / group) * s.head_dim],
                         s.head_dim * sizeof(float)))
            << "head " << h << " of " << s.heads << "/" << s.kv_heads;
      }
    }
  }
}

// Identical keys give equal weights: the output is the mean of the v rows.
void TestEqualScoresAverage() {
  const Shape s{6, 2, 1, 16};
  Inputs in = RandomInputs(s, 1.0f, 66);
  for (size_t i = 1; i < s.rows; ++i) {
    std::copy(in.k.begin(), in.k.begin() + 16, in.k.begin() + i * 16);
  }
  std::vector<float> out(s.heads * s.head_dim), scratch(AttentionScratchFloats(s.rows, s.heads, s.head_dim));
  Attention(in.q.data(), in.k.data(), in.v.data(), s.rows, s.heads, s.kv_heads,
            s.head_dim, 1.0f, scratch.data(), out.data());
  for (size_t h = 0; h < s.heads; ++h) {
    for (size_t d = 0; d < s.head_dim; ++d) {
      double mean = 0.0;
      for (size_t i = 0; i < s.rows; ++i) mean += in.v[i * 16 + d];
      EXPECT_NEAR(out[h * 16 + d], mean / s.rows, 1e-6);
    }
  }
}

// Row order does not matter (ring buffer): a rotated and a shuffled copy of the
// cache give the same output as the original, within the tolerance.
void TestRowOrderInvariance() {
  const Shape s{300, 8, 2, 256};
  const Inputs in = RandomInputs(s, 0.5f, 77);
  const size_t stride = s.kv_heads * s.head_dim;
  std::vector<size_t> perm(s.rows);
  for (size_t i = 0; i < s.rows; ++i)
    perm[i] = (i + 123) % s.rows;  // ring rotation
  std::vector<size_t> shuffled = perm;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
  std::vector<float> out(s.heads * s.head_dim), scratch(AttentionScratchFloats(s.rows, s.heads, s.head_dim));
  Attention(in.q.data(), in.k.data(), in.v.data(), s.rows, s.heads, s.kv_heads,
            s.head_dim, 1.0f, scratch.data(), out.data());
  for (const auto& p : {perm, shuffled}) {
    std::vector<float> k2(in.k.size()), v2(in.v.size());
    for (size_t i = 0; i < s.rows; ++i) {
      memcpy(&k2[i * stride], &in.k[p[i] * stride], stride * sizeof(float));
      memcpy(&v2[i * stride], &in.v[p[i] * stride], stride * sizeof(float));
    }
    std::vector<float> out2(out.size());
    Attention(in.q.data(), k2.data(), v2.data(), s.rows, s.heads, s.kv_heads,
              s.head_dim, 1.0f, scratch.data(), out2.data());
    for (size_t h = 0; h < s.heads; ++h) {
      const double tol =
          2.0 * AttentionTol(in.q.data(), in.k.data(), in.v.data(), s, 1.0f, h);
      for (size_t d = 0; d < s.head_dim; ++d) {
        EXPECT_NEAR(out2[h * s.head_dim + d], out[h * s.head_dim + d], tol);
      }
    }
  }
}

// No rows: the output is zero.
void TestNoRows() {
  const std::vector<float> q(2 * 8, 1.0f);
  std::vector<float> out(2 * 8, test::Sentinel());
  float scratch[AttentionScratchFloats(0, 2, 8)];
  Attention(q.data(), nullptr, nullptr, 0, 2, 1, 8, 1.0f, scratch, out.data());
  for (float o : out) EXPECT_EQ(0.0f, o);
}

// A ring of R storage rows read from first_row with wrap-around equals the reference over the
// same rows laid out in order, for windows that do and do not wrap, the full ring and one row;
// storage rows outside the window hold huge values that would dominate the softmax if read.
void TestRing() {
  const Shape s{0, 8, 2, 20};
  const size_t width = s.kv_heads * s.head_dim;
  const size_t kRing = 11;
  const size_t kCases[][2] = {{0, 11}, {3, 5}, {7, 4}, {7, 5}, {9, 8}, {10, 1}, {0, 1}, {4, 11}};
  uint32_t seed = 500;
  for (const auto& c : kCases) {
    const size_t first = c[0], count = c[1];
    const Shape window{count, s.heads, s.kv_heads, s.head_dim};
    const Inputs in = RandomInputs(window, 0.7f, seed);
    seed += 3;
    std::vector<float> k_ring(kRing * width, 1e4f), v_ring(kRing * width, 1e4f);
    for (size_t i = 0; i < count; ++i) {
      const size_t row = (first + i) % kRing;
      std::copy(in.k.begin() + i * width, in.k.begin() + (i + 1) * width,
                k_ring.begin() + row * width);
      std::copy(in.v.begin() + i * width, in.v.begin() + (i + 1) * width,
                v_ring.begin() + row * width);
    }
    std::vector<float> expected(s.heads * s.head_dim);
    AttentionReference(in.q.data(), in.k.data(), in.v.data(), count, s.heads, s.kv_heads,
                       s.head_dim, 1.0f, expected.data());
    std::vector<float> out(expected.size(), test::Sentinel()), scratch(AttentionScratchFloats(kRing, s.heads, s.head_dim));
    for (int variant = 0; variant < 2; ++variant) {
      if (variant == 0) {
        AttentionRing(in.q.data(), k_ring.data(), v_ring.data(), kRing, first, count, s.heads,
                      s.kv_heads, s.head_dim, 1.0f, scratch.data(), out.data());
      } else {
        ::cortiq::ops::AttentionRing(in.q.data(), k_ring.data(), v_ring.data(), kRing, first,
                                     count, s.heads, s.kv_heads, s.head_dim, 1.0f,
                                     scratch.data(), out.data());
      }
      for (size_t h = 0; h < s.heads; ++h) {
        const double tol = AttentionTol(in.q.data(), in.k.data(), in.v.data(), window, 1.0f, h);
        for (size_t d = 0; d < s.head_dim; ++d) {
          const size_t j = h * s.head_dim + d;
          ASSERT_NEAR(out[j], expected[j], tol)
              << "first " << first << " count " << count << " variant " << variant;
        }
      }
    }
  }
}

// Heads are computed the same way whatever block of heads (8, 4, 2 or 1) they fall in and
// whatever head range is asked for: AttentionRingHeads over any split of the heads (one head at
// a time, ranges crossing KV heads and blocks) is bit-identical to AttentionRing, and writes
// nothing outside its heads. Head dims that are and are not multiples of the vector length, 4
// and 16 vectors, and groups of 1, 3, 4, 7, 8, 11 (8 + 2 + 1) and 16 heads.
void TestHeadRangesAreBitIdentical() {
  const size_t kShapes[][3] = {{8, 1, 256}, {8, 2, 512}, {12, 4, 20}, {6, 6, 64},
                               {7, 1, 37},  {11, 1, 48}, {32, 2, 64}};
  uint32_t seed = 900;
  for (const auto& hs : kShapes) {
    const size_t rows = 13, ring = 17, first = 9;
    const Shape s{ring, hs[0], hs[1], hs[2]};
    const Inputs in = RandomInputs(s, 0.5f, seed++);
    std::vector<float> all(s.heads * s.head_dim, test::Sentinel());
    std::vector<float> scratch(AttentionScratchFloats(rows, s.heads, s.head_dim));
    AttentionRing(in.q.data(), in.k.data(), in.v.data(), ring, first, rows, s.heads, s.kv_heads,
                  s.head_dim, 1.0f, scratch.data(), all.data());
    for (size_t step : {size_t{1}, size_t{3}, size_t{5}}) {
      std::vector<float> split(all.size(), test::Sentinel());
      for (size_t h = 0; h < s.heads; h += step) {
        const size_t end = std::min(s.heads, h + step);
        std::vector<float> part(all.size(), test::Sentinel());
        AttentionRingHeads(in.q.data(), in.k.data(), in.v.data(), ring, first,
                                          rows, s.heads, s.kv_heads, s.head_dim, 1.0f, h, end,
                                          scratch.data(), part.data());
        for (size_t j = 0; j < all.size(); ++j) {
          const bool mine = j >= h * s.head_dim && j < end * s.head_dim;
          if (mine) {
            split[j] = part[j];
          } else {
            ASSERT_TRUE(isnan(part[j])) << "heads [" << h << ", " << end << ") wrote " << j;
          }
        }
      }
      ASSERT_EQ(0, memcmp(split.data(), all.data(), all.size() * sizeof(float)))
          << s.heads << "/" << s.kv_heads << " heads of " << s.head_dim << ", step " << step;
    }
    // A single head alone (its own kv head, num_heads = 1): the same bits as inside a block.
    const size_t group = s.heads / s.kv_heads;
    for (size_t h = 0; h < s.heads; ++h) {
      std::vector<float> k1(ring * s.head_dim), v1(ring * s.head_dim), one(s.head_dim);
      for (size_t r = 0; r < ring; ++r) {
        const size_t src = r * s.kv_heads * s.head_dim + (h / group) * s.head_dim;
        std::copy(in.k.begin() + src, in.k.begin() + src + s.head_dim, k1.begin() + r * s.head_dim);
        std::copy(in.v.begin() + src, in.v.begin() + src + s.head_dim, v1.begin() + r * s.head_dim);
      }
      AttentionRing(in.q.data() + h * s.head_dim, k1.data(), v1.data(), ring, first, rows, 1, 1,
                    s.head_dim, 1.0f, scratch.data(), one.data());
      ASSERT_EQ(0, memcmp(one.data(), all.data() + h * s.head_dim, s.head_dim * sizeof(float)))
          << "head " << h;
    }
  }
}

// Keys and values stored as binary16 are widened exactly: AttentionRingHeadsF16 equals
// AttentionRingHeads over the widened f32 rows, bit for bit.
void TestF16RowsAreReadExactly() {
  const size_t kShapes[][3] = {{8, 1, 256}, {8, 2, 40}, {4, 4, 7}};
  uint32_t seed = 1300;
  for (const auto& hs : kShapes) {
    const size_t ring = 21, first = 15, rows = 12;
    const Shape s{ring, hs[0], hs[1], hs[2]};
    const Inputs in = RandomInputs(s, 0.8f, seed++);
    std::vector<uint16_t> k16(in.k.size()), v16(in.v.size());
    std::vector<float> kw(in.k.size()), vw(in.v.size());
    // Normal halves of either sign with magnitudes in [2^-6, 2^2), and their values from the
    // format's definition: (1024 + mantissa) * 2^(exponent - 25).
    uint32_t x = seed;
    const auto half = [&](uint16_t* bits, float* value) {
      x = x * 1664525u + 1013904223u;
      const uint32_t exp = 9 + (x >> 8) % 8, mant = (x >> 12) & 0x3ff, sign = (x >> 30) & 1;
      *bits = static_cast<uint16_t>(sign << 15 | exp << 10 | mant);
      *value = static_cast<float>((sign ? -1.0 : 1.0) * ldexp(1024.0 + mant, int(exp) - 25));
    };
    for (size_t i = 0; i < in.k.size(); ++i) {
      half(&k16[i], &kw[i]);
      half(&v16[i], &vw[i]);
    }
    std::vector<float> a(s.heads * s.head_dim), b(a.size());
    std::vector<float> scratch(AttentionScratchFloats(rows, s.heads, s.head_dim));
    AttentionRingHeads(in.q.data(), kw.data(), vw.data(), ring, first, rows, s.heads, s.kv_heads,
                       s.head_dim, 1.0f, 0, s.heads, scratch.data(), a.data());
    AttentionRingHeadsF16(in.q.data(), k16.data(), v16.data(), ring, first, rows, s.heads,
                          s.kv_heads, s.head_dim, 1.0f, 0, s.heads, scratch.data(), b.data());
    ASSERT_EQ(0, memcmp(a.data(), b.data(), a.size() * sizeof(float))) << s.head_dim;
  }
}

// The two phases (AttentionBlocks, AttentionMergeBlocks) over any split of their ranges give
// AttentionRing's bits: softmax blocks and heads cut at several points, also for binary16 rows
// against AttentionRingHeadsF16. 300 rows of 256 or 512 columns take a block through several
// row chunks (RowsPerChunk: 64 to 256 rows here), the weighted sums resuming between them; 1300
// rows are three blocks (512, 512, 276), the view wrapping around the ring in the second.
void TestPhasesAreBitIdentical() {
  const size_t kShapes[][3] = {{8, 1, 256}, {8, 2, 512}, {12, 4, 20}, {6, 6, 64}, {7, 1, 37}};
  // rows, ring rows, first row (all wrap around the ring).
  const size_t kViews[][3] = {{29, 33, 21}, {300, 310, 200}, {1300, 1400, 900}};
  uint32_t seed = 1700;
  for (const auto& view : kViews) {
    for (const auto& hs : kShapes) {
      const size_t rows = view[0], ring = view[1], first = view[2];
      const Shape s{ring, hs[0], hs[1], hs[2]};
      const Inputs in = RandomInputs(s, 0.5f, seed++);
      // Normal binary16 values of either sign, magnitudes in [2^-6, 2^2).
      std::vector<uint16_t> k16(in.k.size()), v16(in.v.size());
      uint32_t x = seed;
      for (size_t i = 0; i < k16.size(); ++i) {
        for (uint16_t* bits : {&k16[i], &v16[i]}) {
          x = x * 1664525u + 1013904223u;
          *bits = static_cast<uint16_t>(((x >> 30) & 1) << 15 | (9 + (x >> 8) % 8) << 10 |
                                        ((x >> 12) & 0x3ff));
        }
      }
      std::vector<float> scratch(AttentionScratchFloats(rows, s.heads, s.head_dim));
      std::vector<float> want(s.heads * s.head_dim), want16(want.size());
      AttentionRing(in.q.data(), in.k.data(), in.v.data(), ring, first, rows, s.heads, s.kv_heads,
                    s.head_dim, 0.7f, scratch.data(), want.data());
      AttentionRingHeadsF16(in.q.data(), k16.data(), v16.data(), ring, first, rows, s.heads,
                            s.kv_heads, s.head_dim, 0.7f, 0, s.heads, scratch.data(),
                            want16.data());
      const size_t blocks = AttentionRowBlockCount(rows);
      for (const size_t cut : {size_t{0}, size_t{1}, size_t{2}, size_t{5}}) {
        for (const bool f16 : {false, true}) {
          for (const bool split_heads : {false, true}) {
            std::vector<float> scores(AttentionBlockScoreFloats(rows, s.heads), test::Sentinel());
            std::vector<float> partials(AttentionPartialFloats(rows, s.heads, s.head_dim),
                                        test::Sentinel());
            std::vector<float> out(want.size(), test::Sentinel());
            const size_t block_cut = std::min(cut, blocks), head_cut = std::min(cut, s.heads);
            // The later range first; with split_heads, the blocks are cut by heads instead.
            std::vector<std::array<size_t, 4>> calls;  // heads [0], [1); blocks [2], [3)
            if (split_heads) {
              calls = {{head_cut, s.heads, 0, blocks}, {0, head_cut, 0, blocks}};
            } else {
              calls = {{0, s.heads, block_cut, blocks}, {0, s.heads, 0, block_cut}};
            }
            for (const auto& c : calls) {
              if (c[0] == c[1] || c[2] == c[3]) continue;
              if (f16) {
                AttentionBlocksF16(in.q.data(), k16.data(), v16.data(), ring, first, rows,
                                   s.heads, s.kv_heads, s.head_dim, 0.7f, c[0], c[1], c[2], c[3],
                                   scores.data(), partials.data());
              } else {
                AttentionBlocks(in.q.data(), in.k.data(), in.v.data(), ring, first, rows, s.heads,
                                s.kv_heads, s.head_dim, 0.7f, c[0], c[1], c[2], c[3],
                                scores.data(), partials.data());
              }
            }
            AttentionMergeBlocks(partials.data(), rows, s.heads, s.head_dim, head_cut, s.heads,
                                 out.data());
            AttentionMergeBlocks(partials.data(), rows, s.heads, s.head_dim, 0, head_cut,
                                 out.data());
            const std::vector<float>& expected = f16 ? want16 : want;
            ASSERT_EQ(0, memcmp(out.data(), expected.data(), out.size() * sizeof(float)))
                << s.heads << "/" << s.kv_heads << " heads of " << s.head_dim << ", cut " << cut
                << (f16 ? ", f16" : "") << (split_heads ? ", heads split" : "") << ", " << rows
                << " rows";
          }
        }
      }
      // The dispatched functions, too.
      std::vector<float> scores(AttentionBlockScoreFloats(rows, s.heads));
      std::vector<float> partials(AttentionPartialFloats(rows, s.heads, s.head_dim));
      std::vector<float> out(want.size(), test::Sentinel());
      ::cortiq::ops::AttentionBlocks(in.q.data(), in.k.data(), in.v.data(), ring, first, rows,
                                     s.heads, s.kv_heads, s.head_dim, 0.7f, 0, s.heads, 0, blocks,
                                     scores.data(), partials.data());
      ::cortiq::ops::AttentionMergeBlocks(partials.data(), rows, s.heads, s.head_dim, 0, s.heads,
                                          out.data());
      EXPECT_EQ(0, memcmp(out.data(), want.data(), out.size() * sizeof(float))) << rows;
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace ops
}  // namespace cortiq
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cortiq {
namespace ops {
HWY_BEFORE_TEST(AttentionTest);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestShapes);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestScale);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestLargeScores);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestBlockMaximaApart);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestOneRowSelectsKvHead);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestEqualScoresAverage);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestRowOrderInvariance);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestNoRows);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestRing);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestHeadRangesAreBitIdentical);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestF16RowsAreReadExactly);
HWY_EXPORT_AND_TEST_P(AttentionTest, TestPhasesAreBitIdentical);
}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
