// The `cortiq` MLIR dialect of the Gemma-4 E-series text decoder: dialect class, enums, ops.
//
// Op semantics are documented in CortiqOps.td (and in `cortiq-opt --help`-free form in the
// generated docs); this header only pulls the generated declarations together.
#ifndef CORTIQ_COMPILER_DIALECT_CORTIQDIALECT_H_
#define CORTIQ_COMPILER_DIALECT_CORTIQDIALECT_H_

#include <cstdint>
#include <string>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/dialect/CortiqDialect.h.inc"
#include "compiler/dialect/CortiqEnums.h.inc"

namespace cortiq {
namespace OpTrait {

// Checks the shape rule of the InPlace trait: one ranked-tensor result, and every tensor
// operand of the result's type.
mlir::LogicalResult verifyInPlace(mlir::Operation* op);

// Cortiq_InPlace (CortiqDialect.td): the result may overwrite a tensor operand that dies at
// the op.
template <typename ConcreteType>
class InPlace : public mlir::OpTrait::TraitBase<ConcreteType, InPlace> {
 public:
  static mlir::LogicalResult verifyTrait(mlir::Operation* op) { return verifyInPlace(op); }
};

}  // namespace OpTrait

// Weights per block of `format`: 1 for the element formats (f32, bf16, f16); 32 for llama.cpp's
// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL, 256 for the K-quants and IQ4_XS (ggml-common.h
// QK8_0 ... QK4_NL, QK_K), 512 for Q4_0x16 / Q8_0x16 / Q4_Kx16 / Q5_Kx16 (16 Q4_0 / Q8_0 blocks, 2 Q4_K / Q5_K super-blocks). A weight stored in a block format is a matrix whose rows are whole
// blocks.
int64_t storageFormatBlockSize(StorageFormat format);

// Every storage format's name, for messages: "f32, bf16, q8_0, ..., iq4_nl or iq4_xs".
std::string listStorageFormats();

}  // namespace cortiq

#define GET_OP_CLASSES
#include "compiler/dialect/CortiqOps.h.inc"

#endif  // CORTIQ_COMPILER_DIALECT_CORTIQDIALECT_H_
