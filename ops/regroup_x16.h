// The regrouping behind Q4_0x16 and Q8_0x16 (ops/quantize_q4_0x16.h,
// ops/quantize_q8_0x16.h): 16 consecutive llama.cpp blocks of a row, each an
// f16 scale followed by kQuantBytes quant bytes (Q4_0: 16, Q8_0: 32; ggml's
// block_q4_0 / block_q8_0), become one group of the same size:
//   bytes [0, 32)                 the 16 scales, block j's at 2 j
//   bytes [32 + 64 v, 96 + 64 v)  for v = 0 .. kQuantBytes / 4 - 1: bytes
//                                 [4 v, 4 v + 4) of block j's quants at
//                                 32 + 64 v + 4 j
// so one 64-byte load holds four quant bytes of each block, one block per
// 32-bit lane. A byte permutation: every scale and quant keeps its bits.
#ifndef CORTIQ_OPS_REGROUP_X16_H_
#define CORTIQ_OPS_REGROUP_X16_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace cortiq {
namespace ops {

// Blocks per group, and the bytes of a group of blocks with kQuantBytes quant bytes each.
constexpr size_t kX16Blocks = 16;
template <size_t kQuantBytes>
constexpr size_t X16GroupBytes() {
  return kX16Blocks * (2 + kQuantBytes);
}

// The 16 * `groups` blocks at `blocks` regrouped into `groups` groups at `out` (no overlap).
template <size_t kQuantBytes>
void RegroupX16(const uint8_t* blocks, size_t groups, uint8_t* out) {
  static_assert(kQuantBytes % 4 == 0, "quants move 4 bytes at a time");
  constexpr size_t kBlockBytes = 2 + kQuantBytes;
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* src = blocks + g * X16GroupBytes<kQuantBytes>();
    uint8_t* group = out + g * X16GroupBytes<kQuantBytes>();
    for (size_t j = 0; j < kX16Blocks; ++j) {
      const uint8_t* block = src + j * kBlockBytes;
      memcpy(group + 2 * j, block, 2);
      for (size_t v = 0; v < kQuantBytes / 4; ++v) {
        memcpy(group + 32 + 64 * v + 4 * j, block + 2 + 4 * v, 4);
      }
    }
  }
}

// The inverse of RegroupX16: the 16 * `groups` blocks of `groups` groups.
template <size_t kQuantBytes>
void UngroupX16(const uint8_t* grouped, size_t groups, uint8_t* out) {
  static_assert(kQuantBytes % 4 == 0, "quants move 4 bytes at a time");
  constexpr size_t kBlockBytes = 2 + kQuantBytes;
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* group = grouped + g * X16GroupBytes<kQuantBytes>();
    uint8_t* dst = out + g * X16GroupBytes<kQuantBytes>();
    for (size_t j = 0; j < kX16Blocks; ++j) {
      uint8_t* block = dst + j * kBlockBytes;
      memcpy(block, group + 2 * j, 2);
      for (size_t v = 0; v < kQuantBytes / 4; ++v) {
        memcpy(block + 2 + 4 * v, group + 32 + 64 * v + 4 * j, 4);
      }
    }
  }
}

}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_REGROUP_X16_H_
