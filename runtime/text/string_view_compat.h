// std::string_view → absl::string_view for absl::StrCat and absl containers: Debian's Abseil
// 20220623 is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so they are distinct types.
#ifndef CORTIQ_RUNTIME_TEXT_STRING_VIEW_COMPAT_H_
#define CORTIQ_RUNTIME_TEXT_STRING_VIEW_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace cortiq::text {

// A view of the same bytes as `text`.
inline absl::string_view Av(std::string_view text) { return {text.data(), text.size()}; }

}  // namespace cortiq::text

#endif  // CORTIQ_RUNTIME_TEXT_STRING_VIEW_COMPAT_H_
