// The version line of the cortiq tools (--version): what was built, from which source, how.
#ifndef CORTIQ_TOOLS_COMMON_VERSION_H_
#define CORTIQ_TOOLS_COMMON_VERSION_H_

#include <string>
#include "absl/strings/string_view.h"

namespace cortiq {

// "TOOL VERSION (git DESCRIPTION, BUILD_TYPE build[, assertions on]; artifact format X.Y, C API
// X.Y)": VERSION is the CMake project version, DESCRIPTION `git describe --always --dirty` of the
// source tree when this binary was linked ("unknown" outside a git checkout), BUILD_TYPE
// CMAKE_BUILD_TYPE; "assertions on" when NDEBUG was not defined.
std::string ToolVersion(absl::string_view tool);

}  // namespace cortiq

#endif  // CORTIQ_TOOLS_COMMON_VERSION_H_
