// cortiq-dump's three renderings of an analysed artifact: aligned text tables (dump_text.cc), one
// JSON object (dump_json.cc) and a Graphviz digraph of the step graph (dump_dot.cc).
#ifndef CORTIQ_TOOLS_CORTIQ_DUMP_DUMP_OUTPUT_H_
#define CORTIQ_TOOLS_CORTIQ_DUMP_DUMP_OUTPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/artifact.h"
#include "runtime/plan.h"
#include "runtime/plan_encoding.h"
#include "runtime/text/tokenizer.h"
#include "tools/cortiq-dump/plan_analysis.h"

namespace cortiq {
namespace dump {

// Everything the renderers read.
struct DumpInput {
  std::string path;       // the artifact as named on the command line
  ArtifactHeader header;  // its decoded header
  uint64_t file_size = 0;
  const Plan* plan = nullptr;
  const Analysis* analysis = nullptr;
  // Seconds Artifact::VerifyWeights took if the weights were verified (--verify) and match
  // their hashes; negative if they were not verified.
  double verify_seconds = -1;
  std::vector<SectionEntry> sections;  // the named sections (3.1)
  // The tokenizer loaded from the tokenizer section; nullptr if there is none or it does not
  // load (then tokenizer_error says why, if there is a section).
  const text::Tokenizer* tokenizer = nullptr;
  std::string tokenizer_error;
};

// Sections: header, named sections and the tokenizer summary, layers, steps, buffers, weights, KV caches and sharing, totals per token.
std::string RenderText(const DumpInput& in);
// The same information as one JSON object (UTF-8, newline-terminated; base/json_writer.h). The
// plan's records appear under their field names in the artifact (runtime/plan_fields.h), each
// with its index and the analysis of it.
std::string RenderJson(const DumpInput& in);
// A Graphviz digraph: one node per step (clustered by layer), solid edges for buffer dataflow
// (producer -> reader), dashed blue edges kv_append -> attention of the same layer, dashed red
// edges labelled "KV of layer N" into the attention of KV-shared layers.
std::string RenderDot(const DumpInput& in);

// `text` as a Graphviz double-quoted string (quotes and backslashes escaped, newlines as "\n").
std::string DotQuote(absl::string_view text);

}  // namespace dump
}  // namespace cortiq

#endif  // CORTIQ_TOOLS_CORTIQ_DUMP_DUMP_OUTPUT_H_
