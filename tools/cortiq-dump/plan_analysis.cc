// Plan analysis for cortiq-dump: layer mapping, per-step cost model, buffer liveness, KV caches
// and KV sharing (see plan_analysis.h for the definitions).
#include "tools/cortiq-dump/plan_analysis.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kv_cache.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace cortiq {
namespace dump {

std::string KindName(StepKind kind) {
  if (FindStepKind(kind) == nullptr) return absl::StrCat("kind", static_cast<uint32_t>(kind));
  return StepKindName(kind);
}

std::string LayerName(int64_t layer) {
  if (layer == kPrologue) return "pre";
  if (layer == kHead) return "head";
  return absl::StrCat(layer);
}

int64_t AttendedPositions(int64_t position, int64_t window) {
  const int64_t visible = position + 1;
  return window > 0 && visible > window ? window : visible;
}

namespace {

// N of a checkpoint name holding a "layers.N." component (at the start or after a '.'), or -1.
int64_t WeightNameLayer(absl::string_view name) {
  for (size_t at = name.find("layers."); at != absl::string_view::npos;
       at = name.find("layers.", at + 1)) {
    if (at != 0 && name[at - 1] != '.') continue;
    absl::string_view rest = name.substr(at + 7);
    const size_t dot = rest.find('.');
    int64_t layer = 0;
    if (dot != absl::string_view::npos && absl::SimpleAtoi(rest.substr(0, dot), &layer) &&
        layer >= 0) {
      return layer;
    }
  }
  return -1;
}

// Layer named by the step's weights, or -1.
int64_t StepWeightLayer(const Plan& plan, const Step& step) {
  for (int32_t w : {step.weight, step.scalar}) {
    if (w < 0 || static_cast<size_t>(w) >= plan.weights.size()) continue;
    const int64_t layer = WeightNameLayer(plan.weights[w].name);
    if (layer >= 0) return layer;
  }
  return -1;
}

uint64_t BufferBegin(const Plan& plan, int32_t b) { return plan.buffers[b].offset; }
uint64_t BufferEnd(const Plan& plan, int32_t b) {
  return plan.buffers[b].offset + 4 * plan.buffers[b].num_elements;
}
bool Overlap(const Plan& plan, int32_t a, int32_t b) {
  if (plan.buffers[a].num_elements == 0 || plan.buffers[b].num_elements == 0) return false;
  return BufferBegin(plan, a) < BufferEnd(plan, b) && BufferBegin(plan, b) < BufferEnd(plan, a);
}

// The last step before `before` whose result overlaps buffer `b`, or -1.
int32_t LastWriterBefore(const Plan& plan, int32_t b, int32_t before) {
  for (int32_t s = before - 1; s >= 0; --s) {
    const int32_t out = plan.steps[s].out;
    if (out >= 0 && Overlap(plan, out, b)) return s;
  }
  return -1;
}

// Maps steps to layers with the layer.N taps (`steps[s].producer0/1` already set). Returns false
// if the taps do not delimit layers (none, a tap buffer no step writes, or ends out of order).
bool MapLayersByTaps(const Plan& plan, std::vector<StepInfo>* steps) {
  std::vector<std::pair<int64_t, int32_t>> ends;  // (layer, last step writing its tap)
  for (const Tap& tap : plan.taps) {
    absl::string_view name = tap.name;
    int64_t layer = 0;
    if (!absl::ConsumePrefix(&name, "layer.") || !absl::SimpleAtoi(name, &layer) || layer < 0) {
      continue;
    }
    int32_t writer = -1;
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      if (plan.steps[s].out == tap.buffer) writer = static_cast<int32_t>(s);
    }
    if (writer < 0) return false;
    ends.emplace_back(layer, writer);
  }
  if (ends.empty()) return false;
  std::sort(ends.begin(), ends.end());
  for (size_t i = 1; i < ends.size(); ++i) {
    if (ends[i].second <= ends[i - 1].second) return false;
  }
  size_t next = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    while (next < ends.size() && static_cast<int32_t>(s) > ends[next].second) ++next;
    (*steps)[s].layer = next < ends.size() ? ends[next].first : kHead;
  }

  // The prologue: the first layer's range also holds the embeddings and the per-layer inputs.
  // The layer proper starts at the first step with an operand that feeds its first KV append or
  // attention (its input norm); without one, at the first step reading a weight of the layer.
  const int64_t first_layer = ends[0].first;
  const int32_t first_end = ends[0].second;
  int32_t kv_step = -1;
  for (int32_t s = 0; s <= first_end && kv_step < 0; ++s) {
    const StepKind kind = plan.steps[s].kind;
    if (kind == StepKind::kKvAppend || kind == StepKind::kAttention) kv_step = s;
  }
  int32_t start = -1;
  if (kv_step >= 0) {
    std::vector<bool> feeds(static_cast<size_t>(kv_step) + 1, false);
    feeds[kv_step] = true;
    for (int32_t s = kv_step; s >= 0; --s) {
      if (!feeds[s]) continue;
      for (int32_t p : {(*steps)[s].producer0, (*steps)[s].producer1}) {
        if (p >= 0) feeds[p] = true;
      }
    }
    for (int32_t s = 0; s <= kv_step && start < 0; ++s) {
      const Step& step = plan.steps[s];
      if (feeds[s] && (step.in0 >= 0 || step.in1 >= 0)) start = s;
    }
  } else {
    for (int32_t s = 0; s <= first_end && start < 0; ++s) {
      if (StepWeightLayer(plan, plan.steps[s]) == first_layer) start = s;
    }
  }
  for (int32_t s = 0; s < start; ++s) (*steps)[s].layer = kPrologue;
  return true;
}

void MapLayersByWeightNames(const Plan& plan, std::vector<StepInfo>* steps) {
  int64_t current = kPrologue;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    const int64_t layer = StepWeightLayer(plan, step);
    if (step.logits_only) {
      (*steps)[s].layer = kHead;
      continue;
    }
    if (layer >= 0) current = layer;
    (*steps)[s].layer = current;
  }
}

uint64_t WeightBytes(const Plan& plan, int32_t w) {
  return w >= 0 ? plan.weights[w].size_bytes : 0;
}

// Fills the result shape, weight bytes, FLOPs and KV traffic of `step`, by its kind's cost class
// (runtime/step_kind.h).
void CostStep(const Plan& plan, const Step& step, int64_t position, StepInfo* info) {
  const uint64_t n = step.out >= 0 ? plan.buffers[step.out].num_elements : 0;
  const int64_t ni = static_cast<int64_t>(n);
  auto grouped = [&](int64_t group) -> std::vector<int64_t> {
    if (group > 0 && group < ni && ni % group == 0) return {ni / group, group};
    return {ni};
  };
  info->shape = {ni};
  const auto simple = [&](uint64_t k) {
    info->flops = k * n;
    info->flops_formula = k == 1 ? absl::StrCat(n) : absl::StrCat(k, "*", n);
  };
  const StepKindInfo* kind = FindStepKind(step.kind);
  if (kind == nullptr) return;  // not in a validated plan
  switch (kind->cost) {
    case StepCost::kTableRow: {
      const WeightEntry& w = plan.weights[step.weight];
      info->weight_bytes = WeightFormatBytes(w.format, {w.shape[1]});  // one row
      simple(kind->flops_per_element);
      break;
    }
    case StepCost::kMatrix: {
      const WeightEntry& w = plan.weights[step.weight];
      info->weight_bytes = w.size_bytes;
      info->flops = 2 * static_cast<uint64_t>(w.shape[0]) * static_cast<uint64_t>(w.shape[1]);
      info->flops_formula = absl::StrCat("2*", w.shape[0], "*", w.shape[1]);
      break;
    }
    case StepCost::kRmsNorm: {
      // x^2 and sum (2n), times 1/rms (n), times the gain (n, if any); plus the residual add
      // and the scalar of a residual_rms_norm.
      info->shape = grouped(step.group_size);
      info->weight_bytes = WeightBytes(plan, step.weight) + WeightBytes(plan, step.scalar);
      const uint64_t k = (step.weight >= 0 ? 4 : 3) + (kind->in1 != nullptr ? 1 : 0) +
                         (step.scalar >= 0 ? 1 : 0);
      info->flops = k * n;
      info->flops_formula = absl::StrCat(k, "*", n);
      break;
    }
    case StepCost::kRope: {
      info->shape = grouped(step.head_dim);
      const uint64_t heads = step.head_dim > 0 ? n / static_cast<uint64_t>(step.head_dim) : 0;
      info->flops = 6 * heads * static_cast<uint64_t>(step.rotated_pairs);
      info->flops_formula = absl::StrCat("6*", heads, "*", step.rotated_pairs);
      break;
    }
    case StepCost::kCacheWrite: {
      const CacheEntry& c = plan.caches[step.cache];
      info->shape = {c.num_kv_heads, c.head_dim};
      info->kv_bytes_written = 2 * 4 * static_cast<uint64_t>(c.num_kv_heads * c.head_dim);
      info->flops_formula = "0";
      break;
    }
    case StepCost::kAttention: {
      const CacheEntry& c = plan.caches[step.cache];
      const uint64_t heads = static_cast<uint64_t>(step.num_heads);
      const uint64_t dim = static_cast<uint64_t>(c.head_dim);
      info->shape = {step.num_heads, c.head_dim};
      const uint64_t keys = static_cast<uint64_t>(AttendedPositions(position, step.window));
      info->flops = heads * keys * (4 * dim + 4);
      info->flops_formula =
          step.window > 0
              ? absl::StrCat(heads, "*L*(4*", dim, "+4), L=min(pos+1,", step.window, ")=", keys)
              : absl::StrCat(heads, "*L*(4*", dim, "+4), L=pos+1=", keys);
      info->kv_bytes_read =
          2 * 4 * keys * static_cast<uint64_t>(c.num_kv_heads) * static_cast<uint64_t>(dim);
      break;
    }
    case StepCost::kElementwise:
      info->weight_bytes = WeightBytes(plan, step.weight) + WeightBytes(plan, step.scalar);
      simple(kind->flops_per_element);
      break;
  }
}

}  // namespace

Analysis Analyze(const Plan& plan, int64_t ctx_size) {
  Analysis a;
  a.ctx_size = ctx_size;
  a.position = ctx_size - 1;
  const int32_t num_steps = static_cast<int32_t>(plan.steps.size());
  a.steps.resize(plan.steps.size());
  a.buffers.resize(plan.buffers.size());
  a.caches.resize(plan.caches.size());
  a.weight_users.resize(plan.weights.size());

  // Per-step costs, dataflow, users.
  for (int32_t s = 0; s < num_steps; ++s) {
    const Step& step = plan.steps[s];
    StepInfo& info = a.steps[s];
    CostStep(plan, step, a.position, &info);
    if (step.in0 >= 0) info.producer0 = LastWriterBefore(plan, step.in0, s);
    if (step.in1 >= 0) info.producer1 = LastWriterBefore(plan, step.in1, s);
    if (step.out >= 0) a.buffers[step.out].writers.push_back(s);
    if (step.in0 >= 0) a.buffers[step.in0].readers.push_back(s);
    if (step.in1 >= 0 && step.in1 != step.in0) a.buffers[step.in1].readers.push_back(s);
    for (int32_t w : {step.weight, step.scalar}) {
      if (w >= 0) a.weight_users[w].push_back(s);
    }
  }

  // Layers.
  if (MapLayersByTaps(plan, &a.steps)) {
    a.layer_mapping = "taps";
  } else {
    MapLayersByWeightNames(plan, &a.steps);
    a.layer_mapping = "weight names";
  }

  // Buffers: views, pinned outputs, shared bytes.
  BufferStats& stats = a.buffer_stats;
  stats.arena_bytes = plan.arena_bytes;
  stats.buffers = plan.buffers.size();
  if (plan.logits_buffer >= 0) a.buffers[plan.logits_buffer].pinned = true;
  for (const Tap& tap : plan.taps) {
    if (tap.buffer >= 0) a.buffers[tap.buffer].pinned = true;
  }
  std::vector<int32_t> by_offset(plan.buffers.size());
  std::set<uint64_t> offsets;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    by_offset[b] = static_cast<int32_t>(b);
    offsets.insert(plan.buffers[b].offset);
    BufferInfo& info = a.buffers[b];
    if (!info.writers.empty()) {
      ++stats.results;
      stats.result_bytes += 4 * plan.buffers[b].num_elements;
      continue;
    }
    for (size_t r = 0; r < plan.buffers.size() && !info.view; ++r) {
      info.view = !a.buffers[r].writers.empty() &&
                  Overlap(plan, static_cast<int32_t>(b), static_cast<int32_t>(r));
    }
    info.unused = !info.view;
    ++(info.view ? stats.views : stats.unused);
  }
  stats.distinct_offsets = offsets.size();
  std::sort(by_offset.begin(), by_offset.end(), [&](int32_t x, int32_t y) {
    return std::make_pair(BufferBegin(plan, x), x) < std::make_pair(BufferBegin(plan, y), y);
  });
  std::vector<bool> reused(plan.buffers.size(), false);
  for (size_t i = 0; i < by_offset.size(); ++i) {
    const int32_t x = by_offset[i];
    for (size_t j = i + 1; j < by_offset.size(); ++j) {
      const int32_t y = by_offset[j];
      if (BufferBegin(plan, y) >= BufferEnd(plan, x)) break;
      if (!Overlap(plan, x, y)) continue;
      a.buffers[x].shares_bytes = a.buffers[y].shares_bytes = true;
      if (!a.buffers[x].writers.empty() && !a.buffers[y].writers.empty()) {
        reused[x] = reused[y] = true;
      }
    }
  }
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    stats.sharing += a.buffers[b].shares_bytes ? 1 : 0;
    stats.reused_results += reused[b] ? 1 : 0;
  }

  // Liveness: the bytes of an operand are live from the step that last wrote them (through this
  // buffer or an overlapping one: a view's parent, an in-place predecessor) to the read; pinned
  // buffers from their last writer to the final step; a result nobody reads for its own step.
  std::map<std::pair<int32_t, int32_t>, int32_t> segments;  // (buffer, first) -> last
  auto extend = [&](int32_t buffer, int32_t first, int32_t last) {
    auto [it, inserted] = segments.emplace(std::make_pair(buffer, first), last);
    if (!inserted) it->second = std::max(it->second, last);
  };
  for (int32_t s = 0; s < num_steps; ++s) {
    const Step& step = plan.steps[s];
    if (step.in0 >= 0) extend(step.in0, std::max(a.steps[s].producer0, 0), s);
    if (step.in1 >= 0) extend(step.in1, std::max(a.steps[s].producer1, 0), s);
    if (step.out >= 0) extend(step.out, s, s);
  }
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (!a.buffers[b].pinned || num_steps == 0) continue;
    const int32_t writer = LastWriterBefore(plan, static_cast<int32_t>(b), num_steps);
    extend(static_cast<int32_t>(b), std::max(writer, 0), num_steps - 1);
  }
  for (const auto& [key, last] : segments) a.live.push_back({key.first, key.second, last});
  for (int32_t s = 0; s < num_steps; ++s) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const LiveRange& r : a.live) {
      if (r.first <= s && s <= r.last && plan.buffers[r.buffer].num_elements > 0) {
        ranges.emplace_back(BufferBegin(plan, r.buffer), BufferEnd(plan, r.buffer));
      }
    }
    std::sort(ranges.begin(), ranges.end());
    uint64_t live = 0, begin = 0, end = 0;
    bool open = false;
    for (const auto& [b, e] : ranges) {
      if (open && b <= end) {
        end = std::max(end, e);
        continue;
      }
      if (open) live += end - begin;
      begin = b;
      end = e;
      open = true;
    }
    if (open) live += end - begin;
    if (live > stats.peak_live_bytes) {
      stats.peak_live_bytes = live;
      stats.peak_step = s;
    }
  }

  // Caches and layers.
  std::map<int64_t, LayerInfo> layers;
  for (int32_t s = 0; s < num_steps; ++s) {
    const Step& step = plan.steps[s];
    const int64_t layer = a.steps[s].layer;
    if (layer >= 0) {
      LayerInfo& info = layers[layer];
      info.layer = layer;
      if (info.first_step < 0) info.first_step = s;
      info.last_step = s;
      if (step.kind == StepKind::kKvAppend && info.own_cache < 0) info.own_cache = step.cache;
      if (step.kind == StepKind::kAttention && info.attention_step < 0) {
        const CacheEntry& c = plan.caches[step.cache];
        info.attention_step = s;
        info.cache = step.cache;
        info.cache_layer = c.layer;
        info.sliding = c.sliding;
        info.window = c.window;
        info.kv_shared = c.layer != layer;
      }
    }
    if (step.cache < 0) continue;
    CacheInfo& cache = a.caches[step.cache];
    if (step.kind == StepKind::kKvAppend && cache.append_step < 0) cache.append_step = s;
    if (step.kind == StepKind::kAttention) {
      cache.attention_steps.push_back(s);
      if (std::find(cache.reader_layers.begin(), cache.reader_layers.end(), layer) ==
          cache.reader_layers.end()) {
        cache.reader_layers.push_back(layer);
      }
    }
  }
  for (auto& [layer, info] : layers) a.layers.push_back(info);

  Totals& t = a.totals;
  for (size_t c = 0; c < plan.caches.size(); ++c) {
    const CacheEntry& e = plan.caches[c];
    CacheInfo& info = a.caches[c];
    // As a session allocates it (a sliding ring also holds a prefill batch).
    info.rows = static_cast<uint64_t>(KvCache::RowsFor(e, ctx_size, plan.max_batch));
    info.bytes = 2 * 4 * info.rows * static_cast<uint64_t>(e.num_kv_heads) *
                 static_cast<uint64_t>(e.head_dim);
    t.kv_cache_bytes += info.bytes;
  }

  // Totals per token.
  for (int32_t s = 0; s < num_steps; ++s) {
    const Step& step = plan.steps[s];
    const StepInfo& info = a.steps[s];
    ++t.steps;
    const StepKindInfo* kind = FindStepKind(step.kind);
    switch (kind != nullptr ? kind->cost : StepCost::kElementwise) {
      case StepCost::kMatrix:
        t.weight_bytes_matvec += info.weight_bytes;
        t.flops_matvec += info.flops;
        break;
      case StepCost::kTableRow:
        t.weight_bytes_embedding += info.weight_bytes;
        t.flops_other += info.flops;
        break;
      case StepCost::kAttention:
        t.flops_attention += info.flops;
        break;
      default:
        t.weight_bytes_other += info.weight_bytes;
        t.flops_other += info.flops;
        break;
    }
    t.weight_bytes += info.weight_bytes;
    t.flops += info.flops;
    t.kv_bytes_read += info.kv_bytes_read;
    t.kv_bytes_written += info.kv_bytes_written;
    if (step.rows == StepRows::kAll) {
      ++t.steps_all_rows;
      t.weight_bytes_all_rows += info.weight_bytes;
      t.flops_all_rows += info.flops;
    }
    if (!step.logits_only) {
      ++t.steps_without_logits;
      t.weight_bytes_without_logits += info.weight_bytes;
      t.flops_without_logits += info.flops;
    }
  }
  return a;
}

}  // namespace dump
}  // namespace cortiq
