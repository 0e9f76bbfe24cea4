// Tokenizer: text ⇄ token ids with a model's own tokenizer, run from a tokenizer section
// (tokenizer_section.h) in place. The pipeline is Hugging Face `tokenizers`' Tokenizer::encode
// for one sequence: added tokens split out of the raw text (and, after normalization, those
// marked `normalized`), each remaining piece normalized, pre-tokenized into words, each word
// tokenized by the model (BPE, or SentencePiece by scores: spm.h), then the post-processor's template (bos) when asked for; and
// Tokenizer::decode: ids → token strings → decoder.
#ifndef CORTIQ_RUNTIME_TEXT_TOKENIZER_H_
#define CORTIQ_RUNTIME_TEXT_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/text/bpe.h"
#include "runtime/text/decoder.h"
#include "runtime/text/normalizer.h"
#include "runtime/text/pre_tokenizer.h"
#include "runtime/text/spm.h"
#include "runtime/text/tokenizer_section.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq::text {

struct EncodeOptions {
  // Apply the post-processor's template (Gemma: prepend <bos>), as tokenizers'
  // add_special_tokens=true.
  bool add_special_tokens = false;
};

struct DecodeOptions {
  // Leave out special added tokens (<bos>, <eos>, <|turn>…), as skip_special_tokens=true.
  bool skip_special_tokens = false;
};

class StreamDecoder;

// Encode, Decode and the other const methods may be called from several threads at once (the
// BPE caches are per thread). Move-only.
class Tokenizer {
 public:
  // A tokenizer over section bytes that the caller keeps mapped (an artifact's section).
  // Errors: those of TokenizerSection::Load, and InvalidArgument for a component whose regex
  // does not compile (naming it).
  static absl::StatusOr<Tokenizer> FromSection(absl::Span<const uint8_t> bytes);
  // A tokenizer that owns the section bytes `bytes` (e.g. SerializeTokenizerSection's output).
  static absl::StatusOr<Tokenizer> FromOwnedSection(std::vector<uint8_t> bytes);
  // Serializes `spec` and owns the result: the one code path for every source.
  static absl::StatusOr<Tokenizer> FromSpec(const TokenizerSpec& spec);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of `text`. Errors: InvalidArgument if `text` is not valid UTF-8 ("text is not valid
  // UTF-8 at byte N"); Internal if a regex match fails.
  absl::StatusOr<std::vector<TokenId>> Encode(std::string_view text,
                                              const EncodeOptions& options = {}) const;

  // The text of `ids`. Errors: InvalidArgument naming the first id outside [0, vocab_size).
  absl::StatusOr<std::string> Decode(absl::Span<const TokenId> ids,
                                     const DecodeOptions& options = {}) const;

  // The string of token `id` before decoding (the added token's content or the vocabulary
  // piece): what `--pieces` prints. Error: id out of range.
  absl::StatusOr<std::string_view> TokenString(TokenId id) const;

  // The id of the vocabulary piece or added token `piece`.
  std::optional<TokenId> TokenToId(std::string_view piece) const;

  bool IsSpecial(TokenId id) const;
  uint32_t vocab_size() const { return section_->vocab_size(); }
  const TokenizerSection& section() const { return *section_; }
  const TokenizerConfig& config() const { return section_->config(); }

 private:
  friend class StreamDecoder;
  Tokenizer();
  absl::Status Init();
  // Appends the tokens of raw-text piece `text` (no raw added token inside).
  absl::Status EncodePlain(std::string_view text, bool at_start, std::vector<TokenId>* out) const;
  // The decoded text of token strings (decoder, or " "-joined without one).
  absl::StatusOr<std::string> DecodeStrings(std::vector<std::string> tokens) const;

  std::vector<uint8_t> owned_;  // empty when viewing caller's bytes
  std::unique_ptr<TokenizerSection> section_;  // stable address for model_
  std::optional<Normalizer> normalizer_;
  std::optional<PreTokenizer> pre_tokenizer_;
  std::optional<Decoder> decoder_;
  // Appends the tokens of one pre-tokenized word (the model of the section).
  void TokenizeWord(std::string_view word, std::vector<TokenId>* out) const {
    if (spm_) {
      spm_->Tokenize(word, out);
    } else {
      model_->Tokenize(word, out);
    }
  }

  std::unique_ptr<BpeModel> model_;  // the BPE model, or null for SPM
  std::unique_ptr<SpmModel> spm_;
  absl::flat_hash_map<TokenId, uint32_t> added_by_id_;  // id → index in added_tokens()
  absl::flat_hash_map<std::string, TokenId> added_by_content_;
};

// Incremental decoding for streamed generation: Push each generated id, and get the text that
// is final so far. Only complete UTF-8 is ever returned: a character spelled by byte-fallback
// tokens is held back until the run of byte tokens ends (ByteFallback decides a run's text only
// then: valid UTF-8, or U+FFFD per byte), and the concatenation of all outputs (Push… then
// Finish) equals Tokenizer::Decode of all the ids.
//
// Except for a run longer than kMaxHeldBackBytes: a model caught in a loop of byte tokens would
// otherwise show nothing until the loop ends. Such a run is streamed as its characters complete
// (as llama.cpp streams bytes), a byte that starts no well-formed sequence as one U+FFFD. That
// differs from Decode only for a long run that is not valid UTF-8 as a whole (Decode gives
// U+FFFD for every byte of it, the stream keeps its well-formed characters).
class StreamDecoder {
 public:
  // The longest run of byte tokens held back whole (no character needs more than 4 bytes; a
  // few characters spelled in bytes in a row stay exact).
  static constexpr size_t kMaxHeldBackBytes = 16;

  // `tokenizer` must outlive the decoder.
  StreamDecoder(const Tokenizer* tokenizer, DecodeOptions options = {});

  // Adds `id`; returns the newly final text (often empty). Error: id out of range.
  absl::StatusOr<std::string> Push(TokenId id);
  // Returns the rest of the text (held-back bytes) and resets the decoder.
  absl::StatusOr<std::string> Finish();
  // Returns the held-back bytes' text now, as Finish would (an incomplete character as U+FFFD),
  // and goes on decoding from there: for a caller that cuts the text at a token it does not
  // Push (the thought channel's markers, runtime/generation/thought_channel.h), so that no byte
  // of the text before the cut comes out after it.
  absl::StatusOr<std::string> Flush();
  // What Finish would return now (the held-back bytes' text if generation ended here), without
  // changing the decoder: a stop string that ends in held-back bytes (a newline spelled <0x0A>)
  // is seen when its token comes, not when the run of byte tokens ends. Empty when nothing is
  // held. An incomplete character reads as U+FFFD here (as Finish would print it), so a stop
  // string containing U+FFFD can match before the character completes.
  absl::StatusOr<std::string> HeldText() const;

  // True if a run of byte tokens longer than kMaxHeldBackBytes was streamed since construction
  // (not reset by Finish): only then may the outputs differ from Decode.
  bool streamed_long_byte_run() const { return streamed_long_byte_run_; }

 private:
  const Tokenizer* tokenizer_;
  DecodeOptions options_;
  bool local_ = true;        // the decoder is per-token up to its Fuse (Gemma's chain)
  std::vector<TokenId> pending_;  // held-back ids (local), or all ids (otherwise)
  std::string pending_bytes_;     // the bytes of the held-back byte tokens (local)
  bool long_run_ = false;         // the current run of byte tokens is streamed as it comes
  bool streamed_long_byte_run_ = false;
  size_t emitted_ = 0;      // bytes returned so far (non-local mode)
  bool holding_ = false;    // non-local mode: the last Push returned less than all the text
  bool any_emitted_ = false;  // a token was emitted (" " separator without a decoder)

  // In a long run: the text of the held-back bytes' complete characters (and of bytes that
  // start no well-formed sequence), removed from the pending ones.
  absl::StatusOr<std::string> TakeCompleteCharacters();
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_TOKENIZER_H_
