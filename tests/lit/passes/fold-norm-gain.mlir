// fold-norm-gain: a whole-vector gain moves into the columns of every linear reader; not when
// a reader is not a linear, when the norm is per group, or into a tied LM head.
// RUN: cortiq-opt %s -split-input-file -fold-norm-gain | FileCheck %s
// RUN: cortiq-opt %s -split-input-file -fold-norm-gain=allow-rounding=true | FileCheck %s --check-prefix=ROUND

cortiq.weight @g : tensor<64xf32>
cortiq.weight @q : tensor<64x64xf32>
cortiq.weight @k : tensor<32x64xf32>
// CHECK-DAG: cortiq.weight @q.gain = scale(@q) columns(@g) : tensor<64x64xf32>
// CHECK-DAG: cortiq.weight @k.gain = scale(@k) columns(@g) : tensor<32x64xf32>
// CHECK-LABEL: func.func @all_users_linear
func.func @all_users_linear(%h: tensor<64xf32>) -> (tensor<64xf32>, tensor<32xf32>) {
  // CHECK: %[[X:.*]] = cortiq.rms_norm %{{.*}} group 64 eps
  // CHECK-NOT: gain
  // CHECK: cortiq.linear @q.gain(%[[X]])
  // CHECK: cortiq.linear @k.gain(%[[X]])
  %x = cortiq.rms_norm %h gain @g group 64 eps 1.0e-6 : tensor<64xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  %k = cortiq.linear @k(%x) : tensor<64xf32> -> tensor<32xf32>
  return %q, %k : tensor<64xf32>, tensor<32xf32>
}

// -----

cortiq.weight @g : tensor<64xf32>
cortiq.weight @q : tensor<64x64xf32>
// CHECK-NOT: scale(
// CHECK-LABEL: func.func @non_linear_user
func.func @non_linear_user(%h: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // CHECK: cortiq.rms_norm %{{.*}} gain @g group 64
  // CHECK: cortiq.linear @q(
  %x = cortiq.rms_norm %h gain @g group 64 eps 1.0e-6 : tensor<64xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  %a = cortiq.add %x, %h : tensor<64xf32>
  return %q, %a : tensor<64xf32>, tensor<64xf32>
}

// -----

cortiq.weight @g : tensor<16xf32>
cortiq.weight @q : tensor<64x64xf32>
// CHECK-NOT: scale(
// CHECK-LABEL: func.func @per_head_norm
func.func @per_head_norm(%h: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK: cortiq.rms_norm %{{.*}} gain @g group 16
  %x = cortiq.rms_norm %h gain @g group 16 eps 1.0e-6 : tensor<64xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  return %q : tensor<64xf32>
}

// -----

// The tied LM head's table is also the embedding table: the final norm keeps its gain.
cortiq.weight @embed : tensor<512x64xf32>
cortiq.weight @norm : tensor<64xf32>
// CHECK-NOT: scale(
// CHECK-LABEL: func.func @tied_head
func.func @tied_head(%token: i32) -> tensor<512xf32> {
  %e = cortiq.embedding @embed[%token] scale 8.0 : tensor<64xf32>
  // CHECK: cortiq.rms_norm %{{.*}} gain @norm group 64
  // CHECK: cortiq.lm_head @embed(
  %hf = cortiq.rms_norm %e gain @norm group 64 eps 1.0e-6 : tensor<64xf32>
  %l = cortiq.lm_head @embed(%hf) : tensor<64xf32> -> tensor<512xf32>
  return %l : tensor<512xf32>
}

// -----

// An untied LM head folds like a linear.
cortiq.weight @head : tensor<512x64xf32>
cortiq.weight @norm : tensor<64xf32>
// CHECK: cortiq.weight @head.gain = scale(@head) columns(@norm) : tensor<512x64xf32>
// CHECK-LABEL: func.func @untied_head
func.func @untied_head(%h: tensor<64xf32>) -> tensor<512xf32> {
  // CHECK: cortiq.lm_head @head.gain(
  %hf = cortiq.rms_norm %h gain @norm group 64 eps 1.0e-6 : tensor<64xf32>
  %l = cortiq.lm_head @head(%hf) : tensor<64xf32> -> tensor<512xf32>
  return %l : tensor<512xf32>
}

// -----

// bf16 weights: W diag(g) is not representable, so only allow-rounding folds.
cortiq.weight @g : tensor<64xbf16>
cortiq.weight @q : tensor<64x64xbf16>
// CHECK-NOT: scale(
// ROUND: cortiq.weight @q.gain = scale(@q) columns(@g) : tensor<64x64xbf16>
// CHECK-LABEL: func.func @bf16_weights
func.func @bf16_weights(%h: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK: cortiq.rms_norm %{{.*}} gain @g group 64
  // ROUND: cortiq.rms_norm %{{.*}} group 64 eps
  // ROUND: cortiq.linear @q.gain(
  %x = cortiq.rms_norm %h gain @g group 64 eps 1.0e-6 : tensor<64xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  return %q : tensor<64xf32>
}

// -----

// f32 weights that cortiq-compile will quantize (stored(q8_0)) or store as an f32 copy:
// only the exact one is folded into; allow-rounding folds both and keeps the storage format.
cortiq.weight @g : tensor<64xf32>
cortiq.weight @q stored(q8_0) : tensor<64x64xf32>
cortiq.weight @k stored(f32) : tensor<32x64xf32>
cortiq.weight @v checkpoint(q4_0) : tensor<32x64xf32>
// CHECK-NOT: scale(
// ROUND-DAG: cortiq.weight @q.gain = scale(@q) columns(@g) stored(q8_0) : tensor<64x64xf32>
// ROUND-DAG: cortiq.weight @k.gain = scale(@k) columns(@g) stored(f32) : tensor<32x64xf32>
// ROUND-DAG: cortiq.weight @v.gain = scale(@v) columns(@g) stored(q4_0) : tensor<32x64xf32>
// CHECK-LABEL: func.func @stored_formats
func.func @stored_formats(%h: tensor<64xf32>) -> (tensor<64xf32>, tensor<32xf32>, tensor<32xf32>) {
  // CHECK: cortiq.rms_norm %{{.*}} gain @g group 64
  // CHECK: cortiq.linear @q(
  // CHECK: cortiq.linear @k(
  // CHECK: cortiq.linear @v(
  %x = cortiq.rms_norm %h gain @g group 64 eps 1.0e-6 : tensor<64xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  %k = cortiq.linear @k(%x) : tensor<64xf32> -> tensor<32xf32>
  %v = cortiq.linear @v(%x) : tensor<64xf32> -> tensor<32xf32>
  return %q, %k, %v : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>
}

// -----

// Every reader stored exactly as f32: folded.
cortiq.weight @g : tensor<64xf32>
cortiq.weight @q stored(f32) : tensor<64x64xf32>
// CHECK: cortiq.weight @q.gain = scale(@q) columns(@g) stored(f32) : tensor<64x64xf32>
// CHECK-LABEL: func.func @stored_f32
func.func @stored_f32(%h: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK: cortiq.linear @q.gain(
  %x = cortiq.rms_norm %h gain @g group 64 eps 1.0e-6 : tensor<64xf32>
  %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
  return %q : tensor<64xf32>
}
