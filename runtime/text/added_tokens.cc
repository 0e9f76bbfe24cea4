// Added-token splitting (see added_tokens.h).
#include "runtime/text/added_tokens.h"

#include <algorithm>

#include "runtime/text/unicode.h"

namespace cortiq::text {
namespace {

// The code point that ends at text[end) (end > 0).
char32_t CharBefore(std::string_view text, size_t end, size_t* start) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  *start = i;
  size_t j = i;
  return DecodeUtf8(text, &j);
}

}  // namespace

std::vector<AddedSplit> SplitOnAddedTokens(const TokenizerSection& section,
                                           const AddedTrieView& trie, std::string_view text) {
  std::vector<AddedSplit> splits;
  if (trie.empty()) {
    if (!text.empty()) splits.push_back({0, text.size(), -1});
    return splits;
  }
  // Matches of the automaton (leftmost-longest, non-overlapping), adjusted as find_matches does.
  struct Match {
    size_t start;
    size_t end;
    int32_t index;
  };
  std::vector<Match> matches;
  size_t start_offset = 0;  // end of the last kept match (after rstrip)
  size_t pos = 0;
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  while (pos < text.size()) {
    // Longest token starting at `pos`.
    int64_t node = trie.Child(0, bytes[pos]);
    if (node < 0) {
      ++pos;
      continue;
    }
    size_t best_end = 0;
    int32_t best = -1;
    size_t i = pos + 1;
    while (true) {
      const uint32_t t = trie.nodes[node].token_plus_1;
      if (t != 0) {
        best_end = i;
        best = static_cast<int32_t>(t - 1);
      }
      if (i >= text.size()) break;
      node = trie.Child(static_cast<uint32_t>(node), bytes[i]);
      if (node < 0) break;
      ++i;
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    size_t start = pos;
    size_t stop = best_end;
    pos = best_end;  // the automaton resumes after the raw match whatever happens to it
    const AddedTokenEntry& token = section.added_tokens()[best];
    if (token.flags & kAddedSingleWord) {
      size_t unused;
      const bool start_space = start == 0 || !IsWordCharacter(CharBefore(text, start, &unused));
      size_t k = stop;
      const bool stop_space = stop == text.size() || !IsWordCharacter(DecodeUtf8(text, &k));
      if (!start_space || !stop_space) continue;
    }
    if (token.flags & kAddedLstrip) {
      size_t new_start = start;
      while (new_start > 0) {
        size_t char_start;
        if (!IsWhitespace(CharBefore(text, new_start, &char_start))) break;
        new_start = char_start;
      }
      start = std::max(new_start, start_offset);
    }
    if (token.flags & kAddedRstrip) {
      while (stop < text.size()) {
        size_t k = stop;
        if (!IsWhitespace(DecodeUtf8(text, &k))) break;
        stop = k;
      }
    }
    matches.push_back({start, stop, best});
    start_offset = stop;
  }
  size_t offset = 0;
  for (const Match& m : matches) {
    if (offset < m.start) splits.push_back({offset, m.start, -1});
    if (m.end > m.start) splits.push_back({m.start, m.end, m.index});
    offset = std::max(offset, m.end);
  }
  if (offset < text.size()) splits.push_back({offset, text.size(), -1});
  return splits;
}

}  // namespace cortiq::text
