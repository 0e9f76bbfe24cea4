// Derived weights and the fused ops print, parse back and print identically.
// RUN: cortiq-opt %s | cortiq-opt | FileCheck %s
// RUN: cortiq-opt %s | cortiq-opt > %t.1 && cortiq-opt %s > %t.0 && diff %t.0 %t.1

cortiq.weight @q : tensor<64x64xbf16>
cortiq.weight @k : tensor<32x64xbf16>
cortiq.weight @g : tensor<64xf32>
cortiq.weight @s : tensor<1xbf16>
// CHECK: cortiq.weight @q.g = scale(@q) columns(@g) : tensor<64x64xbf16>
cortiq.weight @q.g = scale(@q) columns(@g) : tensor<64x64xbf16>
// CHECK: cortiq.weight @k.g = scale(@k) columns(@g) factor(5.000000e-01) : tensor<32x64xbf16>
cortiq.weight @k.g = scale(@k) columns(@g) factor(0.5) : tensor<32x64xbf16>
// CHECK: cortiq.weight @g.half = scale(@g) factor(0.707106769) : tensor<64xf32>
cortiq.weight @g.half = scale(@g) factor(0.707106769) : tensor<64xf32>
// CHECK: cortiq.weight @qk = concat_rows(@q.g, @k.g) : tensor<96x64xbf16>
cortiq.weight @qk = concat_rows(@q.g, @k.g) : tensor<96x64xbf16>

// CHECK-LABEL: func.func @fused
func.func @fused(%h: tensor<64xf32>, %x: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK: %[[Y:.*]] = cortiq.linear @qk(%{{.*}}) : tensor<64xf32> -> tensor<96xf32>
  %y = cortiq.linear @qk(%x) : tensor<64xf32> -> tensor<96xf32>
  // CHECK: %[[M:.*]] = cortiq.gelu_tanh_mul %{{.*}}, %{{.*}} : tensor<64xf32>
  %m = cortiq.gelu_tanh_mul %h, %x : tensor<64xf32>
  // CHECK: cortiq.residual_rms_norm %{{.*}}, %[[M]] gain @g.half group 64 eps 9.99999997E-7 : tensor<64xf32>
  %r = cortiq.residual_rms_norm %h, %m gain @g.half group 64 eps 1.0e-6 : tensor<64xf32>
  // CHECK: cortiq.residual_rms_norm %{{.*}}, %{{.*}} gain @g scalar @s group 64 eps 9.99999997E-7 : tensor<64xf32>
  %o = cortiq.residual_rms_norm %r, %m gain @g scalar @s group 64 eps 1.0e-6 : tensor<64xf32>
  // CHECK: cortiq.residual_rms_norm %{{.*}}, %{{.*}} group 16 eps 9.99999997E-7 : tensor<64xf32>
  %n = cortiq.residual_rms_norm %o, %m group 16 eps 1.0e-6 : tensor<64xf32>
  return %n : tensor<64xf32>
}

// Storage formats: the checkpoint's block format, then the artifact's.
// CHECK: cortiq.weight @blocks checkpoint(q4_0) stored(q4_0) : tensor<32x64xf32>
cortiq.weight @blocks checkpoint(q4_0) stored(q4_0) : tensor<32x64xf32>
// CHECK: cortiq.weight @requantized checkpoint(q4_0) stored(q8_0) : tensor<32x64xf32>
cortiq.weight @requantized checkpoint(q4_0) stored(q8_0) : tensor<32x64xf32>
// CHECK: cortiq.weight @rounded stored(bf16) : tensor<32x64xf32>
cortiq.weight @rounded stored(bf16) : tensor<32x64xf32>
// CHECK: cortiq.weight @k.q = scale(@k) columns(@g) stored(f32) : tensor<32x64xbf16>
cortiq.weight @k.q = scale(@k) columns(@g) stored(f32) : tensor<32x64xbf16>
// CHECK: cortiq.weight @kq = concat_rows(@blocks, @requantized) stored(q8_0) : tensor<64x64xf32>
cortiq.weight @kq = concat_rows(@blocks, @requantized) stored(q8_0) : tensor<64x64xf32>
