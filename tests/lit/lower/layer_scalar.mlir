// Lowering of cortiq.layer_scalar: a layer_scalar step reading the one-element weight.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "layer_scalar", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  cortiq.weight @s stored(f32) : tensor<1xbf16>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %y = cortiq.layer_scalar %x by @s : tensor<64xf32>
    %h = cortiq.layer_output 0, %y : tensor<64xf32>
    return %h : tensor<64xf32>
  }
}
// CHECK-LABEL: model "layer_scalar"
// CHECK: weight [[S:w[0-9]+]] "s" f32 [1] 4 bytes
// CHECK: step 1 layer_scalar input [[X:b[0-9]+]] -> [[Y:b[0-9]+]] scalar [[S]]{{$}}
// CHECK-NEXT: tap "layer.0" [[Y]]
