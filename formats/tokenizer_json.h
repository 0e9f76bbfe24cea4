// Reader of tokenizer.json (the Hugging Face `tokenizers` serialization, format "1.0") into a
// TokenizerSpec (runtime/text/tokenizer_spec.h).
//
// Supported components, as tokenizers defines them: normalizers Sequence, Replace, Prepend, NFC,
// NFKC, NFD, NFKD; pre-tokenizers Sequence, Split (String/Regex pattern, every `behavior`,
// `invert`), Metaspace; model BPE (`merges` as "a b" strings or ["a", "b"] pairs, byte_fallback,
// fuse_unk, ignore_merges, unk_token, continuing_subword_prefix, end_of_word_suffix; dropout
// null or 0); added_tokens with special, lstrip, rstrip, normalized, single_word; post-processor
// TemplateProcessing; decoders Sequence, Replace, ByteFallback, Fuse, Strip. Anything else (a
// WordPiece model, a ByteLevel pre-tokenizer, non-null truncation or padding) is an error naming
// the type and the file: the tokenization would otherwise differ silently.
//
// The big members (model.vocab, 262,144 entries for Gemma; model.merges, 514,906) are walked
// without building a JSON tree (ForEachJsonMember / ForEachJsonElement), so a Gemma
// tokenizer.json (33 MB) is read in well under a second with memory of the order of its size.
#ifndef CORTIQ_FORMATS_TOKENIZER_JSON_H_
#define CORTIQ_FORMATS_TOKENIZER_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq {

// Largest tokenizer.json read: 1 GiB (Gemma's is 33 MB).
inline constexpr uint64_t kMaxTokenizerJsonBytes = uint64_t{1} << 30;

// Parses the text of a tokenizer.json. `file_name` prefixes every error and becomes the spec's
// `source`. Errors (InvalidArgument "<file>: <field>: ..."): malformed JSON (with the byte
// offset), a missing or mistyped field, an unsupported component type ("<file>: pre_tokenizer
// type \"ByteLevel\" is not supported (supported: Sequence, Split, Metaspace)"), a vocab id that
// is negative, too large or given to two pieces, a merge that is not two pieces, names a piece
// not in the vocabulary, or whose concatenation is not in it, an added token with an id out of
// range or an empty content, a post-processor special token that is not defined.
absl::StatusOr<text::TokenizerSpec> ParseTokenizerJson(absl::string_view json,
                                                       absl::string_view file_name);

// Reads and parses the file at `path` (at most kMaxTokenizerJsonBytes). Errors: those of
// ReadFileToString and ParseTokenizerJson.
absl::StatusOr<text::TokenizerSpec> ReadTokenizerJson(const std::string& path);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_TOKENIZER_JSON_H_
