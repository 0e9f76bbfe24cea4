// Every cortiq op prints, parses back and prints identically.
// RUN: cortiq-opt %s | cortiq-opt | FileCheck %s
// RUN: cortiq-opt %s | cortiq-opt > %t.1 && cortiq-opt %s > %t.0 && diff %t.0 %t.1

// CHECK: cortiq.weight @model.language_model.embed_tokens.weight : tensor<512x64xf32>
cortiq.weight @"model.language_model.embed_tokens.weight" : tensor<512x64xf32>
// CHECK: cortiq.weight @q_proj : tensor<64x64xbf16>
cortiq.weight @q_proj : tensor<64x64xbf16>
// CHECK: cortiq.weight @k_proj : tensor<32x64xf16>
cortiq.weight @k_proj : tensor<32x64xf16>
cortiq.weight @q_norm : tensor<16xf32>
cortiq.weight @ple : tensor<512x128xbf16>
cortiq.weight @layer_scalar : tensor<1xf32>
// CHECK: cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 2 head_dim 16
cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 2 head_dim 16
// CHECK: cortiq.kv_cache @kv_cache_3 layer 3 full kv_heads 2 head_dim 32
cortiq.kv_cache @kv_cache_3 layer 3 full kv_heads 2 head_dim 32

// CHECK-LABEL: func.func @decode_step
func.func @decode_step(%token: i32, %position: i32) -> tensor<512xf32> {
  // CHECK: %[[E:.*]] = cortiq.embedding @model.language_model.embed_tokens.weight[%{{.*}}] scale 8.000000e+00 : tensor<64xf32>
  %e = cortiq.embedding @"model.language_model.embed_tokens.weight"[%token] scale 8.0 : tensor<64xf32>
  // CHECK: cortiq.embedding @ple[%{{.*}}] scale 4.000000e+00 : tensor<128xf32>
  %r = cortiq.embedding @ple[%token] scale 4.0 : tensor<128xf32>
  // CHECK: %[[Q:.*]] = cortiq.linear @q_proj(%[[E]]) : tensor<64xf32> -> tensor<64xf32>
  %q = cortiq.linear @q_proj(%e) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: cortiq.rms_norm %[[Q]] gain @q_norm group 16 eps 9.99999997E-7 : tensor<64xf32>
  %qn = cortiq.rms_norm %q gain @q_norm group 16 eps 1.0e-6 : tensor<64xf32>
  // CHECK: cortiq.rope default %{{.*}} at %{{.*}} theta 1.000000e+04 head_dim 16 pairs 8 : tensor<64xf32>
  %qr = cortiq.rope default %qn at %position theta 1.0e4 head_dim 16 pairs 8 : tensor<64xf32>
  %k = cortiq.linear @k_proj(%e) : tensor<64xf32> -> tensor<32xf32>
  // CHECK: cortiq.rms_norm %{{.*}} group 16 eps 9.99999997E-7 : tensor<32xf32>
  %v = cortiq.rms_norm %k group 16 eps 1.0e-6 : tensor<32xf32>
  // CHECK: cortiq.kv_append %{{.*}}, %{{.*}} into @kv_cache_2 at %{{.*}} : tensor<32xf32>, tensor<32xf32>
  cortiq.kv_append %k, %v into @kv_cache_2 at %position : tensor<32xf32>, tensor<32xf32>
  // CHECK: cortiq.attention layer 6 sliding %{{.*}} over @kv_cache_2 at %{{.*}} heads 4 window 8 scale 1.000000e+00 : tensor<64xf32> -> tensor<64xf32>
  %o = cortiq.attention layer 6 sliding %qr over @kv_cache_2 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  %kf = cortiq.linear @q_proj(%e) : tensor<64xf32> -> tensor<64xf32>
  // CHECK: cortiq.rope proportional %{{.*}} at %{{.*}} theta 1.000000e+06 head_dim 32 pairs 4 : tensor<64xf32>
  %kr = cortiq.rope proportional %kf at %position theta 1.0e6 head_dim 32 pairs 4 : tensor<64xf32>
  cortiq.kv_append %kr, %kr into @kv_cache_3 at %position : tensor<64xf32>, tensor<64xf32>
  %q4 = cortiq.linear @"model.language_model.embed_tokens.weight"(%e) : tensor<64xf32> -> tensor<512xf32>
  %q5 = cortiq.slice %q4[0] : tensor<512xf32> -> tensor<128xf32>
  // CHECK: cortiq.attention layer 7 full %{{.*}} over @kv_cache_3 at %{{.*}} heads 4 scale 1.000000e+00 : tensor<128xf32> -> tensor<128xf32>
  %of = cortiq.attention layer 7 full %q5 over @kv_cache_3 at %position heads 4 scale 1.0 : tensor<128xf32> -> tensor<128xf32>
  // CHECK: cortiq.gelu_tanh %{{.*}} : tensor<64xf32>
  %g = cortiq.gelu_tanh %o : tensor<64xf32>
  // CHECK: cortiq.mul %{{.*}}, %{{.*}} : tensor<64xf32>
  %m = cortiq.mul %g, %o : tensor<64xf32>
  // CHECK: cortiq.add %{{.*}}, %{{.*}} : tensor<64xf32>
  %a = cortiq.add %m, %e : tensor<64xf32>
  // CHECK: cortiq.scale %{{.*}} by 0.707106769 : tensor<64xf32>
  %s = cortiq.scale %a by 0.707106769 : tensor<64xf32>
  // CHECK: cortiq.slice %{{.*}}[16] : tensor<128xf32> -> tensor<16xf32>
  %u = cortiq.slice %r[16] : tensor<128xf32> -> tensor<16xf32>
  // CHECK: cortiq.layer_scalar %{{.*}} by @layer_scalar : tensor<64xf32>
  %l = cortiq.layer_scalar %s by @layer_scalar : tensor<64xf32>
  // CHECK: cortiq.layer_output 6, %{{.*}} : tensor<64xf32>
  %h = cortiq.layer_output 6, %l : tensor<64xf32>
  // CHECK: cortiq.lm_head @model.language_model.embed_tokens.weight(%{{.*}}) : tensor<64xf32> -> tensor<512xf32>
  %raw = cortiq.lm_head @"model.language_model.embed_tokens.weight"(%h) : tensor<64xf32> -> tensor<512xf32>
  // CHECK: cortiq.softcap %{{.*}} cap 3.000000e+01 : tensor<512xf32>
  %out = cortiq.softcap %raw cap 30.0 : tensor<512xf32>
  return %out : tensor<512xf32>
}
