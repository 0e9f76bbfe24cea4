// BpeModel: the BPE `model` of tokenizer.json run over the tokenizer section's tables
// (tokenizers/src/models/bpe/model.rs `merge_word`, word.rs `merge_all`): a word is split into
// characters (byte_fallback / unk for those not in the vocabulary), then the lowest-ranked
// adjacent pair is merged, leftmost first among equal ranks, until no pair has a merge. A binary
// heap over a linked list of symbols keeps this O(n log n) in the word length n, so a word of
// 100k characters costs milliseconds, not the O(n²) of rescanning.
//
// Gemma has no pre-tokenizer: a whole text is one word. Where the vocabulary allows it
// (TokenizerSection::WordsSplitAtForeignBigrams), the word is cut between adjacent characters
// that no piece holds together — no symbol can ever span such a cut, so the pieces merge
// independently to the same tokens — and each piece's tokens are cached per thread (words
// repeat), as tokenizers caches words.
#ifndef CORTIQ_RUNTIME_TEXT_BPE_H_
#define CORTIQ_RUNTIME_TEXT_BPE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/text/tokenizer_section.h"

namespace cortiq::text {

class BpeModel {
 public:
  // `section` must outlive the model.
  explicit BpeModel(const TokenizerSection* section);

  // Appends the tokens of `word` (valid UTF-8) to `out`; nothing for an empty word. A character
  // that is neither a vocabulary piece nor byte-fallback-encodable becomes the unk token (fused
  // with adjacent ones when fuse_unk), or is dropped when there is no unk token, as tokenizers does.
  void Tokenize(std::string_view word, std::vector<TokenId>* out) const;

 private:
  struct Symbol {
    TokenId id;
    int32_t prev;
    int32_t next;
    uint32_t len;    // bytes; 0 once merged into its left neighbour.
    uint32_t start;  // byte offset in the word.
    bool fixed;      // a byte-fallback or unk symbol: never merges when chunking is allowed.
  };
  // The initial symbols of `word` (merge_word before merge_all).
  void SplitWord(std::string_view word, std::vector<Symbol>* symbols) const;
  // merge_all over symbols [begin, end) (linked among themselves); appends the result ids.
  void MergeRange(std::vector<Symbol>* symbols, size_t begin, size_t end,
                  std::vector<TokenId>* out) const;

  const TokenizerSection* section_;
  const TokenizerConfig* config_;
  int32_t ascii_ids_[128];  // id of each one-byte piece, -1 if absent.
  int32_t unk_id_ = -1;
  bool chunking_ = false;              // TokenizerSection::WordsSplitAtForeignBigrams()
  uint64_t ascii_bigrams_[128][2] = {};  // bit b of [a]: IsPieceBigram(a, b) for ASCII a, b
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_BPE_H_
