// Lowering of cortiq.layer_output: no step, a tap named "layer.N" on the buffer of its input.
// Everything a layer output depends on runs for every token; the rest is logits_only.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "layer_output", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %h0 = cortiq.layer_output 0, %x : tensor<64xf32>
    %g = cortiq.gelu_tanh %h0 : tensor<64xf32>
    %h2 = cortiq.layer_output 2, %g : tensor<64xf32>
    %s = cortiq.scale %h2 by 2.0 : tensor<64xf32>
    return %s : tensor<64xf32>
  }
}
// CHECK-LABEL: model "layer_output"
// CHECK: step 0 embedding table w0 -> [[X:b[0-9]+]] scale 1{{$}}
// CHECK-NEXT: step 1 gelu_tanh input [[X]] -> [[G:b[0-9]+]]{{$}}
// CHECK-NEXT: step 2 scale input [[G]] -> {{b[0-9]+}} factor 2 logits_only
// CHECK-NEXT: tap "layer.0" [[X]]
// CHECK-NEXT: tap "layer.2" [[G]]
// CHECK-NOT: tap
