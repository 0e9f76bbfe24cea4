// What the CPU offers the hand-dispatched kernels (those outside Highway's
// targets: ops/matmul_q8_activations.cc, ops/linear_vnni.cc), and how the
// decode kernels stream their weights on it (DecodePrefetchIntoL2).
#ifndef CORTIQ_OPS_CPU_FEATURES_H_
#define CORTIQ_OPS_CPU_FEATURES_H_

#include <stddef.h>

namespace cortiq {
namespace ops {

// True when the CPU (and OS: __builtin_cpu_supports checks that the AVX-512
// state is saved) has AVX-512 F, BW, VL, DQ and VNNI, the instruction sets the
// CORTIQ_VNNI_TARGET functions are compiled for; false off x86-64.
bool CpuHasAvx512Vnni();

// True on an AMD family 19h CPU with AVX-512 (Zen 4: "znver4"), which executes each 512-bit
// instruction on its 256-bit units in two halves (AMD's Software Optimization Guide for family
// 19h, "AVX-512"). There the integer Q8_0x16 decode kernel loses to the f32 one on short rows
// (ops/linear_vnni.h DecodeQ8_0x16WithFloat), and the decode kernels stream their rows into L2
// (DecodePrefetchIntoL2). False elsewhere and off x86-64.
bool CpuSplitsAvx512();

// Whether the decode kernels read their weight rows four at a time, each row
// prefetched into L2 (prefetcht1) a whole number of 4-row passes ahead
// (WholePassesAhead), rather than as before: bf16 / f16 four rows prefetched
// 2 KiB ahead into L1 (ops/dot-inl.h DotRows4); Q4_0x16 / Q8_0x16 pairs, long
// rows in column blocks (ops/linear_vnni.cc RowRangeVnni); Q4_K / Q5_K one
// row at a time, long rows in column blocks (ops/linear_digits_k.cc); Q6_K
// one or two rows, long rows in column blocks (ops/linear_digits_q6_k.cc).
// (Q4_K / Q5_K short rows stay one at a time then, but prefetched into L2
// whole packs of rows, >= 12 KiB, ahead.) Four streams prefetched into L2 keep
// more lines in flight than the L1's few miss buffers allow; measured on a Zen 4 VM only (session 37: E2B decode
// Q4_0 20.1 -> 24-29 tok/s, bf16 5.4-5.7 -> 6.9-9.1; the figures of each
// kernel beside it), so true where CpuSplitsAvx512() and false elsewhere, as
// it was measured there before (Intel Emerald Rapids, session 29).
// CORTIQ_DECODE_PREFETCH=l1 or =l2 in the environment overrides the CPU's
// choice (to compare the two on another CPU; on Zen 4, l1 is not the old
// default for Q4_0x16, whose short rows took the f32 kernel there); a test
// overrides both (SetDecodePrefetchIntoL2ForTest). Cached; cheap to call per
// matrix. Either choice gives the same bits: each row's operations are the
// same, in the same order.
bool DecodePrefetchIntoL2();

// Bytes at least ahead of its reads that a decode kernel prefetching into L2
// targets (DotRows4 kIntoL2 in ops/dot-inl.h, the VNNI kernels' passes of
// four rows). Measured on a Zen 4 VM (session 37, 2 threads, from DRAM): 12
// KiB and 24 KiB alike, 6 KiB and less slower.
inline constexpr size_t kIntoL2PrefetchMinBytes = 12288;

// The smallest multiple of pass_bytes that is >= min_bytes (and >= one pass):
// where a kernel that reads passes of pass_bytes consecutive bytes (several
// rows side by side) prefetches into L2, so that each row's prefetch lands at
// the same place of a later pass's row. pass_bytes == 0 gives 0.
inline size_t WholePassesAhead(size_t pass_bytes, size_t min_bytes) {
  if (pass_bytes == 0) return 0;
  const size_t passes = min_bytes / pass_bytes + (min_bytes % pass_bytes != 0);
  return (passes == 0 ? 1 : passes) * pass_bytes;
}

// Tests: 1 forces DecodePrefetchIntoL2() true, 0 false, -1 restores the CPU's
// choice. Every choice gives the same bits (a prefetch changes no result).
void SetDecodePrefetchIntoL2ForTest(int choice);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_CPU_FEATURES_H_
