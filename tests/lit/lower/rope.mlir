// Lowering of cortiq.rope: a rope step with head_dim, the rotated pairs (all of them for the
// default variant, the first ones for the proportional one) and theta in f64.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "rope", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x128xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<128xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<128xf32>
    %d = cortiq.rope default %x at %position theta 1.0e4 head_dim 16 pairs 8 : tensor<128xf32>
    %p = cortiq.rope proportional %d at %position theta 1.0e6 head_dim 32 pairs 4 : tensor<128xf32>
    %h = cortiq.layer_output 0, %p : tensor<128xf32>
    return %h : tensor<128xf32>
  }
}
// CHECK-LABEL: model "rope"
// CHECK: step 0 embedding table w0 -> [[X:b[0-9]+]]
// CHECK-NEXT: step 1 rope input [[X]] -> [[D:b[0-9]+]] head_dim 16 rotated_pairs 8 theta 10000{{$}}
// CHECK-NEXT: step 2 rope input [[D]] -> [[P:b[0-9]+]] head_dim 32 rotated_pairs 4 theta 1000000{{$}}
// CHECK-NEXT: tap "layer.0" [[P]]
