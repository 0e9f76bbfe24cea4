// The float -> integer conversions of llama.cpp's reference quantizers
// (ggml/src/ggml-quants.c), reproduced exactly, including the results x86
// builds give where C leaves the conversion undefined. Shared by the
// quantizers in ops/quantize*.cc; not part of the kernels' API.

#ifndef CORTIQ_OPS_QUANTIZE_ROUNDING_H_
#define CORTIQ_OPS_QUANTIZE_ROUNDING_H_

#include <stdint.h>
#include <string.h>

namespace cortiq {
namespace ops {
namespace quant_internal {

// (int32_t)v as x86's cvttss2si computes it: truncation toward zero for v in
// (-2^31 - 1, 2^31), and INT32_MIN ("integer indefinite") for NaN, +-inf and
// every other finite value out of range. GCC compiles C's float -> int (and
// -> int8_t / uint8_t, which go through int) to that instruction, so this is
// what llama.cpp's x86 builds compute in the cases C leaves undefined.
inline int32_t TruncateToInt32(float v) {
  if (!(v > -2147483904.0f && v < 2147483648.0f)) return INT32_MIN;
  return static_cast<int32_t>(v);
}

// (int8_t)v and (uint8_t)v of the C code: the low byte of TruncateToInt32(v).
inline int8_t TruncateToInt8(float v) {
  return static_cast<int8_t>(static_cast<uint8_t>(TruncateToInt32(v) & 0xFF));
}
inline uint8_t TruncateToUint8(float v) {
  return static_cast<uint8_t>(TruncateToInt32(v) & 0xFF);
}

// ggml-quants.c `nearest_int`: adds 1.5 * 2^23 in f32 and reads the low 23
// mantissa bits, i.e. round to nearest with ties to even for |v| <= 2^22 - 1
// (the range the C code asserts). Outside it this reproduces the same bit
// arithmetic (so the same integer as llama.cpp for any input).
inline int NearestInt(float v) {
  const float biased = v + 12582912.0f;
  int32_t bits;
  memcpy(&bits, &biased, sizeof(bits));
  return (bits & 0x007FFFFF) - 0x00400000;
}

}  // namespace quant_internal
}  // namespace ops
}  // namespace cortiq

#endif  // CORTIQ_OPS_QUANTIZE_ROUNDING_H_
