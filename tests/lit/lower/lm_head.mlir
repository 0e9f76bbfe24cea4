// Lowering of cortiq.lm_head and cortiq.softcap: the tied table read by the embedding and the
// LM head is one weight entry; the final norm, LM head and softcap run only when the logits are
// wanted (logits_only), and the softcapped logits are the plan's logits buffer.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "lm_head", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @embed stored(q8_0) : tensor<512x64xf32>
  cortiq.weight @norm stored(f32) : tensor<64xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<512xf32> {
    %x = cortiq.embedding @embed[%token] scale 8.0 : tensor<64xf32>
    %h = cortiq.layer_output 0, %x : tensor<64xf32>
    %n = cortiq.rms_norm %h gain @norm group 64 eps 1.0e-6 : tensor<64xf32>
    %raw = cortiq.lm_head @embed(%n) : tensor<64xf32> -> tensor<512xf32>
    %l = cortiq.softcap %raw cap 30.0 : tensor<512xf32>
    return %l : tensor<512xf32>
  }
}
// CHECK-LABEL: model "lm_head" vocab_size 512
// CHECK-NEXT: plan arena_bytes {{[0-9]+}} max_batch 512 logits [[L:b[0-9]+]]
// 512 rows of two 34-byte Q8_0 blocks:
// CHECK-NEXT: weight [[E:w[0-9]+]] "embed" q8_0 [512, 64] 34816 bytes
// CHECK-NEXT: weight [[G:w[0-9]+]] "norm" f32 [64] 256 bytes
// CHECK-NOT: weight
// CHECK: step 0 embedding table [[E]] -> [[X:b[0-9]+]] scale 8{{$}}
// CHECK-NEXT: step 1 rms_norm input [[X]] -> [[N:b[0-9]+]] gain [[G]] group_size 64 eps 9.99999997e-07 logits_only
// CHECK-NEXT: step 2 lm_head input [[N]] -> [[RAW:b[0-9]+]] table [[E]] logits_only
// CHECK-NEXT: step 3 softcap input [[RAW]] -> [[L]] cap 30 logits_only
