// The dialect's storage formats as the plan's weight formats (see storage_format.h).
#include "compiler/lower/storage_format.h"

#include "absl/strings/str_cat.h"

namespace cortiq {

absl::StatusOr<WeightFormat> ToWeightFormat(StorageFormat format) {
  const llvm::StringRef name = stringifyStorageFormat(format);
  if (std::optional<WeightFormat> converted = WeightFormatFromName(name.str())) return *converted;
  return absl::InvalidArgumentError(
      absl::StrCat("storage format '", name.str(), "' has no runtime weight format"));
}

}  // namespace cortiq
