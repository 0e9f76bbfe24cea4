// Rotary position embedding, rotate-half (NEOX) layout: the cos/sin table for
// one position (RopeCosSin) and its in-place application to the heads of q or k
// (ApplyRope).

#ifndef CORTIQ_OPS_ROPE_H_
#define CORTIQ_OPS_ROPE_H_

#include <stddef.h>
#include <stdint.h>

namespace cortiq {
namespace ops {

// Fills the RoPE table of one position: for i < rotated_pairs,
//
//     angle_i = position * theta^(-2 i / head_dim)
//     cos[i] = cos(angle_i),  sin[i] = sin(angle_i)
//
// computed entirely in double (exponent, angle, cos, sin) and rounded once to
// f32, so large positions stay accurate (spec §5.2 "RoPE angles": prefer f64
// for positions >= 1e4).
//
// Spec §3.0 "RoPE": sliding layers theta = 1e4, head_dim = 256,
// rotated_pairs = 128; full layers ("proportional", HF
// `_compute_proportional_rope_parameters`) theta = 1e6, head_dim = 512,
// rotated_pairs = int(partial_rotary_factor * head_dim / 2) = 64, with the
// exponent still divided by the full head_dim.
//
// position: 0-based token position (>= 0). Writes cos[0, rotated_pairs) and
// sin[0, rotated_pairs); requires rotated_pairs <= head_dim / 2.
// Scalar code (not per-target): called once per layer type per token.
void RopeCosSin(int64_t position, double theta, size_t head_dim,
                size_t rotated_pairs, float* cos, float* sin);

// Rotates x, [num_heads, head_dim] f32, in place. For each head and
// i < rotated_pairs, with h = head_dim / 2, a = x[i], b = x[i + h]:
//
//     x[i]     = a * cos[i] - b * sin[i]
//     x[i + h] = b * cos[i] + a * sin[i]
//
// HF `apply_rotary_pos_emb` with `rotate_half`: x * cos + rotate_half(x) * sin,
// where the HF cos/sin tables repeat the per-pair values over both halves.
//
// Coordinates of pairs i >= rotated_pairs (x[rotated_pairs, h) and
// x[h + rotated_pairs, head_dim)) are not touched, so they stay bit-identical:
// the identity rotation of the proportional RoPE's zero-frequency pairs.
//
// Requires head_dim even and rotated_pairs <= head_dim / 2. cos and sin hold
// rotated_pairs floats (from RopeCosSin) and must not overlap x.
// Precision: one f32 FMA and one multiply per output (a few ulp of the double
// reference ApplyRopeReference).
void ApplyRope(float* x, size_t num_heads, size_t head_dim,
               size_t rotated_pairs, const float* cos, const float* sin);

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_ROPE_H_
