// PortableExp (see portable_exp.h): one inline kernel shared by the scalar and the array form so
// both round identically.
#include "runtime/sampling/portable_exp.h"

#include <cfloat>
#include <cstring>

#include "base/target_clones.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "runtime/sampling needs float arithmetic without excess precision (FLT_EVAL_METHOD == 0)"
#endif

namespace cortiq {
namespace sampling {
namespace {

constexpr float kMinArgument = -87.0f;  // exp(-87) = 1.65e-38 > FLT_MIN = 1.18e-38
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;  // 9 significant bits: n * kLn2Hi is exact for |n| <= 2^15
constexpr float kLn2Lo = -2.12194440e-4f;   // ln 2 - kLn2Hi
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: (t + M) - M rounds t to an integer

// Branch-free (selects, no early returns) so the array loop vectorizes.
inline float ExpKernel(float x) {
  const bool underflow = !(x >= kMinArgument);  // also -inf
  x = x > 0.0f ? 0.0f : x;
  x = underflow ? 0.0f : x;  // keeps n in range; the result is replaced below
  const float n = (x * kLog2e + kRoundMagic) - kRoundMagic;  // in [-126, 0]
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = (p * (r * r) + r) + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n, n >= -126: a normal float
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  const float result = y * scale;
  return underflow ? 0.0f : result;
}

}  // namespace

float PortableExp(float x) { return ExpKernel(x); }

// One clone per vector width (base/target_clones.h): the same operations, so the same bits.
CORTIQ_TARGET_CLONES
void PortableExpShifted(const float* x, int64_t n, float shift, float divisor, float* out) {
  if (divisor == 1.0f) {  // y / 1 == y exactly: skip the division (the slowest operation here)
    for (int64_t i = 0; i < n; ++i) out[i] = ExpKernel(x[i] - shift);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = ExpKernel((x[i] - shift) / divisor);
}

}  // namespace sampling
}  // namespace cortiq
