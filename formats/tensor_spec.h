// TensorSpec: the name, element type and shape of one checkpoint tensor, without its data. The
// safetensors writer takes a list of them; the importer derives one list from a config.
#ifndef CORTIQ_FORMATS_TENSOR_SPEC_H_
#define CORTIQ_FORMATS_TENSOR_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "formats/dtype.h"

namespace cortiq {

// A tensor's name, element type and shape (HF order: `[out, in]` for linears). Shared by the
// safetensors writer and the importer (compiler/import/gemma4_tensors.h); keep a single definition.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
};

// product(shape) · DTypeSize(dtype) in bytes, with no overflow check (0 for kUnsupported).
// SafetensorsWriter::Create rejects specs whose size overflows, so for its specs this is exact.
uint64_t TensorSpecNumBytes(const TensorSpec& spec);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_TENSOR_SPEC_H_
