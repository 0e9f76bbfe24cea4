// Scalar double-precision references of the ops/ kernels (ops/reference.h).

#include "ops/reference.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hwy/base.h"
#include "ops/quantize.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_k.h"
#include "ops/quantize_legacy.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"
#include "ops/quantize_q8_0x16.h"

namespace cortiq {
namespace ops {

float BF16ToF32(hwy::bfloat16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v.bits) << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

hwy::bfloat16_t F32ToBF16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  hwy::bfloat16_t out;
  if (isnan(f)) {
    out.bits =
        static_cast<uint16_t>((bits >> 16) | 0x40);  // keep it a (quiet) NaN
    return out;
  }
  // Round to nearest, ties to even, on the 16 discarded bits.
  const uint32_t rounding_bias = 0x7FFF + ((bits >> 16) & 1);
  out.bits = static_cast<uint16_t>((bits + rounding_bias) >> 16);
  return out;
}

namespace {

template <typename WT>
double ToDouble(WT v);
template <>
double ToDouble<float>(float v) {
  return v;
}
template <>
double ToDouble<hwy::bfloat16_t>(hwy::bfloat16_t v) {
  return BF16ToF32(v);
}

template <typename WT>
void LinearReference(const WT* w, const float* x, float* y, size_t cols,
                     size_t row_begin, size_t row_end) {
  for (size_t r = row_begin; r < row_end; ++r) {
    double sum = 0.0;
    for (size_t c = 0; c < cols; ++c) {
      sum += ToDouble(w[r * cols + c]) * static_cast<double>(x[c]);
    }
    y[r] = static_cast<float>(sum);
  }
}

template <typename T>
void GatherRowReference(const T* table, size_t cols, size_t row,
                        size_t col_begin, size_t count, float scale, float* y) {
  const T* src = table + row * cols + col_begin;
  for (size_t j = 0; j < count; ++j) {
    y[j] = static_cast<float>(static_cast<double>(scale) * ToDouble(src[j]));
  }
}

// Weight c of the quantized row starting at `row` (a byte pointer), straight
// from the block definitions in ops/quantize.h.
double Q8_0Weight(const uint8_t* row, size_t c) {
  BlockQ8_0 block;
  memcpy(&block, row + c / kQuantBlockSize * kQ8_0BlockBytes, sizeof(block));
  return static_cast<double>(F16BitsToF32(block.d)) *
         block.qs[c % kQuantBlockSize];
}
double Q4_0Weight(const uint8_t* row, size_t c) {
  BlockQ4_0 block;
  memcpy(&block, row + c / kQuantBlockSize * kQ4_0BlockBytes, sizeof(block));
  const size_t j = c % kQuantBlockSize;
  const int nibble = j < kQuantBlockSize / 2
                         ? block.qs[j] & 0x0F
                         : block.qs[j - kQuantBlockSize / 2] >> 4;
  return static_cast<double>(F16BitsToF32(block.d)) * (nibble - 8);
}

template <class WeightFn>
void LinearQuantReference(const void* w, size_t row_bytes, WeightFn weight,
                          const float* x, float* y, size_t cols,
                          size_t row_begin, size_t row_end) {
  for (size_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = static_cast<const uint8_t*>(w) + r * row_bytes;
    double sum = 0.0;
    for (size_t c = 0; c < cols; ++c) {
      sum += weight(row, c) * static_cast<double>(x[c]);
    }
    y[r] = static_cast<float>(sum);
  }
}

template <class WeightFn>
void GatherRowQuantReference(const void* table, size_t row_bytes,
                             WeightFn weight, size_t row, size_t col_begin,
                             size_t count, float scale, float* y) {
  const uint8_t* src = static_cast<const uint8_t*>(table) + row * row_bytes;
  for (size_t j = 0; j < count; ++j) {
    y[j] = static_cast<float>(static_cast<double>(scale) *
                              weight(src, col_begin + j));
  }
}

// Rows [row_begin, row_end) of y = W x for a matrix of `row_bytes`-byte rows
// that `dequantize` turns into f32 weights, summed in double.
using DequantizeFn = void (*)(const void*, size_t, float*);
void LinearDequantizedReference(const void* w, size_t row_bytes,
                                DequantizeFn dequantize, const float* x,
                                float* y, size_t cols, size_t row_begin,
                                size_t row_end) {
  std::vector<float> row(cols);
  for (size_t r = row_begin; r < row_end; ++r) {
    dequantize(static_cast<const uint8_t*>(w) + r * row_bytes, cols,
               row.data());
    double sum = 0.0;
    for (size_t c = 0; c < cols; ++c) {
      sum += static_cast<double>(row[c]) * static_cast<double>(x[c]);
    }
    y[r] = static_cast<float>(sum);
  }
}

void GatherRowDequantizedReference(const void* table, size_t row_bytes,
                                   DequantizeFn dequantize, size_t cols,
                                   size_t row, size_t col_begin, size_t count,
                                   float scale, float* y) {
  std::vector<float> values(cols);
  dequantize(static_cast<const uint8_t*>(table) + row * row_bytes, cols,
             values.data());
  for (size_t j = 0; j < count; ++j) {
    y[j] = static_cast<float>(static_cast<double>(scale) *
                              static_cast<double>(values[col_begin + j]));
  }
}

}  // namespace

#define CORTIQ_DEFINE_FORMAT_REFERENCES(NAME, WT)                              \
  void Linear##NAME##Reference(const WT* w, const float* x, float* y,          \
                               size_t rows, size_t cols, size_t row_begin,     \
                               size_t row_end) {                               \
    (void)rows;                                                                \
    LinearDequantizedReference(w, NAME##RowBytes(cols), &DequantizeRow##NAME,  \
                               x, y, cols, row_begin, row_end);                \
  }                                                                            \
  void MatMul##NAME##Reference(const WT* w, const float* x, size_t x_stride,   \
                               float* y, size_t y_stride, size_t batch,        \
                               size_t rows, size_t cols, size_t row_begin,     \
                               size_t row_end) {                               \
    for (size_t t = 0; t < batch; ++t) {                                       \
      Linear##NAME##Reference(w, x + t * x_stride, y + t * y_stride, rows,     \
                              cols, row_begin, row_end);                       \
    }                                                                          \
  }                                                                            \
  void GatherRow##NAME##Reference(const WT* table, size_t cols, size_t row,    \
                                  size_t col_begin, size_t count, float scale, \
                                  float* y) {                                  \
    GatherRowDequantizedReference(table, NAME##RowBytes(cols),                 \
                                  &DequantizeRow##NAME, cols, row, col_begin,  \
                                  count, scale, y);                            \
  }
CORTIQ_DEFINE_FORMAT_REFERENCES(F16, hwy::float16_t)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q4_0x16, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q8_0x16, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q4_Kx16, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q5_Kx16, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q4_1, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q5_0, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q5_1, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(IQ4_NL, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q2_K, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q3_K, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q4_K, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q5_K, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(Q6_K, void)
CORTIQ_DEFINE_FORMAT_REFERENCES(IQ4_XS, void)
#undef CORTIQ_DEFINE_FORMAT_REFERENCES

void LinearF32Reference(const float* w, const float* x, float* y, size_t rows,
                        size_t cols, size_t row_begin, size_t row_end) {
  (void)rows;
  LinearReference(w, x, y, cols, row_begin, row_end);
}

void LinearBF16Reference(const hwy::bfloat16_t* w, const float* x, float* y,
                         size_t rows, size_t cols, size_t row_begin,
                         size_t row_end) {
  (void)rows;
  LinearReference(w, x, y, cols, row_begin, row_end);
}

void LinearQ8_0Reference(const void* w, const float* x, float* y, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end) {
  (void)rows;
  LinearQuantReference(w, Q8_0RowBytes(cols), Q8_0Weight, x, y, cols, row_begin,
                       row_end);
}

void LinearQ4_0Reference(const void* w, const float* x, float* y, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end) {
  (void)rows;
  LinearQuantReference(w, Q4_0RowBytes(cols), Q4_0Weight, x, y, cols, row_begin,
                       row_end);
}

void MatMulF32Reference(const float* w, const float* x, size_t x_stride,
                        float* y, size_t y_stride, size_t batch, size_t rows,
                        size_t cols, size_t row_begin, size_t row_end) {
  for (size_t t = 0; t < batch; ++t) {
    LinearF32Reference(w, x + t * x_stride, y + t * y_stride, rows, cols,
                       row_begin, row_end);
  }
}

void MatMulBF16Reference(const hwy::bfloat16_t* w, const float* x,
                         size_t x_stride, float* y, size_t y_stride,
                         size_t batch, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end) {
  for (size_t t = 0; t < batch; ++t) {
    LinearBF16Reference(w, x + t * x_stride, y + t * y_stride, rows, cols,
                        row_begin, row_end);
  }
}

void MatMulQ8_0Reference(const void* w, const float* x, size_t x_stride,
                         float* y, size_t y_stride, size_t batch, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end) {
  for (size_t t = 0; t < batch; ++t) {
    LinearQ8_0Reference(w, x + t * x_stride, y + t * y_stride, rows, cols,
                        row_begin, row_end);
  }
}

void MatMulQ4_0Reference(const void* w, const float* x, size_t x_stride,
                         float* y, size_t y_stride, size_t batch, size_t rows,
                         size_t cols, size_t row_begin, size_t row_end) {
  for (size_t t = 0; t < batch; ++t) {
    LinearQ4_0Reference(w, x + t * x_stride, y + t * y_stride, rows, cols,
                        row_begin, row_end);
  }
}

void MatMulQ8ActivationsReference(bool q4_0, const void* w, const float* x, size_t x_stride,
                                  float* y, size_t y_stride, size_t batch, size_t rows,
                                  size_t cols, size_t row_begin, size_t row_end) {
  (void)rows;
  const uint8_t* bytes = static_cast<const uint8_t*>(w);
  const size_t block_bytes = q4_0 ? kQ4_0BlockBytes : kQ8_0BlockBytes;
  const size_t blocks = cols / kQuantBlockSize;
  std::vector<int> qx(cols);
  std::vector<float> dx(blocks);
  for (size_t t = 0; t < batch; ++t) {
    const float* xt = x + t * x_stride;
    for (size_t b = 0; b < blocks; ++b) {
      float amax = 0.0f;
      for (size_t j = 0; j < kQuantBlockSize; ++j) {
        amax = std::max(amax, std::fabs(xt[b * kQuantBlockSize + j]));
      }
      const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
      dx[b] = amax / 127.0f;
      for (size_t j = 0; j < kQuantBlockSize; ++j) {
        qx[b * kQuantBlockSize + j] =
            static_cast<int>(std::nearbyint(xt[b * kQuantBlockSize + j] * id));
      }
    }
    for (size_t r = row_begin; r < row_end; ++r) {
      float acc = 0.0f;
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + (r * blocks + b) * block_bytes;
        uint16_t d_bits;
        memcpy(&d_bits, block, 2);
        int isum = 0;
        for (size_t j = 0; j < kQuantBlockSize; ++j) {
          const int qw = q4_0 ? (j < 16 ? (block[2 + j] & 15) : (block[2 + j - 16] >> 4)) - 8
                              : static_cast<int8_t>(block[2 + j]);
          isum += qw * qx[b * kQuantBlockSize + j];
        }
        acc = std::fma(F16BitsToF32(d_bits) * dx[b], static_cast<float>(isum), acc);
      }
      y[t * y_stride + r] = acc;
    }
  }
}

namespace {

// A float with its subnormal magnitude flushed to a zero of its sign (AVX-512 BF16's DAZ/FTZ).
float Ftz(float v) {
  return std::fabs(v) < std::numeric_limits<float>::min() ? std::copysign(0.0f, v) : v;
}

float Bf16Bits(uint32_t half) {
  const uint32_t bits = half << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

// Round to nearest even of the 16 dropped bits (ties to an even upper half), NaN quieted.
uint32_t ToBf16(float f) {
  f = Ftz(f);
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  if (std::isnan(f)) return (bits >> 16) | 0x40;
  const uint32_t upper = bits >> 16, lower = bits & 0xFFFF;
  const bool up = lower > 0x8000 || (lower == 0x8000 && (upper & 1) != 0);
  return (upper + (up ? 1 : 0)) & 0xFFFF;
}

}  // namespace

void MatMulBF16ActivationsReference(const uint16_t* w, const float* x, size_t x_stride, float* y,
                                    size_t y_stride, size_t batch, size_t rows, size_t cols,
                                    size_t row_begin, size_t row_end) {
  (void)rows;
  const size_t padded = (cols + 1) / 2 * 2;
  std::vector<float> xb(padded, 0.0f), wb(padded, 0.0f);
  for (size_t t = 0; t < batch; ++t) {
    for (size_t c = 0; c < cols; ++c) xb[c] = Bf16Bits(ToBf16(x[t * x_stride + c]));
    for (size_t r = row_begin; r < row_end; ++r) {
      for (size_t c = 0; c < cols; ++c) wb[c] = Ftz(Bf16Bits(w[r * cols + c]));
      float acc = 0.0f;
      for (size_t c = 0; c < padded; c += 2) {
        acc = Ftz(acc + wb[c + 1] * xb[c + 1]);
        acc = Ftz(acc + wb[c] * xb[c]);
      }
      y[t * y_stride + r] = acc;
    }
  }
}

void RmsNormReference(const float* x, const float* gain, float* y, size_t n,
                      size_t group_size, float eps) {
  for (size_t g = 0; g < n; g += group_size) {
    double sum_sq = 0.0;
    for (size_t i = 0; i < group_size; ++i) {
      sum_sq += static_cast<double>(x[g + i]) * static_cast<double>(x[g + i]);
    }
    const double scale = 1.0 / sqrt(sum_sq / static_cast<double>(group_size) +
                                    static_cast<double>(eps));
    for (size_t i = 0; i < group_size; ++i) {
      const double w = gain != nullptr ? static_cast<double>(gain[i]) : 1.0;
      y[g + i] = static_cast<float>(static_cast<double>(x[g + i]) * scale * w);
    }
  }
}

void ResidualRmsNormReference(const float* residual, const float* x,
                              const float* gain, float scalar, float* y,
                              size_t n, size_t group_size, float eps) {
  for (size_t g = 0; g < n; g += group_size) {
    double sum_sq = 0.0;
    for (size_t i = 0; i < group_size; ++i) {
      sum_sq += static_cast<double>(x[g + i]) * static_cast<double>(x[g + i]);
    }
    const double scale = 1.0 / sqrt(sum_sq / static_cast<double>(group_size) +
                                    static_cast<double>(eps));
    // y may alias residual or x exactly: element i is written only after its
    // inputs are read, and the group's sum of squares is already complete.
    for (size_t i = 0; i < group_size; ++i) {
      const double w = gain != nullptr ? static_cast<double>(gain[i]) : 1.0;
      const double sum = static_cast<double>(residual[g + i]) +
                         static_cast<double>(x[g + i]) * scale * w;
      y[g + i] = static_cast<float>(sum * static_cast<double>(scalar));
    }
  }
}

void ApplyRopeReference(float* x, size_t num_heads, size_t head_dim,
                        size_t rotated_pairs, const float* cos,
                        const float* sin) {
  const size_t half = head_dim / 2;
  for (size_t h = 0; h < num_heads; ++h) {
    float* xh = x + h * head_dim;
    for (size_t i = 0; i < rotated_pairs; ++i) {
      const double a = xh[i];
      const double b = xh[i + half];
      const double c = cos[i];
      const double s = sin[i];
      xh[i] = static_cast<float>(a * c - b * s);
      xh[i + half] = static_cast<float>(b * c + a * s);
    }
  }
}

void AttentionReference(const float* q, const float* k_rows,
                        const float* v_rows, size_t num_rows, size_t num_heads,
                        size_t num_kv_heads, size_t head_dim, float scale,
                        float* out) {
  const size_t group = num_heads / num_kv_heads;
  const size_t row_stride = num_kv_heads * head_dim;
  std::vector<double> s(num_rows);
  std::vector<double> o(head_dim);
  for (size_t h = 0; h < num_heads; ++h) {
    const size_t kv_offset = (h / group) * head_dim;
    const float* qh = q + h * head_dim;
    double max = -INFINITY;
    for (size_t i = 0; i < num_rows; ++i) {
      const float* k = k_rows + i * row_stride + kv_offset;
      double dot = 0.0;
      for (size_t d = 0; d < head_dim; ++d) {
        dot += static_cast<double>(qh[d]) * static_cast<double>(k[d]);
      }
      s[i] = static_cast<double>(scale) * dot;
      max = s[i] > max ? s[i] : max;
    }
    double sum = 0.0;
    for (size_t i = 0; i < num_rows; ++i) {
      s[i] = exp(s[i] - max);
      sum += s[i];
    }
    for (size_t d = 0; d < head_dim; ++d) o[d] = 0.0;
    for (size_t i = 0; i < num_rows; ++i) {
      const float* v = v_rows + i * row_stride + kv_offset;
      const double a = s[i] / sum;
      for (size_t d = 0; d < head_dim; ++d)
        o[d] += a * static_cast<double>(v[d]);
    }
    for (size_t d = 0; d < head_dim; ++d) {
      out[h * head_dim + d] = static_cast<float>(o[d]);
    }
  }
}

void GeluTanhReference(const float* x, float* y, size_t n) {
  const double k_pi = 3.14159265358979323846;
  const double k_sqrt_2_over_pi = sqrt(2.0 / k_pi);
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i];
    const double u = k_sqrt_2_over_pi * (v + 0.044715 * v * v * v);
    // 0.5 v (1 + tanh(u)) == v / (1 + exp(-2u)); the second form has no
    // cancellation for u << 0 (in double, 1 + tanh(u) loses all digits once u <
    // -19, i.e. x < -7). exp overflows to inf for u < -354, giving the correct
    // limit -0.
    y[i] = static_cast<float>(v / (1.0 + exp(-2.0 * u)));
  }
}

void GeluTanhMulReference(const float* gate, const float* up, float* y,
                          size_t n) {
  const double k_pi = 3.14159265358979323846;
  const double k_sqrt_2_over_pi = sqrt(2.0 / k_pi);
  for (size_t i = 0; i < n; ++i) {
    const double v = gate[i];
    const double u = k_sqrt_2_over_pi * (v + 0.044715 * v * v * v);
    y[i] = static_cast<float>(v / (1.0 + exp(-2.0 * u)) *
                              static_cast<double>(up[i]));
  }
}

void MulReference(const float* a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(static_cast<double>(a[i]) *
                              static_cast<double>(b[i]));
  }
}

void AddReference(const float* a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(static_cast<double>(a[i]) +
                              static_cast<double>(b[i]));
  }
}

void ScaleReference(const float* x, float s, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    y[i] =
        static_cast<float>(static_cast<double>(x[i]) * static_cast<double>(s));
  }
}

void SoftcapReference(const float* x, float cap, float* y, size_t n) {
  const double c = cap;
  for (size_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(c * tanh(static_cast<double>(x[i]) / c));
  }
}

void GatherRowF32Reference(const float* table, size_t cols, size_t row,
                           size_t col_begin, size_t count, float scale,
                           float* y) {
  GatherRowReference(table, cols, row, col_begin, count, scale, y);
}

void GatherRowBF16Reference(const hwy::bfloat16_t* table, size_t cols,
                            size_t row, size_t col_begin, size_t count,
                            float scale, float* y) {
  GatherRowReference(table, cols, row, col_begin, count, scale, y);
}

void GatherRowQ8_0Reference(const void* table, size_t cols, size_t row,
                            size_t col_begin, size_t count, float scale,
                            float* y) {
  GatherRowQuantReference(table, Q8_0RowBytes(cols), Q8_0Weight, row, col_begin,
                          count, scale, y);
}

void GatherRowQ4_0Reference(const void* table, size_t cols, size_t row,
                            size_t col_begin, size_t count, float scale,
                            float* y) {
  GatherRowQuantReference(table, Q4_0RowBytes(cols), Q4_0Weight, row, col_begin,
                          count, scale, y);
}

}  // namespace ops
}  // namespace cortiq
