// fuse-elementwise: gelu·mul, residual + norm (+ layer_scalar) become single steps; not when
// the intermediate has another user.
// RUN: cortiq-opt %s -split-input-file -fuse-elementwise | FileCheck %s

cortiq.weight @post_norm : tensor<64xf32>
cortiq.weight @scalar : tensor<1xf32>
// CHECK-LABEL: func.func @layer_tail
func.func @layer_tail(%h: tensor<64xf32>, %c: tensor<64xf32>, %g: tensor<16xf32>, %u: tensor<16xf32>) -> (tensor<64xf32>, tensor<16xf32>) {
  // CHECK: %[[M:.*]] = cortiq.gelu_tanh_mul %{{.*}}, %{{.*}} : tensor<16xf32>
  // CHECK: %[[R:.*]] = cortiq.residual_rms_norm %{{.*}}, %{{.*}} gain @post_norm scalar @scalar group 64 eps 9.99999997E-7 : tensor<64xf32>
  // CHECK-NOT: cortiq.add
  // CHECK-NOT: cortiq.layer_scalar
  // CHECK: return %[[R]], %[[M]]
  %gg = cortiq.gelu_tanh %g : tensor<16xf32>
  %m = cortiq.mul %gg, %u : tensor<16xf32>
  %n = cortiq.rms_norm %c gain @post_norm group 64 eps 1.0e-6 : tensor<64xf32>
  %h2 = cortiq.add %h, %n : tensor<64xf32>
  %h3 = cortiq.layer_scalar %h2 by @scalar : tensor<64xf32>
  return %h3, %m : tensor<64xf32>, tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @norm_first_operand
func.func @norm_first_operand(%h: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
  // CHECK: cortiq.residual_rms_norm %arg0, %arg1 group 64
  %n = cortiq.rms_norm %c group 64 eps 1.0e-6 : tensor<64xf32>
  %h2 = cortiq.add %n, %h : tensor<64xf32>
  return %h2 : tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @shared_intermediates
func.func @shared_intermediates(%h: tensor<64xf32>, %c: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  // CHECK: cortiq.gelu_tanh
  // CHECK: cortiq.mul
  // CHECK: cortiq.rms_norm
  // CHECK: cortiq.add
  // CHECK-NOT: gelu_tanh_mul
  // CHECK-NOT: residual_rms_norm
  %g = cortiq.gelu_tanh %c : tensor<64xf32>
  %m = cortiq.mul %g, %h : tensor<64xf32>
  %n = cortiq.rms_norm %c group 64 eps 1.0e-6 : tensor<64xf32>
  %a = cortiq.add %h, %n : tensor<64xf32>
  %b = cortiq.add %g, %n : tensor<64xf32>
  return %m, %a, %b : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
