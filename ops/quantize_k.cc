// llama.cpp-exact K-quant reference quantizers and dequantizers
// (ops/quantize_k.h). Compiled with -ffp-contract=off (ops/CMakeLists.txt):
// llama.cpp's ggml-base (where ggml-quants.c lives) is built without FMA, so
// each product and sum of the reference is rounded on its own, and so it must
// be here. Expressions keep the reference's evaluation order (a * b * c is
// (a * b) * c; integers are converted to float where C converts them).

#include "ops/quantize_k.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwy/base.h"  // HWY_ASSERT
#include "ops/quantize.h"
#include "ops/quantize_rounding.h"

namespace cortiq {
namespace ops {
namespace {

using quant_internal::NearestInt;

// ggml-quants.c GROUP_MAX_EPS: a group whose largest magnitude is below it is
// treated as all zero.
constexpr float kGroupMaxEps = 1e-15f;

int Clamp(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// make_qkx2_quants: for n weights x with importance `weights`, finds a scale
// and a min <= 0 such that x_i ~ scale * L_i + min with L_i in [0, nmax],
// trying nstep + 1 candidate scales (rmin + rdelta * is + nmax) / (max - min)
// and refitting scale and min by weighted least squares for each; keeps the
// one of least weighted error (|diff| if use_mad, else diff^2). Writes L,
// *the_min = -min (>= 0) and returns the scale. Laux: n bytes of scratch.
float MakeQkx2Quants(int n, int nmax, const float* x, const float* weights,
                     uint8_t* L, float* the_min, uint8_t* Laux, float rmin,
                     float rdelta, int nstep, bool use_mad) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = NearestInt(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(Clamp(l, 0, nmax));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];
    diff = use_mad ? fabsf(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) /
             (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      int l = NearestInt(iscale * (x[i] - min));
      l = Clamp(l, 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// make_q3_quants with do_rmse = true: a signed scale for n weights (quants
// L_i - nmax in [-nmax, nmax - 1]), refined by up to 5 passes that move one
// quant at a time when that raises (sum w x l)^2 / (sum w l^2), w = x^2.
// Writes L_i in [0, 2 nmax) (all 0 for an all-zero group) and returns the
// scale.
float MakeQ3Quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = fabsf(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = NearestInt(iscale * x[i]);
    l = Clamp(l, -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * li;
      if (slx > 0) {
        float sl2 = suml2 - w * li * li;
        int new_l = NearestInt(x[i] * sl2 / slx);
        new_l = Clamp(new_l, -nmax, nmax - 1);
        if (new_l != L[i]) {
          const float fl = static_cast<float>(new_l);
          slx += w * x[i] * fl;
          sl2 += w * fl * fl;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// make_qx_quants with rmse_type = 1 and no importance weights (w = x^2): a
// signed scale for n weights, the best of 19 candidate scales
// -(nmax + 0.1 is) / max, is in [-9, 9], by weighted least squares. Writes
// L_i in [0, 2 nmax) (all 0 for an all-zero group) and returns the scale.
float MakeQxQuants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = fabsf(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = NearestInt(iscale * x[i]);
    l = Clamp(l, -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      int l = NearestInt(iscale * x[i]);
      l = Clamp(l, -nmax, nmax - 1);
      const float w = x[i] * x[i];
      const float fl = static_cast<float>(l);
      sumlx += w * x[i] * fl;
      suml2 += w * fl * fl;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        const int l = NearestInt(iscale * x[i]);
        L[i] = static_cast<int8_t>(nmax + Clamp(l, -nmax, nmax - 1));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Packs the 8 six-bit scales ls and mins lm of a Q4_K / Q5_K super-block into
// its 12 scale bytes (the inverse of KScaleMin). ls, lm <= 63.
void PackKScaleMin(const uint8_t* ls, const uint8_t* lm, uint8_t* scales) {
  memset(scales, 0, kKScaleSize);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      scales[j] = ls[j];
      scales[j + 4] = lm[j];
    } else {
      scales[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      scales[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// The part of quantize_row_q4_K_ref / _q5_K_ref before the bit packing: the
// super-block's d, dmin and packed scales, and the quants L[256] in
// [0, nmax]. rmin, nstep: make_qkx2_quants' candidate grid for the format.
void QuantizeK45(const float* x, int nmax, float rmin, int nstep, uint16_t* d,
                 uint16_t* dmin, uint8_t* packed_scales, uint8_t* L) {
  float mins[8];
  float scales[8];
  float weights[32];
  uint8_t Laux[32];
  float max_scale = 0;  // as the min is subtracted, scales are >= 0
  float max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xj = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xj[l] * xj[l];
    const float av_x = sqrtf(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + fabsf(xj[l]);
    scales[j] = MakeQkx2Quants(32, nmax, xj, weights, L + 32 * j, &mins[j], Laux,
                               rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    // uint8_t ls = nearest_int(...): the int is truncated to a byte first.
    ls[j] = static_cast<uint8_t>(NearestInt(inv_scale * scales[j]));
    lm[j] = static_cast<uint8_t>(NearestInt(inv_min * mins[j]));
    if (ls[j] > 63) ls[j] = 63;
    if (lm[j] > 63) lm[j] = 63;
  }
  PackKScaleMin(ls, lm, packed_scales);
  *d = F32ToF16Bits(max_scale / 63.0f);
  *dmin = F32ToF16Bits(max_min / 63.0f);
  const float df = F16BitsToF32(*d);
  const float dminf = F16BitsToF32(*dmin);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    KScaleMin(packed_scales, j, &sc, &m);
    const float dj = df * static_cast<float>(sc);
    if (dj == 0) continue;  // keep make_qkx2_quants' quants
    const float dmj = dminf * static_cast<float>(m);
    for (int ii = 0; ii < 32; ++ii) {
      const int l = NearestInt((x[32 * j + ii] + dmj) / dj);
      L[32 * j + ii] = static_cast<uint8_t>(Clamp(l, 0, nmax));
    }
  }
}

// Q2_K / Q3_K low bits: weight j0 + 32 s + l (s < 4, l < 32) of each half
// j0 in {0, 128} at bits 2 s of qs[j0 / 4 + l]. L values < 4.
void Pack2Bits(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < 256; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                           (L[j + l + 64] << 4) |
                                           (L[j + l + 96] << 6));
    }
  }
}

}  // namespace

void QuantizeRowQ2_K(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  const float q4scale = 15.0f;
  for (size_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ2_K y;
    uint8_t L[256];
    uint8_t Laux[16];
    float weights[16];
    float mins[16];
    float scales[16];
    float max_scale = 0;
    float max_min = 0;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = fabsf(x[16 * j + l]);
      scales[j] = MakeQkx2Quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j],
                                 Laux, -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      for (int j = 0; j < 16; ++j) {
        y.scales[j] = static_cast<uint8_t>(NearestInt(iscale * scales[j]));
      }
      y.d = F32ToF16Bits(max_scale / q4scale);
    } else {
      for (int j = 0; j < 16; ++j) y.scales[j] = 0;
      y.d = F32ToF16Bits(0.0f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < 16; ++j) {
        const int l = NearestInt(iscale * mins[j]);
        y.scales[j] = static_cast<uint8_t>(y.scales[j] | (l << 4));
      }
      y.dmin = F32ToF16Bits(max_min / q4scale);
    } else {
      y.dmin = F32ToF16Bits(0.0f);
    }
    const float df = F16BitsToF32(y.d);
    const float dminf = F16BitsToF32(y.dmin);
    for (int j = 0; j < 16; ++j) {
      const float dj = df * static_cast<float>(y.scales[j] & 0xF);
      if (dj == 0) continue;
      const float dmj = dminf * static_cast<float>(y.scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii) {
        const int l = NearestInt((x[16 * j + ii] + dmj) / dj);
        L[16 * j + ii] = static_cast<uint8_t>(Clamp(l, 0, 3));
      }
    }
    Pack2Bits(L, y.qs);
    memcpy(out + b * kQ2_KBlockBytes, &y, kQ2_KBlockBytes);
  }
}

void QuantizeRowQ3_K(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ3_K y;
    int8_t L[256];
    float scales[16];
    float max_scale = 0;
    float amax = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = MakeQ3Quants(16, 4, x + 16 * j, L + 16 * j);
      const float scale = fabsf(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }
    memset(y.scales, 0, sizeof(y.scales));
    if (max_scale != 0) {
      const float iscale = -32.0f / max_scale;
      for (int j = 0; j < 16; ++j) {
        // int8_t l = nearest_int(...): truncated to a byte, clamped, + 32.
        int l = static_cast<int8_t>(NearestInt(iscale * scales[j]));
        l = Clamp(l, -32, 31) + 32;
        if (j < 8) {
          y.scales[j] = static_cast<uint8_t>(l & 0xF);
        } else {
          y.scales[j - 8] = static_cast<uint8_t>(y.scales[j - 8] | ((l & 0xF) << 4));
        }
        l >>= 4;
        y.scales[j % 4 + 8] =
            static_cast<uint8_t>(y.scales[j % 4 + 8] | (l << (2 * (j / 4))));
      }
      y.d = F32ToF16Bits(1 / iscale);
    } else {
      y.d = F32ToF16Bits(0.0f);
    }
    const float df = F16BitsToF32(y.d);
    for (int j = 0; j < 16; ++j) {
      const float dj = df * static_cast<float>(Q3_KScale(y.scales, j));
      if (dj == 0) continue;  // keep make_q3_quants' quants
      for (int ii = 0; ii < 16; ++ii) {
        const int l = NearestInt(x[16 * j + ii] / dj);
        L[16 * j + ii] = static_cast<int8_t>(Clamp(l, -4, 3) + 4);
      }
    }
    // High bit of weight j into bit j / 32 of hmask[j % 32].
    memset(y.hmask, 0, sizeof(y.hmask));
    uint8_t low[256];
    for (int j = 0; j < 256; ++j) {
      int l = L[j];
      if (l > 3) {
        y.hmask[j % 32] = static_cast<uint8_t>(y.hmask[j % 32] | (1 << (j / 32)));
        l -= 4;
      }
      low[j] = static_cast<uint8_t>(l);
    }
    Pack2Bits(low, y.qs);
    memcpy(out + b * kQ3_KBlockBytes, &y, kQ3_KBlockBytes);
  }
}

void QuantizeRowQ4_K(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ4_K y;
    uint8_t L[256];
    QuantizeK45(x, 15, -1.0f, 20, &y.d, &y.dmin, y.scales, L);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        y.qs[32 * c + l] =
            static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + l + 32] << 4));
      }
    }
    memcpy(out + b * kQ4_KBlockBytes, &y, kQ4_KBlockBytes);
  }
}

void QuantizeRowQ5_K(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ5_K y;
    uint8_t L[256];
    QuantizeK45(x, 31, -0.5f, 15, &y.d, &y.dmin, y.scales, L);
    memset(y.qh, 0, sizeof(y.qh));
    for (int c = 0; c < 4; ++c) {
      const uint8_t m1 = static_cast<uint8_t>(1 << (2 * c));
      const uint8_t m2 = static_cast<uint8_t>(2 << (2 * c));
      for (int j = 0; j < 32; ++j) {
        int l1 = L[64 * c + j];
        if (l1 > 15) {
          l1 -= 16;
          y.qh[j] |= m1;
        }
        int l2 = L[64 * c + j + 32];
        if (l2 > 15) {
          l2 -= 16;
          y.qh[j] |= m2;
        }
        y.qs[32 * c + j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
    }
    memcpy(out + b * kQ5_KBlockBytes, &y, kQ5_KBlockBytes);
  }
}

void QuantizeRowQ6_K(const float* x, size_t n, void* blocks) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  uint8_t* out = static_cast<uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ6_K y;
    int8_t L[256];
    float scales[16];
    float max_scale = 0;
    float max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
      const float scale = MakeQxQuants(16, 32, x + 16 * ib, L + 16 * ib);
      scales[ib] = scale;
      const float abs_scale = fabsf(scale);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scale;
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      memset(&y, 0, sizeof(y));  // d = f16(0) = 0 as well
      memcpy(out + b * kQ6_KBlockBytes, &y, kQ6_KBlockBytes);
      continue;
    }
    const float iscale = -128.0f / max_scale;
    y.d = F32ToF16Bits(1 / iscale);
    for (int ib = 0; ib < 16; ++ib) {
      const int l = NearestInt(iscale * scales[ib]);
      y.scales[ib] = static_cast<int8_t>(l < 127 ? l : 127);
    }
    const float df = F16BitsToF32(y.d);
    for (int j = 0; j < 16; ++j) {
      const float dj = df * static_cast<float>(y.scales[j]);
      if (dj == 0) continue;  // keep make_qx_quants' quants
      for (int ii = 0; ii < 16; ++ii) {
        const int l = NearestInt(x[16 * j + ii] / dj);
        L[16 * j + ii] = static_cast<int8_t>(Clamp(l, -32, 31) + 32);
      }
    }
    for (int h = 0; h < 2; ++h) {
      const int8_t* Lh = L + 128 * h;
      uint8_t* ql = y.ql + 64 * h;
      uint8_t* qh = y.qh + 32 * h;
      for (int l = 0; l < 32; ++l) {
        const int q1 = Lh[l] & 0xF, q2 = Lh[l + 32] & 0xF;
        const int q3 = Lh[l + 64] & 0xF, q4 = Lh[l + 96] & 0xF;
        ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
        ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
        qh[l] = static_cast<uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) |
                                     ((Lh[l + 64] >> 4) << 4) |
                                     ((Lh[l + 96] >> 4) << 6));
      }
    }
    memcpy(out + b * kQ6_KBlockBytes, &y, kQ6_KBlockBytes);
  }
}

void DequantizeRowQ2_K(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b) {
    BlockQ2_K blk;
    memcpy(&blk, in + b * kQ2_KBlockBytes, kQ2_KBlockBytes);
    const float d = F16BitsToF32(blk.d);
    const float dmin = F16BitsToF32(blk.dmin);
    float* yb = y + b * kSuperBlockSize;
    for (int i = 0; i < 256; ++i) {
      const int k = i / 16, h = i / 128, j = i % 128;
      const int q = (blk.qs[32 * h + j % 32] >> (2 * (j / 32))) & 3;
      const float dl = d * static_cast<float>(blk.scales[k] & 0xF);
      const float ml = dmin * static_cast<float>(blk.scales[k] >> 4);
      yb[i] = dl * static_cast<float>(q) - ml;
    }
  }
}

void DequantizeRowQ3_K(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b) {
    BlockQ3_K blk;
    memcpy(&blk, in + b * kQ3_KBlockBytes, kQ3_KBlockBytes);
    const float d = F16BitsToF32(blk.d);
    float* yb = y + b * kSuperBlockSize;
    for (int i = 0; i < 256; ++i) {
      const int h = i / 128, j = i % 128;
      const int low = (blk.qs[32 * h + j % 32] >> (2 * (j / 32))) & 3;
      const int high = (blk.hmask[i % 32] >> (i / 32)) & 1;
      const float dl = d * static_cast<float>(Q3_KScale(blk.scales, i / 16));
      yb[i] = dl * static_cast<float>(low - (high ? 0 : 4));
    }
  }
}

void DequantizeRowQ4_K(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b) {
    BlockQ4_K blk;
    memcpy(&blk, in + b * kQ4_KBlockBytes, kQ4_KBlockBytes);
    const float d = F16BitsToF32(blk.d);
    const float dmin = F16BitsToF32(blk.dmin);
    float* yb = y + b * kSuperBlockSize;
    for (int i = 0; i < 256; ++i) {
      const int c = i / 64, j = i % 64;
      const uint8_t byte = blk.qs[32 * c + j % 32];
      const int q = j < 32 ? (byte & 0xF) : (byte >> 4);
      int sc, m;
      KScaleMin(blk.scales, i / 32, &sc, &m);
      yb[i] = d * static_cast<float>(sc) * static_cast<float>(q) -
              dmin * static_cast<float>(m);
    }
  }
}

void DequantizeRowQ5_K(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b) {
    BlockQ5_K blk;
    memcpy(&blk, in + b * kQ5_KBlockBytes, kQ5_KBlockBytes);
    const float d = F16BitsToF32(blk.d);
    const float dmin = F16BitsToF32(blk.dmin);
    float* yb = y + b * kSuperBlockSize;
    for (int i = 0; i < 256; ++i) {
      const int c = i / 64, j = i % 64;
      const uint8_t byte = blk.qs[32 * c + j % 32];
      const int low = j < 32 ? (byte & 0xF) : (byte >> 4);
      const int q = low | (((blk.qh[i % 32] >> (i / 32)) & 1) << 4);
      int sc, m;
      KScaleMin(blk.scales, i / 32, &sc, &m);
      yb[i] = d * static_cast<float>(sc) * static_cast<float>(q) -
              dmin * static_cast<float>(m);
    }
  }
}

void DequantizeRowQ6_K(const void* blocks, size_t n, float* y) {
  HWY_ASSERT(n % kSuperBlockSize == 0);
  const uint8_t* in = static_cast<const uint8_t*>(blocks);
  for (size_t b = 0; b < n / kSuperBlockSize; ++b) {
    BlockQ6_K blk;
    memcpy(&blk, in + b * kQ6_KBlockBytes, kQ6_KBlockBytes);
    const float d = F16BitsToF32(blk.d);
    float* yb = y + b * kSuperBlockSize;
    for (int i = 0; i < 256; ++i) {
      const int h = i / 128, t = (i % 128) / 32, l = i % 32;
      const uint8_t byte = blk.ql[64 * h + 32 * (t % 2) + l];
      const int low = t < 2 ? (byte & 0xF) : (byte >> 4);
      const int high = (blk.qh[32 * h + l] >> (2 * t)) & 3;
      const int q = (low | (high << 4)) - 32;
      yb[i] = d * static_cast<float>(blk.scales[i / 16]) * static_cast<float>(q);
    }
  }
}

}  // namespace ops
}  // namespace cortiq
