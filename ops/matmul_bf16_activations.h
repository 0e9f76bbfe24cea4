// Matrix-matrix product Y = X W^T for bf16 weights with the activations rounded to bf16: the
// opt-in lower-precision prefill for BF16 checkpoints (SessionOptions::prefill_activations =
// kBF16), so that a prompt's matrix products run on AVX-512 BF16 dot products (vdpbf16ps: 32
// multiply-adds per instruction, 2x f32 FMA's 16), or AMX-BF16 tile products where the CPU has
// them (8192 per instruction). The products of two bf16 values are exact in
// f32, so the only loss is the rounding of each activation to bf16 (relative error up to 2^-9).
//
// Not exact: the default prefill (ops/matmul.h) stays exact; the deviation this option causes is
// measured in tests/e2e/prefill_activations_test.cc and bench/README.md.
#ifndef CORTIQ_OPS_MATMUL_BF16_ACTIVATIONS_H_
#define CORTIQ_OPS_MATMUL_BF16_ACTIVATIONS_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {
namespace ops {

// The bf16 bits of f32 `x` as the AVX-512 BF16 conversion (vcvtne2ps2bf16) gives them: a
// subnormal input is read as a zero of its sign (DAZ), then round to nearest even to the upper
// 16 bits; a NaN stays a NaN (quieted).
uint16_t RoundToBF16(float x);

// Rows [row_begin, row_end) of, for every token t < batch,
//
//     y[t * y_stride + r] = chain over the column pairs p = 0, 1, ... of
//         acc = (acc + w[r, 2p + 1] * xb[t, 2p + 1]) + w[r, 2p] * xb[t, 2p],  acc from 0,
//
// each product and each addition in f32 with round to nearest even, subnormal inputs and
// results flushed to zero of their sign (the arithmetic of vdpbf16ps, Intel SDM "VDPBF16PS",
// which adds a pair's odd product first); xb = RoundToBF16(x); an odd cols has a zero column
// cols appended to both. w is bf16 bits, row-major [rows, cols]; x [batch, cols] with stride
// x_stride (floats); y [batch, rows] with stride y_stride. Only y[t, row_begin .. row_end) is
// written; y must not overlap w or x. Fast where the CPU has AMX-BF16 or AVX-512 BF16, a plain
// loop elsewhere; every path but AMX gives these bits (BF16ActivationsPath). Scalar reference:
// MatMulBF16ActivationsReference (ops/reference.h).
void MatMulBF16BF16Activations(const void* w, const float* x, size_t x_stride, float* y,
                               size_t y_stride, size_t batch, size_t rows, size_t cols,
                               size_t row_begin, size_t row_end);

// The exact-class product of BF16 weights and f32 activations on AMX (the "bf16x3" of oneDNN and
// cuBLAS): each activation is split into three bf16 terms whose sum is x exactly (hi = bf16(x),
// mid = bf16(x - hi), lo = bf16(x - hi - mid); a subnormal x or term, below 2^-126, is read as
// zero), and y = sum over c of w[r, c] * (hi + mid + lo)[t, c] by AMX-BF16 tile products: every
// product exact in f32, the sums in the tiles' f32 accumulation (measured at 0.06 ulp of
// sum |w x| on average, 0.5 at most, over 2560 columns of one tile product, where a sequential
// f32 chain has 0.14 and 0.8; over whole products up to 10240 columns about what the FMA kernels
// give, ~3-9 x 2^-24 sum |w x| at most). So no precision is traded: this is MatMulBF16 (ops/matmul.h) in another summation order,
// at about a third of the AMX rounded product's speed. Layouts and contract as
// MatMulBF16BF16Activations. Where BF16x3Available() is false, MatMulBF16's result.
// Tested against a float64 product of the same operands in tests/ops.
void MatMulBF16x3(const void* w, const float* x, size_t x_stride, float* y, size_t y_stride,
                  size_t batch, size_t rows, size_t cols, size_t row_begin, size_t row_end);

// True if MatMulBF16x3 and MatMulSplitAmx can run here (AMX-BF16 and AVX-512 BF16 usable).
bool BF16x3Available();

// Decodes columns [col_begin, col_begin + count) of row `row` of the weight matrix w ([rows,
// cols] in its format) to their exact f32 values into out (count floats).
using WeightRowDecoder = void (*)(const void* w, size_t cols, size_t row, size_t col_begin,
                                  size_t count, float* out);

// MatMulBF16x3 for weights in any format: each row's chunk decoded to f32 by `decode`, split
// into weight_terms bf16 terms that sum to it exactly (1: bf16 values, decode unused and w BF16;
// 2: values of at most 16 significant bits, e.g. Q4_0's d * (q - 8), 11 + 3 bits; 3: any f32),
// and the products of weight term i with activation term j summed for i + j <= 2; a term
// dropped (i + j >= 3) is below 2^-25 of its product |w x|, a quarter of one f32 rounding.
// So 3, 5 or 6 tile products per weight. Where BF16x3Available() is false, the decoded rows
// multiplied by MatMulF32 instead (exact f32 FMAs). Layouts and contract as
// MatMulBF16BF16Activations, w in its format with row r at the decoder's offset. Tested against
// float64 in tests/ops.
//
// Limits of the split (both exact kernels' results agree elsewhere): an activation that is
// infinite or NaN, or of magnitude above the largest bf16 (3.39e38, where hi rounds to infinity),
// gives NaN outputs where the FMA kernels give infinities; one below 2^-126 is read as zero, and
// one below ~2^-110 loses the terms that fall below 2^-126 (relative error up to 2^-8 at 1e-38).
void MatMulSplitAmx(WeightRowDecoder decode, int weight_terms, const void* w, const float* x,
                    size_t x_stride, float* y, size_t y_stride, size_t batch, size_t rows,
                    size_t cols, size_t row_begin, size_t row_end);

// The implementations, fastest first.
enum class BF16ActivationsPath {
  // AMX-BF16 tile products (TDPBF16PS, 16 x 16 outputs by 32 columns per instruction). The
  // hardware sums each step's 32 products in its own order and rounding (not the chain above),
  // so its bits differ from the other paths': within a few f32 roundings per column of the same
  // exact sum (tested against the reference with that bound).
  kAmx,
  kAvx512Bf16,  // vdpbf16ps: the chain above, bit for bit
  kPortable,    // plain C++: the chain above, bit for bit
};

// The implementation the kernel runs: the fastest the CPU (and OS) supports, no faster than the
// limit set by LimitBF16ActivationsPathForTest.
BF16ActivationsPath DispatchedBF16ActivationsPath();

// "AMX-BF16", "AVX-512 BF16", "portable" (as cortiq-bench prints them).
const char* BF16ActivationsPathName(BF16ActivationsPath path);

// Tests: run no faster path than `fastest` (kAmx: no limit).
void LimitBF16ActivationsPathForTest(BF16ActivationsPath fastest);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_MATMUL_BF16_ACTIVATIONS_H_
