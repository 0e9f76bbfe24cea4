// Activation-arena planning for a step graph: liveness, a best-fit allocator with merging,
// in-place reuse and views. Plain C++ (no MLIR) so it is unit-tested on small synthetic graphs,
// the way ggml tests ggml-alloc; the plan-buffers pass feeds it the decode step.
#ifndef CORTIQ_PASSES_BUFFER_ALLOCATOR_H_
#define CORTIQ_PASSES_BUFFER_ALLOCATOR_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace cortiq {

// Best-fit allocator over one growing arena. Free blocks are kept sorted by offset and merged
// with their neighbours when freed; an allocation takes the smallest free block that fits
// (lowest offset on ties) or extends the arena. Sizes are rounded up to `alignment`, so every
// offset is a multiple of it.
class ArenaAllocator {
 public:
  // `alignment` in bytes, a power of two >= 1.
  explicit ArenaAllocator(uint64_t alignment);

  // Returns the offset of `bytes` (> 0) newly reserved bytes.
  uint64_t Allocate(uint64_t bytes);
  // Returns [offset, offset + bytes) (as passed to / returned by Allocate) to the free list.
  void Free(uint64_t offset, uint64_t bytes);

  // High-water mark: the arena size needed so far, in bytes.
  uint64_t size() const { return end_; }
  // Bytes currently allocated (after alignment).
  uint64_t live_bytes() const { return live_; }
  // Free blocks, offset → size (for tests).
  const std::map<uint64_t, uint64_t>& free_blocks() const { return free_; }

 private:
  // Rounds up to the alignment; an empty request still takes one aligned unit.
  uint64_t Round(uint64_t bytes) const {
    return (std::max<uint64_t>(bytes, 1) + alignment_ - 1) / alignment_ * alignment_;
  }

  uint64_t alignment_;
  uint64_t end_ = 0;
  uint64_t live_ = 0;
  std::map<uint64_t, uint64_t> free_;
};

// One value of the step graph. Values are listed in the order of their defining steps.
struct BufferRequest {
  uint64_t bytes = 0;               // size of the value (ignored for views)
  int32_t def = 0;                  // index of the step that writes it
  std::vector<int32_t> uses;        // indices of the steps that read it (any order)
  bool pinned = false;              // never freed or reused (graph outputs, observed taps)
  int32_t view_of = -1;             // a view: lives inside this earlier value's bytes...
  uint64_t view_offset = 0;         // ...at this byte offset; a view allocates nothing
  std::vector<int32_t> in_place_of;  // operands whose bytes this value may take over
};

// Where every value lives.
struct BufferPlan {
  std::vector<uint64_t> offsets;  // byte offset of each value (views: parent + view_offset)
  uint64_t arena_bytes = 0;       // arena size
  uint64_t peak_live_bytes = 0;   // largest sum of simultaneously allocated (aligned) bytes
  uint64_t total_bytes = 0;       // sum of all non-view values' aligned sizes (no reuse)
  int in_place = 0;               // values that took over an operand's bytes
};

// Plans the arena: a value is allocated when its step runs and freed after the last step
// that reads it or any view of it (so a step never writes over what it reads, except in
// place). A value takes over an operand's bytes in place when the operand is listed in
// `in_place_of`, is not a view, is not pinned, has the same aligned size, has no views and
// its only reader is this value's step (ggml-alloc's rule). Pinned values (and the parents of
// pinned views) stay allocated to the end.
BufferPlan PlanArena(const std::vector<BufferRequest>& values, uint64_t alignment);

}  // namespace cortiq

#endif  // CORTIQ_PASSES_BUFFER_ALLOCATOR_H_
