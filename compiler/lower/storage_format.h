// The dialect's storage formats (StorageFormat, the `stored_format` of a cortiq.weight, chosen
// by the assign-storage-formats pass) as the plan's weight formats (runtime/plan.h
// WeightFormat): the same formats under the same names.
#ifndef CORTIQ_COMPILER_LOWER_STORAGE_FORMAT_H_
#define CORTIQ_COMPILER_LOWER_STORAGE_FORMAT_H_

#include "absl/status/statusor.h"
#include "compiler/dialect/CortiqDialect.h"
#include "runtime/plan.h"

namespace cortiq {

// The WeightFormat named as `format` (WeightFormatName(result) == stringifyStorageFormat).
// Errors: InvalidArgument when runtime/plan.h has no format of that name (a format added to
// the dialect only; storage_format_test checks the two lists against each other).
absl::StatusOr<WeightFormat> ToWeightFormat(StorageFormat format);

}  // namespace cortiq

#endif  // CORTIQ_COMPILER_LOWER_STORAGE_FORMAT_H_
