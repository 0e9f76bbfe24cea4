// Weight materialization: checkpoint reads and the compile-time evaluation of derived weights.
#include "compiler/lower/weight_materializer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "formats/dtype.h"
#include "compiler/dialect/CortiqDialect.h"
#include "absl/strings/ascii.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"
#include "ops/quantize_q8_0x16.h"
#include "runtime/weight_codec.h"
#include "base/status_macros.h"

namespace cortiq {
namespace {

WeightOp Find(mlir::ModuleOp module, const std::string& name) {
  return mlir::dyn_cast_or_null<WeightOp>(mlir::SymbolTable::lookupSymbolIn(module, name));
}

}  // namespace

absl::StatusOr<std::vector<float>> WeightMaterializer::ComputeF32(const std::string& name) const {
  WeightOp op = Find(module_, name);
  if (!op) return absl::NotFoundError(absl::StrCat("weight '", name, "' is not declared"));
  const int64_t count = op.getTensorType().getNumElements();
  std::vector<float> out(static_cast<size_t>(count));
  if (op.isCheckpointTensor()) {
    if (checkpoint_.Find(name) == nullptr) {
      return absl::NotFoundError(absl::StrCat("tensor '", name, "' is missing from the checkpoint"));
    }
    CORTIQ_RETURN_IF_ERROR(checkpoint_.ReadAsF32(name, out.data()));
    return out;
  }
  if (auto sources = op.getConcatRowsAttr()) {
    size_t at = 0;
    for (mlir::Attribute source : sources) {
      CORTIQ_ASSIGN_OR_RETURN(
          std::vector<float> part,
          ComputeF32(source.cast<mlir::FlatSymbolRefAttr>().getValue().str()));
      if (at + part.size() > out.size()) {
        return absl::InternalError(absl::StrCat("weight '", name, "': sources overflow it"));
      }
      std::memcpy(out.data() + at, part.data(), part.size() * sizeof(float));
      at += part.size();
    }
    return out;
  }
  CORTIQ_ASSIGN_OR_RETURN(std::vector<float> source, ComputeF32(op.getScaleOfAttr().getValue().str()));
  std::vector<float> gain;
  if (auto gain_attr = op.getColumnGainAttr()) {
    CORTIQ_ASSIGN_OR_RETURN(gain, ComputeF32(gain_attr.getValue().str()));
  }
  const double factor = op.getFactor() ? op.getFactor()->convertToDouble() : 1.0;
  const size_t cols = gain.empty() ? 1 : gain.size();
  for (size_t i = 0; i < out.size(); ++i) {
    double g = gain.empty() ? 1.0 : static_cast<double>(gain[i % cols]);
    out[i] = static_cast<float>(static_cast<double>(source[i]) * g * factor);
  }
  return out;
}

namespace {

// NaN or Inf in a weight would only show up as NaN logits; reject it at compile time instead.
absl::Status CheckFinite(const std::string& name, WeightFormat format, const uint8_t* data,
                         size_t count) {
  for (size_t i = 0; i < count; ++i) {
    bool finite;
    if (format == WeightFormat::kF32) {
      uint32_t bits;
      std::memcpy(&bits, data + 4 * i, 4);
      finite = (bits & 0x7F800000u) != 0x7F800000u;
    } else {
      uint16_t bits;
      std::memcpy(&bits, data + 2 * i, 2);
      finite = (bits & 0x7F80u) != 0x7F80u;
    }
    if (!finite) {
      return absl::InvalidArgumentError(absl::StrCat(
          "weight '", name, "' has a non-finite value (NaN or Inf) at element ", i,
          format == WeightFormat::kBF16 ? " (after rounding to bf16)" : ""));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WeightMaterializer::Write(const std::string& name, WeightFormat format,
                                       uint8_t* dst) const {
  WeightOp op = Find(module_, name);
  if (!op) return absl::NotFoundError(absl::StrCat("weight '", name, "' is not declared"));
  if (auto sources = op.getConcatRowsAttr()) {
    // Rows are stored independently in every format (a block-format row is whole blocks), so the
    // stacked weight is its sources written one after the other: GGUF blocks are copied as
    // they are and quantized rows are the sources' own blocks.
    const uint64_t total = WeightFormatBytes(
        format, std::vector<int64_t>(op.getTensorType().getShape().begin(),
                                     op.getTensorType().getShape().end()));
    uint64_t at = 0;
    for (mlir::Attribute source : sources) {
      WeightOp part = Find(module_, source.cast<mlir::FlatSymbolRefAttr>().getValue().str());
      if (!part) return absl::NotFoundError(absl::StrCat("weight '", name, "': a source is not declared"));
      auto shape = part.getTensorType().getShape();
      const uint64_t bytes =
          WeightFormatBytes(format, std::vector<int64_t>(shape.begin(), shape.end()));
      if (at + bytes > total) {
        return absl::InternalError(absl::StrCat("weight '", name, "': sources overflow it"));
      }
      CORTIQ_RETURN_IF_ERROR(Write(part.getSymName().str(), format, dst + at));
      at += bytes;
    }
    if (at != total) {
      return absl::InternalError(absl::StrCat("weight '", name, "': sources fill ", at, " of ",
                                              total, " bytes"));
    }
    return absl::OkStatus();
  }
  if (IsBlockFormat(format) || format == WeightFormat::kF16) return WriteRows(name, format, dst);
  CORTIQ_RETURN_IF_ERROR(WriteUnchecked(name, format, dst));
  return CheckFinite(name, format, dst, static_cast<size_t>(op.getTensorType().getNumElements()));
}

absl::Status WeightMaterializer::WriteRows(const std::string& name, WeightFormat format,
                                           uint8_t* dst) const {
  WeightOp op = Find(module_, name);
  if (!op) return absl::NotFoundError(absl::StrCat("weight '", name, "' is not declared"));
  auto shape = op.getTensorType().getShape();
  const int64_t block = static_cast<int64_t>(WeightFormatBlockElements(format));
  if (block > 1 && (shape.size() != 2 || shape[1] % block != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "weight '", name, "': ", WeightFormatName(format),
        " needs a matrix whose rows are multiples of ", block, " weights"));
  }
  // Rows of the last dimension (a 1-D weight is one row).
  const size_t cols = shape.empty() ? 1 : static_cast<size_t>(shape.back());
  const size_t rows = cols == 0 ? 0 : static_cast<size_t>(op.getTensorType().getNumElements()) / cols;
  const size_t row_bytes = WeightRowBytes(format, cols);
  // Row by row: a checkpoint table (E4B's PLE table is 2.8 G weights) is converted one row at
  // a time instead of as a whole f32 copy; derived weights (a layer's size) are computed whole.
  std::vector<float> values;
  const TensorSpec* spec = nullptr;
  absl::Span<const uint8_t> raw;
  if (op.isCheckpointTensor()) {
    spec = checkpoint_.Find(name);
    if (spec == nullptr) {
      return absl::NotFoundError(absl::StrCat("tensor '", name, "' is missing from the checkpoint"));
    }
    const bool same_format =
        WeightFormatFromName(absl::AsciiStrToLower(std::string(DTypeName(spec->dtype)))) == format;
    if (same_format) {
      // GGUF blocks (or f16 elements) in the target format: used as they are, byte for byte.
      CORTIQ_ASSIGN_OR_RETURN(absl::Span<const uint8_t> stored, checkpoint_.RawData(name));
      if (stored.size() != rows * row_bytes) {
        return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' holds ",
                                                       stored.size(), " bytes, expected ",
                                                       rows * row_bytes));
      }
      std::memcpy(dst, stored.data(), stored.size());
      return CheckRows(name, format, dst, rows, cols, /*rounded=*/false);
    }
    if ((spec->dtype == DType::kQ4_0 && format == WeightFormat::kQ4_0x16) ||
        (spec->dtype == DType::kQ8_0 && format == WeightFormat::kQ8_0x16)) {
      // The GGUF's Q4_0 / Q8_0 blocks regrouped (a byte permutation): the same weights, bit for
      // bit.
      CORTIQ_ASSIGN_OR_RETURN(absl::Span<const uint8_t> stored, checkpoint_.RawData(name));
      if (stored.size() != rows * row_bytes) {
        return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' holds ",
                                                       stored.size(), " bytes, expected ",
                                                       rows * row_bytes));
      }
      // Rows are whole 512-weight groups, so the matrix regroups as one run of blocks.
      if (format == WeightFormat::kQ4_0x16) {
        ops::Q4_0ToQ4_0x16(stored.data(), rows * cols, dst);
      } else {
        ops::Q8_0ToQ8_0x16(stored.data(), rows * cols, dst);
      }
      return CheckRows(name, format, dst, rows, cols, /*rounded=*/false);
    }
    const bool q4_k = spec->dtype == DType::kQ4_K && format == WeightFormat::kQ4_Kx16;
    if (q4_k || (spec->dtype == DType::kQ5_K && format == WeightFormat::kQ5_Kx16)) {
      // The GGUF's Q4_K / Q5_K super-blocks regrouped in pairs, scales unpacked: the same
      // weights, bit for bit (ops/quantize_q4_kx16.h, ops/quantize_q5_kx16.h; the inverse
      // gives the bytes back).
      CORTIQ_ASSIGN_OR_RETURN(absl::Span<const uint8_t> stored, checkpoint_.RawData(name));
      const size_t expected = rows * (q4_k ? ops::Q4_KRowBytes(cols) : ops::Q5_KRowBytes(cols));
      if (stored.size() != expected) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor '", name, "' holds ", stored.size(), " bytes, expected ", expected));
      }
      if (q4_k) {
        ops::Q4_KToQ4_Kx16(stored.data(), rows * cols, dst);
      } else {
        ops::Q5_KToQ5_Kx16(stored.data(), rows * cols, dst);
      }
      return CheckRows(name, format, dst, rows, cols, /*rounded=*/false);
    }
    const size_t element = DTypeSize(spec->dtype);
    const bool row_readable =
        spec->dtype == DType::kF32 || spec->dtype == DType::kBF16 || spec->dtype == DType::kF16;
    if (row_readable) {
      CORTIQ_ASSIGN_OR_RETURN(raw, checkpoint_.RawData(name));
      if (raw.size() < rows * cols * element) spec = nullptr;
    } else {
      spec = nullptr;  // other block formats: dequantize whole, then requantize
    }
  }
  if (spec == nullptr) {
    CORTIQ_ASSIGN_OR_RETURN(values, ComputeF32(name));
  }
  std::vector<float> row_values(cols);
  auto row_f32 = [&](size_t r) -> const float* {
    if (spec == nullptr) return values.data() + r * cols;
    const size_t element = DTypeSize(spec->dtype);
    FloatElementsToF32(spec->dtype, raw.data() + r * cols * element, cols, row_values.data());
    return row_values.data();
  };
  for (size_t r = 0; r < rows; ++r) {
    const float* x = row_f32(r);
    CORTIQ_RETURN_IF_ERROR(
        CheckFinite(name, WeightFormat::kF32, reinterpret_cast<const uint8_t*>(x), cols));
    EncodeWeightRow(format, x, cols, dst + r * row_bytes);
  }
  return CheckRows(name, format, dst, rows, cols, /*rounded=*/true);
}

absl::Status WeightMaterializer::CheckRows(const std::string& name, WeightFormat format,
                                           const uint8_t* data, size_t rows, size_t cols,
                                           bool rounded) const {
  // A block whose largest |w| passes the f16 range times its largest quant gets an infinite
  // f16 scale, an f16 weight past 65504 rounds to Inf, and a GGUF may hold any bits: an Inf or
  // NaN would reach the logits. Every value a block decodes to is its f16 scale(s) times small
  // integers (finite in f32), so a non-finite decoded weight means a non-finite scale.
  const size_t row_bytes = WeightRowBytes(format, cols);
  const size_t block = WeightFormatBlockElements(format);
  std::vector<float> decoded(cols);
  for (size_t r = 0; r < rows; ++r) {
    DecodeWeightRow(format, data + r * row_bytes, cols, decoded.data());
    for (size_t c = 0; c < cols; ++c) {
      uint32_t bits;
      std::memcpy(&bits, &decoded[c], sizeof(bits));
      if ((bits & 0x7F800000u) != 0x7F800000u) continue;
      if (block > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "weight '", name, "': row ", r, " block ", c / block,
            " has a non-finite f16 scale (", WeightFormatName(format), ")"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "weight '", name, "' has a non-finite value (NaN or Inf) at element ", r * cols + c,
          rounded ? absl::StrCat(" (after rounding to ", WeightFormatName(format), ")") : ""));
    }
  }
  return absl::OkStatus();
}

absl::Status WeightMaterializer::WriteUnchecked(const std::string& name, WeightFormat format,
                                                uint8_t* dst) const {
  WeightOp op = Find(module_, name);
  if (!op) return absl::NotFoundError(absl::StrCat("weight '", name, "' is not declared"));
  if (op.isCheckpointTensor()) {
    // Straight from the file, without an f32 copy of a large bf16 tensor.
    if (checkpoint_.Find(name) == nullptr) {
      return absl::NotFoundError(absl::StrCat("tensor '", name, "' is missing from the checkpoint"));
    }
    switch (format) {
      case WeightFormat::kF32:
        return checkpoint_.ReadAsF32(name, reinterpret_cast<float*>(dst));
      case WeightFormat::kBF16:
        return checkpoint_.ReadAsBF16(name, reinterpret_cast<uint16_t*>(dst));
      default:
        break;  // block formats go through WriteBlocks
    }
  }
  CORTIQ_ASSIGN_OR_RETURN(std::vector<float> values, ComputeF32(name));
  switch (format) {
    case WeightFormat::kF32:
      std::memcpy(dst, values.data(), values.size() * sizeof(float));
      return absl::OkStatus();
    case WeightFormat::kBF16: {
      auto* out = reinterpret_cast<uint16_t*>(dst);
      for (size_t i = 0; i < values.size(); ++i) out[i] = F32ToBf16(values[i]);
      return absl::OkStatus();
    }
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("weight '", name, "': unknown format"));
}

}  // namespace cortiq
