// Text helpers shared by cortiq-dump's text and Graphviz renderers: shapes, cache types and
// short weight names.
#ifndef CORTIQ_TOOLS_CORTIQ_DUMP_DUMP_FORMAT_H_
#define CORTIQ_TOOLS_CORTIQ_DUMP_DUMP_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/plan.h"

namespace cortiq {
namespace dump {

// "[2, 16]".
std::string Shape(const std::vector<int64_t>& shape);
// "sliding W=8" / "full".
std::string CacheType(const CacheEntry& c);
// The weight name without the checkpoint's "model.language_model." prefix and, inside a layer,
// without "layers.N.": e.g. "self_attn.q_proj.weight".
std::string ShortWeightName(absl::string_view name);

}  // namespace dump
}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_DUMP_DUMP_FORMAT_H_
