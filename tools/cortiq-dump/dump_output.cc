// Renderers of cortiq-dump: text tables, JSON and Graphviz (see dump_output.h).
#include "tools/cortiq-dump/dump_output.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "runtime/plan_fields.h"
#include "runtime/step_kind.h"

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

std::string Shape(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::string Hex(uint64_t value) { return absl::StrFormat("0x%x", value); }

// "sliding W=8" / "full".
std::string CacheType(const CacheEntry& c) {
  return c.sliding ? absl::StrCat("sliding W=", c.window) : std::string("full");
}

// The weight name without the checkpoint's "model.language_model." prefix and, inside a layer,
// without "layers.N.": e.g. "self_attn.q_proj.weight".
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

// ---------------------------------------------------------------------------------------------
// Text.

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
  absl::StrAppendFormat(out, "source          %s\n", plan.model.source);
  absl::StrAppendFormat(out, "model           vocab %d, hidden %d, layers %d, max positions %d\n",
                        plan.model.vocab_size, plan.model.hidden_size, plan.model.num_hidden_layers,
                        plan.model.max_position_embeddings);
  absl::StrAppendFormat(out,
                        "analysed at     ctx-size %d (full caches hold %d rows); attention cost of "
                        "the token at position %d\n",
                        a.ctx_size, a.ctx_size, a.position);
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
    if (s.logits_only) notes.push_back("logits_only");
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
  absl::StrAppendFormat(out, "  %4s %-6s %-14s %12s %12s  %-9s %s\n", "#", "format", "shape",
                        "bytes", "offset", "steps", "name");
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const WeightEntry& w = plan.weights[i];
    absl::StrAppendFormat(out, "  %4d %-6s %-14s %12d %12s  %-9s %s\n", i,
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
  absl::StrAppendFormat(out, "  steps            %d (%d without the logits_only head)\n", t.steps,
                        t.steps_without_logits);
  absl::StrAppendFormat(out,
                        "  weight bytes     %s: linear/lm_head %d, embedding rows %d, norm "
                        "gains/scalars %d; %d without the head\n",
                        Bytes(t.weight_bytes), t.weight_bytes_matvec, t.weight_bytes_embedding,
                        t.weight_bytes_other, t.weight_bytes_without_logits);
  absl::StrAppendFormat(out,
                        "  flops            %d%s: linear/lm_head %d, attention %d, other %d; "
                        "%d without the head\n",
                        t.flops,
                        t.flops >= 1000 ? absl::StrCat(" (", HumanFlops(t.flops), ")") : "",
                        t.flops_matvec, t.flops_attention, t.flops_other, t.flops_without_logits);
  absl::StrAppendFormat(out, "  kv bytes         read %d, appended %d\n", t.kv_bytes_read,
                        t.kv_bytes_written);
}

// ---------------------------------------------------------------------------------------------
// JSON.

// Builds indented JSON; scalar arrays and small records can be written on one line.
class Json {
 public:
  void BeginObject(bool one_line = false) { Open('{', one_line); }
  void EndObject() { Close('}'); }
  void BeginArray(bool one_line = false) { Open('[', one_line); }
  void EndArray() { Close(']'); }
  void Key(absl::string_view key) {
    Separate();
    absl::StrAppend(&out_, JsonQuote(key), ": ");
    after_key_ = true;
  }
  void String(absl::string_view v) { Scalar(JsonQuote(v)); }
  void Int(int64_t v) { Scalar(absl::StrCat(v)); }
  void UInt(uint64_t v) { Scalar(absl::StrCat(v)); }
  void Bool(bool v) { Scalar(v ? "true" : "false"); }
  void Null() { Scalar("null"); }
  void Double(double v) {
    Scalar(std::isfinite(v) ? absl::StrFormat("%.17g", v) : std::string("null"));
  }
  void Ints(const std::vector<int64_t>& v) {
    BeginArray(true);
    for (int64_t x : v) Int(x);
    EndArray();
  }
  template <typename T>
  void Field(absl::string_view key, const T& v);

  std::string Take() { return std::move(out_) + "\n"; }

 private:
  struct Level {
    bool first = true;
    bool one_line = false;
  };
  void Separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (levels_.empty()) return;
    Level& l = levels_.back();
    if (!l.first) out_ += ',';
    if (l.one_line) {
      if (!l.first) out_ += ' ';
    } else {
      out_ += '\n';
      out_.append(2 * levels_.size(), ' ');
    }
    l.first = false;
  }
  void Scalar(absl::string_view text) {
    Separate();
    out_.append(text.data(), text.size());
  }
  void Open(char c, bool one_line) {
    Separate();
    out_ += c;
    const bool parent_one_line = !levels_.empty() && levels_.back().one_line;
    levels_.push_back({true, one_line || parent_one_line});
  }
  void Close(char c) {
    const Level l = levels_.back();
    levels_.pop_back();
    if (!l.one_line && !l.first) {
      out_ += '\n';
      out_.append(2 * levels_.size(), ' ');
    }
    out_ += c;
  }

  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

template <>
void Json::Field(absl::string_view key, const std::string& v) {
  Key(key);
  String(v);
}
template <>
void Json::Field(absl::string_view key, const int64_t& v) {
  Key(key);
  Int(v);
}
template <>
void Json::Field(absl::string_view key, const uint64_t& v) {
  Key(key);
  UInt(v);
}
template <>
void Json::Field(absl::string_view key, const int32_t& v) {
  Key(key);
  Int(v);
}
template <>
void Json::Field(absl::string_view key, const bool& v) {
  Key(key);
  Bool(v);
}
template <>
void Json::Field(absl::string_view key, const double& v) {
  Key(key);
  Double(v);
}

void JsonBufferRef(const Plan& plan, int32_t b, Json* j) {
  j->BeginObject(true);
  j->Field("buffer", b);
  j->Field("offset", plan.buffers[b].offset);
  j->Field("num_elements", plan.buffers[b].num_elements);
  j->EndObject();
}

void JsonWeightRef(const Plan& plan, int32_t w, Json* j) {
  const WeightEntry& e = plan.weights[w];
  j->BeginObject(true);
  j->Field("index", w);
  j->Field("name", e.name);
  j->Field("format", std::string(WeightFormatName(e.format)));
  j->Key("shape");
  j->Ints(e.shape);
  j->Field("bytes", e.size_bytes);
  j->EndObject();
}

void JsonLayerId(int64_t layer, Json* j) {
  if (layer >= 0) {
    j->Int(layer);
  } else {
    j->String(LayerName(layer));
  }
}

}  // namespace

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    // A UTF-8 sequence: lead byte, then 1-3 continuation bytes; overlong forms, surrogates and
    // code points above U+10FFFF are invalid.
    size_t len = 0;
    uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (ok) {
      ok = !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
           !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (!ok) {
      out += "\\ufffd";
      continue;
    }
    out.append(text.data() + i, len);
    i += len - 1;
  }
  out += '"';
  return out;
}

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

std::string RenderText(const DumpInput& in) {
  std::string out;
  TextHeader(in, &out);
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

std::string RenderJson(const DumpInput& in) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  const ArtifactHeader& h = in.header;
  Json j;
  j.BeginObject();
  j.Field("file", in.path);
  j.Field("file_size", in.file_size);
  j.Key("header");
  j.BeginObject(true);
  j.Field("version_major", static_cast<int64_t>(h.version_major));
  j.Field("version_minor", static_cast<int64_t>(h.version_minor));
  j.Field("metadata_offset", h.metadata_offset);
  j.Field("metadata_size", h.metadata_size);
  j.Field("weights_offset", h.weights_offset);
  j.Field("weights_size", h.weights_size);
  j.Field("checksum", absl::StrFormat("%016x", h.checksum));
  j.EndObject();
  j.Key("model");
  j.BeginObject(true);
  j.Field("source", plan.model.source);
  j.Field("vocab_size", plan.model.vocab_size);
  j.Field("hidden_size", plan.model.hidden_size);
  j.Field("num_hidden_layers", plan.model.num_hidden_layers);
  j.Field("max_position_embeddings", plan.model.max_position_embeddings);
  j.EndObject();
  j.Field("ctx_size", a.ctx_size);
  j.Field("position", a.position);
  j.Field("layer_mapping", a.layer_mapping);

  j.Key("layers");
  j.BeginArray();
  for (const LayerInfo& l : a.layers) {
    j.BeginObject(true);
    j.Field("layer", l.layer);
    j.Field("first_step", l.first_step);
    j.Field("last_step", l.last_step);
    j.Field("attention_step", l.attention_step);
    if (l.attention_step >= 0) {
      j.Field("attention", std::string(plan.caches[l.cache].sliding ? "sliding" : "full"));
      j.Field("window", plan.caches[l.cache].window);
    }
    j.Field("cache", l.cache);
    j.Field("cache_layer", l.cache_layer);
    j.Field("own_cache", l.own_cache);
    j.Field("kv_shared", l.kv_shared);
    j.EndObject();
  }
  j.EndArray();

  j.Key("steps");
  j.BeginArray();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    const StepInfo& info = a.steps[i];
    j.BeginObject(true);
    j.Field("index", static_cast<int64_t>(i));
    j.Field("kind", KindName(s.kind));
    j.Key("layer");
    JsonLayerId(info.layer, &j);
    j.Key("shape");
    j.Ints(info.shape);
    j.Key("out");
    if (s.out >= 0) {
      JsonBufferRef(plan, s.out, &j);
    } else {
      j.Null();
    }
    j.Key("operands");
    j.BeginArray(true);
    for (int32_t b : {s.in0, s.in1}) {
      if (b >= 0) JsonBufferRef(plan, b, &j);
    }
    j.EndArray();
    j.Key("producers");
    j.BeginArray(true);
    if (s.in0 >= 0) j.Int(info.producer0);
    if (s.in1 >= 0) j.Int(info.producer1);
    j.EndArray();
    j.Key("weight");
    if (s.weight >= 0) {
      JsonWeightRef(plan, s.weight, &j);
    } else {
      j.Null();
    }
    j.Key("scalar");
    if (s.scalar >= 0) {
      JsonWeightRef(plan, s.scalar, &j);
    } else {
      j.Null();
    }
    j.Field("cache", s.cache);
    // The parameters its kind carries, by name (runtime/plan_fields.h).
    j.Key("params");
    j.BeginObject(true);
    const StepKindInfo* kind = FindStepKind(s.kind);
    VisitStep(s, [&](StepField id, const char* name, const auto& value) {
      if (kind != nullptr && IsStepParameter(id) && StepUsesField(*kind, id)) j.Field(name, value);
    });
    j.EndObject();
    j.Field("weight_bytes", info.weight_bytes);
    j.Field("flops", info.flops);
    j.Field("flops_formula", info.flops_formula);
    j.Field("kv_bytes_read", info.kv_bytes_read);
    j.Field("kv_bytes_written", info.kv_bytes_written);
    j.Field("logits_only", s.logits_only);
    j.EndObject();
  }
  j.EndArray();

  const BufferStats& b = a.buffer_stats;
  j.Key("buffer_plan");
  j.BeginObject();
  j.Field("arena_bytes", b.arena_bytes);
  j.Field("max_batch", static_cast<uint64_t>(plan.max_batch));
  j.Field("buffers", static_cast<uint64_t>(b.buffers));
  j.Field("results", static_cast<uint64_t>(b.results));
  j.Field("views", static_cast<uint64_t>(b.views));
  j.Field("unused", static_cast<uint64_t>(b.unused));
  j.Field("sharing_buffers", static_cast<uint64_t>(b.sharing));
  j.Field("reused_results", static_cast<uint64_t>(b.reused_results));
  j.Field("distinct_offsets", static_cast<uint64_t>(b.distinct_offsets));
  j.Field("result_bytes", b.result_bytes);
  j.Field("peak_live_bytes", b.peak_live_bytes);
  j.Field("peak_step", b.peak_step);
  j.Field("logits_buffer", plan.logits_buffer);
  j.Key("buffers_list");
  j.BeginArray();
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferInfo& info = a.buffers[i];
    j.BeginObject(true);
    j.Field("index", static_cast<int64_t>(i));
    j.Field("offset", plan.buffers[i].offset);
    j.Field("num_elements", plan.buffers[i].num_elements);
    j.Field("view", info.view);
    j.Field("unused", info.unused);
    j.Field("pinned", info.pinned);
    j.Field("shares_bytes", info.shares_bytes);
    std::vector<int64_t> writers(info.writers.begin(), info.writers.end());
    std::vector<int64_t> readers(info.readers.begin(), info.readers.end());
    j.Key("writers");
    j.Ints(writers);
    j.Key("readers");
    j.Ints(readers);
    j.EndObject();
  }
  j.EndArray();
  j.Key("live_ranges");
  j.BeginArray();
  for (const LiveRange& r : a.live) {
    j.BeginObject(true);
    j.Field("buffer", r.buffer);
    j.Field("first", r.first);
    j.Field("last", r.last);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();

  j.Key("weights");
  j.BeginArray();
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const WeightEntry& w = plan.weights[i];
    j.BeginObject(true);
    j.Field("index", static_cast<int64_t>(i));
    j.Field("name", w.name);
    j.Field("format", std::string(WeightFormatName(w.format)));
    j.Key("shape");
    j.Ints(w.shape);
    j.Field("bytes", w.size_bytes);
    j.Field("offset", w.offset);
    std::vector<int64_t> users(a.weight_users[i].begin(), a.weight_users[i].end());
    j.Key("steps");
    j.Ints(users);
    j.EndObject();
  }
  j.EndArray();

  j.Key("caches");
  j.BeginArray();
  for (size_t c = 0; c < plan.caches.size(); ++c) {
    const CacheEntry& e = plan.caches[c];
    const CacheInfo& info = a.caches[c];
    j.BeginObject(true);
    j.Field("index", static_cast<int64_t>(c));
    j.Field("layer", e.layer);
    j.Field("sliding", e.sliding);
    j.Field("window", e.window);
    j.Field("rows", info.rows);
    j.Field("num_kv_heads", e.num_kv_heads);
    j.Field("head_dim", e.head_dim);
    j.Field("bytes", info.bytes);
    j.Field("append_step", info.append_step);
    std::vector<int64_t> steps(info.attention_steps.begin(), info.attention_steps.end());
    j.Key("attention_steps");
    j.Ints(steps);
    j.Key("reader_layers");
    j.BeginArray(true);
    for (int64_t l : info.reader_layers) JsonLayerId(l, &j);
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();

  j.Key("kv_sharing");
  j.BeginArray();
  for (const LayerInfo& l : a.layers) {
    if (!l.kv_shared) continue;
    j.BeginObject(true);
    j.Field("layer", l.layer);
    j.Field("cache", l.cache);
    j.Field("source_layer", l.cache_layer);
    j.Field("attention_step", l.attention_step);
    j.EndObject();
  }
  j.EndArray();

  j.Key("taps");
  j.BeginArray();
  for (const Tap& t : plan.taps) {
    j.BeginObject(true);
    j.Field("name", t.name);
    j.Field("buffer", t.buffer);
    j.EndObject();
  }
  j.EndArray();

  const Totals& t = a.totals;
  j.Key("totals");
  j.BeginObject();
  j.Field("steps", t.steps);
  j.Field("steps_without_logits", t.steps_without_logits);
  j.Field("weight_bytes", t.weight_bytes);
  j.Field("weight_bytes_matvec", t.weight_bytes_matvec);
  j.Field("weight_bytes_embedding", t.weight_bytes_embedding);
  j.Field("weight_bytes_other", t.weight_bytes_other);
  j.Field("weight_bytes_without_logits", t.weight_bytes_without_logits);
  j.Field("flops", t.flops);
  j.Field("flops_matvec", t.flops_matvec);
  j.Field("flops_attention", t.flops_attention);
  j.Field("flops_other", t.flops_other);
  j.Field("flops_without_logits", t.flops_without_logits);
  j.Field("kv_bytes_read", t.kv_bytes_read);
  j.Field("kv_bytes_written", t.kv_bytes_written);
  j.Field("kv_cache_bytes", t.kv_cache_bytes);
  j.EndObject();
  j.EndObject();
  return j.Take();
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
