// The last stage of the chain: pick one token from the candidates, either the most likely
// (greedy, temperature 0) or at random in proportion to the softmax at a temperature
// (llama.cpp llama_sampler_temp + llama_sampler_dist, src/llama-sampling.cpp).
#ifndef CORTIQ_RUNTIME_SAMPLING_DRAW_H_
#define CORTIQ_RUNTIME_SAMPLING_DRAW_H_

#include <cstdint>

#include "runtime/sampling/token_candidates.h"
#include "runtime/sampling/xoshiro256.h"

namespace cortiq {
namespace sampling {

// The id of the candidate first in the canonical order: the highest logit, ties to the lowest
// id. size >= 1.
int32_t ArgmaxToken(const TokenCandidates& candidates);

// Draws a candidate with probability w_i / sum(w), w_i = exp((logit_i - max) / temperature)
// (softmax of logits / temperature, llama.cpp's order: after the truncations). Consumes exactly
// one output of `rng` (u = rng->NextUniform() in [0, 1)) and returns the first candidate, in the
// set's order, at which the running f64 sum of w exceeds u * sum(w) (the sum taken as
// WeightSum), so a candidate of weight 0 is never drawn. Leaves the tempered w in `weight`
// (has_weights is cleared unless temperature is 1). temperature > 0; size >= 1; the largest
// logit finite.
int32_t DrawToken(float temperature, Xoshiro256StarStar* rng, TokenCandidates* candidates);

// DrawToken for a given uniform number u in [0, 1) instead of the generator's next output.
int32_t DrawTokenForUniform(float temperature, double u, TokenCandidates* candidates);

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_DRAW_H_
