// Lowering of cortiq.attention: an attention step over the plan cache of the symbol it reads,
// with the head count, the window (sliding layers only; it also becomes the cache's window) and
// the scale. A KV-shared layer reads its source layer's cache: no cache of its own.
// RUN: cortiq-translate --cortiq-to-plan %s | FileCheck %s

module attributes {cortiq.model = {source = "attention", hidden_size = 64 : i64, num_hidden_layers = 3 : i64, max_position_embeddings = 4096 : i64}} {
  cortiq.weight @t stored(f32) : tensor<16x64xf32>
  cortiq.kv_cache @kv_cache_0 layer 0 sliding kv_heads 2 head_dim 16
  cortiq.kv_cache @kv_cache_1 layer 1 full kv_heads 2 head_dim 16
  func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
    %x = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
    %k = cortiq.slice %x[0] : tensor<64xf32> -> tensor<32xf32>
    %v = cortiq.slice %x[32] : tensor<64xf32> -> tensor<32xf32>
    cortiq.kv_append %k, %v into @kv_cache_0 at %position : tensor<32xf32>, tensor<32xf32>
    %o0 = cortiq.attention layer 0 sliding %x over @kv_cache_0 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
    %h0 = cortiq.layer_output 0, %o0 : tensor<64xf32>
    cortiq.kv_append %k, %v into @kv_cache_1 at %position : tensor<32xf32>, tensor<32xf32>
    %o1 = cortiq.attention layer 1 full %h0 over @kv_cache_1 at %position heads 4 scale 0.125 : tensor<64xf32> -> tensor<64xf32>
    %h1 = cortiq.layer_output 1, %o1 : tensor<64xf32>
    %o2 = cortiq.attention layer 2 sliding %h1 over @kv_cache_0 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
    %h2 = cortiq.layer_output 2, %o2 : tensor<64xf32>
    return %h2 : tensor<64xf32>
  }
}
// CHECK-LABEL: model "attention"
// CHECK: cache c0 layer 0 sliding window 8 kv_heads 2 head_dim 16
// CHECK-NEXT: cache c1 layer 1 full kv_heads 2 head_dim 16
// CHECK-NOT: cache
// CHECK: step 0 embedding table w0 -> [[X:b[0-9]+]]
// CHECK-NEXT: step 1 kv_append key {{b[0-9]+}} value {{b[0-9]+}} -> c0
// CHECK-NEXT: step 2 attention query [[X]] cache c0 -> [[O0:b[0-9]+]] num_heads 4 window 8 scale 1{{$}}
// CHECK-NEXT: step 3 kv_append key {{b[0-9]+}} value {{b[0-9]+}} -> c1
// CHECK-NEXT: step 4 attention query [[O0]] cache c1 -> [[O1:b[0-9]+]] num_heads 4 window 0 scale 0.125{{$}}
// The shared layer 2 reads layer 0's cache.
// CHECK-NEXT: step 5 attention query [[O1]] cache c0 -> [[O2:b[0-9]+]] num_heads 4 window 8 scale 1{{$}}
// CHECK-NEXT: tap "layer.0" [[O0]]
// CHECK-NEXT: tap "layer.1" [[O1]]
// CHECK-NEXT: tap "layer.2" [[O2]]
