// BPE merges over the section's merge hash (see bpe.h).
#include "runtime/text/bpe.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/container/flat_hash_map.h"

#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

// A direct-mapped cache of merge-table lookups (hits and misses), per thread and section: the
// pairs of running text repeat ("t"+"h", "▁"+"the"), and a lookup in the ~16 MB merge table
// costs a cache miss. 4096 entries × 16 bytes stay in L2.
class MergeCache {
 public:
  static constexpr uint32_t kSlots = 4096;
  void Reset(const TokenizerSection* section) {
    section_ = section;
    for (Slot& s : slots_) s.left = 0xFFFFFFFFu;
  }
  const TokenizerSection* section() const { return section_; }
  const MergeEntry* Find(uint32_t left, uint32_t right) {
    Slot& s = slots_[(left * 0x9E3779B1u ^ right * 0x85EBCA77u) >> 20];
    if (s.left == left && s.right == right) return s.entry;
    s.left = left;
    s.right = right;
    s.entry = section_->FindMerge(left, right);
    return s.entry;
  }

 private:
  struct Slot {
    uint32_t left;
    uint32_t right;
    const MergeEntry* entry;
  };
  const TokenizerSection* section_ = nullptr;
  Slot slots_[kSlots];
};

MergeCache& ThreadMergeCache(const TokenizerSection* section) {
  thread_local MergeCache cache;
  // Another tokenizer (or one at the same address after a reload) starts a cold cache.
  thread_local uint64_t checksum = 0;
  uint64_t sum;
  std::memcpy(&sum, section->bytes().data() + 24, 8);
  if (cache.section() != section || checksum != sum) {
    cache.Reset(section);
    checksum = sum;
  }
  return cache;
}

}  // namespace

BpeModel::BpeModel(const TokenizerSection* section)
    : section_(section), config_(&section->config()) {
  for (int c = 0; c < 128; ++c) {
    const char ch = static_cast<char>(c);
    const std::optional<TokenId> id = section_->FindPiece(std::string_view(&ch, 1));
    ascii_ids_[c] = id.value_or(-1);
  }
  unk_id_ = config_->unk_id.value_or(-1);
  chunking_ = section_->WordsSplitAtForeignBigrams();
  if (chunking_) {
    for (int a = 0; a < 128; ++a) {
      for (int b = 0; b < 128; ++b) {
        if (section_->IsPieceBigram(a, b)) ascii_bigrams_[a][b >> 6] |= uint64_t{1} << (b & 63);
      }
    }
  }
}

void BpeModel::SplitWord(std::string_view word, std::vector<Symbol>* symbols) const {
  const bool plain = config_->continuing_subword_prefix.empty() && config_->end_of_word_suffix.empty();
  // The pending unk: (id, byte length), fused while fuse_unk.
  TokenId unk = -1;
  uint32_t unk_len = 0;
  const auto add = [&](TokenId id, uint32_t len, uint32_t start, bool fixed) {
    const int32_t index = static_cast<int32_t>(symbols->size());
    symbols->push_back(Symbol{id, index - 1, index + 1, len, start, fixed});
  };
  uint32_t unk_start = 0;
  std::string decorated;
  size_t i = 0;
  while (i < word.size()) {
    const size_t start = i;
    const unsigned char lead = static_cast<unsigned char>(word[i]);
    i += Utf8Length(lead);
    const std::string_view ch = word.substr(start, i - start);
    const uint32_t byte_len = static_cast<uint32_t>(ch.size());
    TokenId id = -1;
    std::string_view lookup = ch;
    if (!plain) {
      decorated.clear();
      if (start != 0) decorated += config_->continuing_subword_prefix;
      decorated.append(ch);
      if (i == word.size()) decorated += config_->end_of_word_suffix;
      lookup = decorated;
    }
    if (lookup.size() == 1 && lead < 0x80) {
      id = ascii_ids_[lead];
    } else {
      id = section_->FindPiece(lookup).value_or(-1);
    }
    if (id >= 0) {
      if (unk >= 0) {
        add(unk, unk_len, unk_start, true);
        unk = -1;
      }
      add(id, byte_len, static_cast<uint32_t>(start), false);
      continue;
    }
    if (config_->byte_fallback) {
      bool all = true;
      for (const char b : lookup) {
        if (section_->ByteId(static_cast<uint8_t>(b)) < 0) {
          all = false;
          break;
        }
      }
      if (all) {
        // tokenizers pushes the byte tokens without flushing a pending unk first.
        uint32_t at = static_cast<uint32_t>(start);
        for (const char b : lookup) {
          add(static_cast<TokenId>(section_->ByteId(static_cast<uint8_t>(b))), 1, at++, true);
        }
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (unk >= 0 && config_->fuse_unk) {
        unk_len += byte_len;
      } else {
        if (unk >= 0) add(unk, unk_len, unk_start, true);
        unk = unk_id_;
        unk_len = byte_len;
        unk_start = static_cast<uint32_t>(start);
      }
    }
  }
  if (unk >= 0) add(unk, unk_len, unk_start, true);
  if (!symbols->empty()) symbols->back().next = -1;
}

void BpeModel::MergeRange(std::vector<Symbol>* all, size_t begin, size_t end,
                          std::vector<TokenId>* out) const {
  std::vector<Symbol>& symbols = *all;
  symbols[begin].prev = -1;
  symbols[end - 1].next = -1;
  // A heap entry: the merge of the pair at `pos` (left, right) into new_id, ordered by
  // key = rank << 32 | pos (lowest first: word.rs's Merge ordering).
  struct Merge {
    uint64_t key;
    uint32_t left;
    uint32_t right;
    uint32_t new_id;
  };
  const auto later = [](const Merge& a, const Merge& b) { return a.key > b.key; };
  const auto make = [](const MergeEntry& m, uint32_t pos) {
    return Merge{(static_cast<uint64_t>(m.rank) << 32) | pos, m.left, m.right, m.result};
  };
  MergeCache& cache = ThreadMergeCache(section_);
  std::vector<Merge> heap;
  heap.reserve(symbols.size());
  for (size_t p = begin; p + 1 < end; ++p) {
    if (const MergeEntry* m = cache.Find(static_cast<uint32_t>(symbols[p].id),
                                         static_cast<uint32_t>(symbols[p + 1].id))) {
      heap.push_back(make(*m, static_cast<uint32_t>(p)));
    }
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Merge top = heap.back();
    heap.pop_back();
    const uint32_t pos = static_cast<uint32_t>(top.key);
    Symbol& current = symbols[pos];
    if (current.len == 0 || current.next == -1) continue;
    const int32_t next_pos = current.next;
    const Symbol right = symbols[next_pos];
    // A stale entry: the pair at this position changed since it was pushed. word.rs accepts
    // the entry if the current pair's merge has the entry's new id; when the pair itself is
    // unchanged that holds without a lookup.
    if (static_cast<uint32_t>(current.id) != top.left ||
        static_cast<uint32_t>(right.id) != top.right) {
      const MergeEntry* check = cache.Find(static_cast<uint32_t>(current.id),
                                           static_cast<uint32_t>(right.id));
      if (check == nullptr || check->result != top.new_id) continue;
    }
    current.id = static_cast<TokenId>(top.new_id);
    current.len += right.len;
    current.next = right.next;
    symbols[next_pos].len = 0;
    if (right.next >= 0) symbols[right.next].prev = static_cast<int32_t>(pos);
    if (current.prev >= 0) {
      const Symbol& prev = symbols[current.prev];
      if (const MergeEntry* m = cache.Find(static_cast<uint32_t>(prev.id),
                                           static_cast<uint32_t>(current.id))) {
        heap.push_back(make(*m, static_cast<uint32_t>(current.prev)));
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
    if (current.next >= 0) {
      const Symbol& next = symbols[current.next];
      if (const MergeEntry* m = cache.Find(static_cast<uint32_t>(current.id),
                                           static_cast<uint32_t>(next.id))) {
        heap.push_back(make(*m, pos));
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }
  for (size_t i = begin; i < end; ++i) {
    if (symbols[i].len != 0) out->push_back(symbols[i].id);
  }
}

namespace {

// Tokens of recently seen chunks, per thread and section (cleared past kMaxEntries).
struct ChunkCache {
  static constexpr size_t kMaxEntries = 1 << 16;
  static constexpr size_t kMaxChunkBytes = 64;
  const TokenizerSection* section = nullptr;
  uint64_t checksum = 0;
  absl::flat_hash_map<std::string, std::vector<TokenId>> map;
};

ChunkCache& ThreadChunkCache(const TokenizerSection* section) {
  thread_local ChunkCache cache;
  uint64_t sum;
  std::memcpy(&sum, section->bytes().data() + 24, 8);
  if (cache.section != section || cache.checksum != sum) {
    cache.map.clear();
    cache.section = section;
    cache.checksum = sum;
  }
  return cache;
}

}  // namespace

void BpeModel::Tokenize(std::string_view word, std::vector<TokenId>* out) const {
  if (word.empty()) return;
  if (config_->ignore_merges) {
    if (const std::optional<TokenId> id = section_->FindPiece(word)) {
      out->push_back(*id);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  SplitWord(word, &symbols);
  if (symbols.empty()) return;
  if (!chunking_) {
    MergeRange(&symbols, 0, symbols.size(), out);
    return;
  }
  ChunkCache& cache = ThreadChunkCache(section_);
  const auto flush = [&](size_t begin, size_t end) {
    const uint32_t from = symbols[begin].start;
    const uint32_t to = symbols[end - 1].start + symbols[end - 1].len;
    if (end - begin == 1) {
      out->push_back(symbols[begin].id);
      return;
    }
    const std::string_view text = word.substr(from, to - from);
    const bool cacheable = text.size() <= ChunkCache::kMaxChunkBytes;
    if (cacheable) {
      const auto it = cache.map.find(absl::string_view(text.data(), text.size()));
      if (it != cache.map.end()) {
        out->insert(out->end(), it->second.begin(), it->second.end());
        return;
      }
    }
    const size_t first = out->size();
    MergeRange(&symbols, begin, end, out);
    if (cacheable) {
      if (cache.map.size() >= ChunkCache::kMaxEntries) cache.map.clear();
      cache.map.emplace(std::string(text), std::vector<TokenId>(out->begin() + first, out->end()));
    }
  };
  size_t chunk_begin = 0;
  for (size_t i = 1; i < symbols.size(); ++i) {
    const Symbol& left = symbols[i - 1];
    const Symbol& right = symbols[i];
    bool cut = left.fixed || right.fixed;
    if (!cut) {
      // The characters on both sides of the boundary.
      size_t a_start = right.start - 1;
      while (a_start > 0 && (static_cast<unsigned char>(word[a_start]) & 0xC0) == 0x80) --a_start;
      const unsigned char a0 = static_cast<unsigned char>(word[a_start]);
      const unsigned char b0 = static_cast<unsigned char>(word[right.start]);
      if (a0 < 0x80 && b0 < 0x80) {
        cut = !((ascii_bigrams_[a0][b0 >> 6] >> (b0 & 63)) & 1);
      } else {
        size_t k = a_start;
        const char32_t a = DecodeUtf8(word, &k);
        k = right.start;
        const char32_t b = DecodeUtf8(word, &k);
        cut = !section_->IsPieceBigram(a, b);
      }
    }
    if (cut) {
      flush(chunk_begin, i);
      chunk_begin = i;
    }
  }
  flush(chunk_begin, symbols.size());
}

}  // namespace cortiq::text
