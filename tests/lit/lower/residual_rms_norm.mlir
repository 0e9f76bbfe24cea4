// Lowering of cortiq.residual_rms_norm (fuse-elementwise): a residual_rms_norm step with the
// residual, the update, the norm's gain (or none), the layer_scalar weight (or none), the group
// size and epsilon.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "residual_rms_norm", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  cortiq.weight @g stored(f32) : tensor<64xf32>
  cortiq.weight @s stored(f32) : tensor<1xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %h = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %u = cortiq.embedding @t[%token] scale 2.0 : tensor<64xf32>
    %a = cortiq.residual_rms_norm %h, %u gain @g group 64 eps 1.0e-6 : tensor<64xf32>
    %b = cortiq.residual_rms_norm %a, %u gain @g scalar @s group 64 eps 1.0e-6 : tensor<64xf32>
    %c = cortiq.residual_rms_norm %b, %u group 16 eps 1.0e-5 : tensor<64xf32>
    %o = cortiq.layer_output 0, %c : tensor<64xf32>
    return %o : tensor<64xf32>
  }
}
// CHECK-LABEL: model "residual_rms_norm"
// CHECK: weight [[G:w[0-9]+]] "g" f32 [64] 256 bytes
// CHECK-NEXT: weight [[S:w[0-9]+]] "s" f32 [1] 4 bytes
// CHECK: step 0 embedding table w0 -> [[H:b[0-9]+]] scale 1{{$}}
// CHECK-NEXT: step 1 embedding table w0 -> [[U:b[0-9]+]] scale 2{{$}}
// CHECK-NEXT: step 2 residual_rms_norm residual [[H]] update [[U]] -> [[A:b[0-9]+]] gain [[G]] group_size 64 eps 9.99999997e-07{{$}}
// CHECK-NEXT: step 3 residual_rms_norm residual [[A]] update [[U]] -> [[B:b[0-9]+]] gain [[G]] scalar [[S]] group_size 64 eps 9.99999997e-07{{$}}
// CHECK-NEXT: step 4 residual_rms_norm residual [[B]] update [[U]] -> [[C:b[0-9]+]] group_size 16 eps 9.99999975e-06{{$}}
// CHECK-NEXT: tap "layer.0" [[C]]
