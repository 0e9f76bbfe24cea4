// SamplingOptions: the settings of the sampler chain, under the names llama.cpp, Hugging Face
// transformers and the OpenAI API use; the defaults a model's generation_config gives; and the
// validation that names the offending option.
#ifndef CORTIQ_RUNTIME_SAMPLING_SAMPLING_OPTIONS_H_
#define CORTIQ_RUNTIME_SAMPLING_SAMPLING_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "runtime/sampling/logit_bias.h"

namespace cortiq {
namespace sampling {

// The stages run in llama.cpp's default order (common/common.h `common_params_sampling::samplers`
// and common/sampling.cpp `common_sampler_init`): logit_bias, penalties, top_k, typical_p,
// top_p, min_p, temperature, draw. Note that temperature comes after the truncations, so top_p,
// min_p and typical_p see the untempered distribution (transformers applies temperature first;
// the two agree at temperature 1, Gemma's default).
//
// The member defaults are llama.cpp's (common_params_sampling, common/common.h), used for every
// field a model's generation_config does not give (DefaultSamplingOptions).
struct SamplingOptions {
  // Softmax temperature: logits are divided by it before the draw. 0 = greedy: the candidate
  // with the highest logit after the other stages (ties: the lowest id), no random number used.
  // >= 0, finite. (llama.cpp --temp, transformers/OpenAI `temperature`.)
  float temperature = 0.8f;
  // Keep the top_k candidates with the highest logits (ties: lower id first). 0 = off; values
  // >= the vocabulary keep everything. >= 0. (llama.cpp --top-k, transformers `top_k`.)
  int32_t top_k = 40;
  // Nucleus sampling (Holtzman et al. 2020): keep the smallest set of the most probable
  // candidates whose probabilities sum to >= top_p (at least min_keep). 1 = off. In (0, 1].
  // (llama.cpp --top-p, transformers/OpenAI `top_p`.)
  float top_p = 0.95f;
  // Keep candidates whose probability is >= min_p times the most probable one's (Nguyen et al.
  // 2024); at least min_keep. 0 = off. In [0, 1]. (llama.cpp --min-p, transformers `min_p`.)
  float min_p = 0.05f;
  // Locally typical sampling (Meister et al. 2023): keep the candidates whose surprisal
  // -log p is closest to the entropy until their probabilities sum to > typical_p (at least
  // min_keep). 1 = off. In (0, 1]. (llama.cpp --typical, transformers `typical_p`.)
  float typical_p = 1.0f;
  // Repetition penalty of the tokens in the last repeat_last_n (RepetitionPenalties for the
  // formulas). 1 = off. > 0, finite. (llama.cpp --repeat-penalty; transformers calls the same
  // formula `repetition_penalty`.)
  float repeat_penalty = 1.0f;
  // Window of the three penalties: the last repeat_last_n accepted tokens; 0 = penalties off,
  // -1 = every token accepted since the last reset (llama.cpp: the context). >= -1.
  // (llama.cpp --repeat-last-n.)
  int32_t repeat_last_n = 64;
  // Subtracted from a token's logit once per occurrence in the window. 0 = off. Finite; OpenAI
  // documents [-2, 2]. (OpenAI `frequency_penalty`, llama.cpp --frequency-penalty.)
  float frequency_penalty = 0.0f;
  // Subtracted once from the logit of every token present in the window. 0 = off. Finite.
  // (OpenAI `presence_penalty`, llama.cpp --presence-penalty.)
  float presence_penalty = 0.0f;
  // Seed of the draw's generator (Xoshiro256StarStar). The same seed, options and sequence of
  // logits give the same tokens on every machine. Unset: a seed from std::random_device, which
  // Sampler::seed() reports (llama.cpp's default, LLAMA_DEFAULT_SEED, is random too).
  // (llama.cpp --seed, OpenAI `seed`.)
  std::optional<uint64_t> seed;
  // Added to the logits before any other stage (LogitBias). Tokens in [0, vocab_size); biases
  // finite or -inf (a ban). (OpenAI `logit_bias`, llama.cpp --logit-bias.)
  std::vector<LogitBias> logit_bias;
  // top_p, min_p and typical_p keep at least this many candidates (every stage keeps at least
  // one regardless). >= 0. (llama.cpp --min-keep; transformers `min_tokens_to_keep`.)
  int32_t min_keep = 0;
};

// The sampling fields of a checkpoint's generation_config.json (transformers GenerationConfig
// names; GGUF carries the same as general.sampling.*). Unset = the file does not give it.
// Gemma 4: do_sample true, temperature 1.0, top_p 0.95, top_k 64.
struct GenerationConfigSampling {
  std::optional<bool> do_sample;  // false: greedy decoding (temperature 0)
  std::optional<float> temperature;
  std::optional<int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> min_p;
  std::optional<float> typical_p;
  std::optional<float> repetition_penalty;  // SamplingOptions::repeat_penalty
  std::optional<int32_t> repeat_last_n;     // GGUF general.sampling.penalty_last_n (no HF field)
};

// The options a model runs with before flags or requests override them: llama.cpp's defaults
// (the SamplingOptions member initializers), replaced by every field `model` gives — llama.cpp's
// precedence for GGUF general.sampling.* metadata (flag > model metadata > built-in default).
// So Gemma 4 gets temperature 1.0, top_k 64, top_p 0.95 from its generation_config and keeps
// llama.cpp's min_p 0.05 and repeat_last_n 64 (repeat_penalty 1: off). do_sample == false sets
// temperature 0; an absent do_sample is not read as false (transformers' own default), so a file
// with no sampling fields samples with llama.cpp's defaults. The values are not validated here:
// ValidateSamplingOptions reports a bad one by its option name.
SamplingOptions DefaultSamplingOptions(const GenerationConfigSampling& model = {});

// Checks every option against the ranges documented above, for a vocabulary of `vocab_size`
// tokens (>= 1). Errors: InvalidArgument naming the option and the value, e.g.
// "top_p must be in (0, 1], got 1.5" or "logit_bias[2]: token 300000 is out of range
// [0, 262144)".
absl::Status ValidateSamplingOptions(const SamplingOptions& options, int32_t vocab_size);

}  // namespace sampling
}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_SAMPLING_SAMPLING_OPTIONS_H_
