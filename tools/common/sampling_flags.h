// The sampling and stopping flags of cortiq-run and cortiq-chat, under llama.cpp's names (--temp,
// --top-k, --top-p, --min-p, --typical, --repeat-penalty, --repeat-last-n, --presence-penalty,
// --frequency-penalty, -s/--seed, -l/--logit-bias, --stop, --ignore-eos). A flag that is not given keeps the
// model's default (its generation config, runtime/generation/model_text.h).
#ifndef CORTIQ_TOOLS_COMMON_SAMPLING_FLAGS_H_
#define CORTIQ_TOOLS_COMMON_SAMPLING_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/sampling/sampling_options.h"
#include "tools/common/flags.h"

namespace cortiq {

struct SamplingFlags {
  float temperature = 0.8f;
  int64_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float typical_p = 1.0f;
  float repeat_penalty = 1.0f;
  int64_t repeat_last_n = 64;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int64_t seed = -1;  // -1: random
  std::vector<std::string> stop;
  std::vector<std::string> logit_bias;  // "ID+BIAS" / "ID-BIAS" (llama.cpp's spelling)
  bool ignore_eos = false;
};

// Declares the flags under a "sampling" group; the help names llama.cpp's defaults and says that
// the model's own replace them.
void AddSamplingFlags(Flags& flags, SamplingFlags* values);

// `model_defaults` (ModelSamplingOptions) with every sampling flag given on the command line
// applied; seed -1 leaves it random.
// Errors (InvalidArgument): a --logit-bias that is not ID+BIAS / ID-BIAS ("--logit-bias: 'x' is
// not ID+BIAS or ID-BIAS"); its ids are checked against the vocabulary by the Sampler.
absl::StatusOr<sampling::SamplingOptions> ResolveSampling(const Flags& flags,
                                                          const SamplingFlags& values,
                                                          sampling::SamplingOptions model_defaults);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_SAMPLING_FLAGS_H_
