// Reader of a GGUF file's tokenizer (the `tokenizer.ggml.*` keys written by llama.cpp's
// convert_hf_to_gguf.py) into a TokenizerSpec (runtime/text/tokenizer_spec.h) that tokenizes
// exactly like the checkpoint's tokenizer.json.
//
// Supported: `tokenizer.ggml.model` = "gemma4" (Gemma 4: BPE over the `merges`, spaces as "▁",
// byte fallback). The spec built for it is the tokenizer.json pipeline of Gemma 4: normalizer
// Replace " " → "▁", no pre-tokenizer, BPE with byte_fallback and fuse_unk, unk =
// `unknown_token_id`; decoder Replace "▁" → " ", ByteFallback, Fuse; the added tokens are the
// UNKNOWN and CONTROL (token_type 2 and 3, special) and USER_DEFINED (4, not special) tokens, matched in the raw
// text; the post-processor adds <bos> / <eos> per `add_bos_token` / `add_eos_token`. (llama.cpp's
// own gemma4 pre-tokenizer also splits at newlines; tokenizer.json does not, and is followed.)
//
// "llama" (SentencePiece, llama.cpp's LLAMA_VOCAB_TYPE_SPM / llm_tokenizer_spm): an SPM model
// (runtime/text/spm.h) over every piece (a repeated piece is its last id, an empty one
// "[EMPTY_i]", as llama.cpp loads them) with `scores` (0 without them), byte fallback to the
// "<0xXX>" pieces, unk = `unknown_token_id`; the normalizer escapes spaces as "▁" and, with
// `add_space_prefix` (default true, as llama.cpp), prepends "▁" to each piece of text that
// starts the input or follows an added token (llama.cpp's is_prev_special); the decoder is
// Hugging Face's for Llama (Replace "▁" → " ", ByteFallback, Fuse, and Strip of that one
// leading space with add_space_prefix); added tokens, bos/eos (defaults 1 and 2, unk 0, as
// llama.cpp) and the post-processor as for gemma4; `merges` are not used.
//
// Other models ("gpt2" byte-level BPE, "t5" Unigram, ...) give Unimplemented.
#ifndef CORTIQ_FORMATS_GGUF_TOKENIZER_H_
#define CORTIQ_FORMATS_GGUF_TOKENIZER_H_

#include "absl/status/statusor.h"
#include "formats/gguf.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq {

// The tokenizer of `file`. Errors (InvalidArgument naming the file and key): a missing
// `tokenizer.ggml.model` or `tokenizer.ggml.tokens`, a key of the wrong type, `scores` or
// `token_type` of a length other than `tokens`', a merge that is not "a b" or names an unknown
// piece, a bos/eos/unk/pad id out of range; Unimplemented for an unsupported model.
absl::StatusOr<text::TokenizerSpec> ReadGgufTokenizer(const GgufFile& file);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_GGUF_TOKENIZER_H_
