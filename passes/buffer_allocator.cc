// Best-fit arena allocation and liveness-driven buffer planning (see buffer_allocator.h).
#include "passes/buffer_allocator.h"

#include <algorithm>
#include <limits>

namespace cortiq {

ArenaAllocator::ArenaAllocator(uint64_t alignment) : alignment_(alignment) {}

uint64_t ArenaAllocator::Allocate(uint64_t bytes) {
  const uint64_t size = Round(bytes);
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
  }
  live_ += size;
  if (best == free_.end()) {
    // Grow the arena; a free block at its end is used first.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == end_) {
        uint64_t offset = last->first;
        free_.erase(last);
        end_ = offset + size;
        return offset;
      }
    }
    uint64_t offset = end_;
    end_ += size;
    return offset;
  }
  uint64_t offset = best->first;
  uint64_t remaining = best->second - size;
  free_.erase(best);
  if (remaining > 0) free_[offset + size] = remaining;
  return offset;
}

void ArenaAllocator::Free(uint64_t offset, uint64_t bytes) {
  uint64_t size = Round(bytes);
  live_ -= size;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += size;
      return;
    }
  }
  free_[offset] = size;
}

BufferPlan PlanArena(const std::vector<BufferRequest>& values, uint64_t alignment) {
  const size_t n = values.size();
  auto root = [&](size_t v) {
    while (values[v].view_of >= 0) v = static_cast<size_t>(values[v].view_of);
    return v;
  };
  // Last step that reads a value or any view of it; pinned and view counts per root.
  std::vector<int32_t> last_use(n);
  std::vector<bool> pinned(n, false);
  std::vector<int> views(n, 0);
  std::vector<size_t> readers(n, 0);
  for (size_t v = 0; v < n; ++v) last_use[v] = values[v].def;
  for (size_t v = 0; v < n; ++v) {
    size_t r = root(v);
    for (int32_t use : values[v].uses) last_use[r] = std::max(last_use[r], use);
    readers[r] += values[v].uses.size();
    if (values[v].pinned) pinned[r] = true;
    if (r != v) ++views[r];
  }

  BufferPlan plan;
  plan.offsets.assign(n, 0);
  ArenaAllocator arena(alignment);
  // Values allocated and not yet freed, in allocation order.
  std::vector<size_t> live;
  auto round = [&](uint64_t bytes) {
    return (std::max<uint64_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  };

  for (size_t v = 0; v < n; ++v) {
    const BufferRequest& value = values[v];
    if (value.view_of >= 0) {
      plan.offsets[v] = plan.offsets[value.view_of] + value.view_offset;
      continue;
    }
    // Free everything whose last reader ran before this step.
    for (auto it = live.begin(); it != live.end();) {
      if (!pinned[*it] && last_use[*it] < value.def) {
        arena.Free(plan.offsets[*it], values[*it].bytes);
        it = live.erase(it);
      } else {
        ++it;
      }
    }
    plan.total_bytes += round(value.bytes);
    bool placed = false;
    for (int32_t operand : value.in_place_of) {
      size_t c = static_cast<size_t>(operand);
      if (values[c].view_of >= 0 || pinned[c] || views[c] > 0 || readers[c] != 1 ||
          last_use[c] != value.def || round(values[c].bytes) != round(value.bytes)) {
        continue;
      }
      auto it = std::find(live.begin(), live.end(), c);
      if (it == live.end()) continue;
      plan.offsets[v] = plan.offsets[c];
      *it = v;  // v inherits c's allocation
      ++plan.in_place;
      placed = true;
      break;
    }
    if (!placed) {
      plan.offsets[v] = arena.Allocate(value.bytes);
      live.push_back(v);
    }
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, arena.live_bytes());
  }
  plan.arena_bytes = arena.size();
  return plan;
}

}  // namespace cortiq
