// SpmModel: SentencePiece tokenization by piece scores, as llama.cpp's llm_tokenizer_spm
// (src/llama-vocab.cpp, for GGUF tokenizer.ggml.model = "llama"), run over the tokenizer
// section's piece table and scores.
//
// A word (already normalized: spaces as "▁", the space prefix added) is split into UTF-8
// characters; every adjacent pair of symbols whose concatenated text is a vocabulary piece is a
// candidate; the candidate of the highest piece score merges first (ties: the leftmost), its
// neighbours form new candidates, until none is left — a binary heap over a linked list of
// symbols, O(n log n) in the word length. Each final symbol is its piece's token, or (a single
// character that is no piece) its UTF-8 bytes as "<0xXX>" tokens (llama.cpp's byte_to_token:
// the "<0xXX>" piece, else the one-byte piece), or, when a byte has neither, the unk token for
// the whole character (SentencePiece's unknown piece; llama.cpp has no case for it: it throws).
// No unk token: the character is dropped.
#ifndef CORTIQ_RUNTIME_TEXT_SPM_H_
#define CORTIQ_RUNTIME_TEXT_SPM_H_

#include <string_view>
#include <vector>

#include "runtime/text/tokenizer_section.h"

namespace cortiq::text {

class SpmModel {
 public:
  // `section` (an SPM model: config().model_type == ModelType::kSpm) must outlive the model.
  explicit SpmModel(const TokenizerSection* section);

  // Appends the tokens of `word` (valid UTF-8) to `out`; nothing for an empty word.
  void Tokenize(std::string_view word, std::vector<TokenId>* out) const;

 private:
  // Appends the tokens of a single character that is not a piece (byte fallback or unk).
  void AppendUnknown(std::string_view character, std::vector<TokenId>* out) const;

  const TokenizerSection* section_;
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_SPM_H_
