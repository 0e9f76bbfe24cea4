// Lowering of cortiq.kv_cache and cortiq.kv_append: one plan cache per cache symbol appended to,
// in order of first use, and a kv_append step writing the key and value buffers into it. An
// append is needed for every token (never logits_only), and so is what feeds it.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "kv_append", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  cortiq.kv_cache @kv_cache_1 layer 1 full kv_heads 1 head_dim 32
  cortiq.kv_cache @kv_cache_0 layer 0 full kv_heads 2 head_dim 16
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %k = cortiq.slice %x[0] : tensor<64xf32> -> tensor<32xf32>
    %v = cortiq.slice %x[32] : tensor<64xf32> -> tensor<32xf32>
    cortiq.kv_append %k, %v into @kv_cache_0 at %position : tensor<32xf32>, tensor<32xf32>
    cortiq.kv_append %v, %k into @kv_cache_1 at %position : tensor<32xf32>, tensor<32xf32>
    return %x : tensor<64xf32>
  }
}
// CHECK-LABEL: model "kv_append"
// CHECK: cache c0 layer 0 full kv_heads 2 head_dim 16
// CHECK-NEXT: cache c1 layer 1 full kv_heads 1 head_dim 32
// CHECK-NEXT: step 0 embedding table w0 -> [[X:b[0-9]+]] scale 1{{$}}
// CHECK-NEXT: step 1 kv_append key [[K:b[0-9]+]] value [[V:b[0-9]+]] -> c0{{$}}
// CHECK-NEXT: step 2 kv_append key [[V]] value [[K]] -> c1{{$}}
// CHECK-NOT: step
