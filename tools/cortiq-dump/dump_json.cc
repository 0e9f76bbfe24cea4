// cortiq-dump's JSON rendering (dump_output.h): one object with the header, the plan's records
// (written field by field by their description, runtime/plan_fields.h, under the same names
// as in the artifact) and the analysis of each.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "base/json_writer.h"
#include "runtime/plan_fields.h"
#include "runtime/step_kind.h"
#include "runtime/text/gemma4_chat.h"
#include "tools/cortiq-dump/dump_output.h"

namespace cortiq {
namespace dump {
namespace {

// Writes each field the description visits as a JSON member of its name; enums by name.
struct JsonFields {
  JsonWriter& j;
  template <class T>
  void operator()(const char* name, const T& value) {
    j.Field(name, value);
  }
  void operator()(const char* name, WeightFormat value) { j.Field(name, WeightFormatName(value)); }
  void operator()(const char* name, StepKind value) { j.Field(name, KindName(value)); }
  // Hashes as 16 hex digits, like the header's checksum (JSON numbers lose 64-bit precision).
  void operator()(const char* name, const std::vector<uint64_t>& hashes) {
    j.Key(name);
    j.BeginArray(true);
    for (uint64_t h : hashes) j.String(absl::StrFormat("%016x", h));
    j.EndArray();
  }
  void operator()(const char* name, StepRows value) { j.Field(name, StepRowsName(value)); }
  template <class T>
  void operator()(StepField, const char* name, const T& value) {
    (*this)(name, value);
  }
};

// A buffer operand: its index and bytes.
void JsonBufferRef(const Plan& plan, int32_t b, JsonWriter* j) {
  j->BeginObject(true);
  j->Field("buffer", b);
  j->Field("offset", plan.buffers[b].offset);
  j->Field("num_elements", plan.buffers[b].num_elements);
  j->EndObject();
}

// A weight operand: its index and the weight's record but its offset and hashes.
void JsonWeightRef(const Plan& plan, int32_t w, JsonWriter* j) {
  j->BeginObject(true);
  j->Field("index", w);
  VisitWeightEntry(plan.weights[w], [&](const char* name, const auto& value) {
    const absl::string_view field = name;
    if (field != "offset" && field != "xxh3_64") JsonFields{*j}(name, value);
  });
  j->EndObject();
}

void JsonLayerId(int64_t layer, JsonWriter* j) {
  if (layer >= 0) {
    j->Int(layer);
  } else {
    j->String(LayerName(layer));
  }
}

// The tokenizer's summary as an object, {"error": ...} if its section does not load, or null.
void JsonTokenizer(const DumpInput& in, JsonWriter* j) {
  if (in.tokenizer == nullptr) {
    if (in.tokenizer_error.empty()) {
      j->Null();
    } else {
      j->BeginObject(true);
      j->Field("error", in.tokenizer_error);
      j->EndObject();
    }
    return;
  }
  const text::Tokenizer& t = *in.tokenizer;
  const text::TokenizerConfig& c = t.config();
  const auto optional_id = [&](const char* key, const std::optional<text::TokenId>& id) {
    j->Key(key);
    if (id) {
      j->Int(*id);
    } else {
      j->Null();
    }
  };
  j->BeginObject();
  j->Field("vocab_size", static_cast<int64_t>(t.vocab_size()));
  j->Field("merges", static_cast<int64_t>(t.section().num_merges()));
  j->Field("added_tokens", static_cast<int64_t>(t.section().added_tokens().size()));
  j->Field("source", c.source);
  optional_id("bos_id", c.bos_id);
  optional_id("eos_id", c.eos_id);
  optional_id("pad_id", c.pad_id);
  optional_id("unk_id", c.unk_id);
  const text::GenerationDefaults& g = c.generation;
  j->Key("eos_token_ids");
  j->BeginArray(true);
  for (text::TokenId id : g.eos_token_ids) j->Int(id);
  j->EndArray();
  j->Key("generation");
  j->BeginObject(true);
  const auto optional_number = [&](const char* key, const auto& value) {
    if (value) j->Field(key, static_cast<double>(*value));
  };
  optional_number("temperature", g.temperature);
  optional_number("top_p", g.top_p);
  if (g.top_k) j->Field("top_k", static_cast<int64_t>(*g.top_k));
  if (g.do_sample) j->Field("do_sample", *g.do_sample);
  optional_number("min_p", g.min_p);
  optional_number("typical_p", g.typical_p);
  optional_number("repetition_penalty", g.repetition_penalty);
  if (g.repeat_last_n) j->Field("repeat_last_n", static_cast<int64_t>(*g.repeat_last_n));
  j->EndObject();
  j->Key("chat_template");
  j->BeginObject(true);
  j->Field("source", c.chat_template.source);
  j->Field("bytes", static_cast<int64_t>(c.chat_template.text.size()));
  j->Field("gemma4_format",
           c.chat_template.text.empty() || text::IsGemma4ChatTemplate(c.chat_template.text));
  j->EndObject();
  j->EndObject();
}

}  // namespace

std::string RenderJson(const DumpInput& in) {
  const Plan& plan = *in.plan;
  const Analysis& a = *in.analysis;
  const ArtifactHeader& h = in.header;
  JsonWriter j;
  JsonFields fields{j};
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
  j.Field("weights_verified", in.verify_seconds >= 0);
  j.Key("model");
  j.BeginObject(true);
  VisitModelInfo(plan.model, fields);
  j.EndObject();
  j.Key("plan");
  j.BeginObject(true);
  VisitPlanScalars(plan, fields);
  j.EndObject();
  j.Key("sections");
  j.BeginArray();
  for (const SectionEntry& e : in.sections) {
    j.BeginObject(true);
    VisitSectionEntry(e, fields);
    j.EndObject();
  }
  j.EndArray();
  j.Key("tokenizer");
  JsonTokenizer(in, &j);
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
      if (kind != nullptr && IsStepParameter(id) && StepUsesField(*kind, id)) fields(name, value);
    });
    j.EndObject();
    j.Field("weight_bytes", info.weight_bytes);
    j.Field("flops", info.flops);
    j.Field("flops_formula", info.flops_formula);
    j.Field("kv_bytes_read", info.kv_bytes_read);
    j.Field("kv_bytes_written", info.kv_bytes_written);
    j.Field("logits_only", s.logits_only);
    j.Field("rows", StepRowsName(s.rows));
    j.EndObject();
  }
  j.EndArray();

  const BufferStats& b = a.buffer_stats;
  j.Key("buffer_plan");
  j.BeginObject();
  j.Field("arena_bytes", b.arena_bytes);
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
  j.Key("buffers_list");
  j.BeginArray();
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferInfo& info = a.buffers[i];
    j.BeginObject(true);
    j.Field("index", static_cast<int64_t>(i));
    VisitBufferEntry(plan.buffers[i], fields);
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
    VisitWeightEntry(w, fields);
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
    VisitCacheEntry(e, fields);
    j.Field("rows", info.rows);
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
    VisitTap(t, fields);
    j.EndObject();
  }
  j.EndArray();

  const Totals& t = a.totals;
  j.Key("totals");
  j.BeginObject();
  j.Field("steps", t.steps);
  j.Field("steps_without_logits", t.steps_without_logits);
  j.Field("steps_all_rows", t.steps_all_rows);
  j.Field("weight_bytes_all_rows", t.weight_bytes_all_rows);
  j.Field("flops_all_rows", t.flops_all_rows);
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


}  // namespace dump
}  // namespace cortiq
