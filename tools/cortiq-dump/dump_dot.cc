// cortiq-dump's Graphviz rendering (dump_output.h): one node per step, clustered by layer, with
// dataflow and KV edges.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/step_kind.h"
#include "tools/cortiq-dump/dump_format.h"
#include "tools/cortiq-dump/dump_output.h"

namespace cortiq {
namespace dump {

std::string DotQuote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string RenderDot(const DumpInput& in) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  std::string out;
  const std::string title =
      absl::StrCat("cortiq plan: ", plan.model.source, " (", plan.steps.size(), " steps, ",
                   plan.model.num_hidden_layers, " layers)");
  absl::StrAppend(&out, "digraph cortiq_plan {\n");
  absl::StrAppend(&out, "  graph [label=", DotQuote(title),
                  ", labelloc=t, fontname=\"Helvetica\", rankdir=TB, nodesep=0.25, "
                  "ranksep=0.3];\n");
  absl::StrAppend(&out,
                  "  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
                  "fontname=\"Helvetica\", fontsize=10];\n");
  absl::StrAppend(&out,
                  "  edge [color=gray40, arrowsize=0.6, fontname=\"Helvetica\", fontsize=10];\n");
  absl::StrAppend(&out, "  token [shape=ellipse, label=\"token, position\", fillcolor=gray90];\n");

  // By cost class (runtime/step_kind.h): weight streams blue, attention orange, cache writes
  // khaki, norms green.
  auto fill = [](StepKind kind) -> const char* {
    const StepKindInfo* info = FindStepKind(kind);
    switch (info != nullptr ? info->cost : StepCost::kElementwise) {
      case StepCost::kMatrix:
      case StepCost::kTableRow:
        return "lightblue";
      case StepCost::kAttention:
        return "orange";
      case StepCost::kCacheWrite:
        return "khaki";
      case StepCost::kRmsNorm:
        return "palegreen";
      default:
        return "white";
    }
  };
  // Clusters: consecutive steps of one layer.
  size_t i = 0;
  while (i < plan.steps.size()) {
    const int64_t layer = a.steps[i].layer;
    std::string label = layer == kPrologue ? "prologue (embeddings, per-layer inputs)"
                        : layer == kHead   ? "head (logits_only)"
                                           : absl::StrCat("layer ", layer);
    for (const LayerInfo& l : a.layers) {
      if (l.layer != layer || l.attention_step < 0) continue;
      absl::StrAppend(&label, ": ", CacheType(plan.caches[l.cache]),
                      l.kv_shared ? absl::StrCat(", KV of layer ", l.cache_layer)
                                  : absl::StrCat(", owns cache ", l.cache));
    }
    absl::StrAppend(&out, "  subgraph cluster_", LayerName(layer), "_", i,
                    " {\n    label=", DotQuote(label),
                    "; style=rounded; color=gray60; fontsize=12;\n");
    for (; i < plan.steps.size() && a.steps[i].layer == layer; ++i) {
      const Step& s = plan.steps[i];
      const StepInfo& info = a.steps[i];
      std::string node = absl::StrCat(i, " ", KindName(s.kind), " ", Shape(info.shape));
      if (s.weight >= 0) absl::StrAppend(&node, "\n", ShortWeightName(plan.weights[s.weight].name));
      if (s.scalar >= 0) {
        absl::StrAppend(&node, "\n+ ", ShortWeightName(plan.weights[s.scalar].name));
      }
      if (s.cache >= 0) absl::StrAppend(&node, "\ncache ", s.cache);
      absl::StrAppend(&out, "    s", i, " [label=", DotQuote(node), ", fillcolor=", fill(s.kind),
                      s.logits_only ? ", style=\"rounded,filled,dashed\"" : "", "];\n");
    }
    absl::StrAppend(&out, "  }\n");
  }
  absl::StrAppend(&out, "  logits [shape=ellipse, label=\"logits\", fillcolor=gray90];\n");

  // Dataflow.
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    const StepInfo& info = a.steps[s];
    if (step.kind == StepKind::kEmbedding) absl::StrAppend(&out, "  token -> s", s, ";\n");
    if (step.in0 >= 0 && info.producer0 >= 0) {
      absl::StrAppend(&out, "  s", info.producer0, " -> s", s, ";\n");
    }
    if (step.in1 >= 0 && info.producer1 >= 0 && info.producer1 != info.producer0) {
      absl::StrAppend(&out, "  s", info.producer1, " -> s", s, ";\n");
    }
  }
  if (plan.logits_buffer >= 0 && !a.buffers[plan.logits_buffer].writers.empty()) {
    absl::StrAppend(&out, "  s", a.buffers[plan.logits_buffer].writers.back(), " -> logits;\n");
  }
  // KV: the append of a cache to every attention reading it.
  for (size_t c = 0; c < plan.caches.size(); ++c) {
    const CacheInfo& info = a.caches[c];
    if (info.append_step < 0) continue;
    for (int32_t s : info.attention_steps) {
      const int64_t layer = a.steps[s].layer;
      if (layer == plan.caches[c].layer) {
        absl::StrAppend(&out, "  s", info.append_step, " -> s", s,
                        " [style=dashed, color=blue, fontcolor=blue, label=",
                        DotQuote(absl::StrCat("KV cache ", c)), "];\n");
      } else {
        absl::StrAppend(&out, "  s", info.append_step, " -> s", s,
                        " [style=dashed, color=red, fontcolor=red, penwidth=1.5, "
                        "constraint=false, label=",
                        DotQuote(absl::StrCat("KV of layer ", plan.caches[c].layer)), "];\n");
      }
    }
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

}  // namespace dump
}  // namespace cortiq
