// XorWords (read_stream.h): per-target compilation of read_stream-inl.h and the dispatch.
#include "tools/cortiq-bench/read_stream.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tools/cortiq-bench/read_stream.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/targets.h"
#include "tools/cortiq-bench/read_stream-inl.h"

#if HWY_ONCE
namespace cortiq {

HWY_EXPORT(XorWords);
HWY_EXPORT(XorWordsIntoL2);

uint64_t XorWords(const uint64_t* data, size_t words) {
  return HWY_DYNAMIC_DISPATCH(XorWords)(data, words);
}

uint64_t XorWordsIntoL2(const uint64_t* data, size_t words) {
  return HWY_DYNAMIC_DISPATCH(XorWordsIntoL2)(data, words);
}

uint64_t XorWordsReference(const uint64_t* data, size_t words) {
  uint64_t x = 0;
  for (size_t i = 0; i < words; ++i) x ^= data[i];
  return x;
}

const char* XorWordsTarget() {
  // The best target that is both compiled in and supported: what HWY_DYNAMIC_DISPATCH picks.
  const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(targets & -targets);
}

}  // namespace cortiq
#endif  // HWY_ONCE
