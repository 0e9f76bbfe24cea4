// plan-buffers: offsets reuse freed bytes, ops with the InPlace trait (norms, RoPE, elementwise)
// run in place over a dying operand and no other op does, slices are views into their parent,
// layer outputs and the result are pinned.
// RUN: cortiq-opt %s -split-input-file -plan-buffers | FileCheck %s

cortiq.weight @w : tensor<64x64xf32>
cortiq.weight @w2 : tensor<32x64xf32>
// CHECK: module attributes {cortiq.arena_bytes = 704 : i64}
// CHECK-LABEL: func.func @decode_step
func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
  // CHECK: cortiq.embedding {{.*}} {cortiq.arena_offset = 0 : i64}
  %e = cortiq.embedding @w[%token] scale 1.0 : tensor<64xf32>
  // A linear never writes over its input: a new buffer.
  // CHECK: cortiq.linear @w(%{{.*}}) {cortiq.arena_offset = 256 : i64}
  %a = cortiq.linear @w(%e) : tensor<64xf32> -> tensor<64xf32>
  // gelu in place over %a (its only reader, dying here).
  // CHECK: cortiq.gelu_tanh %{{.*}} {cortiq.arena_offset = 256 : i64}
  %b = cortiq.gelu_tanh %a : tensor<64xf32>
  // %e is still read below; a 2-row linear output goes after both.
  // CHECK: cortiq.linear @w2(%{{.*}}) {cortiq.arena_offset = 512 : i64}
  %c = cortiq.linear @w2(%b) : tensor<64xf32> -> tensor<32xf32>
  // Slices are views: parent offset + 4 * offset.
  // CHECK: cortiq.slice %{{.*}}[16] {cortiq.arena_offset = 576 : i64}
  %d = cortiq.slice %c[16] : tensor<32xf32> -> tensor<16xf32>
  // %b died at the w2 linear: its bytes are free again.
  // CHECK: cortiq.linear @w(%{{.*}}) {cortiq.arena_offset = 256 : i64}
  %f = cortiq.linear @w(%e) : tensor<64xf32> -> tensor<64xf32>
  // The add takes over %f in place (its only reader); %e dies here too.
  // CHECK: cortiq.add %{{.*}}, %{{.*}} {cortiq.arena_offset = 256 : i64}
  %g = cortiq.add %f, %e : tensor<64xf32>
  // The layer output is a pinned view of %g.
  // CHECK: cortiq.layer_output 0, %{{.*}} {cortiq.arena_offset = 256 : i64}
  %h = cortiq.layer_output 0, %g : tensor<64xf32>
  // Pinned %g cannot be overwritten in place; %e's freed bytes at 0 are reused.
  // CHECK: cortiq.scale %{{.*}} by 2.000000e+00 {cortiq.arena_offset = 0 : i64}
  %i = cortiq.scale %h by 2.0 : tensor<64xf32>
  %s = cortiq.slice %i[0] : tensor<64xf32> -> tensor<16xf32>
  // %d keeps %c (512..640) alive; the mul goes after it.
  // CHECK: cortiq.mul %{{.*}}, %{{.*}} {cortiq.arena_offset = 640 : i64}
  %j = cortiq.mul %d, %s : tensor<16xf32>
  return %i : tensor<64xf32>
}

// -----

// In place only by the trait: the norm and RoPE take over their dying operands' bytes, the
// attention (no InPlace trait) gets its own even though its query dies there.
cortiq.weight @t : tensor<16x64xf32>
cortiq.kv_cache @kv_cache_0 layer 0 full kv_heads 1 head_dim 64
// CHECK: module attributes {cortiq.arena_bytes = 512 : i64}
// CHECK-LABEL: func.func @decode_step
func.func @decode_step(%token: i32, %position: i32) -> tensor<64xf32> {
  // CHECK: cortiq.embedding {{.*}} {cortiq.arena_offset = 0 : i64}
  %e = cortiq.embedding @t[%token] scale 1.0 : tensor<64xf32>
  // CHECK: cortiq.rms_norm {{.*}} {cortiq.arena_offset = 0 : i64}
  %n = cortiq.rms_norm %e group 64 eps 1.0e-6 : tensor<64xf32>
  // CHECK: cortiq.rope {{.*}} {cortiq.arena_offset = 0 : i64}
  %r = cortiq.rope default %n at %position theta 1.0e4 head_dim 64 pairs 32 : tensor<64xf32>
  cortiq.kv_append %r, %r into @kv_cache_0 at %position : tensor<64xf32>, tensor<64xf32>
  // CHECK: cortiq.attention {{.*}} {cortiq.arena_offset = 256 : i64}
  %o = cortiq.attention layer 0 full %r over @kv_cache_0 at %position heads 1 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
  return %o : tensor<64xf32>
}
