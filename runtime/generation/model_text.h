// The text side of a compiled model: its tokenizer, used in place from the artifact's tokenizer
// section (runtime/text/tokenizer_section.h; no JSON at run time), and what generation takes from
// it — the end-of-generation ids, the sampling defaults the checkpoint ships
// (generation_config.json or GGUF general.sampling.*) and the tokens the sampler must not pick.
#ifndef CORTIQ_RUNTIME_GENERATION_MODEL_TEXT_H_
#define CORTIQ_RUNTIME_GENERATION_MODEL_TEXT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/artifact.h"
#include "runtime/sampling/logit_bias.h"
#include "runtime/sampling/sampling_options.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/text/gemma4_chat.h"
#include "runtime/text/tokenizer.h"

namespace cortiq {

// The tokenizer of `artifact` (text::Tokenizer::FromSection over the mapped section bytes: no
// copy), which must outlive it. Errors: FailedPrecondition "<path>: the model has no tokenizer
// (...)" when the artifact carries none (compiled from a checkpoint without tokenizer files, or
// by a cortiq before artifact format 3.1); the section's InvalidArgument errors
// ("tokenizer section: checksum mismatch ...") prefixed with the path.
absl::StatusOr<text::Tokenizer> LoadArtifactTokenizer(const Artifact& artifact);

// The checkpoint's sampling fields (GenerationDefaults) as sampling::DefaultSamplingOptions
// takes them.
sampling::GenerationConfigSampling SamplingDefaults(const text::GenerationDefaults& defaults);

// The options the model samples with before flags or requests override them:
// DefaultSamplingOptions(SamplingDefaults(tokenizer's generation defaults)) — Gemma 4:
// temperature 1, top_k 64, top_p 0.95, and llama.cpp's defaults for the rest.
sampling::SamplingOptions ModelSamplingOptions(const text::Tokenizer& tokenizer);

// The ids generation stops on: the generation config's eos_token_id list (Gemma 4: <eos> 1 and
// <turn|> 106), or the tokenizer's eos token if the list is empty, or none.
std::vector<int32_t> EndOfGenerationIds(const text::Tokenizer& tokenizer);

// The ids a chat turn of the model ends on: EndOfGenerationIds, and the Gemma 4 chat format's
// end of turn "<turn|>" if the vocabulary has it (a checkpoint whose generation config lists only
// <eos> still ends its turns with it).
std::vector<int32_t> ChatEndOfTurnIds(const text::Tokenizer& tokenizer);

// The prompt text of `messages` in the Gemma 4 chat format (text::RenderGemma4Chat) with the
// tokenizer's own bos token. Errors: those of RenderGemma4Chat.
absl::StatusOr<std::string> RenderChatPrompt(const text::Tokenizer& tokenizer,
                                             absl::Span<const text::ChatMessage> messages,
                                             const text::ChatOptions& options);

// The ids of a prompt: `text` encoded with the post-processor's special tokens (Gemma: <bos>
// first), unless it already starts with the bos token's text (a rendered chat prompt, or a user
// who typed <bos>), which would otherwise be doubled. Errors: Tokenizer::Encode's.
absl::StatusOr<std::vector<int32_t>> EncodePrompt(const text::Tokenizer& tokenizer,
                                                  absl::string_view text);

// Bans (bias -inf) for the ids in [tokenizer.vocab_size(), model_vocab_size): rows of the LM
// head that no token string belongs to (vocabularies padded to a multiple, e.g. 262208 logits for
// 262144 tokens) and that therefore cannot be printed or fed back. Empty when the sizes match.
std::vector<sampling::LogitBias> UntokenizableIdBans(int64_t model_vocab_size,
                                                     const text::Tokenizer& tokenizer);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_GENERATION_MODEL_TEXT_H_
