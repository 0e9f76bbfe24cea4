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
// Other models ("llama" SentencePiece, "gpt2" byte-level BPE) give Unimplemented.
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
