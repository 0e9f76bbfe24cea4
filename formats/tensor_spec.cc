// TensorSpec helpers (see tensor_spec.h).
#include "formats/tensor_spec.h"

namespace cortiq {

uint64_t TensorSpecNumBytes(const TensorSpec& spec) {
  uint64_t bytes = DTypeSize(spec.dtype);
  for (int64_t dim : spec.shape) bytes *= static_cast<uint64_t>(dim);
  return bytes;
}

}  // namespace cortiq
