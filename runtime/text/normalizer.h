// Normalizer: the `normalizer` of tokenizer.json applied to text (tokenizers/src/normalizers:
// Sequence, Replace, Prepend, NFC, NFKC, NFD, NFKD).
#ifndef CORTIQ_RUNTIME_TEXT_NORMALIZER_H_
#define CORTIQ_RUNTIME_TEXT_NORMALIZER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/text/regex.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq::text {

class Normalizer {
 public:
  // Compiles `spec` (its regexes). Errors: InvalidArgument for an invalid regex, naming it.
  static absl::StatusOr<Normalizer> Create(const NormalizerSpec& spec);

  // The normalized form of `text` (valid UTF-8): each step in order. Replace replaces every
  // non-overlapping match (leftmost first) with its content; Prepend prefixes a non-empty text.
  // Errors: Internal if a regex match fails.
  absl::StatusOr<std::string> Apply(std::string_view text) const;

 private:
  struct Step {
    NormalizerType type;
    std::string pattern;           // kReplace with a literal.
    std::optional<Regex> regex;    // kReplace with a regex.
    std::string content;
  };
  std::vector<Step> steps_;
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_NORMALIZER_H_
