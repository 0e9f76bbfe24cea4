// Lowering of cortiq.rms_norm: a rms_norm step with its gain weight (or none: v_norm), the group
// size and epsilon.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "rms_norm", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  cortiq.weight @g stored(f32) : tensor<16xbf16>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %n = cortiq.rms_norm %x gain @g group 16 eps 1.0e-6 : tensor<64xf32>
    %v = cortiq.rms_norm %n group 64 eps 0.0 : tensor<64xf32>
    %h = cortiq.layer_output 0, %v : tensor<64xf32>
    return %h : tensor<64xf32>
  }
}
// CHECK-LABEL: model "rms_norm"
// The gain is stored as recorded (f32), whatever its element type.
// CHECK: weight [[G:w[0-9]+]] "g" f32 [16] 64 bytes
// CHECK: step 0 embedding table w0 -> [[X:b[0-9]+]]
// CHECK-NEXT: step 1 rms_norm input [[X]] -> [[N:b[0-9]+]] gain [[G]] group_size 16 eps 9.99999997e-07{{$}}
// CHECK-NEXT: step 2 rms_norm input [[N]] -> [[V:b[0-9]+]] group_size 64 eps 0{{$}}
// CHECK-NEXT: tap "layer.0" [[V]]
