// SpmModel (see spm.h).
#include "runtime/text/spm.h"

#include <cstdint>
#include <optional>
#include <queue>

#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t start;  // byte offset in the word
  uint32_t len;    // bytes; 0 once merged into its left neighbour
};

// llm_bigram_spm: a candidate merge of symbols left and right (adjacent when pushed), whose
// concatenation (size bytes) is a piece of score `score`.
struct Bigram {
  int32_t left;
  int32_t right;
  float score;
  uint32_t size;
};

// llm_bigram_spm::comparator: the highest score on top, then the lowest left index.
struct Lower {
  bool operator()(const Bigram& l, const Bigram& r) const {
    return l.score < r.score || (l.score == r.score && l.left > r.left);
  }
};

}  // namespace

SpmModel::SpmModel(const TokenizerSection* section) : section_(section) {}

void SpmModel::AppendUnknown(std::string_view character, std::vector<TokenId>* out) const {
  TokenId bytes[4];
  size_t n = 0;
  for (const char ch : character) {
    const uint8_t b = static_cast<uint8_t>(ch);
    int64_t id = section_->ByteId(b);
    if (id < 0) {
      const std::optional<TokenId> raw = section_->FindPiece(std::string_view(&ch, 1));
      if (!raw) {
        n = 0;
        break;
      }
      id = *raw;
    }
    bytes[n++] = static_cast<TokenId>(id);
  }
  if (n == character.size()) {
    out->insert(out->end(), bytes, bytes + n);
  } else if (section_->config().unk_id) {
    out->push_back(*section_->config().unk_id);
  }
}

void SpmModel::Tokenize(std::string_view word, std::vector<TokenId>* out) const {
  if (word.empty()) return;
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t offset = 0; offset < word.size();) {
    const size_t start = offset;
    DecodeUtf8(word, &offset);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back(Symbol{index - 1, offset == word.size() ? -1 : index + 1,
                             static_cast<uint32_t>(start), static_cast<uint32_t>(offset - start)});
  }
  std::priority_queue<Bigram, std::vector<Bigram>, Lower> queue;
  const auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = symbols[left].len + symbols[right].len;
    const std::optional<TokenId> id = section_->FindPiece(word.substr(symbols[left].start, size));
    if (!id) return;
    queue.push(Bigram{left, right, section_->Score(*id), size});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& left = symbols[b.left];
    Symbol& right = symbols[b.right];
    // A stale candidate: one side has merged since it was pushed.
    if (left.len == 0 || right.len == 0 || left.len + right.len != b.size) continue;
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }
  for (int32_t i = 0; i != -1; i = symbols[i].next) {
    const std::string_view text = word.substr(symbols[i].start, symbols[i].len);
    // Every merged symbol is a piece; only a single character may not be one.
    if (const std::optional<TokenId> id = section_->FindPiece(text)) {
      out->push_back(*id);
    } else {
      AppendUnknown(text, out);
    }
  }
}

}  // namespace cortiq::text
