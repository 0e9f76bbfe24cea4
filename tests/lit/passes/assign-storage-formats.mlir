// assign-storage-formats: every weight gets stored(...) by the policy of Passes.td — 1-D weights
// f32, the tables read by embedding / LM head `tables` (q8_0 under weights=q4_0), the other
// matrices `weights` or else their checkpoint format, block formats only on whole-block rows.
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats | FileCheck %s --check-prefix=NATIVE
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q4_0' | FileCheck %s --check-prefix=Q4
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q8_0 tables=bf16' | FileCheck %s --check-prefix=Q8
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q4_0 tables=q4_0' | FileCheck %s --check-prefix=Q4Q4
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q4_0 q4_0x16=false' | FileCheck %s --check-prefix=KEEP
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q4_0x16' | FileCheck %s --check-prefix=X16
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q8_0 q8_0x16=false' | FileCheck %s --check-prefix=KEEP8
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q4_k' | FileCheck %s --check-prefix=QK
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q4_k q4_kx16=false' | FileCheck %s --check-prefix=KEEPK
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q4_kx16' | FileCheck %s --check-prefix=XK
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q5_k' | FileCheck %s --check-prefix=Q5K
// RUN: cortiq-opt %s -split-input-file -assign-storage-formats='weights=q5_k q5_kx16=false' | FileCheck %s --check-prefix=KEEPQ5K
// RUN: not cortiq-opt %s -split-input-file -assign-storage-formats='weights=q8_1' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not cortiq-opt %s -split-input-file -assign-storage-formats='tables=Q8_0' 2>&1 | FileCheck %s --check-prefix=BADTABLES

// BAD: assign-storage-formats: weights must be f32, bf16, q8_0, q4_0, f16, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, q4_0x16, q8_0x16, q4_kx16 or q5_kx16, not 'q8_1'
// BADTABLES: assign-storage-formats: tables must be f32, bf16, q8_0, q4_0, f16, {{.*}} or q5_kx16, not 'Q8_0'

// Without options nothing is quantized, and the ops are left as they are.
// NATIVE-NOT: stored(q
// NATIVE: cortiq.weight @[[EMBED:embed]] stored(bf16) : tensor<512x64xbf16>
// NATIVE: cortiq.weight @ple stored(f32) : tensor<512x128xf32>
// NATIVE: cortiq.weight @norm stored(f32) : tensor<64xbf16>
// NATIVE: cortiq.weight @[[Q:q]] stored(bf16) : tensor<64x64xbf16>
// NATIVE: cortiq.weight @up stored(f16) : tensor<128x64xf16>
// NATIVE: cortiq.weight @proj stored(bf16) : tensor<128x16xbf16>
// NATIVE-NOT: stored(q
// NATIVE-LABEL: func.func @decode_step
// NATIVE: %[[E:.*]] = cortiq.embedding @[[EMBED]][%{{.*}}] scale 8.000000e+00
// NATIVE: %[[X:.*]] = cortiq.rms_norm %[[E]] gain @norm
// NATIVE: cortiq.linear @[[Q]](%[[X]])
// NATIVE: cortiq.lm_head @[[EMBED]](%[[X]])

// Q4: cortiq.weight @embed stored(q8_0) : tensor<512x64xbf16>
// Q4: cortiq.weight @ple stored(q8_0) : tensor<512x128xf32>
// Q4: cortiq.weight @norm stored(f32) : tensor<64xbf16>
// Q4: cortiq.weight @q stored(q4_0) : tensor<64x64xbf16>
// Q4: cortiq.weight @up stored(q4_0) : tensor<128x64xf16>
// Rows of 16 are no whole 32-weight blocks.
// Q4: cortiq.weight @proj stored(bf16) : tensor<128x16xbf16>
// Q4-LABEL: func.func @decode_step

// Q8: cortiq.weight @embed stored(bf16) : tensor<512x64xbf16>
// Q8: cortiq.weight @ple stored(bf16) : tensor<512x128xf32>
// Q8: cortiq.weight @norm stored(f32) : tensor<64xbf16>
// Q8: cortiq.weight @q stored(q8_0) : tensor<64x64xbf16>
// Q8: cortiq.weight @up stored(q8_0) : tensor<128x64xf16>
// Q8: cortiq.weight @proj stored(bf16) : tensor<128x16xbf16>
// Q8-LABEL: func.func @decode_step

// Q4Q4: cortiq.weight @embed stored(q4_0) : tensor<512x64xbf16>
// Q4Q4: cortiq.weight @ple stored(q4_0) : tensor<512x128xf32>
// Q4Q4-LABEL: func.func @decode_step
cortiq.weight @embed : tensor<512x64xbf16>
cortiq.weight @ple : tensor<512x128xf32>
cortiq.weight @norm : tensor<64xbf16>
cortiq.weight @q : tensor<64x64xbf16>
cortiq.weight @up : tensor<128x64xf16>
cortiq.weight @proj : tensor<128x16xbf16>
func.func @decode_step(%token: i32, %position: i32) -> tensor<512xf32> {
  %e = cortiq.embedding @embed[%token] scale 8.0 : tensor<64xf32>
  %u = cortiq.embedding @ple[%token] scale 4.0 : tensor<128xf32>
  %x = cortiq.rms_norm %e gain @norm group 64 eps 1.0e-6 : tensor<64xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  %g = cortiq.linear @up(%q) : tensor<64xf32> -> tensor<128xf32>
  %p = cortiq.slice %u[0] : tensor<128xf32> -> tensor<16xf32>
  %r = cortiq.linear @proj(%p) : tensor<16xf32> -> tensor<128xf32>
  %s = cortiq.add %g, %r : tensor<128xf32>
  %l = cortiq.lm_head @embed(%x) : tensor<64xf32> -> tensor<512xf32>
  return %l : tensor<512xf32>
}

// -----

// A GGUF's blocks keep their format unless `weights` names one; a format recorded before is
// replaced by the policy's; a derived weight is assigned like any other.
// NATIVE: cortiq.weight @k checkpoint(q4_0) stored(q4_0) : tensor<32x64xf32>
// NATIVE: cortiq.weight @v checkpoint(q8_0) stored(q8_0) : tensor<32x64xf32>
// NATIVE: cortiq.weight @o stored(f32) : tensor<64x64xf32>
// NATIVE: cortiq.weight @kv = concat_rows(@k, @v) stored(bf16) : tensor<64x64xbf16>
// NATIVE-LABEL: func.func @blocks
// Q8: cortiq.weight @k checkpoint(q4_0) stored(q8_0) : tensor<32x64xf32>
// Q8: cortiq.weight @v checkpoint(q8_0) stored(q8_0) : tensor<32x64xf32>
// Q8: cortiq.weight @o stored(q8_0) : tensor<64x64xf32>
// Q8-LABEL: func.func @blocks
cortiq.weight @k checkpoint(q4_0) : tensor<32x64xf32>
cortiq.weight @v checkpoint(q8_0) : tensor<32x64xf32>
cortiq.weight @o stored(q4_0) : tensor<64x64xf32>
cortiq.weight @kv = concat_rows(@k, @v) : tensor<64x64xbf16>
func.func @blocks(%x: tensor<64xf32>) -> tensor<64xf32> {
  %k = cortiq.linear @k(%x) : tensor<64xf32> -> tensor<32xf32>
  %o = cortiq.linear @o(%x) : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

// q4_0 on rows of whole 512-weight groups is stored as q4_0x16 (the same blocks regrouped),
// a GGUF's Q4_0 blocks too; other rows keep q4_0. q4_0x16=false keeps every q4_0; a q4_0x16
// named by `weights` falls back to q4_0 where rows are not whole groups (the tables: q8_0, on
// whole groups q8_0x16).
// NATIVE: cortiq.weight @wide checkpoint(q4_0) stored(q4_0x16) : tensor<64x1024xf32>
// NATIVE: cortiq.weight @narrow checkpoint(q4_0) stored(q4_0) : tensor<64x544xf32>
// NATIVE-LABEL: func.func @groups
// Q4: cortiq.weight @wide checkpoint(q4_0) stored(q4_0x16) : tensor<64x1024xf32>
// Q4: cortiq.weight @narrow checkpoint(q4_0) stored(q4_0) : tensor<64x544xf32>
// Q4: cortiq.weight @gate stored(q4_0x16) : tensor<32x512xbf16>
// Q4: cortiq.weight @table stored(q8_0x16) : tensor<100x512xbf16>
// Q4-LABEL: func.func @groups
// Q4Q4: cortiq.weight @table stored(q4_0x16) : tensor<100x512xbf16>
// Q4Q4-LABEL: func.func @groups
// KEEP-NOT: q4_0x16
// KEEP: cortiq.weight @wide checkpoint(q4_0) stored(q4_0) : tensor<64x1024xf32>
// KEEP: cortiq.weight @gate stored(q4_0) : tensor<32x512xbf16>
// KEEP-NOT: q4_0x16
// X16: cortiq.weight @wide checkpoint(q4_0) stored(q4_0x16) : tensor<64x1024xf32>
// X16: cortiq.weight @narrow checkpoint(q4_0) stored(q4_0) : tensor<64x544xf32>
// X16: cortiq.weight @gate stored(q4_0x16) : tensor<32x512xbf16>
// X16: cortiq.weight @table stored(q8_0x16) : tensor<100x512xbf16>
// X16-LABEL: func.func @groups
// q8_0 likewise becomes q8_0x16 on whole 512-weight groups; q8_0x16=false keeps every q8_0.
// Q8: cortiq.weight @wide checkpoint(q4_0) stored(q8_0x16) : tensor<64x1024xf32>
// Q8: cortiq.weight @narrow checkpoint(q4_0) stored(q8_0) : tensor<64x544xf32>
// Q8: cortiq.weight @gate stored(q8_0x16) : tensor<32x512xbf16>
// Q8: cortiq.weight @table stored(bf16) : tensor<100x512xbf16>
// Q8-LABEL: func.func @groups
// KEEP8-NOT: q8_0x16
// KEEP8: cortiq.weight @wide checkpoint(q4_0) stored(q8_0) : tensor<64x1024xf32>
// KEEP8: cortiq.weight @gate stored(q8_0) : tensor<32x512xbf16>
// KEEP8: cortiq.weight @table stored(q8_0) : tensor<100x512xbf16>
// KEEP8-NOT: q8_0x16
// q4_k likewise becomes q4_kx16 on whole 512-weight groups (pairs of super-blocks); rows of
// 544 weights are not whole super-blocks and take llama-quantize's fallback q5_0, also from a
// q4_kx16 named by `weights` (q4_kx16 -> q4_k -> q5_0); q4_kx16=false keeps every q4_k.
// QK: cortiq.weight @wide checkpoint(q4_0) stored(q4_kx16) : tensor<64x1024xf32>
// QK: cortiq.weight @narrow checkpoint(q4_0) stored(q5_0) : tensor<64x544xf32>
// QK: cortiq.weight @gate stored(q4_kx16) : tensor<32x512xbf16>
// QK: cortiq.weight @table stored(q4_kx16) : tensor<100x512xbf16>
// QK-LABEL: func.func @groups
// KEEPK-NOT: q4_kx16
// KEEPK: cortiq.weight @wide checkpoint(q4_0) stored(q4_k) : tensor<64x1024xf32>
// KEEPK: cortiq.weight @gate stored(q4_k) : tensor<32x512xbf16>
// KEEPK-NOT: q4_kx16
// XK: cortiq.weight @wide checkpoint(q4_0) stored(q4_kx16) : tensor<64x1024xf32>
// XK: cortiq.weight @narrow checkpoint(q4_0) stored(q5_0) : tensor<64x544xf32>
// XK: cortiq.weight @gate stored(q4_kx16) : tensor<32x512xbf16>
// XK-LABEL: func.func @groups
// q5_k likewise becomes q5_kx16; rows of 544 weights take q5_k's fallback q5_1.
// Q5K: cortiq.weight @wide checkpoint(q4_0) stored(q5_kx16) : tensor<64x1024xf32>
// Q5K: cortiq.weight @narrow checkpoint(q4_0) stored(q5_1) : tensor<64x544xf32>
// Q5K: cortiq.weight @gate stored(q5_kx16) : tensor<32x512xbf16>
// Q5K-LABEL: func.func @groups
// KEEPQ5K-NOT: q5_kx16
// KEEPQ5K: cortiq.weight @wide checkpoint(q4_0) stored(q5_k) : tensor<64x1024xf32>
// KEEPQ5K-NOT: q5_kx16
cortiq.weight @wide checkpoint(q4_0) : tensor<64x1024xf32>
cortiq.weight @narrow checkpoint(q4_0) : tensor<64x544xf32>
cortiq.weight @gate : tensor<32x512xbf16>
cortiq.weight @table : tensor<100x512xbf16>
func.func @groups(%token: i32, %x: tensor<1024xf32>, %y: tensor<544xf32>) -> tensor<100xf32> {
  %e = cortiq.embedding @table[%token] scale 1.0 : tensor<512xf32>
  %w = cortiq.linear @wide(%x) : tensor<1024xf32> -> tensor<64xf32>
  %n = cortiq.linear @narrow(%y) : tensor<544xf32> -> tensor<64xf32>
  %g = cortiq.linear @gate(%e) : tensor<512xf32> -> tensor<32xf32>
  %l = cortiq.lm_head @table(%e) : tensor<512xf32> -> tensor<100xf32>
  return %l : tensor<100xf32>
}
