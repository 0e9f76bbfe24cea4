// The storage-format policy: which format (f32, bf16, Q8_0, Q4_0) the artifact stores each
// cortiq.weight in, decided once, before the passes, and recorded on the weight.
#ifndef CORTIQ_COMPILER_LOWER_STORAGE_FORMAT_H_
#define CORTIQ_COMPILER_LOWER_STORAGE_FORMAT_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "compiler/dialect/CortiqDialect.h"
#include "compiler/lower/plan_lowering.h"
#include "runtime/plan.h"

namespace cortiq {


// Names of the weights read as tables (by cortiq.embedding or cortiq.lm_head ops) under `root`.
absl::flat_hash_set<std::string> TableWeights(mlir::Operation* root);

// The format the policy above gives `weight` (`is_table`: read by an embedding or LM-head op).
// A weight read from GGUF blocks (`checkpoint_format`) keeps their format unless
// `options.weight_format` overrides it.
WeightFormat ChooseStorageFormat(WeightOp weight, bool is_table, const LoweringOptions& options);

// Records ChooseStorageFormat on every cortiq.weight of `module` as its `stored_format`.
// cortiq-compile runs it before the pass pipeline, so the
// passes see what each weight will become: fold-norm-gain folds only into weights stored
// exactly (f32), and fuse-linear stacks only weights of one format — Q8_0/Q4_0 blocks are
// then llama.cpp's blocks of the checkpoint tensors themselves, and GGUF blocks are copied.
void AssignStorageFormats(mlir::ModuleOp module, const LoweringOptions& options);

// The plan's WeightFormat of the dialect's `format`: the one of the same name.
// Errors: InvalidArgument when runtime/plan.h has no format of that name.
absl::StatusOr<WeightFormat> ToWeightFormat(StorageFormat format);

// The dialect's StorageFormat of the plan's `format` (of the same name), nullopt if none.
std::optional<StorageFormat> ToStorageFormat(WeightFormat format);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_LOWER_STORAGE_FORMAT_H_
