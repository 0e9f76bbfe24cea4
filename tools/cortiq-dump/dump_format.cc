// Text helpers of cortiq-dump's renderers (dump_format.h).
#include "tools/cortiq-dump/dump_format.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace cortiq {
namespace dump {

std::string Shape(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::string CacheType(const CacheEntry& c) {
  return c.sliding ? absl::StrCat("sliding W=", c.window) : std::string("full");
}

std::string ShortWeightName(absl::string_view name) {
  const size_t layers = name.find("layers.");
  if (layers != absl::string_view::npos && (layers == 0 || name[layers - 1] == '.')) {
    const size_t dot = name.find('.', layers + 7);
    if (dot != absl::string_view::npos) return std::string(name.substr(dot + 1));
  }
  for (absl::string_view prefix : {"model.language_model.", "language_model.model.", "model."}) {
    if (absl::ConsumePrefix(&name, prefix)) break;
  }
  return std::string(name);
}

}  // namespace dump
}  // namespace cortiq
