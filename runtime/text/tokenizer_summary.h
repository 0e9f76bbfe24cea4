// A human-readable summary of a tokenizer (what cortiq-dump and cortiq-tokenize --info print):
// vocabulary, merges, added tokens, components, special ids, generation defaults, chat template.
#ifndef CORTIQ_RUNTIME_TEXT_TOKENIZER_SUMMARY_H_
#define CORTIQ_RUNTIME_TEXT_TOKENIZER_SUMMARY_H_

#include <string>

#include "runtime/text/tokenizer.h"

namespace cortiq::text {

// Lines "key: value\n", e.g.
//   tokenizer: 262145 tokens, 514906 merges (BPE, byte_fallback, fuse_unk), 6415 added tokens (9 special)
//   normalizer: Replace; pre_tokenizer: Split; decoder: Sequence(Replace, ByteFallback, Fuse)
//   special: bos 2 "<bos>", eos 1 "<eos>", pad 0 "<pad>", unk 3 "<unk>"
//   generation: stop on 1, 106; temperature 1, top_p 0.95, top_k 64
//   chat template: chat_template.jinja, 12133 bytes, Gemma 4 format (built-in renderer applies)
std::string SummarizeTokenizer(const Tokenizer& tokenizer);

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_TOKENIZER_SUMMARY_H_
