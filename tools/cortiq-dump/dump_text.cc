// cortiq-dump's text rendering (dump_output.h): aligned tables of the header, layers, steps,
// buffers, weights, KV caches and per-token totals.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "runtime/text/tokenizer_summary.h"
#include "tools/cortiq-dump/dump_format.h"
#include "tools/cortiq-dump/dump_output.h"

namespace cortiq {
namespace dump {
namespace {

// "1.65 MiB" (binary units), "512 B" below 1 KiB.
std::string HumanBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", value, kUnits[unit]);
}

// "1.23 GFLOP" style (decimal units).
std::string HumanFlops(uint64_t flops) {
  static const char* const kUnits[] = {"kFLOP", "MFLOP", "GFLOP", "TFLOP"};
  if (flops < 1000) return absl::StrCat(flops, " FLOP");
  double value = static_cast<double>(flops) / 1000;
  int unit = 0;
  while (value >= 1000 && unit < 3) {
    value /= 1000;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", value, kUnits[unit]);
}

// "704 B" or, from 1 KiB, "63616 B (62.12 KiB)".
std::string Bytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  return absl::StrCat(bytes, " B (", HumanBytes(bytes), ")");
}

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string Hex(uint64_t value) { return absl::StrFormat("0x%x", value); }

std::string Operands(const Step& s) {
  std::vector<std::string> ops;
  if (s.in0 >= 0) ops.push_back(absl::StrCat("b", s.in0));
  if (s.in1 >= 0) ops.push_back(absl::StrCat("b", s.in1));
  std::string text = ops.empty() ? "-" : absl::StrJoin(ops, ",");
  if (s.kind == StepKind::kKvAppend) {
    absl::StrAppend(&text, " -> cache ", s.cache);
  } else {
    absl::StrAppend(&text, " -> b", s.out);
  }
  return text;
}

std::string ArenaOffsets(const Plan& plan, const Step& s) {
  std::vector<std::string> ops;
  if (s.in0 >= 0) ops.push_back(Hex(plan.buffers[s.in0].offset));
  if (s.in1 >= 0) ops.push_back(Hex(plan.buffers[s.in1].offset));
  std::string text = ops.empty() ? "-" : absl::StrJoin(ops, ",");
  absl::StrAppend(&text, " -> ", s.out >= 0 ? Hex(plan.buffers[s.out].offset) : "-");
  return text;
}

std::string WeightText(const Plan& plan, int32_t w) {
  const WeightEntry& e = plan.weights[w];
  return absl::StrCat("w", w, " ", e.name, " ", WeightFormatName(e.format), " ", Shape(e.shape));
}


void TextHeader(const DumpInput& in, std::string* out) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  const ArtifactHeader& h = in.header;
  absl::StrAppendFormat(out, "artifact        %s\n", in.path);
  absl::StrAppendFormat(out,
                        "format          v%u.%u (this build writes v%u.%u); metadata %u B at %u, "
                        "weights %u B at %u, checksum %016x\n",
                        h.version_major, h.version_minor, kArtifactVersionMajor,
                        kArtifactVersionMinor, h.metadata_size, h.metadata_offset, h.weights_size,
                        h.weights_offset, h.checksum);
  absl::StrAppendFormat(out, "file size       %s\n", Bytes(in.file_size));
  if (plan.weight_hash_chunk_bytes == 0) {
    absl::StrAppendFormat(out, "weight hashes   none (written before format 3.1)\n");
  } else {
    size_t chunks = 0;
    for (const WeightEntry& w : plan.weights) chunks += w.xxh3_64.size();
    absl::StrAppendFormat(out, "weight hashes   XXH3-64 of %d chunks of %s; %s\n", chunks,
                          Bytes(plan.weight_hash_chunk_bytes),
                          in.verify_seconds < 0
                              ? std::string("not verified (--verify)")
                              : absl::StrFormat("verified: every weight matches (%.1f ms)",
                                                in.verify_seconds * 1e3));
  }
  absl::StrAppendFormat(out, "source          %s\n", plan.model.source);
  absl::StrAppendFormat(out, "model           vocab %d, hidden %d, layers %d, max positions %d\n",
                        plan.model.vocab_size, plan.model.hidden_size, plan.model.num_hidden_layers,
                        plan.model.max_position_embeddings);
  absl::StrAppendFormat(out,
                        "analysed at     ctx-size %d (full caches hold %d rows); attention cost of "
                        "the token at position %d\n",
                        a.ctx_size, a.ctx_size, a.position);
}

// The named sections, then the tokenizer's summary (runtime/text/tokenizer_summary.h) or why
// there is none.
void TextTokenizer(const DumpInput& in, std::string* out) {
  for (const SectionEntry& e : in.sections) {
    absl::StrAppendFormat(out, "section         %s: %s at %d\n", e.name, Bytes(e.size), e.offset);
  }
  if (in.tokenizer != nullptr) {
    absl::StrAppend(out, "\n");
    for (absl::string_view line : absl::StrSplit(text::SummarizeTokenizer(*in.tokenizer), '\n')) {
      if (!line.empty()) absl::StrAppend(out, line, "\n");
    }
  } else if (!in.tokenizer_error.empty()) {
    absl::StrAppend(out, "\ntokenizer: cannot be loaded: ", in.tokenizer_error, "\n");
  } else {
    absl::StrAppend(out,
                    "\ntokenizer: none (the model takes token ids only; compile it from a "
                    "checkpoint with its tokenizer files to give it text)\n");
  }
}

void TextLayers(const DumpInput& in, std::string* out) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  absl::StrAppendFormat(
      out, "\nlayers (%d; steps mapped to layers by %s)\n", a.layers.size(),
      a.layer_mapping == "taps"
          ? "the layer.N taps: layer N ends at the last step writing tap layer.N; the first "
            "layer starts at its input norm (the first step feeding its KV that has an operand), "
            "the prologue before it; after the last tap: head"
          : "the layers.N weight names they read (no usable layer.N taps); logits_only: head");
  absl::StrAppendFormat(out, "  %-6s %-11s %-14s %s\n", "layer", "steps", "attention", "kv");
  auto range_of = [&](int64_t layer) {
    int32_t first = -1, last = -1;
    for (size_t s = 0; s < a.steps.size(); ++s) {
      if (a.steps[s].layer != layer) continue;
      if (first < 0) first = static_cast<int32_t>(s);
      last = static_cast<int32_t>(s);
    }
    return first < 0 ? std::string("-") : absl::StrCat(first, "-", last);
  };
  absl::StrAppendFormat(out, "  %-6s %-11s %-14s %s\n", "pre", range_of(kPrologue), "-", "-");
  for (const LayerInfo& l : a.layers) {
    std::string kv = "-";
    if (l.attention_step >= 0) {
      kv = l.kv_shared
               ? absl::StrCat("KV-shared: reads cache ", l.cache, " of layer ", l.cache_layer)
               : absl::StrCat("owns cache ", l.cache);
    }
    const std::string attention = l.attention_step < 0 ? "-" : CacheType(plan.caches[l.cache]);
    absl::StrAppendFormat(out, "  %-6d %-11s %-14s %s\n", l.layer,
                          absl::StrCat(l.first_step, "-", l.last_step), attention, kv);
  }
  absl::StrAppendFormat(out, "  %-6s %-11s %-14s %s\n", "head", range_of(kHead), "-", "-");
}

void TextSteps(const DumpInput& in, std::string* out) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  absl::StrAppendFormat(out,
                        "\nsteps (%d per token; weight bytes read and FLOPs per step; attention "
                        "at position %d)\n",
                        plan.steps.size(), a.position);
  absl::StrAppendFormat(out, "  %4s %-5s %-17s %-10s %-20s %-27s %10s %12s  %s\n", "#", "layer",
                        "kind", "result", "operands", "arena in -> out", "w.bytes", "flops",
                        "weight / notes");
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    const StepInfo& info = a.steps[i];
    std::vector<std::string> notes;
    if (s.weight >= 0) notes.push_back(WeightText(plan, s.weight));
    if (s.scalar >= 0) notes.push_back(absl::StrCat("+ ", WeightText(plan, s.scalar)));
    if (s.kind == StepKind::kAttention) {
      const CacheEntry& c = plan.caches[s.cache];
      notes.push_back(absl::StrCat("cache ", s.cache, " (layer ", c.layer, ", ", CacheType(c),
                                   ") flops=", info.flops_formula));
    }
    if (s.kind == StepKind::kKvAppend) {
      const CacheEntry& c = plan.caches[s.cache];
      notes.push_back(absl::StrCat("layer ", c.layer, " ", CacheType(c)));
    }
    if (s.logits_only) {
      notes.push_back("logits_only");
    } else if (s.rows == StepRows::kLogits) {
      notes.push_back("rows=logits");
    }
    absl::StrAppendFormat(out, "  %4d %-5s %-17s %-10s %-20s %-27s %10d %12d  %s\n", i,
                          LayerName(info.layer), KindName(s.kind), Shape(info.shape), Operands(s),
                          ArenaOffsets(plan, s), info.weight_bytes, info.flops,
                          absl::StrJoin(notes, "  "));
  }
}

void TextBuffers(const DumpInput& in, std::string* out) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  const BufferStats& b = a.buffer_stats;
  absl::StrAppend(out, "\nbuffers\n");
  absl::StrAppendFormat(out, "  arena            %s\n", Bytes(b.arena_bytes));
  absl::StrAppendFormat(out,
                        "  prefill batch    up to %d tokens (batched arena %s at the maximum)\n",
                        plan.max_batch,
                        Bytes(b.arena_bytes * static_cast<uint64_t>(plan.max_batch)));
  absl::StrAppendFormat(out,
                        "  buffers          %d: %d step results, %d views (no step writes them: "
                        "slices of a result's bytes), %d unused\n",
                        b.buffers, b.results, b.views, b.unused);
  absl::StrAppendFormat(out,
                        "  shared offsets   %d buffers share bytes with another (%d results "
                        "reused in place or after a last use); %d distinct offsets\n",
                        b.sharing, b.reused_results, b.distinct_offsets);
  absl::StrAppendFormat(out,
                        "  intermediates    %d B summed over the step results = %s of the arena\n",
                        b.result_bytes, Percent(b.result_bytes, b.arena_bytes));
  std::string at = "-";
  if (b.peak_step >= 0) {
    at = absl::StrCat("step ", b.peak_step, " (", KindName(plan.steps[b.peak_step].kind),
                      ", layer ", LayerName(a.steps[b.peak_step].layer), ")");
  }
  absl::StrAppendFormat(out, "  peak live        %d B at %s = %s of the arena\n", b.peak_live_bytes,
                        at, Percent(b.peak_live_bytes, b.arena_bytes));
  absl::StrAppend(out,
                  "                   (live: from the step writing the bytes to their last "
                  "reader; views count their parent's bytes; logits and taps live to the end)\n");
}

void TextWeights(const DumpInput& in, std::string* out) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  uint64_t total = 0;
  for (const WeightEntry& w : plan.weights) total += w.size_bytes;
  absl::StrAppendFormat(out, "\nweights (%d, %s)\n", plan.weights.size(), Bytes(total));
  absl::StrAppendFormat(out, "  %4s %-7s %-14s %12s %12s  %-9s %s\n", "#", "format", "shape",
                        "bytes", "offset", "steps", "name");
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const WeightEntry& w = plan.weights[i];
    absl::StrAppendFormat(out, "  %4d %-7s %-14s %12d %12s  %-9s %s\n", i,
                          WeightFormatName(w.format), Shape(w.shape), w.size_bytes, Hex(w.offset),
                          absl::StrJoin(a.weight_users[i], ","), w.name);
  }
}

void TextCaches(const DumpInput& in, std::string* out) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  absl::StrAppendFormat(out,
                        "\nkv caches (%d, %s at ctx-size %d; K and V, f32 [rows, kv_heads * "
                        "head_dim] each)\n",
                        plan.caches.size(), Bytes(a.totals.kv_cache_bytes), a.ctx_size);
  absl::StrAppendFormat(out, "  %5s %-5s %-8s %-16s %8s %8s %12s %7s  %s\n", "cache", "layer",
                        "type", "rows", "kv_heads", "head_dim", "bytes", "append",
                        "read by layers");
  for (size_t c = 0; c < plan.caches.size(); ++c) {
    const CacheEntry& e = plan.caches[c];
    const CacheInfo& info = a.caches[c];
    const std::string rows = e.sliding ? absl::StrCat(info.rows, " (ring W=", e.window, "+",
                                                      plan.max_batch - 1, ")")
                                       : absl::StrCat(info.rows, " (full)");
    std::vector<std::string> readers;
    for (int64_t l : info.reader_layers) readers.push_back(LayerName(l));
    absl::StrAppendFormat(out, "  %5d %-5d %-8s %-16s %8d %8d %12d %7s  %s\n", c, e.layer,
                          e.sliding ? "sliding" : "full", rows, e.num_kv_heads, e.head_dim,
                          info.bytes,
                          info.append_step >= 0 ? absl::StrCat("step ", info.append_step) : "-",
                          absl::StrJoin(readers, ","));
  }
  int shared = 0;
  for (const LayerInfo& l : a.layers) shared += l.kv_shared ? 1 : 0;
  absl::StrAppendFormat(out,
                        "kv sharing (%d KV-shared layers; from each layer's attention step: the "
                        "cache it reads belongs to another layer)\n",
                        shared);
  for (const LayerInfo& l : a.layers) {
    if (!l.kv_shared) continue;
    absl::StrAppendFormat(out, "  layer %d (%s) reads the cache of layer %d (cache %d, step %d)\n",
                          l.layer, CacheType(plan.caches[l.cache]), l.cache_layer, l.cache,
                          l.attention_step);
  }
}

void TextTotals(const DumpInput& in, std::string* out) {
  const Analysis& a = *in.analysis;
  const Totals& t = a.totals;
  absl::StrAppendFormat(out, "\ntotals per token (attention at position %d)\n", a.position);
  absl::StrAppendFormat(out,
                        "  steps            %d (%d without the logits_only head, %d on all rows "
                        "of a prompt)\n",
                        t.steps, t.steps_without_logits, t.steps_all_rows);
  absl::StrAppendFormat(out,
                        "  weight bytes     %s: linear/lm_head %d, embedding rows %d, norm "
                        "gains/scalars %d; %d without the head, %d on all rows\n",
                        Bytes(t.weight_bytes), t.weight_bytes_matvec, t.weight_bytes_embedding,
                        t.weight_bytes_other, t.weight_bytes_without_logits,
                        t.weight_bytes_all_rows);
  absl::StrAppendFormat(out,
                        "  flops            %d%s: linear/lm_head %d, attention %d, other %d; "
                        "%d without the head, %d on all rows\n",
                        t.flops,
                        t.flops >= 1000 ? absl::StrCat(" (", HumanFlops(t.flops), ")") : "",
                        t.flops_matvec, t.flops_attention, t.flops_other, t.flops_without_logits,
                        t.flops_all_rows);
  absl::StrAppendFormat(out, "  kv bytes         read %d, appended %d\n", t.kv_bytes_read,
                        t.kv_bytes_written);
}

}  // namespace

std::string RenderText(const DumpInput& in) {
  std::string out;
  TextHeader(in, &out);
  TextTokenizer(in, &out);
  TextLayers(in, &out);
  TextSteps(in, &out);
  TextBuffers(in, &out);
  TextWeights(in, &out);
  TextCaches(in, &out);
  TextTotals(in, &out);
  // No line ends in blanks (an empty field at the end of a padded line).
  std::string trimmed;
  trimmed.reserve(out.size());
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
    absl::StrAppend(&trimmed, line, "\n");
  }
  trimmed.pop_back();  // the split's last piece follows the final newline
  return trimmed;
}

}  // namespace dump
}  // namespace cortiq
