// std::string_view → absl::string_view. Debian's Abseil 20220623 is built with
// ABSL_OPTION_USE_STD_STRING_VIEW=0, so absl::StrCat and absl containers do not accept
// std::string_view directly (internal to compiler/checkpoint).
#ifndef CORTIQ_FORMATS_ABSL_COMPAT_H_
#define CORTIQ_FORMATS_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace cortiq {

// A view of the same bytes as `text`.
inline absl::string_view ToAbsl(std::string_view text) { return {text.data(), text.size()}; }

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_ABSL_COMPAT_H_
