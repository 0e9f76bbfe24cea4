// Lowering of cortiq.embedding: an embedding step reading row `token` of the table times
// `scale`; the model facts come from cortiq.model, vocab_size from the returned logits.
// RUN: cortiq-translate --cortiq-to-plan -split-input-file %s | FileCheck %s

module attributes {cortiq.model = {source = "embedding", hidden_size = 8 : i64, num_hidden_layers = 1 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @table stored(bf16) : tensor<16x8xbf16>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<8xf32> {
    %e = cortiq.embedding @table[%token] scale 2.828427 : tensor<8xf32>
    return %e : tensor<8xf32>
  }
}
// CHECK-LABEL: model "embedding" vocab_size 8 hidden_size 8 num_hidden_layers 1 max_position_embeddings 4096
// CHECK-NEXT: plan arena_bytes 64 max_batch 512 logits [[E:b[0-9]+]]
// CHECK-NEXT: weight [[T:w[0-9]+]] "table" bf16 [16, 8] 256 bytes
// CHECK-NEXT: buffer [[E]] [8] at 0
// A step that feeds no KV append and no layer output is needed only for the logits.
// CHECK-NEXT: step 0 embedding table [[T]] -> [[E]] scale 2.82842708 logits_only
// CHECK-NOT: step

// -----

// Feeding a layer output, the lookup runs for every token; a q8_0 table is stored as blocks.
module attributes {cortiq.model = {source = "embedding.q8_0", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @table stored(q8_0) : tensor<16x32xf32>
  func.func @decode_step(%token: i32, %position: i32) -> tensor<32xf32> {
    %e = cortiq.embedding @table[%token] scale 1.0 : tensor<32xf32>
    %h = cortiq.layer_output 0, %e : tensor<32xf32>
    return %h : tensor<32xf32>
  }
}
// CHECK-LABEL: model "embedding.q8_0" vocab_size 32 hidden_size 64
// CHECK-NEXT: plan arena_bytes 128 max_batch 512 logits b0
// CHECK-NEXT: weight [[T:w[0-9]+]] "table" q8_0 [16, 32] 544 bytes
// CHECK: step 0 embedding table [[T]] -> b0 scale 1{{$}}
