// GeluTanh, GeluTanhMul, Mul, Add, Scale, Softcap (ops/elementwise.h):
// per-target compilation of ops/elementwise-inl.h and the dispatch.

#include "ops/elementwise.h"

#include <stddef.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/elementwise-inl.h"

#if HWY_ONCE
namespace cortiq {
namespace ops {

HWY_EXPORT(GeluTanh);
HWY_EXPORT(GeluTanhMul);
HWY_EXPORT(Mul);
HWY_EXPORT(Add);
HWY_EXPORT(Scale);
HWY_EXPORT(Softcap);

void GeluTanh(const float* x, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(GeluTanh)(x, y, n);
}
void GeluTanhMul(const float* gate, const float* up, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(GeluTanhMul)(gate, up, y, n);
}
void Mul(const float* a, const float* b, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(Mul)(a, b, y, n);
}
void Add(const float* a, const float* b, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(Add)(a, b, y, n);
}
void Scale(const float* x, float s, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(Scale)(x, s, y, n);
}
void Softcap(const float* x, float cap, float* y, size_t n) {
  HWY_DYNAMIC_DISPATCH(Softcap)(x, cap, y, n);
}

}  // namespace ops
}  // namespace cortiq
#endif  // HWY_ONCE
