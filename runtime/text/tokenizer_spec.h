// TokenizerSpec: the in-memory description of a tokenizer that the readers in formats/ produce
// (tokenizer.json, GGUF `tokenizer.ggml.*`, tokenizer_config.json, generation_config.json) and
// SerializeTokenizerSection (tokenizer_section.h) turns into the binary section the runtime runs
// from. Plain data, no behavior: the components are those of Hugging Face `tokenizers`
// (normalizer → pre-tokenizer → model → post-processor, and a decoder), with the field names of
// its tokenizer.json format.
#ifndef CORTIQ_RUNTIME_TEXT_TOKENIZER_SPEC_H_
#define CORTIQ_RUNTIME_TEXT_TOKENIZER_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cortiq::text {

// A token id: an index into TokenizerSpec::tokens (int32 like llama.cpp's llama_token).
using TokenId = int32_t;

// The `pattern` of a Replace normalizer/decoder or a Split pre-tokenizer: {"String": "..."} (a
// literal) or {"Regex": "..."} (Oniguruma syntax in HF; compiled with PCRE2 in UTF + UCP mode
// here, see regex.h).
struct TextPattern {
  enum class Kind : uint8_t { kString = 0, kRegex = 1 };
  Kind kind = Kind::kString;
  std::string text;
};

// Normalizers (tokenizers/src/normalizers): Sequence, Replace (pattern → content), Prepend
// (`prepend` before a non-empty string), and the Unicode normal forms.
enum class NormalizerType : uint8_t {
  kSequence = 0,
  kReplace = 1,
  kPrepend = 2,
  kNFC = 3,
  kNFKC = 4,
  kNFD = 5,
  kNFKD = 6,
};
struct NormalizerSpec {
  NormalizerType type = NormalizerType::kSequence;
  TextPattern pattern;                   // kReplace.
  std::string content;                   // kReplace: the replacement; kPrepend: the prefix.
  std::vector<NormalizerSpec> children;  // kSequence, applied in order.
};

// `behavior` of a Split pre-tokenizer (tokenizers SplitDelimiterBehavior).
enum class SplitBehavior : uint8_t {
  kRemoved = 0,
  kIsolated = 1,
  kMergedWithPrevious = 2,
  kMergedWithNext = 3,
  kContiguous = 4,
};
// `prepend_scheme` of Metaspace.
enum class PrependScheme : uint8_t { kAlways = 0, kFirst = 1, kNever = 2 };

// Pre-tokenizers (tokenizers/src/pre_tokenizers): Sequence, Split, Metaspace.
enum class PreTokenizerType : uint8_t { kSequence = 0, kSplit = 1, kMetaspace = 2 };
struct PreTokenizerSpec {
  PreTokenizerType type = PreTokenizerType::kSequence;
  TextPattern pattern;                                  // kSplit.
  SplitBehavior behavior = SplitBehavior::kIsolated;    // kSplit.
  bool invert = false;                                  // kSplit: the non-matches are the delimiters.
  std::string replacement;                              // kMetaspace: one character, usually "▁".
  PrependScheme prepend_scheme = PrependScheme::kAlways;  // kMetaspace.
  bool split = true;                                    // kMetaspace: split before each replacement.
  std::vector<PreTokenizerSpec> children;               // kSequence.
};

// Decoders (tokenizers/src/decoders): Sequence, Replace, ByteFallback ("<0xXX>" tokens become
// bytes), Fuse (concatenate), Strip (`content` removed up to `start` times at the beginning and
// `stop` times at the end of each token).
enum class DecoderType : uint8_t {
  kSequence = 0,
  kReplace = 1,
  kByteFallback = 2,
  kFuse = 3,
  kStrip = 4,
};
struct DecoderSpec {
  DecoderType type = DecoderType::kSequence;
  TextPattern pattern;  // kReplace.
  std::string content;  // kReplace: the replacement; kStrip: the character stripped (UTF-8).
  uint32_t start = 0;   // kStrip.
  uint32_t stop = 0;    // kStrip.
  std::vector<DecoderSpec> children;  // kSequence.
};

// One merge of the BPE model, in priority order: `left` + `right` → `result` (ids). `rank` is the
// priority (lower merges first): the merge's index in tokenizer.json; merges of equal rank (a
// vocabulary ordered by scores) are taken left to right.
struct BpeMerge {
  TokenId left = 0;
  TokenId right = 0;
  TokenId result = 0;
  uint32_t rank = 0;
};

// The kind of model that turns a word into tokens.
enum class ModelType : uint8_t {
  // BPE over ranked merges (tokenizers/src/models/bpe/model.rs): tokenizer.json "BPE", GGUF
  // "gemma4".
  kBpe = 0,
  // SentencePiece by scores, as llama.cpp's llm_tokenizer_spm (GGUF tokenizer.ggml.model
  // "llama", LLAMA_VOCAB_TYPE_SPM): adjacent symbols whose concatenation is a vocabulary piece
  // merge, highest TokenEntry::score first; see runtime/text/spm.h.
  kSpm = 1,
};

// The model (tokenizers/src/models/bpe/model.rs for BPE). The vocabulary is
// TokenizerSpec::tokens whose `in_model` is set. An SPM model uses no merges; unk_id and
// byte_fallback apply to both.
struct BpeSpec {
  ModelType type = ModelType::kBpe;
  std::vector<BpeMerge> merges;
  std::optional<TokenId> unk_id;  // `unk_token` resolved; none: unknown characters are dropped.
  bool fuse_unk = false;          // consecutive unknown characters give one unk token.
  bool byte_fallback = false;     // unknown characters become "<0xXX>" byte tokens.
  bool ignore_merges = false;     // a word that is a vocabulary piece is that token.
  std::string continuing_subword_prefix;  // "" when null.
  std::string end_of_word_suffix;         // "" when null.
};

// One entry of the token table, indexed by id.
struct TokenEntry {
  std::string piece;      // the vocabulary string (GGUF: the bytes of tokenizer.ggml.tokens).
  bool in_model = false;  // part of the BPE vocabulary (else only an added token, or a hole).
  float score = 0.0f;     // SPM: the piece's score (GGUF tokenizer.ggml.scores); unused for BPE.
};

// An added token (tokenizers AddedToken): matched in the text before the model runs.
struct AddedTokenSpec {
  TokenId id = 0;
  std::string content;
  bool special = false;      // skipped by decoding with skip_special_tokens.
  bool lstrip = false;       // the match takes the whitespace on its left.
  bool rstrip = false;       // the match takes the whitespace on its right.
  bool normalized = false;   // matched in the normalized text (else in the raw text).
  bool single_word = false;  // matched only when not inside a word.
};

// The TemplateProcessing post-processor's `single` template with its special tokens resolved:
// each item is the input sequence or a list of ids.
struct TemplateItem {
  bool is_sequence = false;
  std::vector<TokenId> ids;  // for a special token.
};
struct PostProcessorSpec {
  std::vector<TemplateItem> single;  // empty: no post-processor (nothing added).
};

// Sampling defaults and stop tokens for generation: generation_config.json (transformers
// GenerationConfig names) or a GGUF (eos/eot ids; llama.cpp's general.sampling.* keys, which its
// converter copies from generation_config.json). Unset = the file does not give it.
struct GenerationDefaults {
  std::vector<TokenId> eos_token_ids;  // generation stops on any of these (Gemma 4: 1 and 106).
  std::optional<float> temperature;    // general.sampling.temp
  std::optional<float> top_p;          // general.sampling.top_p
  std::optional<int32_t> top_k;        // general.sampling.top_k
  std::optional<bool> do_sample;       // false: greedy
  std::optional<float> min_p;          // general.sampling.min_p
  std::optional<float> typical_p;      // (no GGUF key)
  std::optional<float> repetition_penalty;  // general.sampling.penalty_repeat
  std::optional<int32_t> repeat_last_n;     // general.sampling.penalty_last_n (no HF field)
};

// Where the chat template came from, for cortiq-dump and the generation issue.
struct ChatTemplateSpec {
  std::string text;    // Jinja source; "" when the checkpoint ships none.
  std::string source;  // "chat_template.jinja", "tokenizer_config.json", "tokenizer.chat_template".
};

// The whole tokenizer.
struct TokenizerSpec {
  std::vector<TokenEntry> tokens;  // by id; its size is the vocabulary size.
  std::optional<NormalizerSpec> normalizer;
  std::optional<PreTokenizerSpec> pre_tokenizer;
  BpeSpec model;
  std::vector<AddedTokenSpec> added_tokens;
  PostProcessorSpec post_processor;
  std::optional<DecoderSpec> decoder;  // none: tokens joined by " " (HF's default).
  std::optional<TokenId> bos_id;
  std::optional<TokenId> eos_id;
  std::optional<TokenId> pad_id;
  GenerationDefaults generation;
  ChatTemplateSpec chat_template;
  std::string source;  // the file it was read from, for messages and cortiq-dump.
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_TOKENIZER_SPEC_H_
