// Regex: the regular expressions of tokenizer.json (`{"Regex": ...}` patterns of Replace and
// Split), compiled with PCRE2 in UTF + UCP mode (\s, \w, \d, \p{..} are Unicode-aware, as in
// Oniguruma, which Hugging Face `tokenizers` uses) and JIT-compiled when available.
#ifndef CORTIQ_RUNTIME_TEXT_REGEX_H_
#define CORTIQ_RUNTIME_TEXT_REGEX_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace cortiq::text {

class Regex {
 public:
  // Compiles `pattern`. Error: InvalidArgument "invalid regex \"<pattern>\": <PCRE2 message> at
  // offset N" (the caller prefixes the file and field).
  static absl::StatusOr<Regex> Compile(std::string_view pattern);

  // A literal: `text` matched as a plain string (regex metacharacters escaped).
  static absl::StatusOr<Regex> Literal(std::string_view text);

  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  // Calls visit(start, end) (byte offsets) for each match in `text` (valid UTF-8) from left to
  // right, without overlaps, as the onig crate's find_iter does: the search resumes at the end of
  // the previous match, and an empty match right at the end of the previous match is skipped by
  // resuming one character later. Errors: Internal if PCRE2 fails (match limit).
  absl::Status ForEachMatch(std::string_view text,
                            absl::FunctionRef<void(size_t, size_t)> visit) const;

 private:
  struct Impl;
  explicit Regex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_REGEX_H_
