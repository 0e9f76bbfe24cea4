// The tokenizer section: a self-contained, mmappable binary form of a TokenizerSpec that the
// artifact carries as one section, and a validated zero-copy view over it. No JSON is parsed at
// run time: the vocabulary, the merge ranks and the added-token matcher are laid out as tables
// that are used in place.
//
// Layout (all integers little-endian, every block 8-byte aligned; version 1.2):
//
//     header (64 bytes): magic "CQTOKEN\1", u32 version_major, u32 version_minor, u64 total_size,
//                        u64 checksum (ChecksumBytes of bytes [64, total_size)), u32 num_blocks,
//                        28 bytes zero
//     block directory:   num_blocks × {u32 kind, u32 reserved, u64 offset, u64 size}
//     blocks:
//       kPieceOffsets  u32[V + 1]: piece i is bytes [off[i], off[i+1]) of kPieceBytes
//       kPieceBytes    the pieces back to back
//       kTokenFlags    u8[V]: TokenFlag bits
//       kPieceHash     {u32 capacity (power of 2), u32 max_probe} u32 slots[capacity]: id + 1 at
//                      slot (HashPiece(piece) + k) mod capacity for the k-th probe, 0 = empty
//       kMergeHash     {u32 capacity, u32 max_probe, u32 num_merges, u32 0}
//                      {u32 left, u32 right, u32 rank, u32 result}[capacity] at
//                      (HashPair(left, right) + k) mod capacity; left = 0xFFFFFFFF: empty
//       kByteIds       u32[256]: the id of "<0xXX>" for each byte, 0xFFFFFFFF if absent
//       kAddedTokens   {u32 count, u32 pool_size} {u32 id, u32 flags, u32 offset, u32 size}[count]
//                      then the contents (pool)
//       kRawTrie       added tokens matched in the raw text: AddedTrie below
//       kNormalizedTrie added tokens matched in the normalized text
//       kBigramHash    {u32 capacity, u32 max_probe, u32 split_ok, u32 count} u64 slots[capacity]:
//                      BigramKey(a, b) of every pair of adjacent characters inside a vocabulary
//                      piece, at (Mix64(key) + k) mod capacity; 0 = empty
//       kConfig        the small parts (normalizer, pre-tokenizer, decoder trees, post-processor,
//                      BPE flags, special ids, generation defaults, chat template, source) in the
//                      tagged encoding of tokenizer_section.cc
//       kSamplingDefaults (1.1; optional) min_p, typical_p, repetition_penalty, repeat_last_n:
//                      each a u8 presence flag and the value (f32, f32, f32, i32)
//       kScores        (1.2; SPM models only) f32[V]: each piece's score
//
//     A reader skips blocks of kinds it does not know (a later minor's); every block of 1.0 is
//     required, kSamplingDefaults may be absent (a 1.0 section). An SPM model (1.2) ends kConfig
//     with one more byte, the ModelType, and has kScores; a BPE section's kConfig is as in 1.1, so
//     that a 1.1 reader refuses an SPM section ("unexpected bytes after the end" of the config)
//     instead of running it as BPE.
//
//     AddedTrie: {u32 num_nodes, u32 num_edges} u32 root[256] (child of the root per first byte,
//                0xFFFFFFFF none) {u32 first_edge, u32 num_edges, u32 token_plus_1}[num_nodes]
//                {u32 byte, u32 child}[num_edges] (a node's edges sorted by byte). Node 0 is the
//                root; token_plus_1 is an index into kAddedTokens + 1 (0: no token ends here).
#ifndef CORTIQ_RUNTIME_TEXT_TOKENIZER_SECTION_H_
#define CORTIQ_RUNTIME_TEXT_TOKENIZER_SECTION_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq::text {

inline constexpr char kTokenizerSectionMagic[8] = {'C', 'Q', 'T', 'O', 'K', 'E', 'N', '\1'};
inline constexpr uint32_t kTokenizerSectionVersionMajor = 1;
// 1.1: the kSamplingDefaults block. 1.2: SPM models (ModelType in kConfig, the kScores block).
inline constexpr uint32_t kTokenizerSectionVersionMinor = 2;
// Required alignment of a section's first byte (its u32/u64 tables are read in place).
inline constexpr size_t kTokenizerSectionAlignment = 8;

// Bounds a section may not exceed (checked by both the writer and the loader). The vocabulary:
// 2^24 tokens (Gemma's is 262,144); merges: 2^24 (Gemma's 514,906); a piece or added token: 64 KiB;
// the whole section: 1 GiB.
inline constexpr uint32_t kMaxTokenizerVocab = 1u << 24;
inline constexpr uint32_t kMaxTokenizerMerges = 1u << 24;
inline constexpr uint32_t kMaxPieceBytes = 1u << 16;
inline constexpr uint64_t kMaxTokenizerSectionBytes = uint64_t{1} << 30;

// Bits of kTokenFlags.
enum TokenFlag : uint8_t {
  kTokenInModel = 1,    // a vocabulary piece of the model (BPE or SPM)
  kTokenAdded = 2,      // an added token
  kTokenSpecial = 4,    // a special added token (skipped by skip_special_tokens)
  kTokenByte = 8,       // a byte-fallback piece "<0xXX>"
};

// Bits of an added token's flags.
enum AddedTokenFlag : uint32_t {
  kAddedSpecial = 1,
  kAddedLstrip = 2,
  kAddedRstrip = 4,
  kAddedNormalized = 8,
  kAddedSingleWord = 16,
};

// One merge table entry as stored.
struct MergeEntry {
  uint32_t left;
  uint32_t right;
  uint32_t rank;
  uint32_t result;
};

// One added token as stored (content in the pool).
struct AddedTokenEntry {
  uint32_t id;
  uint32_t flags;
  uint32_t offset;
  uint32_t size;
};

// Serializes `spec` to section bytes. Errors (InvalidArgument naming the spec's source and the
// field): a vocabulary or merge count above the bounds, a merge, added token, special id or
// post-processor id out of range, a piece longer than kMaxPieceBytes, a repeated piece in the
// model vocabulary, a configuration tree deeper than 16 levels.
absl::StatusOr<std::vector<uint8_t>> SerializeTokenizerSection(const TokenizerSpec& spec);

// The small parts of a section (kConfig), decoded on load.
struct TokenizerConfig {
  ModelType model_type = ModelType::kBpe;
  std::optional<NormalizerSpec> normalizer;
  std::optional<PreTokenizerSpec> pre_tokenizer;
  std::optional<DecoderSpec> decoder;
  PostProcessorSpec post_processor;
  std::optional<TokenId> unk_id;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  std::optional<TokenId> bos_id;
  std::optional<TokenId> eos_id;
  std::optional<TokenId> pad_id;
  GenerationDefaults generation;
  ChatTemplateSpec chat_template;
  std::string source;
};

// A trie over added-token contents, in place in the section.
struct AddedTrieView {
  struct Node {
    uint32_t first_edge;
    uint32_t num_edges;
    uint32_t token_plus_1;
  };
  struct Edge {
    uint32_t byte;
    uint32_t child;
  };
  const uint32_t* root = nullptr;  // [256]
  absl::Span<const Node> nodes;
  absl::Span<const Edge> edges;

  // Child of `node` on `byte`, or -1.
  int64_t Child(uint32_t node, uint8_t byte) const;
  bool empty() const { return nodes.size() <= 1; }
};

// A validated view over section bytes. Copyable; the bytes must outlive it.
class TokenizerSection {
 public:
  // Validates `bytes` (which must stay mapped while the view is used) and returns the view.
  // Errors (InvalidArgument "tokenizer section: ..."): misaligned start, bad magic, a major
  // version other than kTokenizerSectionVersionMajor (with both versions named), total_size
  // beyond the bytes given, checksum mismatch, a missing or misplaced block, any size, offset,
  // count or id out of range (naming the block), an undecodable config.
  static absl::StatusOr<TokenizerSection> Load(absl::Span<const uint8_t> bytes);

  // Vocabulary size V (ids are 0 .. V-1).
  uint32_t vocab_size() const { return vocab_size_; }
  // The piece of `id` (< V).
  std::string_view Piece(TokenId id) const {
    return std::string_view(reinterpret_cast<const char*>(piece_bytes_) + piece_offsets_[id],
                            piece_offsets_[id + 1] - piece_offsets_[id]);
  }
  uint8_t flags(TokenId id) const { return token_flags_[id]; }
  // The id of the BPE vocabulary piece `piece`, if any.
  std::optional<TokenId> FindPiece(std::string_view piece) const;
  // The merge of (left, right), or nullptr.
  const MergeEntry* FindMerge(uint32_t left, uint32_t right) const {
    uint64_t slot = HashSlot(left, right);
    for (uint32_t k = 0; k < merge_max_probe_; ++k) {
      const MergeEntry& e = merges_[slot];
      if (e.left == left && e.right == right) return &e;
      if (e.left == 0xFFFFFFFFu) return nullptr;
      slot = (slot + 1) & (merges_.size() - 1);
    }
    return nullptr;
  }
  uint32_t num_merges() const { return num_merges_; }
  // The score of `id` (< V) for an SPM model (config().model_type); 0 for BPE.
  float Score(TokenId id) const { return scores_ == nullptr ? 0.0f : scores_[id]; }
  // The "<0xXX>" token of `byte`, or -1.
  int64_t ByteId(uint8_t byte) const {
    return byte_ids_[byte] == 0xFFFFFFFFu ? -1 : static_cast<int64_t>(byte_ids_[byte]);
  }

  absl::Span<const AddedTokenEntry> added_tokens() const { return added_tokens_; }
  std::string_view AddedContent(const AddedTokenEntry& e) const {
    return std::string_view(reinterpret_cast<const char*>(added_pool_) + e.offset, e.size);
  }
  const AddedTrieView& raw_trie() const { return raw_trie_; }
  const AddedTrieView& normalized_trie() const { return normalized_trie_; }
  const TokenizerConfig& config() const { return config_; }
  // True if no vocabulary piece holds the character `a` followed by `b`: then no BPE symbol can
  // ever span a boundary between them, and a word may be split there and its halves merged
  // separately with the same result (tokenizers' merge order is by rank, then position, and no
  // merge crosses the boundary). Valid only when WordsSplitAtForeignBigrams().
  bool IsPieceBigram(char32_t a, char32_t b) const;
  // True if the bigram rule above is exact for this vocabulary: every merge joins pieces that
  // spell their text (no byte-fallback or unk operand; no subword prefix or suffix), and every
  // piece is UTF-8.
  bool WordsSplitAtForeignBigrams() const { return split_at_foreign_bigrams_; }

  // The section's bytes (as given to Load, up to total_size).
  absl::Span<const uint8_t> bytes() const { return bytes_; }

 private:
  uint64_t HashSlot(uint32_t left, uint32_t right) const;

  absl::Span<const uint8_t> bytes_;
  uint32_t vocab_size_ = 0;
  const uint32_t* piece_offsets_ = nullptr;
  const uint8_t* piece_bytes_ = nullptr;
  const uint8_t* token_flags_ = nullptr;
  absl::Span<const uint32_t> piece_slots_;
  uint32_t piece_max_probe_ = 0;
  absl::Span<const MergeEntry> merges_;
  uint32_t merge_max_probe_ = 0;
  uint32_t num_merges_ = 0;
  const uint32_t* byte_ids_ = nullptr;
  const float* scores_ = nullptr;  // [V], SPM only
  absl::Span<const AddedTokenEntry> added_tokens_;
  const uint8_t* added_pool_ = nullptr;
  absl::Span<const uint64_t> bigram_slots_;
  uint32_t bigram_max_probe_ = 0;
  bool split_at_foreign_bigrams_ = false;
  AddedTrieView raw_trie_;
  AddedTrieView normalized_trie_;
  TokenizerConfig config_;
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_TOKENIZER_SECTION_H_
