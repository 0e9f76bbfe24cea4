// Lowering of the elementwise ops cortiq.gelu_tanh, cortiq.mul, cortiq.add and cortiq.scale: one
// step each, over their operands' buffers.
// RUN: cortiq-translate --cortiq-to-plan -split-input-file %s | FileCheck %s

module attributes {cortiq.model = {source = "gelu_tanh", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %g = cortiq.gelu_tanh %x : tensor<64xf32>
    %h = cortiq.layer_output 0, %g : tensor<64xf32>
    return %h : tensor<64xf32>
  }
}
// CHECK-LABEL: model "gelu_tanh"
// CHECK: step 0 embedding table w0 -> [[X:b[0-9]+]]
// CHECK-NEXT: step 1 gelu_tanh input [[X]] -> [[G:b[0-9]+]]{{$}}
// CHECK-NEXT: tap "layer.0" [[G]]

// -----

module attributes {cortiq.model = {source = "mul", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<32xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %a = cortiq.slice %x[0] : tensor<64xf32> -> tensor<32xf32>
    %b = cortiq.slice %x[32] : tensor<64xf32> -> tensor<32xf32>
    %m = cortiq.mul %b, %a : tensor<32xf32>
    %h = cortiq.layer_output 0, %m : tensor<32xf32>
    return %h : tensor<32xf32>
  }
}
// CHECK-LABEL: model "mul"
// CHECK: buffer [[A:b[0-9]+]] [32] at 0 in b0
// CHECK-NEXT: buffer [[B:b[0-9]+]] [32] at 128 in b0
// CHECK: step 1 mul lhs [[B]] rhs [[A]] -> [[M:b[0-9]+]]{{$}}
// CHECK-NEXT: tap "layer.0" [[M]]

// -----

module attributes {cortiq.model = {source = "add", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  cortiq.weight @u stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %y = cortiq.embedding @u[%token] scale 0.5 : tensor<64xf32>
    %s = cortiq.add %x, %y : tensor<64xf32>
    %h = cortiq.layer_output 0, %s : tensor<64xf32>
    return %h : tensor<64xf32>
  }
}
// CHECK-LABEL: model "add"
// CHECK: step 0 embedding table w0 -> [[X:b[0-9]+]] scale 1{{$}}
// CHECK-NEXT: step 1 embedding table w1 -> [[Y:b[0-9]+]] scale 0.5{{$}}
// CHECK-NEXT: step 2 add lhs [[X]] rhs [[Y]] -> [[S:b[0-9]+]]{{$}}
// CHECK-NEXT: tap "layer.0" [[S]]

// -----

module attributes {cortiq.model = {source = "scale", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %s = cortiq.scale %x by 0.707106769 : tensor<64xf32>
    %h = cortiq.layer_output 0, %s : tensor<64xf32>
    return %h : tensor<64xf32>
  }
}
// CHECK-LABEL: model "scale"
// CHECK: step 1 scale input [[X:b[0-9]+]] -> [[S:b[0-9]+]] factor 0.707106769{{$}}
// CHECK-NEXT: tap "layer.0" [[S]]
