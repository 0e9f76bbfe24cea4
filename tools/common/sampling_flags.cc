// The sampling flags (see sampling_flags.h).
#include "tools/common/sampling_flags.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cortiq {

void AddSamplingFlags(Flags& flags, SamplingFlags* v) {
  flags.AddGroup("sampling (a flag not given keeps the model's generation-config default, else "
                 "llama.cpp's)");
  const float kMax = std::numeric_limits<float>::max();
  flags.AddFloat("--temp", "T", &v->temperature, 0.0f, kMax,
                 "temperature; 0 = greedy (llama.cpp default: 0.8; Gemma 4: 1)");
  flags.AddInt("--top-k", "K", &v->top_k, 0, std::numeric_limits<int32_t>::max(),
               "keep the K most likely tokens; 0 = off (llama.cpp default: 40; Gemma 4: 64)");
  flags.AddFloat("--top-p", "P", &v->top_p, 0.0f, 1.0f,
                 "nucleus sampling; 1 = off (default: 0.95)");
  flags.AddFloat("--min-p", "P", &v->min_p, 0.0f, 1.0f,
                 "keep tokens at least P times as likely as the best; 0 = off (default: 0.05)");
  flags.AddFloat("--typical", "P", &v->typical_p, 0.0f, 1.0f,
                 "locally typical sampling; 1 = off (default: 1)");
  flags.AddFloat("--repeat-penalty", "X", &v->repeat_penalty, 0.0f, kMax,
                 "penalty of the tokens in the last --repeat-last-n; 1 = off (default: 1)");
  flags.AddInt("--repeat-last-n", "N", &v->repeat_last_n, -1,
               std::numeric_limits<int32_t>::max(),
               "tokens the penalties look back on; 0 = off, -1 = all (default: 64)");
  flags.AddFloat("--presence-penalty", "X", &v->presence_penalty, -kMax, kMax,
                 "subtracted once from tokens present in the window (default: 0)");
  flags.AddFloat("--frequency-penalty", "X", &v->frequency_penalty, -kMax, kMax,
                 "subtracted per occurrence in the window (default: 0)");
  flags.AddInt("-s, --seed", "N", &v->seed, -1, std::numeric_limits<int64_t>::max(),
               "seed of the draws: the same seed draws the same numbers on any machine, so the "
               "same tokens wherever the logits are the same (another -b, or another CPU, may "
               "round them differently); -1 = random (default: -1)");
  flags.AddList("-l, --logit-bias", "ID+BIAS", &v->logit_bias,
                "add BIAS to token ID's logit (ID-BIAS subtracts; -inf bans it), e.g. 15043+1; "
                "may be repeated");
  flags.AddList("-r, --stop, --reverse-prompt", "TEXT", &v->stop,
                "stop when the text reaches TEXT (not printed); may be repeated (-r and "
                "--reverse-prompt as llama.cpp names it)");
  flags.AddBool("--ignore-eos", &v->ignore_eos,
                "do not stop on the model's end-of-generation tokens");
}

absl::StatusOr<sampling::SamplingOptions> ResolveSampling(const Flags& flags,
                                                          const SamplingFlags& v,
                                                          sampling::SamplingOptions o) {
  for (const std::string& entry : v.logit_bias) {
    const size_t sign = entry.find_first_of("+-", 1);
    int32_t id = 0;
    float bias = 0;
    const std::string value = sign == std::string::npos ? "" : entry.substr(sign + 1);
    bool ok = sign != std::string::npos && absl::SimpleAtoi(entry.substr(0, sign), &id) &&
              id >= 0;
    if (ok) {
      if (value == "inf") {
        bias = std::numeric_limits<float>::infinity();
      } else {
        ok = absl::SimpleAtof(value, &bias) && std::isfinite(bias);
      }
    }
    if (ok && entry[sign] == '-') bias = -bias;
    if (!ok || bias == std::numeric_limits<float>::infinity()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--logit-bias: '", entry, "' is not ID+BIAS or ID-BIAS (a finite BIAS, or -inf)"));
    }
    o.logit_bias.push_back({id, bias});
  }
  if (flags.IsSet("--temp")) o.temperature = v.temperature;
  if (flags.IsSet("--top-k")) o.top_k = static_cast<int32_t>(v.top_k);
  if (flags.IsSet("--top-p")) o.top_p = v.top_p;
  if (flags.IsSet("--min-p")) o.min_p = v.min_p;
  if (flags.IsSet("--typical")) o.typical_p = v.typical_p;
  if (flags.IsSet("--repeat-penalty")) o.repeat_penalty = v.repeat_penalty;
  if (flags.IsSet("--repeat-last-n")) o.repeat_last_n = static_cast<int32_t>(v.repeat_last_n);
  if (flags.IsSet("--presence-penalty")) o.presence_penalty = v.presence_penalty;
  if (flags.IsSet("--frequency-penalty")) o.frequency_penalty = v.frequency_penalty;
  if (v.seed >= 0) o.seed = static_cast<uint64_t>(v.seed);
  return o;
}

}  // namespace cortiq
