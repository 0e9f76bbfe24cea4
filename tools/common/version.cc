// ToolVersion (see version.h) over the build's description (build_info.cc, written by
// cmake/build_info.cmake at every build, rewritten only when it changes).
#include "tools/common/version.h"

#include "absl/strings/str_cat.h"
#include "runtime/artifact.h"
#include "runtime/cortiq.h"

namespace cortiq {

// Defined in the generated build_info.cc.
extern const char kBuildGitDescription[];

std::string ToolVersion(absl::string_view tool) {
#ifdef NDEBUG
  constexpr const char* kAssertions = "";
#else
  constexpr const char* kAssertions = ", assertions on";
#endif
  return absl::StrCat(tool, " ", CORTIQ_VERSION, " (git ", kBuildGitDescription, ", ",
                      CORTIQ_BUILD_TYPE, " build", kAssertions, "; artifact format ",
                      kArtifactVersionMajor, ".", kArtifactVersionMinor, ", C API ",
                      CORTIQ_API_VERSION_MAJOR, ".", CORTIQ_API_VERSION_MINOR, ")");
}

}  // namespace cortiq
