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
// A weight read from GGUF blocks (kCheckpointFormatAttr) keeps their format unless
// `options.weight_format` overrides it.
WeightFormat ChooseStorageFormat(WeightOp weight, bool is_table, const LoweringOptions& options);

// Records ChooseStorageFormat on every cortiq.weight of `module` as kStoredFormatAttr
// ("f32", "bf16", "q8_0" or "q4_0"). cortiq-compile runs it before the pass pipeline, so the
// passes see what each weight will become: fold-norm-gain folds only into weights stored
// exactly (f32), and fuse-linear stacks only weights of one format — Q8_0/Q4_0 blocks are
// then llama.cpp's blocks of the checkpoint tensors themselves, and GGUF blocks are copied.
void AssignStorageFormats(mlir::ModuleOp module, const LoweringOptions& options);

// The format recorded on `weight` by AssignStorageFormats or the GGUF importer, nullopt when
// there is none. Errors: InvalidArgument naming the weight for an unknown format string.
absl::StatusOr<std::optional<WeightFormat>> RecordedStorageFormat(WeightOp weight);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_LOWER_STORAGE_FORMAT_H_
