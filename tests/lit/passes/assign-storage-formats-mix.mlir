// assign-storage-formats mix=: llama-quantize's per-tensor types without an importance matrix
// (llama_tensor_get_type in llama.cpp's src/llama-quant.cpp) on an 8-layer model, where
// use_more_bits(i, 8) picks layers 0, 3, 6 and 7 (i < n/8, i >= 7n/8, (i - n/8) % 3 == 2):
// - q4_k_m / q5_k_m: the tables Q6_K; attn_v and ffn_down Q6_K in those layers, else the base;
// - q3_k_m: attn_v Q5_K in layers 0-1, else Q4_K; ffn_down Q4_K (Q5_K only below n/16 = 0);
//   attn_output Q4_K; the rest Q3_K;
// - q4_k_s: attn_v Q5_K in layers 0-3, ffn_down Q5_K below n/8 (layer 0); q5_k_s: the base;
// - per_layer_model_projection keeps its checkpoint format, 1-D weights f32, rows of 64 weights
//   (no whole super-block) take the base type's fallback (q4_k -> q5_0, q3_k -> q4_0,
//   q5_k -> q5_1); `tables` still overrides the tables. (q4_kx16=false q5_kx16=false: the
//   mix's own types; by default q4_k / q5_k on rows of whole 512-weight groups is stored
//   q4_kx16 / q5_kx16, Q4KMX16, Q5KSX16.)
// Q5KSX16: cortiq.weight @layers.1.mlp.down_proj.weight stored(q5_kx16) : tensor<256x512xbf16>
// Q4KMX16: cortiq.weight @layers.1.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KMX16: cortiq.weight @layers.1.mlp.down_proj.weight stored(q4_kx16) : tensor<256x512xbf16>
// RUN: cortiq-opt %s -assign-storage-formats='mix=q4_k_m q4_kx16=false q5_kx16=false' | FileCheck %s --check-prefix=Q4KM
// RUN: cortiq-opt %s -assign-storage-formats='mix=q5_k_m q4_kx16=false q5_kx16=false' | FileCheck %s --check-prefix=Q5KM
// RUN: cortiq-opt %s -assign-storage-formats='mix=q3_k_m q4_kx16=false q5_kx16=false' | FileCheck %s --check-prefix=Q3KM
// RUN: cortiq-opt %s -assign-storage-formats='mix=q4_k_s q4_kx16=false q5_kx16=false' | FileCheck %s --check-prefix=Q4KS
// RUN: cortiq-opt %s -assign-storage-formats='mix=q5_k_s q4_kx16=false q5_kx16=false' | FileCheck %s --check-prefix=Q5KS
// RUN: cortiq-opt %s -assign-storage-formats='mix=q4_k_m tables=q8_0 q4_kx16=false q5_kx16=false' | FileCheck %s --check-prefix=TABLES
// RUN: cortiq-opt %s -assign-storage-formats='mix=q4_k_m' | FileCheck %s --check-prefix=Q4KMX16
// RUN: cortiq-opt %s -assign-storage-formats='mix=q5_k_s' | FileCheck %s --check-prefix=Q5KSX16
// RUN: not cortiq-opt %s -assign-storage-formats='mix=q4_k_l q4_kx16=false q5_kx16=false' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: assign-storage-formats: mix must be q3_k_m, q4_k_s, q4_k_m, q5_k_s or q5_k_m, not 'q4_k_l'

// Q4KM: cortiq.weight @embed stored(q6_k) : tensor<512x256xbf16>
// Q4KM: cortiq.weight @ple stored(q6_k) : tensor<512x2048xbf16>
// Q4KM: cortiq.weight @per_layer_model_projection.weight stored(bf16) : tensor<2048x256xbf16>
// Q4KM: cortiq.weight @norm stored(f32) : tensor<256xbf16>
// Q4KM: cortiq.weight @layers.0.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.0.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.1.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.1.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.2.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.2.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.3.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.3.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.4.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.4.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.5.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.5.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.6.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.6.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.7.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.7.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q4KM: cortiq.weight @layers.0.self_attn.q_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.0.self_attn.o_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KM: cortiq.weight @layers.0.mlp.up_proj.weight stored(q4_k) : tensor<512x256xbf16>
// Q4KM: cortiq.weight @layers.0.per_layer_projection.weight stored(q5_0) : tensor<256x64xbf16>
// Q4KM-LABEL: func.func @decode_step

// Q5KM: cortiq.weight @embed stored(q6_k) : tensor<512x256xbf16>
// Q5KM: cortiq.weight @ple stored(q6_k) : tensor<512x2048xbf16>
// Q5KM: cortiq.weight @per_layer_model_projection.weight stored(bf16) : tensor<2048x256xbf16>
// Q5KM: cortiq.weight @norm stored(f32) : tensor<256xbf16>
// Q5KM: cortiq.weight @layers.0.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.0.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.1.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.1.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.2.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.2.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.3.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.3.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.4.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.4.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.5.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.5.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.6.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.6.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.7.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.7.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// Q5KM: cortiq.weight @layers.0.self_attn.q_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.0.self_attn.o_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KM: cortiq.weight @layers.0.mlp.up_proj.weight stored(q5_k) : tensor<512x256xbf16>
// Q5KM: cortiq.weight @layers.0.per_layer_projection.weight stored(q5_1) : tensor<256x64xbf16>
// Q5KM-LABEL: func.func @decode_step

// Q3KM: cortiq.weight @embed stored(q6_k) : tensor<512x256xbf16>
// Q3KM: cortiq.weight @ple stored(q6_k) : tensor<512x2048xbf16>
// Q3KM: cortiq.weight @per_layer_model_projection.weight stored(bf16) : tensor<2048x256xbf16>
// Q3KM: cortiq.weight @norm stored(f32) : tensor<256xbf16>
// Q3KM: cortiq.weight @layers.0.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.0.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.1.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.1.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.2.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.2.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.3.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.3.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.4.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.4.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.5.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.5.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.6.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.6.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.7.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.7.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q3KM: cortiq.weight @layers.0.self_attn.q_proj.weight stored(q3_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.0.self_attn.o_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q3KM: cortiq.weight @layers.0.mlp.up_proj.weight stored(q3_k) : tensor<512x256xbf16>
// Q3KM: cortiq.weight @layers.0.per_layer_projection.weight stored(q4_0) : tensor<256x64xbf16>
// Q3KM-LABEL: func.func @decode_step

// Q4KS: cortiq.weight @embed stored(q6_k) : tensor<512x256xbf16>
// Q4KS: cortiq.weight @ple stored(q6_k) : tensor<512x2048xbf16>
// Q4KS: cortiq.weight @per_layer_model_projection.weight stored(bf16) : tensor<2048x256xbf16>
// Q4KS: cortiq.weight @norm stored(f32) : tensor<256xbf16>
// Q4KS: cortiq.weight @layers.0.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.0.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.1.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.1.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.2.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.2.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.3.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.3.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.4.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.4.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.5.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.5.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.6.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.6.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.7.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.7.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// Q4KS: cortiq.weight @layers.0.self_attn.q_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.0.self_attn.o_proj.weight stored(q4_k) : tensor<256x256xbf16>
// Q4KS: cortiq.weight @layers.0.mlp.up_proj.weight stored(q4_k) : tensor<512x256xbf16>
// Q4KS: cortiq.weight @layers.0.per_layer_projection.weight stored(q5_0) : tensor<256x64xbf16>
// Q4KS-LABEL: func.func @decode_step

// Q5KS: cortiq.weight @embed stored(q6_k) : tensor<512x256xbf16>
// Q5KS: cortiq.weight @ple stored(q6_k) : tensor<512x2048xbf16>
// Q5KS: cortiq.weight @per_layer_model_projection.weight stored(bf16) : tensor<2048x256xbf16>
// Q5KS: cortiq.weight @norm stored(f32) : tensor<256xbf16>
// Q5KS: cortiq.weight @layers.0.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.0.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.1.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.1.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.2.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.2.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.3.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.3.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.4.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.4.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.5.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.5.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.6.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.6.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.7.self_attn.v_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.7.mlp.down_proj.weight stored(q5_k) : tensor<256x512xbf16>
// Q5KS: cortiq.weight @layers.0.self_attn.q_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.0.self_attn.o_proj.weight stored(q5_k) : tensor<256x256xbf16>
// Q5KS: cortiq.weight @layers.0.mlp.up_proj.weight stored(q5_k) : tensor<512x256xbf16>
// Q5KS: cortiq.weight @layers.0.per_layer_projection.weight stored(q5_1) : tensor<256x64xbf16>
// Q5KS-LABEL: func.func @decode_step

// TABLES: cortiq.weight @embed stored(q8_0) : tensor<512x256xbf16>
// TABLES: cortiq.weight @ple stored(q8_0x16) : tensor<512x2048xbf16>
// TABLES: cortiq.weight @per_layer_model_projection.weight stored(bf16) : tensor<2048x256xbf16>
// TABLES: cortiq.weight @norm stored(f32) : tensor<256xbf16>
// TABLES: cortiq.weight @layers.0.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.0.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.1.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.1.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.2.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.2.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.3.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.3.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.4.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.4.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.5.self_attn.v_proj.weight stored(q4_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.5.mlp.down_proj.weight stored(q4_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.6.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.6.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.7.self_attn.v_proj.weight stored(q6_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.7.mlp.down_proj.weight stored(q6_k) : tensor<256x512xbf16>
// TABLES: cortiq.weight @layers.0.self_attn.q_proj.weight stored(q4_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.0.self_attn.o_proj.weight stored(q4_k) : tensor<256x256xbf16>
// TABLES: cortiq.weight @layers.0.mlp.up_proj.weight stored(q4_k) : tensor<512x256xbf16>
// TABLES: cortiq.weight @layers.0.per_layer_projection.weight stored(q5_0) : tensor<256x64xbf16>
// TABLES-LABEL: func.func @decode_step

cortiq.weight @embed : tensor<512x256xbf16>
cortiq.weight @ple : tensor<512x2048xbf16>
cortiq.weight @per_layer_model_projection.weight : tensor<2048x256xbf16>
cortiq.weight @norm : tensor<256xbf16>
cortiq.weight @layers.0.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.0.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.1.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.1.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.2.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.2.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.3.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.3.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.4.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.4.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.5.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.5.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.6.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.6.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.7.self_attn.v_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.7.mlp.down_proj.weight : tensor<256x512xbf16>
cortiq.weight @layers.0.self_attn.q_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.0.self_attn.o_proj.weight : tensor<256x256xbf16>
cortiq.weight @layers.0.mlp.up_proj.weight : tensor<512x256xbf16>
cortiq.weight @layers.0.per_layer_projection.weight : tensor<256x64xbf16>
func.func @decode_step(%token: i32, %position: i32) -> tensor<512xf32> {
  %e = cortiq.embedding @embed[%token] scale 16.0 : tensor<256xf32>
  %u = cortiq.embedding @ple[%token] scale 16.0 : tensor<2048xf32>
  %x = cortiq.rms_norm %e gain @norm group 256 eps 1.0e-6 : tensor<256xf32>
  %l = cortiq.lm_head @embed(%x) : tensor<256xf32> -> tensor<512xf32>
  return %l : tensor<512xf32>
}
