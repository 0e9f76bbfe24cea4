// PCRE2 wrapper with Oniguruma-style match iteration (see regex.h).
#include "runtime/text/regex.h"

#include <string>
#include <utility>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "absl/strings/str_cat.h"
#include "runtime/text/string_view_compat.h"
#include "runtime/text/unicode.h"

namespace cortiq::text {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

Regex::Regex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

absl::StatusOr<Regex> Regex::Compile(std::string_view pattern) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return absl::InvalidArgumentError(absl::StrCat("invalid regex \"", Av(pattern), "\": ",
                                                   reinterpret_cast<const char*>(message),
                                                   " at offset ", error_offset));
  }
  // JIT is an optimization: without it (no JIT support on the platform) matching still works.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  auto impl = std::make_unique<Impl>();
  impl->code = code;
  return Regex(std::move(impl));
}

absl::StatusOr<Regex> Regex::Literal(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size() + 4);
  escaped += "\\Q";
  // \Q...\E quotes everything except a literal "\E", which is split.
  size_t start = 0;
  while (true) {
    const size_t end = text.find("\\E", start);
    if (end == std::string_view::npos) {
      escaped.append(text.substr(start));
      break;
    }
    escaped.append(text.substr(start, end - start));
    escaped += "\\\\E\\Q";
    start = end + 2;
  }
  escaped += "\\E";
  return Compile(escaped);
}

absl::Status Regex::ForEachMatch(std::string_view text,
                                 absl::FunctionRef<void(size_t, size_t)> visit) const {
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (data == nullptr) return absl::ResourceExhaustedError("regex: out of memory");
  size_t search_from = 0;
  bool have_last = false;
  size_t last_end = 0;
  absl::Status status;
  while (search_from <= text.size()) {
    const int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(text.data()),
                               text.size(), search_from, PCRE2_NO_UTF_CHECK, data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      status = absl::InternalError(
          absl::StrCat("regex match failed: ", reinterpret_cast<const char*>(message)));
      break;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const size_t start = ovector[0];
    const size_t end = ovector[1];
    if (start == end && have_last && last_end == end) {
      // onig's FindMatches: no empty match right after the previous one; retry a character on.
      search_from += search_from < text.size()
                         ? Utf8Length(static_cast<unsigned char>(text[search_from]))
                         : 1;
      continue;
    }
    visit(start, end);
    have_last = true;
    last_end = end;
    search_from = end;
    if (start == end && end == text.size()) break;
  }
  pcre2_match_data_free(data);
  return status;
}

}  // namespace cortiq::text
