// PreTokenizer: the `pre_tokenizer` of tokenizer.json, which splits normalized text into the
// words the model tokenizes one by one (tokenizers/src/pre_tokenizers: Sequence, Split with every
// SplitDelimiterBehavior and `invert`, Metaspace).
#ifndef CORTIQ_RUNTIME_TEXT_PRE_TOKENIZER_H_
#define CORTIQ_RUNTIME_TEXT_PRE_TOKENIZER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/text/regex.h"
#include "runtime/text/tokenizer_spec.h"

namespace cortiq::text {

// A piece of text between pre-tokenization steps.
struct PreToken {
  std::string text;
  // The piece starts at byte 0 of the original input (Metaspace's prepend_scheme "first" adds
  // the replacement only there).
  bool at_start = false;
};

class PreTokenizer {
 public:
  // Compiles `spec`. Errors: InvalidArgument for an invalid regex or a Metaspace replacement
  // that is not one character.
  static absl::StatusOr<PreTokenizer> Create(const PreTokenizerSpec& spec);

  // Applies every step to each piece in turn; empty pieces are dropped (as tokenizers'
  // PreTokenizedString::split does). Errors: Internal if a regex match fails.
  absl::Status Apply(std::vector<PreToken>* pieces) const;

 private:
  struct Step {
    PreTokenizerType type;
    std::optional<Regex> regex;  // kSplit with a regex.
    std::string literal;         // kSplit with a literal.
    SplitBehavior behavior;
    bool invert;
    std::string replacement;
    PrependScheme prepend_scheme;
    bool split;
  };
  absl::Status ApplyStep(const Step& step, const PreToken& in, std::vector<PreToken>* out) const;
  std::vector<Step> steps_;
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_PRE_TOKENIZER_H_
