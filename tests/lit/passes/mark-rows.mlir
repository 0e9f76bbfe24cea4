// mark-rows: an op runs on every row of a prompt batch iff its result reaches a kv_append (or,
// with taps-all-rows, a layer_output); everything else, the attention of a KV-shared layer
// included, only on the logits rows. A layer whose output feeds a later layer's KV stays
// all-rows (layer 0 below); an op nobody reads is logits-only.
// RUN: cortiq-opt %s -split-input-file -mark-rows | FileCheck %s
// RUN: cortiq-opt %s -split-input-file -mark-rows='taps-all-rows=true' | FileCheck %s --check-prefix=TAPS
// RUN: cortiq-opt %s -split-input-file -mark-rows='report=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: cortiq-opt %s -split-input-file -mark-rows -mark-rows | FileCheck %s
// RUN: echo 'module {}' | not cortiq-opt -mark-rows 2>&1 | FileCheck %s --check-prefix=NOFUNC

// Three layers of hidden size 64: layers 0 and 1 own caches, layer 2 reads layer 1's.
cortiq.weight @embed : tensor<512x64xf32>
cortiq.weight @q0 : tensor<64x64xf32>
cortiq.weight @k0 : tensor<32x64xf32>
cortiq.weight @o0 : tensor<64x64xf32>
cortiq.weight @q1 : tensor<64x64xf32>
cortiq.weight @k1 : tensor<32x64xf32>
cortiq.weight @o1 : tensor<64x64xf32>
cortiq.weight @q2 : tensor<64x64xf32>
cortiq.weight @o2 : tensor<64x64xf32>
cortiq.kv_cache @kv_cache_0 layer 0 sliding kv_heads 2 head_dim 16
cortiq.kv_cache @kv_cache_1 layer 1 sliding kv_heads 2 head_dim 16
// CHECK-LABEL: func.func @decode_step
// TAPS-LABEL: func.func @decode_step
func.func @decode_step(%token: i32, %position: i32) -> tensor<512xf32> {
  // CHECK: %[[E:.*]] = cortiq.embedding @embed[%{{.*}}] scale 8.000000e+00 {cortiq.rows = "all"}
  %e = cortiq.embedding @embed[%token] scale 8.0 : tensor<64xf32>
  // Never read: no row needs it.
  // CHECK: cortiq.gelu_tanh %[[E]] {cortiq.rows = "logits"}
  // TAPS: cortiq.gelu_tanh %{{.*}} {cortiq.rows = "logits"}
  %dead = cortiq.gelu_tanh %e : tensor<64xf32>

  // Layer 0: all of it, its attention too, since its output feeds layer 1's keys.
  // CHECK: %[[X0:.*]] = cortiq.rms_norm %[[E]] group 64 {{.*}} {cortiq.rows = "all"}
  %x0 = cortiq.rms_norm %e group 64 eps 1.0e-6 : tensor<64xf32>
  // CHECK: %[[Q0:.*]] = cortiq.linear @q0(%[[X0]]) {cortiq.rows = "all"}
  %q0 = cortiq.linear @q0(%x0) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[K0:.*]] = cortiq.linear @k0(%[[X0]]) {cortiq.rows = "all"}
  %k0 = cortiq.linear @k0(%x0) : tensor<64xf32> -> tensor<32xf32>
  // CHECK: %[[V0:.*]] = cortiq.rms_norm %[[K0]] group 16 {{.*}} {cortiq.rows = "all"}
  %v0 = cortiq.rms_norm %k0 group 16 eps 1.0e-6 : tensor<32xf32>
  // CHECK: cortiq.kv_append %[[K0]], %[[V0]] into @kv_cache_0 at %{{.*}} {cortiq.rows = "all"}
  cortiq.kv_append %k0, %v0 into @kv_cache_0 at %position : tensor<32xf32>, tensor<32xf32>
  // CHECK: %[[A0:.*]] = cortiq.attention layer 0 sliding %[[Q0]] over @kv_cache_0 {{.*}} {cortiq.rows = "all"}
  %a0 = cortiq.attention layer 0 sliding %q0 over @kv_cache_0 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[P0:.*]] = cortiq.linear @o0(%[[A0]]) {cortiq.rows = "all"}
  %p0 = cortiq.linear @o0(%a0) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[H1:.*]] = cortiq.add %[[E]], %[[P0]] {cortiq.rows = "all"}
  %h1 = cortiq.add %e, %p0 : tensor<64xf32>
  // CHECK: %[[T0:.*]] = cortiq.layer_output 0, %[[H1]] {cortiq.rows = "all"}
  %t0 = cortiq.layer_output 0, %h1 : tensor<64xf32>

  // Layer 1: the path to its own keys and values on all rows, the rest on the logits rows.
  // CHECK: %[[X1:.*]] = cortiq.rms_norm %[[T0]] group 64 {{.*}} {cortiq.rows = "all"}
  %x1 = cortiq.rms_norm %t0 group 64 eps 1.0e-6 : tensor<64xf32>
  // CHECK: %[[Q1:.*]] = cortiq.linear @q1(%[[X1]]) {cortiq.rows = "logits"}
  %q1 = cortiq.linear @q1(%x1) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[K1:.*]] = cortiq.linear @k1(%[[X1]]) {cortiq.rows = "all"}
  %k1 = cortiq.linear @k1(%x1) : tensor<64xf32> -> tensor<32xf32>
  // CHECK: cortiq.kv_append %[[K1]], %[[K1]] into @kv_cache_1 at %{{.*}} {cortiq.rows = "all"}
  cortiq.kv_append %k1, %k1 into @kv_cache_1 at %position : tensor<32xf32>, tensor<32xf32>
  // CHECK: %[[A1:.*]] = cortiq.attention layer 1 sliding %[[Q1]] over @kv_cache_1 {{.*}} {cortiq.rows = "logits"}
  %a1 = cortiq.attention layer 1 sliding %q1 over @kv_cache_1 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[P1:.*]] = cortiq.linear @o1(%[[A1]]) {cortiq.rows = "logits"}
  %p1 = cortiq.linear @o1(%a1) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[H2:.*]] = cortiq.add %[[T0]], %[[P1]] {cortiq.rows = "logits"}
  %h2 = cortiq.add %t0, %p1 : tensor<64xf32>
  // CHECK: %[[T1:.*]] = cortiq.layer_output 1, %[[H2]] {cortiq.rows = "logits"}
  // TAPS: cortiq.layer_output 1, %{{.*}} {cortiq.rows = "all"}
  %t1 = cortiq.layer_output 1, %h2 : tensor<64xf32>

  // Layer 2, KV-shared: its attention reads layer 1's cache, filled on every row above.
  // CHECK: %[[X2:.*]] = cortiq.rms_norm %[[T1]] group 64 {{.*}} {cortiq.rows = "logits"}
  // TAPS: cortiq.rms_norm %{{.*}} group 64 {{.*}} {cortiq.rows = "all"}
  %x2 = cortiq.rms_norm %t1 group 64 eps 1.0e-6 : tensor<64xf32>
  // CHECK: %[[Q2:.*]] = cortiq.linear @q2(%[[X2]]) {cortiq.rows = "logits"}
  %q2 = cortiq.linear @q2(%x2) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[A2:.*]] = cortiq.attention layer 2 sliding %[[Q2]] over @kv_cache_1 {{.*}} {cortiq.rows = "logits"}
  // TAPS: cortiq.attention layer 2 sliding %{{.*}} over @kv_cache_1 {{.*}} {cortiq.rows = "all"}
  %a2 = cortiq.attention layer 2 sliding %q2 over @kv_cache_1 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[P2:.*]] = cortiq.linear @o2(%[[A2]]) {cortiq.rows = "logits"}
  %p2 = cortiq.linear @o2(%a2) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: %[[H3:.*]] = cortiq.add %[[T1]], %[[P2]] {cortiq.rows = "logits"}
  %h3 = cortiq.add %t1, %p2 : tensor<64xf32>
  // CHECK: %[[T2:.*]] = cortiq.layer_output 2, %[[H3]] {cortiq.rows = "logits"}
  // TAPS: cortiq.layer_output 2, %{{.*}} {cortiq.rows = "all"}
  %t2 = cortiq.layer_output 2, %h3 : tensor<64xf32>

  // The head reaches no cache and no tap: logits rows in both modes.
  // CHECK: %[[N:.*]] = cortiq.rms_norm %[[T2]] group 64 {{.*}} {cortiq.rows = "logits"}
  // TAPS: cortiq.rms_norm %{{.*}} group 64 {{.*}} {cortiq.rows = "logits"}
  %n = cortiq.rms_norm %t2 group 64 eps 1.0e-6 : tensor<64xf32>
  // CHECK: %[[RAW:.*]] = cortiq.lm_head @embed(%[[N]]) {cortiq.rows = "logits"}
  // TAPS: cortiq.lm_head @embed(%{{.*}}) {cortiq.rows = "logits"}
  %raw = cortiq.lm_head @embed(%n) : tensor<64xf32> -> tensor<512xf32>
  // CHECK: %[[OUT:.*]] = cortiq.softcap %[[RAW]] cap 3.000000e+01 {cortiq.rows = "logits"}
  %out = cortiq.softcap %raw cap 30.0 : tensor<512xf32>
  // The terminator carries no rows.
  // CHECK: return %[[OUT]] : tensor<512xf32>
  // CHECK-NOT: cortiq.rows
  return %out : tensor<512xf32>
}
// Linears per row: all = q0 + k0 + o0 + k1 = 2 * (4096 + 2048 + 4096 + 2048); logits = q1, o1,
// q2, o2 = 2 * 4 * 4096 (57.1% of 57344); lm_head 2 * 512 * 64.
// REPORT: remark: mark-rows: all rows: 13 ops, 24576 linear FLOPs per row; logits rows: 15 ops, 32768 linear FLOPs per row (57.1% of the linears); lm_head 65536 FLOPs per logits row

// -----

// A value read both by a cache append and by logits-only ops is computed on all rows; its other
// readers still run on the logits rows only.
cortiq.weight @w : tensor<32x32xf32>
cortiq.kv_cache @kv_cache_0 layer 0 full kv_heads 1 head_dim 32
// CHECK-LABEL: func.func @decode_step
func.func @decode_step(%token: i32, %position: i32) -> tensor<32xf32> {
  // CHECK: %[[E:.*]] = cortiq.embedding @w[%{{.*}}] scale 1.000000e+00 {cortiq.rows = "all"}
  %e = cortiq.embedding @w[%token] scale 1.0 : tensor<32xf32>
  // CHECK: %[[K:.*]] = cortiq.linear @w(%[[E]]) {cortiq.rows = "all"}
  %k = cortiq.linear @w(%e) : tensor<32xf32> -> tensor<32xf32>
  // CHECK: cortiq.kv_append %[[K]], %[[K]] into @kv_cache_0 {{.*}} {cortiq.rows = "all"}
  cortiq.kv_append %k, %k into @kv_cache_0 at %position : tensor<32xf32>, tensor<32xf32>
  // CHECK: cortiq.gelu_tanh %[[K]] {cortiq.rows = "logits"}
  %g = cortiq.gelu_tanh %k : tensor<32xf32>
  // CHECK: cortiq.attention layer 0 full %{{.*}} over @kv_cache_0 {{.*}} {cortiq.rows = "logits"}
  %a = cortiq.attention layer 0 full %g over @kv_cache_0 at %position heads 1 scale 1.0 : tensor<32xf32> -> tensor<32xf32>
  return %a : tensor<32xf32>
}
// REPORT: remark: mark-rows: all rows: 3 ops, 2048 linear FLOPs per row; logits rows: 2 ops, 0 linear FLOPs per row (0.0% of the linears); lm_head 0 FLOPs per logits row

// NOFUNC: error: mark-rows: no 'decode_step' function
