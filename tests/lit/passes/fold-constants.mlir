// fold-constants: a scale before a norm goes into its epsilon, a scale of norm + lookup into the
// gain and the lookup's scale, consecutive scales multiply; a scale that nothing can absorb stays.
// RUN: cortiq-opt %s -split-input-file -fold-constants | FileCheck %s

cortiq.weight @proj : tensor<128x64xf32>
cortiq.weight @norm : tensor<16xbf16>
cortiq.weight @table : tensor<512x128xf32>
// CHECK: cortiq.weight @norm.scaled = scale(@norm) factor(0.707106769) : tensor<16xf32>
// CHECK-LABEL: func.func @per_layer_inputs
func.func @per_layer_inputs(%e: tensor<64xf32>, %token: i32) -> tensor<128xf32> {
  // CHECK: %[[P:.*]] = cortiq.linear @proj(%{{.*}})
  // CHECK-NEXT: %[[Z:.*]] = cortiq.rms_norm %[[P]] gain @norm.scaled group 16 eps 6.400000e-05
  // CHECK-NEXT: %[[R:.*]] = cortiq.embedding @table[%{{.*}}] scale 2.82842708
  // CHECK-NEXT: %[[U:.*]] = cortiq.add %[[Z]], %[[R]]
  // CHECK-NOT: cortiq.scale
  // CHECK: return %[[U]]
  %p = cortiq.linear @proj(%e) : tensor<64xf32> -> tensor<128xf32>
  %z = cortiq.scale %p by 0.125 : tensor<128xf32>
  %zn = cortiq.rms_norm %z gain @norm group 16 eps 1.0e-6 : tensor<128xf32>
  %r = cortiq.embedding @table[%token] scale 4.0 : tensor<128xf32>
  %s = cortiq.add %zn, %r : tensor<128xf32>
  %u = cortiq.scale %s by 0.707106769 : tensor<128xf32>
  return %u : tensor<128xf32>
}

// -----

// CHECK-LABEL: func.func @consecutive
func.func @consecutive(%x: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK: %[[S:.*]] = cortiq.scale %{{.*}} by 1.000000e+00
  // CHECK-NEXT: return %[[S]]
  %a = cortiq.scale %x by 0.5 : tensor<64xf32>
  %b = cortiq.scale %a by 2.0 : tensor<64xf32>
  return %b : tensor<64xf32>
}

// -----

// A negative factor cannot go into an epsilon; a scale of a value with another user stays.
// CHECK-LABEL: func.func @negative_and_shared
func.func @negative_and_shared(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  // CHECK: cortiq.scale %{{.*}} by -2.000000e+00
  // CHECK: cortiq.rms_norm %{{.*}} group 64 eps 9.99999997E-7
  // CHECK: cortiq.gelu_tanh
  // CHECK: cortiq.scale %{{.*}} by 3.000000e+00
  %a = cortiq.scale %x by -2.0 : tensor<64xf32>
  %n = cortiq.rms_norm %a group 64 eps 1.0e-6 : tensor<64xf32>
  %g = cortiq.gelu_tanh %x : tensor<64xf32>
  %b = cortiq.scale %g by 3.0 : tensor<64xf32>
  %c = cortiq.add %b, %g : tensor<64xf32>
  return %n, %c : tensor<64xf32>, tensor<64xf32>
}

// -----

// After assign-storage-formats, the derived gain (f32 values) is recorded as stored in f32.
cortiq.weight @norm stored(f32) : tensor<16xbf16>
cortiq.weight @table stored(q8_0) : tensor<512x128xf32>
// CHECK: cortiq.weight @norm.scaled = scale(@norm) factor(5.000000e-01) stored(f32) : tensor<16xf32>
// CHECK-LABEL: func.func @stored_formats
func.func @stored_formats(%z: tensor<128xf32>, %token: i32) -> tensor<128xf32> {
  // CHECK: cortiq.rms_norm %{{.*}} gain @norm.scaled group 16
  %zn = cortiq.rms_norm %z gain @norm group 16 eps 1.0e-6 : tensor<128xf32>
  %r = cortiq.embedding @table[%token] scale 4.0 : tensor<128xf32>
  %s = cortiq.add %zn, %r : tensor<128xf32>
  %u = cortiq.scale %s by 0.5 : tensor<128xf32>
  return %u : tensor<128xf32>
}
