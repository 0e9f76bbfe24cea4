// Lowering of cortiq.linear: a linear step over the weight in its stored format; each value gets
// its own 64-byte-aligned buffer when plan-buffers did not run.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "linear", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  cortiq.weight @w stored(q8_0) : tensor<32x64xf32>
  cortiq.weight @b stored(bf16) : tensor<64x32xbf16>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %y = cortiq.linear @w(%x) : tensor<64xf32> -> tensor<32xf32>
    %z = cortiq.linear @b(%y) : tensor<32xf32> -> tensor<64xf32>
    %h = cortiq.layer_output 0, %z : tensor<64xf32>
    return %h : tensor<64xf32>
  }
}
// CHECK-LABEL: model "linear" vocab_size 64
// CHECK-NEXT: plan arena_bytes 640 max_batch 512 logits [[Z:b[0-9]+]]
// CHECK-NEXT: weight [[T:w[0-9]+]] "t" f32 [16, 64] 4096 bytes
// 32 rows of two 34-byte Q8_0 blocks:
// CHECK-NEXT: weight [[W:w[0-9]+]] "w" q8_0 [32, 64] 2176 bytes
// CHECK-NEXT: weight [[B:w[0-9]+]] "b" bf16 [64, 32] 4096 bytes
// CHECK-NEXT: buffer [[X:b[0-9]+]] [64] at 0
// CHECK-NEXT: buffer [[Y:b[0-9]+]] [32] at 256
// CHECK-NEXT: buffer [[Z]] [64] at 384
// CHECK-NEXT: step 0 embedding table [[T]] -> [[X]] scale 1{{$}}
// CHECK-NEXT: step 1 linear input [[X]] -> [[Y]] weight [[W]]{{$}}
// CHECK-NEXT: step 2 linear input [[Y]] -> [[Z]] weight [[B]]{{$}}
// CHECK-NEXT: tap "layer.0" [[Z]]
