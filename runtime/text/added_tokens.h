// Added-token matching: splits text on the added tokens of a tokenizer section before the model
// runs, as tokenizers' AddedVocabulary::find_matches does — leftmost-longest matches of the
// contents (a trie walk from each position), a single_word token kept only outside words,
// lstrip/rstrip widening the match over the whitespace beside it.
#ifndef CORTIQ_RUNTIME_TEXT_ADDED_TOKENS_H_
#define CORTIQ_RUNTIME_TEXT_ADDED_TOKENS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/text/tokenizer_section.h"

namespace cortiq::text {

// A piece of split text: bytes [start, end) of the input, and the added token it matched
// (an index into TokenizerSection::added_tokens()) or -1 for text the model tokenizes.
struct AddedSplit {
  size_t start;
  size_t end;
  int32_t added_index;
};

// Splits `text` (valid UTF-8) with the trie `trie` of `section`. Every byte of `text` is in
// exactly one split, except whitespace absorbed by lstrip/rstrip, which goes with its token.
// Empty pieces are left out.
std::vector<AddedSplit> SplitOnAddedTokens(const TokenizerSection& section,
                                           const AddedTrieView& trie, std::string_view text);

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_ADDED_TOKENS_H_
