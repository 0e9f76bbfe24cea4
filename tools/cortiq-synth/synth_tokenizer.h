// The tokenizer files of a synthetic Gemma-4 checkpoint (tokenizer.json, tokenizer_config.json,
// generation_config.json): a Hugging Face `tokenizers` BPE model shaped like Gemma 4's, so that
// llama.cpp's convert_hf_to_gguf.py (gguf-py LlamaHfVocab, SpecialVocab) accepts the checkpoint.
#ifndef CORTIQ_TOOLS_CORTIQ_SYNTH_SYNTH_TOKENIZER_H_
#define CORTIQ_TOOLS_CORTIQ_SYNTH_SYNTH_TOKENIZER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace cortiq {

// The three files' text (JSON, UTF-8).
struct SynthTokenizerFiles {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  std::string generation_config_json;
};

// Smallest vocabulary MakeSynthTokenizer accepts: the reserved ids 0..106, "\n" (107), the 256
// byte tokens (108..363) and the 95 single-character tokens.
inline constexpr int64_t kMinSynthVocabSize = 364 + 95;

// Builds the tokenizer of a vocabulary of `vocab_size` ids (every id 0..vocab_size-1 is a token
// of `model.vocab`, as the converter requires). Layout, as in Gemma 4's tokenizer where known:
// - the special and control tokens at their Gemma 4 ids, each placed only if its id is below
//   vocab_size: <pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4, <|tool> 46, <tool|> 47,
//   <|tool_call> 48, <tool_call|> 49, <|tool_response> 50, <tool_response|> 51, <|"|> 52,
//   <|think|> 98, <|channel> 100, <channel|> 101, <|turn> 105, <turn|> 106, <|image> 255999,
//   <|audio> 256000, <|image|> 258880, <|audio|> 258881, <image|> 258882, <audio|> 258883,
//   <|video|> 258884 (ids of the released checkpoints' tokenizer.json / config.json);
// - the other ids of 5..106 and of 255999.. reserved as <unused0>, <unused1>, ... (Gemma's
//   naming); all of these are `added_tokens` with special = true;
// - "\n" at 107; byte-fallback tokens <0x00>..<0xFF> at 108..363 (their position in the real
//   vocabulary is not established; a synthetic model needs them somewhere);
// - then the 95 single characters ("▁" for a space, and printable ASCII), and tokens made by
//   merges, in merge order: each earlier token extended by one of a..z, breadth first.
// Normalizer " " → "▁", no pre-tokenizer, `<bos>` prepended (TemplateProcessing), decoder
// Replace "▁" → " " + ByteFallback + Fuse: the shape of the released tokenizer.json.
// generation_config.json: bos 2, eos [1, 106] (<turn|> ends a turn), pad 0, and Gemma 4's
// sampling defaults (do_sample, temperature 1.0, top_k 64, top_p 0.95).
// Errors: InvalidArgument if vocab_size < kMinSynthVocabSize or above 2^24.
absl::StatusOr<SynthTokenizerFiles> MakeSynthTokenizer(int64_t vocab_size);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_SYNTH_SYNTH_TOKENIZER_H_
