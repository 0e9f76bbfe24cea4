// Lowering of cortiq.slice: no step, a view buffer inside its root's bytes (a slice of a slice is
// a view of the root too), at the offset plan-buffers gave it or at parent + 4 * offset.
// RUN: cortiq-translate --cortiq-to-plan -split-input-file %s | FileCheck %s

module attributes {cortiq.model = {source = "slice", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<16xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %a = cortiq.slice %x[32] : tensor<64xf32> -> tensor<32xf32>
    %b = cortiq.slice %a[16] : tensor<32xf32> -> tensor<16xf32>
    %h = cortiq.layer_output 0, %b : tensor<16xf32>
    return %h : tensor<16xf32>
  }
}
// CHECK-LABEL: model "slice"
// CHECK-NEXT: plan arena_bytes 256 max_batch 512 logits [[B:b[0-9]+]]
// CHECK: buffer [[X:b[0-9]+]] [64] at 0{{$}}
// CHECK-NEXT: buffer {{b[0-9]+}} [32] at 128 in [[X]]
// CHECK-NEXT: buffer [[B]] [16] at 192 in [[X]]
// CHECK-NEXT: step 0 embedding
// CHECK-NOT: step
// CHECK: tap "layer.0" [[B]]

// -----

// With plan-buffers' offsets: the arena is the planned one, and the view follows its parent.
module attributes {cortiq.arena_bytes = 512 : i64, cortiq.model = {source = "slice.planned", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<32xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 {cortiq.arena_offset = 256 : i64} : tensor<64xf32>
    %a = cortiq.slice %x[8] {cortiq.arena_offset = 288 : i64} : tensor<64xf32> -> tensor<32xf32>
    %h = cortiq.layer_output 0, %a {cortiq.arena_offset = 288 : i64} : tensor<32xf32>
    return %h : tensor<32xf32>
  }
}
// CHECK-LABEL: model "slice.planned"
// CHECK-NEXT: plan arena_bytes 512 max_batch 512 logits [[A:b[0-9]+]]
// CHECK: buffer [[X:b[0-9]+]] [64] at 256{{$}}
// CHECK-NEXT: buffer [[A]] [32] at 288 in [[X]]
