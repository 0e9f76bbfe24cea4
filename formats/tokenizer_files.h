// The tokenizer of a checkpoint, from whichever file holds it: a Hugging Face checkpoint
// directory (tokenizer.json, with tokenizer_config.json, chat_template.jinja and
// generation_config.json beside it), a tokenizer.json alone, or a GGUF file.
#ifndef CORTIQ_FORMATS_TOKENIZER_FILES_H_
#define CORTIQ_FORMATS_TOKENIZER_FILES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq {

// Reads the tokenizer of the HF checkpoint directory `dir`: tokenizer.json (required), then
//  - tokenizer_config.json (optional): bos/eos/pad token strings (or {"content": ...} objects)
//    resolved to ids; `add_bos_token` / `add_eos_token`, which rebuild the post-processor
//    template as transformers' fast Gemma tokenizer does (bos? A eos?); `chat_template` (a
//    string, or the entry named "default" of a list);
//  - chat_template.jinja (optional; preferred over tokenizer_config's, as transformers does);
//  - generation_config.json (optional): `eos_token_id` (an integer or a list; Gemma 4: [1, 106]),
//    `temperature`, `top_p`, `top_k`, `do_sample`, `min_p`, `typical_p`, `repetition_penalty`.
// Without a generation eos list, the tokenizer_config eos token is the one stop token.
// Errors: those of ReadTokenizerJson; InvalidArgument naming the file and field for a malformed
// config (a token string that is not a token, an eos id out of range, a mistyped field).
absl::StatusOr<text::TokenizerSpec> ReadCheckpointTokenizer(const std::string& dir);

// Applies the side files of a checkpoint directory to `spec` (the part of
// ReadCheckpointTokenizer after tokenizer.json). Exposed for tests.
absl::Status ApplyTokenizerConfig(absl::string_view config_json, absl::string_view file_name,
                                  text::TokenizerSpec* spec);
absl::Status ApplyGenerationConfig(absl::string_view config_json, absl::string_view file_name,
                                   text::TokenizerSpec* spec);

// Any tokenizer source: a directory (ReadCheckpointTokenizer), a GGUF file (by its magic;
// ReadGgufTokenizer), or else a tokenizer.json (ReadTokenizerJson).
absl::StatusOr<text::TokenizerSpec> ReadTokenizerSpec(const std::string& path);

// The tokenizer a checkpoint (a directory or a GGUF file, as cortiq-compile takes) ships:
// std::nullopt when it ships none — a directory without tokenizer.json, a GGUF without
// tokenizer.ggml.model, any other file —, otherwise ReadTokenizerSpec's result, errors included.
absl::StatusOr<std::optional<text::TokenizerSpec>> ReadShippedTokenizer(
    const std::string& checkpoint);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_TOKENIZER_FILES_H_
