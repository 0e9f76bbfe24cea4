// Lowering of cortiq.gelu_tanh_mul (fuse-elementwise): a gelu_tanh_mul step, gate then up.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "gelu_tanh_mul", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<32xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %gate = cortiq.slice %x[0] : tensor<64xf32> -> tensor<32xf32>
    %up = cortiq.slice %x[32] : tensor<64xf32> -> tensor<32xf32>
    %m = cortiq.gelu_tanh_mul %gate, %up : tensor<32xf32>
    %h = cortiq.layer_output 0, %m : tensor<32xf32>
    return %h : tensor<32xf32>
  }
}
// CHECK-LABEL: model "gelu_tanh_mul"
// CHECK: buffer [[GATE:b[0-9]+]] [32] at 0 in b0
// CHECK-NEXT: buffer [[UP:b[0-9]+]] [32] at 128 in b0
// CHECK: step 1 gelu_tanh_mul gate [[GATE]] up [[UP]] -> [[M:b[0-9]+]]{{$}}
// CHECK-NEXT: tap "layer.0" [[M]]
