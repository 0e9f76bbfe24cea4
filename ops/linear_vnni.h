// The decode products of the regrouped block formats Q4_0x16 and Q8_0x16
// (ops/quantize_q4_0x16.h, ops/quantize_q8_0x16.h) and of the GGUF K-quants
// Q4_K, Q5_K and Q6_K (ops/quantize_k.h) in exact integer arithmetic: what
// LinearQ4_0x16 / LinearQ8_0x16 and their LinearRows (ops/linear.h,
// ops/linear_rows.h), LinearQ4_K, LinearQ5_K and LinearQ6_K run on CPUs with
// AVX-512 VNNI (Q4_0x16, Q8_0x16, Q4_K, Q5_K, Q6_K) or AVX2 (Q4_0x16, Q4_K,
// Q5_K, Q6_K; DecodeLinearPath below). The file's name is the first kernel's; the
// AVX2 kernels live in ops/linear_digits_avx2.cc (Q4_0x16),
// ops/linear_digits_k.cc (Q4_K, Q5_K) and ops/linear_digits_q6_k.cc (Q6_K,
// both paths).
//
// Why: the f32 kernels spend three vector instructions on every 16 weights
// (Q4_0: shift, table lookup, FMA; Q8_0: widen, convert, FMA), and on Intel
// cores without a second 512-bit FMA port that made the decode compute-bound
// even from DRAM (session 27: Emerald Rapids VM, Q4_0 ~11 GB/s per thread
// from cache against ~12 GB/s of read bandwidth per thread). vpdpbusd
// multiplies 64 unsigned bytes by 64 signed bytes and adds each group of 4
// products into a 32-bit lane: four of them (one per activation digit, below)
// cost what one FMA did and cover 64 weights instead of 16. Both layouts put
// one 32-weight block in each 32-bit lane, so a lane's sum is one block's.
//
// Activation digits. The activations of each 32-weight block (one Q4_0
// block's columns) are written in block fixed point with 32-bit mantissas:
// with e = floor(log2(max_c |x_c|)) over the block (e >= -97, so the scale
// below is a normal f32),
//
//   X_c = round_to_nearest_even(x_c * 2^(29 - e)),  |X_c| <= 2^30,
//
// and each X_c is split into four signed base-256 digits
// X_c = a0 + 2^8 a1 + 2^16 a2 + 2^24 a3 (a0..a2 in [-128, 127], a3 in
// [-64, 64]). X_c * 2^(e - 29) equals x_c exactly when |x_c| >=
// 2^(e - 6) (its 24-bit mantissa fits), and is within 2^(e - 30) <= 2^-30 *
// max(max |x|, 2^-97) of it otherwise: 64 times finer than one f32 rounding
// of the block's largest product, which the f32 kernel also commits (a block
// whose maximum is below 2^-97, where e is clamped, is resolved to 2^-127).
//
// Products. For each block, four 32-bit sums S_k = sum_c q_c a_kc are exact
// (Q4_0: q_c = nibble - 8, computed as sum nibble * a - 8 sum a, |S_k| <
// 2^17; Q8_0: q_c = int8, computed as sum (q + 128) a - 128 sum a with the
// unsigned q + 128, |S_k| < 2^21; the offset term starts the accumulator from
// the digit sums). Then,
// in f32, t = ((S_3 * 256 + S_2) * 256 + S_1) * 256 + S_0 (three FMAs; S_k
// convert exactly), and the block adds t * (d * 2^(e - 29)) to its lane of
// the row's accumulator (d the f16 scale; d * 2^(e - 29) is exact unless it
// underflows); the 16 lanes are summed at the end in a fixed tree (lanes
// i + 8, then + 4, + 2, + 1). Error: |y - exact| <= 2^-30 * sum_c |w_c| *
// max(max_block |x|, 2^-97) + k * 2^-24 * sum_c |w_c x_c| with k ~ cols / 512
// + 3 + 4 (while no f32 step overflows: Q4_K / Q5_K's block sums T below are
// f32 and become infinite for activations near FLT_MAX, as the f32 kernels'
// own sub-block sums of x do):
// below the f32 kernel's bound for any activations whose block maxima are
// within 2^6 of the typical |x_c|. The integer part has no subnormal
// arithmetic (the f32 kernel's products of tiny activations do); only
// d * 2^(e - 29) of a block whose maximum is far below 1 (e.g. 2^-90 with
// d = 2^-20) can be subnormal.
// Non-finite activations make the block's scale NaN, so the row's result is
// NaN (where the f32 kernel gives NaN or +-inf).
//
// Every implementation gives the same bits: the VNNI and AVX2 kernels and the
// portable one below (their scalar reference) do the same integer sums, which
// are exact, and the same f32 operations in the same order.
#ifndef CORTIQ_OPS_LINEAR_VNNI_H_
#define CORTIQ_OPS_LINEAR_VNNI_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {
namespace ops {

// Activation digits of `cols` (a multiple of 512) activations, in the order
// the kernel reads them (vpdpbusd lane j = Q4_0 block j of a 512-weight
// group, 4 bytes per lane = 4 consecutive columns). For group s:
//   digits[2048 s + 64 (4 v + k) + 4 j + b] = a_k of column
//       512 s + 32 j + 4 v + b          (v < 8, k < 4, j < 16, b < 4),
//   sums[64 s + 16 k + j] = sum over block j's 32 columns of a_k,
//   scale[16 s + j] = 2^(e_j - 29) (NaN if the block has a non-finite x).
// (Q4_0x16: v = 4 h + z reads nibble half h of the 64-byte part z of the
// weights; Q8_0x16: v is the 64-byte part.)
struct ActivationDigitsView {
  int8_t* digits;  // [cols * 4], 64-byte aligned
  int32_t* sums;   // [cols / 32 * 4], 64-byte aligned
  float* scale;    // [cols / 32], 64-byte aligned
};

// Bytes of the three arrays of ActivationDigitsView for `cols` activations.
constexpr size_t ActivationDigitBytes(size_t cols) { return cols * 4; }
constexpr size_t ActivationDigitSumBytes(size_t cols) { return cols / 32 * 4 * 4; }
constexpr size_t ActivationDigitScaleBytes(size_t cols) { return cols / 32 * 4; }

// Writes the digits of x[0, cols) (see the file comment). Plain C++; every
// implementation writes the same bytes for finite x. cols % 512 == 0.
void ActivationDigitsScalar(const float* x, size_t cols, const ActivationDigitsView& out);

// The implementations of the Q4_0x16 / Q8_0x16 / Q4_K / Q5_K decode
// products, fastest first.
enum class DecodeLinearPath {
  kVnni,   // AVX-512 VNNI, exact integer digits (Q4_0x16, Q8_0x16, Q4_Kx16, Q5_Kx16, Q4_K,
           // Q5_K, Q6_K)
  kAvx2,   // AVX2 vpmaddubsw, the same digits and bits (all but Q8_0x16)
  kFloat,  // the Highway f32 kernels (linear_q4_0x16-inl.h, linear_q8_0x16-inl.h,
           // kquant_block-inl.h)
};

// The fastest path this CPU has: kVnni where it has AVX-512 F/BW/VL/DQ/VNNI,
// else kAvx2 where it has Highway's AVX2 target (AVX2, FMA, F16C, BMI2), else
// kFloat; unless limited by LimitDecodeLinearPathForTest. LinearQ4_0x16,
// LinearRowsQ4_0x16, LinearQ4_K, LinearQ5_K and LinearQ6_K take it;
// LinearQ8_0x16 takes the integer digits only on kVnni
// (DispatchedDecodeLinearPathQ8_0x16: on kAvx2 its f32 kernel, as Q8_0
// already streams at the read bandwidth there, and vpmaddubsw would saturate
// on its bytes).
DecodeLinearPath DispatchedDecodeLinearPath();

// The path LinearQ8_0x16 and LinearRowsQ8_0x16 take: kVnni where
// DispatchedDecodeLinearPath() is kVnni, else kFloat.
DecodeLinearPath DispatchedDecodeLinearPathQ8_0x16();


// "AVX-512 VNNI (exact integer digits)", "AVX2 (exact integer digits)" or
// "f32 FMA".
const char* DecodeLinearPathName(DecodeLinearPath path);

// Tests: take no faster path than `fastest` (kVnni: no limit).
void LimitDecodeLinearPathForTest(DecodeLinearPath fastest);

// Q8_0x16 rows of at most this many columns take the f32 kernel where CpuSplitsAvx512() (see
// DecodeQ8_0x16WithFloat).
inline constexpr size_t kFloatDecodeMaxCols = 4096;

// True when LinearQ8_0x16 / LinearRowsQ8_0x16 over rows of `cols` columns run the f32 kernel
// although the dispatched path has integer digits: on CPUs that split 512-bit instructions
// (CpuSplitsAvx512, Zen 4) for cols <= kFloatDecodeMaxCols, whose f32 activations (<= 16 KiB)
// stay in L1. Q8_0x16 carries twice Q4_0x16's bytes per weight, so on short rows the f32
// kernel keeps up with DRAM, and E2B / E4B Q8_0 decode measured the same or better with it
// (session 37, Zen 4 VM, 2 threads, interleaved: E2B 13.6-14.2 tok/s against 12.4-13.6 with
// the digits on every row; E4B 6.5-7.0 against 6.8-6.9). Q4_0x16 takes the digits on every
// row length since the rows are streamed four at a time (DecodePrefetchIntoL2): E2B Q4_0 20.1 ->
// 24.3-29.3 tok/s, where f32 short rows gave 22.5-22.7. Both kernels are within the f32 bound
// of the reference (ops/linear.h); their bits differ. False when a test has limited the path
// (LimitDecodeLinearPathForTest with kAvx2 or kFloat) or turned the preference off
// (PreferFloatDecodeForTest).
bool DecodeQ8_0x16WithFloat(size_t cols);

// Tests: whether DecodeQ8_0x16WithFloat may return true (default: yes, on such CPUs).
void PreferFloatDecodeForTest(bool allowed);

// The dispatch of LinearQ4_0x16 / LinearRowsQ4_0x16 / LinearQ8_0x16 /
// LinearRowsQ8_0x16 (ops/kernel_dispatch.h) to the integer kernels: if the
// dispatched path has one for the format, runs it on the arguments (those of
// LinearQ4_0x16Vnni etc.) and returns true; otherwise (and for Q8_0x16 where
// DecodeQ8_0x16WithFloat(cols)) returns false and writes nothing (the caller
// runs the f32 kernel).
bool LinearQ4_0x16Digits(const void* w, const float* x, float* y, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end);
bool LinearRowsQ4_0x16Digits(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end);
bool LinearQ8_0x16Digits(const void* w, const float* x, float* y, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end);
bool LinearRowsQ8_0x16Digits(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end);

// The signature of every decode product kernel in this file.
using DecodeLinearKernel = void (*)(const void* w, const float* x, float* y, size_t rows,
                                    size_t cols, size_t row_begin, size_t row_end);

// The dispatch of a GGUF K-quant format's Linear (LinearQ4_K, LinearQ5_K,
// LinearQ6_K) to its integer kernels: runs `vnni` where
// DispatchedDecodeLinearPath() is kVnni, `avx2` where it is kAvx2, and
// returns true; on kFloat returns false and writes nothing (the caller runs
// its f32 kernel).
bool LinearKDigits(DecodeLinearKernel vnni, DecodeLinearKernel avx2, const void* w,
                   const float* x, float* y, size_t rows, size_t cols, size_t row_begin,
                   size_t row_end);

// y[r] = sum_c w_rc x_c for r in [row_begin, row_end), w Q4_0x16 rows of
// cols / 512 groups (row r at byte r * cols / 512 * 288), cols a multiple of
// 512, by the digit arithmetic of the file comment. Requires the CPU to have
// AVX-512 VNNI (DispatchedDecodeLinearPath() == kVnni); each row's result is
// independent of the range. Rows are read in pairs (rows of 4096 columns or
// more in column blocks of 16 rows, whose digits stay in L1), or, where
// DecodePrefetchIntoL2() (ops/cpu_features.h; Zen 4), four at a time
// prefetched into L2 whole passes ahead (ops/linear_vnni_internal.h
// RowStreaming); each row still adds its groups in column order, so the bits
// are the same. Scratch: a per-thread buffer of ~5 bytes per column
// per token (digits, digit sums, scales, offsets). Scalar reference with the
// same bits: LinearQ4_0x16DigitsScalar.
void LinearQ4_0x16Vnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);

// As LinearQ4_0x16Vnni for `batch` tokens (x [batch, cols] with stride
// x_stride, y [batch, rows] with stride y_stride): each token's digits
// computed once, then blocks of 16 rows for every token. Each output has the
// bits of LinearQ4_0x16Vnni on its row.
void LinearRowsQ4_0x16Vnni(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);

// LinearQ4_0x16Vnni and LinearRowsQ4_0x16Vnni with AVX2
// (ops/linear_digits_avx2.cc), the same bits: per digit, vpmaddubsw of 32
// nibbles by 32 digits into 16-bit words (pairs at most 3840, a group's 8 at
// most 30720: no saturation, no overflow), widened by vpmaddwd to the same
// exact 32-bit sums, then the same f32 steps on two halves of 8 lanes.
// Requires Highway's AVX2 target (DispatchedDecodeLinearPath() == kVnni or
// kAvx2). Rows two at a time (sharing each digit load), rows of 4096 columns
// or more in column blocks as LinearQ4_0x16Vnni (each row still adds its
// groups in column order).
void LinearQ4_0x16Avx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);
void LinearRowsQ4_0x16Avx2(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);

// LinearQ4_0x16Vnni in plain C++, scalar: the same integer sums and f32
// operations in the same order, hence the same bits on any CPU.
void LinearQ4_0x16DigitsScalar(const void* w, const float* x, float* y, size_t rows,
                               size_t cols, size_t row_begin, size_t row_end);

// The same three for Q8_0x16 weights (row r at byte r * cols / 512 * 544).
void LinearQ8_0x16Vnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);
void LinearRowsQ8_0x16Vnni(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);
void LinearQ8_0x16DigitsScalar(const void* w, const float* x, float* y, size_t rows,
                               size_t cols, size_t row_begin, size_t row_end);

// Q4_Kx16 weights (ops/quantize_q4_kx16.h: Q4_K super-blocks regrouped in
// pairs, one 32-weight sub-block per lane as Q4_0x16; row r at byte
// r * cols / 512 * 296, cols a multiple of 512): y[r] = sum_c w_rc x_c for r
// in [row_begin, row_end) by Q4_0x16's rows, passes and prefetches
// (LinearQ4_0x16Vnni) with Q4_K's sums and f32 steps (LinearQ4_KVnni below):
// per lane j, S_k = sum_c q_c a_kc exact (q in [0, 15], no offset), then
//   acc_j = fma(CombineDigits(S), (d sc_j) * 2^(e - 29), acc_j),
//   acc_j = fma(-(dmin m_j), T_j, acc_j)
// with T_j the block's CombineDigits of its digit sums times 2^(e - 29)
// (per token); groups in column order, the 16 lanes summed in the fixed tree.
// Error: Q4_K's. Why the layout: the Q4_K kernel's register transposes and
// packed scales made it compute-bound (~34 ns per 1024 weights on Zen 4
// against Q4_0x16's ~22 with the same 64 vpdpbusd, session 38).
// The scale and min bytes are read as 6-bit values (& 63) on every path.
// LinearQ4_Kx16Vnni requires AVX-512 VNNI; LinearRowsQ4_Kx16Vnni is it for
// `batch` tokens (each output the bits of LinearQ4_Kx16Vnni on its row);
// LinearQ4_Kx16Avx2 / LinearRowsQ4_Kx16Avx2 are the same with AVX2
// (ops/linear_digits_avx2.cc: Q4_0x16's AVX2 kernel, vpmaddubsw words of
// nibbles times digits, at most 8 * 3840 < 2^15; Highway's AVX2 target
// required); LinearQ4_Kx16DigitsScalar is their scalar twin, the same bits on
// any CPU. LinearQ4_Kx16Digits / LinearRowsQ4_Kx16Digits run the kernels of
// DispatchedDecodeLinearPath() and return true where it is kVnni or kAvx2,
// else return false and write nothing (ops/linear.h LinearQ4_Kx16 then runs
// its f32 kernel).
void LinearQ4_Kx16Vnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);
void LinearRowsQ4_Kx16Vnni(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);
void LinearQ4_Kx16Avx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);
void LinearRowsQ4_Kx16Avx2(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);
void LinearQ4_Kx16DigitsScalar(const void* w, const float* x, float* y, size_t rows,
                               size_t cols, size_t row_begin, size_t row_end);
bool LinearQ4_Kx16Digits(const void* w, const float* x, float* y, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end);
bool LinearRowsQ4_Kx16Digits(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end);

// The same seven for Q5_Kx16 weights (ops/quantize_q5_kx16.h; row r at byte
// r * cols / 512 * 360): Q5_K's quants q in [0, 31] (each nibble plus 16 where
// its fifth bit is set: with VNNI one masked byte add per 64 quant bytes from
// the part's 64-bit mask, with AVX2 the mask's bits spread to bytes and the
// 16-bit words widened every 2 parts, 4 * 2 * 31 * 128 < 2^15), Q4_Kx16's f32
// steps; Q5_K's error bound; the same bits on all three.
void LinearQ5_Kx16Vnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);
void LinearRowsQ5_Kx16Vnni(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);
void LinearQ5_Kx16Avx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                       size_t row_begin, size_t row_end);
void LinearRowsQ5_Kx16Avx2(const void* w, const float* x, size_t x_stride, float* y,
                           size_t y_stride, size_t batch, size_t rows, size_t cols,
                           size_t row_begin, size_t row_end);
void LinearQ5_Kx16DigitsScalar(const void* w, const float* x, float* y, size_t rows,
                               size_t cols, size_t row_begin, size_t row_end);
bool LinearQ5_Kx16Digits(const void* w, const float* x, float* y, size_t rows, size_t cols,
                         size_t row_begin, size_t row_end);
bool LinearRowsQ5_Kx16Digits(const void* w, const float* x, size_t x_stride, float* y,
                             size_t y_stride, size_t batch, size_t rows, size_t cols,
                             size_t row_begin, size_t row_end);

// Q4_K (llama.cpp's block_q4_K, ops/quantize_k.h) rows as they are in the
// GGUF, by the same activation digits: y[r] = sum_c w_rc x_c for r in
// [row_begin, row_end), row r at byte r * cols / 256 * 144, cols a multiple
// of 256 (the activations are read as zero-padded to a multiple of 1024).
//
// Lanes. A group of four super-blocks (1024 columns) is read as 8 loads of
// 64 quant bytes and transposed in registers (vpermt2d) so that lane
// j = 4 L + i holds 4 bytes of chunk i (64 weights: sub-blocks 2 i in the low
// nibbles, 2 i + 1 in the high ones) of super-block L: per digit, the low
// nibbles and the high nibbles each accumulate one 32-weight sub-block per
// lane over 8 vpdpbusd, S_k = sum_c q_c a_kc exact (low nibbles q in
// [0, 15]; the high nibbles are used in place, byte & 0xF0 = 16 q, and d is
// taken as d / 16 for them). Then per lane and sub-block, in f32:
//   t = fma(f32(S_2 + 256 S_3), 65536, f32(S_0 + 256 S_1)),
//   T = the same of the block's digit sums (per token, times 2^(e - 29)),
//   acc_j = fma(t, (d * sc) * 2^(e - 29), acc_j),
//   acc_j = fma(-(dmin * m), T, acc_j),
// the low nibbles' sub-block first, groups in column order; a super-block
// past the row's end counts as zeros (adds +0). Rows whose last group has 1
// or 2 super-blocks (E2B's 1536 columns, E4B's 2560) share that group's
// vpdpbusd: 4 or 2 rows' tails in one pass, each row taking only its own
// lanes (and +0 in the others), so the bits are those of the row alone. The
// 16 lanes are summed in the fixed tree. Error: that of Q4_0x16's digits with sum_c |w_c| replaced
// by sum_c (d sc q_c + dmin m) (the two terms of each weight, which the format
// subtracts, as llama.cpp's kernels do).
//
// Requires AVX-512 VNNI (DispatchedDecodeLinearPath() == kVnni); each row's
// result is independent of the range. Scratch: a per-thread buffer of ~10
// bytes per (padded) column. Scalar reference with the same bits:
// LinearQ4_KDigitsScalar.
void LinearQ4_KVnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);

// LinearQ4_KVnni with AVX2 (Highway's AVX2 target; DispatchedDecodeLinearPath()
// == kVnni or kAvx2), the same bits: the lanes in two halves of 8, the
// transpose by vpunpck / vperm2i128 per half, per digit vpmaddubsw into
// 16-bit words (at most 8 * 3840: no saturation) widened by vpmaddwd, the high
// nibbles taken as q and their sums times 16 (the VNNI kernel's sums of 16 q).
void LinearQ4_KAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);

// LinearQ4_KVnni in plain C++, scalar: the same integer sums and f32
// operations in the same order, hence the same bits on any CPU.
void LinearQ4_KDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                            size_t row_begin, size_t row_end);

// Q5_K (llama.cpp's block_q5_K, 176 bytes per 256 weights, ops/quantize_k.h)
// by Q4_K's digit arithmetic: the same lanes, groups, f32 steps and error
// bound (with T_c = d sc q_c + dmin m), where q_c = nibble + 16 * its qh bit
// (0..31, ggml's dequantize_row_q5_K) is multiplied as it is and d is not
// divided for the high nibbles. LinearQ5_KVnni (AVX-512 VNNI) takes each
// lane's qh dword by vpermt2d and its bit by vpsrlvd; LinearQ5_KAvx2
// (Highway's AVX2 target) widens its 16-bit words every 4 loads instead of 8
// (4 * 2 * 31 * 128 = 31744 < 2^15); LinearQ5_KDigitsScalar is their scalar
// twin, all three with the same bits. cols a multiple of 256; each row's
// result is independent of the range.
void LinearQ5_KVnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);
void LinearQ5_KAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);
void LinearQ5_KDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                            size_t row_begin, size_t row_end);

// Q6_K (llama.cpp's block_q6_K, 210 bytes per 256 weights) by the same
// activation digits (ops/linear_digits_q6_k.cc, whose file comment gives the
// lanes and the f32 steps): a lane is one 16-weight sub-block, its digit sums
// S_k = sum q a_k - 32 sum a_k exact (q in [0, 63]; VNNI: four vpdpbusd per
// digit and super-block; AVX2: two vpmaddubsw per 16-bit word,
// 2 * 2 * 63 * 128 < 2^15), then per lane
// acc = fma(t, (d * sc) * 2^(e - 29), acc) and the fixed 16-lane tree.
// Error: as Q4_0x16's digits with sum_c |w_c| replaced by sum_c |d sc_c|
// (q_c + 32). LinearQ6_KVnni requires AVX-512 VNNI
// (DispatchedDecodeLinearPath() == kVnni) and takes rows in passes of four
// where DecodePrefetchIntoL2() (ops/cpu_features.h), elsewhere rows of 4096
// columns or more in column blocks of 16 rows (each row still adds its
// super-blocks in column order: the same bits), LinearQ6_KAvx2 Highway's AVX2
// target; LinearQ6_KDigitsScalar is their scalar twin, all three with the
// same bits. cols a multiple of 256 (the activations are read as
// zero-padded to a multiple of 512); each row's result is independent of the
// range.
void LinearQ6_KVnni(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);
void LinearQ6_KAvx2(const void* w, const float* x, float* y, size_t rows, size_t cols,
                    size_t row_begin, size_t row_end);
void LinearQ6_KDigitsScalar(const void* w, const float* x, float* y, size_t rows, size_t cols,
                            size_t row_begin, size_t row_end);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_LINEAR_VNNI_H_
