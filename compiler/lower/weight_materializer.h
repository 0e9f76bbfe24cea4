// Materializes the data of any cortiq.weight — a checkpoint tensor or a weight derived by the
// passes (concat_rows, scale columns/factor) — in a plan weight format, for the artifact writer.
#ifndef CORTIQ_COMPILER_LOWER_WEIGHT_MATERIALIZER_H_
#define CORTIQ_COMPILER_LOWER_WEIGHT_MATERIALIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/checkpoint_reader.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/plan.h"

namespace cortiq {

class WeightMaterializer {
 public:
  // `module` holds the cortiq.weight symbols; `checkpoint` (opened with data) their sources.
  // Both must outlive the materializer.
  WeightMaterializer(mlir::ModuleOp module, const CheckpointReader& checkpoint)
      : module_(module), checkpoint_(checkpoint) {}

  // Writes weight `name` (a symbol of the module) as `format` into `dst`, which holds
  // WeightFormatBytes(format, shape) bytes. A checkpoint tensor already in `format` (a GGUF's
  // Q4_K blocks, f16 elements) is copied byte for byte; otherwise the block formats are
  // quantized from f32 with llama.cpp's reference quantizers (runtime/weight_codec.h), so blocks
  // are bit-identical to llama-quantize's without an importance matrix. Checkpoint tensors are
  // converted straight from the file; derived ones are computed in f32 (products in f64,
  // rounded once) and then rounded to the format (bf16, f16: round to nearest even).
  // Errors: NotFound for an unknown symbol or a checkpoint tensor missing from the files;
  // InvalidArgument naming the weight and element for a NaN or Inf (in the checkpoint, or
  // produced by rounding to bf16); the checkpoint's read errors.
  absl::Status Write(const std::string& name, WeightFormat format, uint8_t* dst) const;

 private:
  absl::Status WriteUnchecked(const std::string& name, WeightFormat format, uint8_t* dst) const;
  // The block formats and f16: checkpoint tensors of that format copied, others encoded row by
  // row (EncodeWeightRow).
  absl::Status WriteRows(const std::string& name, WeightFormat format, uint8_t* dst) const;
  // Rejects rows that decode to an Inf/NaN: a block's f16 scale (from quantizing huge values,
  // or in a GGUF), an f16 element (`rounded`: by rounding to f16).
  absl::Status CheckRows(const std::string& name, WeightFormat format, const uint8_t* data,
                         size_t rows, size_t cols, bool rounded) const;
  absl::StatusOr<std::vector<float>> ComputeF32(const std::string& name) const;

  mlir::ModuleOp module_;
  const CheckpointReader& checkpoint_;
};

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_LOWER_WEIGHT_MATERIALIZER_H_
