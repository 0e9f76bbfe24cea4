// The `cortiq` MLIR dialect of the Gemma-4 E-series text decoder: dialect class, enums, ops.
//
// Op semantics are documented in CortiqOps.td (and in `cortiq-opt --help`-free form in the
// generated docs); this header only pulls the generated declarations together.
#ifndef CORTIQ_COMPILER_DIALECT_CORTIQDIALECT_H_
#define CORTIQ_COMPILER_DIALECT_CORTIQDIALECT_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/dialect/CortiqDialect.h.inc"
#include "compiler/dialect/CortiqEnums.h.inc"

#define GET_OP_CLASSES
#include "compiler/dialect/CortiqOps.h.inc"

#endif  // CORTIQ_COMPILER_DIALECT_CORTIQDIALECT_H_
