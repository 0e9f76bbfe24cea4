// Hand-built TokenizerSpecs for the unit tests of runtime/text (no file readers involved).
#ifndef CORTIQ_TESTS_RUNTIME_TEXT_SPEC_BUILDER_H_
#define CORTIQ_TESTS_RUNTIME_TEXT_SPEC_BUILDER_H_

#include <string>
#include <utility>
#include <vector>

#include "runtime/text/tokenizer.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq::text {

// A BPE spec over `pieces` (id = position) with `merges` given as piece pairs in rank order.
inline TokenizerSpec BpeSpec(const std::vector<std::string>& pieces,
                             const std::vector<std::pair<std::string, std::string>>& merges) {
  TokenizerSpec spec;
  spec.source = "test";
  for (const std::string& p : pieces) spec.tokens.push_back({p, true});
  const auto id = [&](const std::string& p) {
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i] == p) return static_cast<TokenId>(i);
    }
    return static_cast<TokenId>(-1);
  };
  for (size_t i = 0; i < merges.size(); ++i) {
    spec.model.merges.push_back({id(merges[i].first), id(merges[i].second),
                                 id(merges[i].first + merges[i].second),
                                 static_cast<uint32_t>(i)});
  }
  return spec;
}

// The pieces of the tokens of `text`.
inline std::vector<std::string> Pieces(const Tokenizer& t, const std::string& text) {
  std::vector<std::string> out;
  const std::vector<TokenId> ids = *t.Encode(text);  // not a range-for over a temporary
  for (TokenId id : ids) out.emplace_back(*t.TokenString(id));
  return out;
}

}  // namespace cortiq::text

#endif  // CORTIQ_TESTS_RUNTIME_TEXT_SPEC_BUILDER_H_
