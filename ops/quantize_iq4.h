// llama.cpp's non-linear 4-bit formats IQ4_NL (blocks of 32) and IQ4_XS
// (super-blocks of 256), byte for byte as ggml/src/ggml-common.h defines them
// (block_iq4_nl, block_iq4_xs), so GGUF tensors are used in place; their
// quantizers as llama-quantize runs them without an importance matrix
// (`quantize_iq4_nl` / `quantize_iq4_xs` in ggml/src/ggml-quants.c with
// quant_weights = NULL) and dequantizers. Plain scalar C++; the kernels that
// read these blocks are in ops/linear.h, ops/matmul.h and ops/gather.h.
//
// A 4-bit quant q is not a level itself but an index into kIQ4NLValues (16
// int8 levels, denser near zero), w = scale * kIQ4NLValues[q].

#ifndef CORTIQ_OPS_QUANTIZE_IQ4_H_
#define CORTIQ_OPS_QUANTIZE_IQ4_H_

#include <stddef.h>
#include <stdint.h>

#include "ops/quantize.h"    // kQuantBlockSize (32)
#include "ops/quantize_k.h"  // kSuperBlockSize (256)

namespace cortiq {
namespace ops {

// The 16 levels of IQ4_NL and IQ4_XS (ggml-common.h `kvalues_iq4nl`).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35,
                                            -22,  -10,  1,   13,  25,  38,
                                            53,   69,   89,  113};

// IQ4_NL (block_iq4_nl): 18 bytes, Q4_0's layout (weight j < 16 the low nibble
// of qs[j], weight j + 16 its high nibble); w = d * kIQ4NLValues[nibble].
struct BlockIQ4_NL {
  uint16_t d;                       // scale, f16 bits
  uint8_t qs[kQuantBlockSize / 2];  // indices into kIQ4NLValues
};
static_assert(sizeof(BlockIQ4_NL) == 2 + kQuantBlockSize / 2, "no padding");

// IQ4_XS (block_iq4_xs): 136 bytes. Sub-block k (weights 32k .. 32k + 31) has
// the 6-bit scale ls_k = ((scales_l[k / 2] >> 4 (k % 2)) & 15) |
// ((scales_h >> 2k) & 3) << 4; its 16 bytes qs[16k .. 16k + 15] hold the
// indices in Q4_0's layout. w = d * (ls_k - 32) * kIQ4NLValues[index].
struct BlockIQ4_XS {
  uint16_t d;                               // super-block scale, f16 bits
  uint16_t scales_h;                        // bits 4, 5 of the 8 scales
  uint8_t scales_l[kSuperBlockSize / 64];   // bits 0..3 of the scales
  uint8_t qs[kSuperBlockSize / 2];          // indices, 16 bytes per sub-block
};
static_assert(sizeof(BlockIQ4_XS) == 136, "no padding");

constexpr size_t kIQ4_NLBlockBytes = sizeof(BlockIQ4_NL);  // 18
constexpr size_t kIQ4_XSBlockBytes = sizeof(BlockIQ4_XS);  // 136

// Bytes of one row of `cols` weights (IQ4_NL: cols a multiple of 32; IQ4_XS:
// of 256).
constexpr size_t IQ4_NLRowBytes(size_t cols) {
  return cols / kQuantBlockSize * kIQ4_NLBlockBytes;
}
constexpr size_t IQ4_XSRowBytes(size_t cols) {
  return cols / kSuperBlockSize * kIQ4_XSBlockBytes;
}

// The signed scale ls_k - 32 (in [-32, 31]) of IQ4_XS sub-block k (< 8).
inline int IQ4_XSScale(const BlockIQ4_XS& b, size_t k) {
  const int low = (b.scales_l[k / 2] >> (4 * (k % 2))) & 0xF;
  const int high = (b.scales_h >> (2 * k)) & 3;
  return (low | (high << 4)) - 32;
}

// Quantizes x[0, n) into n / 32 IQ4_NL blocks (n a multiple of 32, checked),
// bit-identical to llama.cpp's `quantize_iq4_nl(x, y, 1, n, NULL)` (what
// llama-quantize writes for IQ4_NL without an importance matrix; not
// `quantize_row_iq4_nl_ref`, which skips the scale search). Per block
// (quantize_row_iq4_nl_impl with ntry = 7, weights w_i = x_i^2): with max the
// signed x of largest |x|, the index of each x_i / d is the nearest level
// (ties to the upper one) for d = max / 127 and then for the 15 candidates
// d = max / (t - 127), t in [-7, 7]; each candidate's least-squares scale
// sum w q x / sum w q^2 is kept if it raises (sum w q x)^2 / sum w q^2; the
// block stores f16 of the best scale and the indices of x / scale. A block
// whose largest |x| is below 1e-15 gets d = 0. x must be finite.
void QuantizeRowIQ4_NL(const float* x, size_t n, void* blocks);

// Quantizes x[0, n) into n / 256 IQ4_XS super-blocks (n a multiple of 256,
// checked), bit-identical to llama.cpp's `quantize_iq4_xs(x, y, 1, n, NULL)`
// (= quantize_row_iq4_xs_ref): each sub-block of 32 gets a float scale as in
// IQ4_NL; the super-block stores d = f16(-max_scale / 32) (max_scale: the
// sub-block scale of largest magnitude) and ls_k = clamp(nearest(scale_k /
// d), -32, 31) + 32, and the indices are recomputed for the scale d * (ls_k -
// 32) (d as f32, before its f16 rounding, as the reference does).
void QuantizeRowIQ4_XS(const float* x, size_t n, void* blocks);

// y = the dequantized weights (llama.cpp's `dequantize_row_iq4_nl` /
// `dequantize_row_iq4_xs`, bit for bit; every product is exact in f32).
void DequantizeRowIQ4_NL(const void* blocks, size_t n, float* y);
void DequantizeRowIQ4_XS(const void* blocks, size_t n, float* y);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_IQ4_H_
