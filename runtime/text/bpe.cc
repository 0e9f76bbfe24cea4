// BPE merges over the section's merge hash (see bpe.h).
#include "runtime/text/bpe.h"

#include <algorithm>
#include <string>

#include "runtime/text/unicode.h"

namespace cortiq::text {

BpeModel::BpeModel(const TokenizerSection* section)
    : section_(section), config_(&section->config()) {
  for (int c = 0; c < 128; ++c) {
    const char ch = static_cast<char>(c);
    const std::optional<TokenId> id = section_->FindPiece(std::string_view(&ch, 1));
    ascii_ids_[c] = id.value_or(-1);
  }
  unk_id_ = config_->unk_id.value_or(-1);
}

void BpeModel::SplitWord(std::string_view word, std::vector<Symbol>* symbols) const {
  const bool plain = config_->continuing_subword_prefix.empty() && config_->end_of_word_suffix.empty();
  // The pending unk: (id, byte length), fused while fuse_unk.
  TokenId unk = -1;
  uint32_t unk_len = 0;
  const auto add = [&](TokenId id, uint32_t len) {
    const int32_t index = static_cast<int32_t>(symbols->size());
    symbols->push_back(Symbol{id, index - 1, index + 1, len});
  };
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
        add(unk, unk_len);
        unk = -1;
      }
      add(id, byte_len);
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
        for (const char b : lookup) {
          add(static_cast<TokenId>(section_->ByteId(static_cast<uint8_t>(b))), 1);
        }
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (unk >= 0 && config_->fuse_unk) {
        unk_len += byte_len;
      } else {
        if (unk >= 0) add(unk, unk_len);
        unk = unk_id_;
        unk_len = byte_len;
      }
    }
  }
  if (unk >= 0) add(unk, unk_len);
  if (!symbols->empty()) symbols->back().next = -1;
}

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

  struct Merge {
    uint32_t rank;
    uint32_t pos;
    uint32_t new_id;
  };
  // std heap is a max-heap: "less" means later, so the top is the lowest (rank, pos).
  const auto later = [](const Merge& a, const Merge& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  std::vector<Merge> heap;
  heap.reserve(symbols.size());
  for (size_t p = 0; p + 1 < symbols.size(); ++p) {
    if (const MergeEntry* m = section_->FindMerge(static_cast<uint32_t>(symbols[p].id),
                                                  static_cast<uint32_t>(symbols[p + 1].id))) {
      heap.push_back(Merge{m->rank, static_cast<uint32_t>(p), m->result});
    }
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Merge top = heap.back();
    heap.pop_back();
    Symbol& current = symbols[top.pos];
    if (current.len == 0 || current.next == -1) continue;
    const int32_t next_pos = current.next;
    const Symbol right = symbols[next_pos];
    // A stale entry: the pair at this position changed since it was pushed (word.rs checks the
    // merge's new id, not its rank).
    const MergeEntry* check = section_->FindMerge(static_cast<uint32_t>(current.id),
                                                  static_cast<uint32_t>(right.id));
    if (check == nullptr || check->result != top.new_id) continue;
    current.id = static_cast<TokenId>(top.new_id);
    current.len += right.len;
    current.next = right.next;
    symbols[next_pos].len = 0;
    if (right.next >= 0) symbols[right.next].prev = static_cast<int32_t>(top.pos);
    if (current.prev >= 0) {
      const Symbol& prev = symbols[current.prev];
      if (const MergeEntry* m = section_->FindMerge(static_cast<uint32_t>(prev.id),
                                                    static_cast<uint32_t>(current.id))) {
        heap.push_back(Merge{m->rank, static_cast<uint32_t>(current.prev), m->result});
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
    if (current.next >= 0) {
      const Symbol& next = symbols[current.next];
      if (const MergeEntry* m = section_->FindMerge(static_cast<uint32_t>(current.id),
                                                    static_cast<uint32_t>(next.id))) {
        heap.push_back(Merge{m->rank, top.pos, m->result});
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
  }
  for (const Symbol& s : symbols) {
    if (s.len != 0) out->push_back(s.id);
  }
}

}  // namespace cortiq::text
