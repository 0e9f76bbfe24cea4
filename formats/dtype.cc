// Element types of checkpoint tensors and their scalar conversions (see dtype.h).
#include "formats/dtype.h"

#include "ops/quantize.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_k.h"
#include "ops/quantize_legacy.h"

#include <cstring>

namespace cortiq {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

namespace {

// ggml-common.h: QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK8_0 = QK4_NL = 32, QK_K = 256, and the
// sizes of the block structs.
struct BlockInfo {
  DType dtype;
  std::string_view name;
  size_t elements;
  size_t bytes;
};
constexpr BlockInfo kBlockTypes[] = {
    {DType::kQ8_0, "Q8_0", 32, 34},    {DType::kQ4_0, "Q4_0", 32, 18},
    {DType::kQ4_1, "Q4_1", 32, 20},    {DType::kQ5_0, "Q5_0", 32, 22},
    {DType::kQ5_1, "Q5_1", 32, 24},    {DType::kQ2_K, "Q2_K", 256, 84},
    {DType::kQ3_K, "Q3_K", 256, 110},  {DType::kQ4_K, "Q4_K", 256, 144},
    {DType::kQ5_K, "Q5_K", 256, 176},  {DType::kQ6_K, "Q6_K", 256, 210},
    {DType::kIQ4_NL, "IQ4_NL", 32, 18}, {DType::kIQ4_XS, "IQ4_XS", 256, 136},
};

const BlockInfo* FindBlockType(DType dtype) {
  for (const BlockInfo& info : kBlockTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

bool IsBlockDType(DType dtype) { return FindBlockType(dtype) != nullptr; }

size_t DTypeBlockElements(DType dtype) {
  const BlockInfo* info = FindBlockType(dtype);
  return info != nullptr ? info->elements : 0;
}

size_t DTypeBlockBytes(DType dtype) {
  const BlockInfo* info = FindBlockType(dtype);
  return info != nullptr ? info->bytes : 0;
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kBF16:
    case DType::kF16:
      return 2;
    default:
      return 0;  // kUnsupported and the block types
  }
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "F32";
    case DType::kBF16:
      return "BF16";
    case DType::kF16:
      return "F16";
    case DType::kUnsupported:
      return "unsupported";
    default:
      break;
  }
  const BlockInfo* info = FindBlockType(dtype);
  return info != nullptr ? info->name : "unsupported";
}

uint64_t TensorBytes(DType dtype, const std::vector<int64_t>& shape) {
  uint64_t elements = 1;
  for (int64_t dim : shape) elements *= static_cast<uint64_t>(dim);
  const BlockInfo* info = FindBlockType(dtype);
  if (info == nullptr) return elements * DTypeSize(dtype);
  if (shape.empty() || shape.back() % static_cast<int64_t>(info->elements) != 0) return 0;
  return elements / info->elements * info->bytes;
}

DType DTypeFromName(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "BF16") return DType::kBF16;
  if (name == "F16") return DType::kF16;
  return DType::kUnsupported;
}

size_t SafetensorsDTypeSize(std::string_view name) {
  struct Entry {
    std::string_view name;
    size_t size;
  };
  // The dtype list of huggingface/safetensors (`Dtype` enum), whole-byte types only.
  static constexpr Entry kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1},
      {"U16", 2},  {"I16", 2}, {"F16", 2}, {"BF16", 2},    {"U32", 4},     {"I32", 4},
      {"F32", 4},  {"U64", 8}, {"I64", 8}, {"F64", 8},
  };
  for (const Entry& entry : kSizes) {
    if (entry.name == name) return entry.size;
  }
  return 0;
}

float Bf16ToF32(uint16_t bits) { return BitsToFloat(static_cast<uint32_t>(bits) << 16); }

uint16_t F32ToBf16(float value) {
  uint32_t bits = FloatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep the sign and the top mantissa bits.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate. A carry out of
  // the mantissa correctly bumps the exponent (up to +inf).
  const uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

float F16ToF32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa · 2^-24, exact in f32.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  // Rebias the exponent from 15 to 127 (+112).
  return BitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t F32ToF16(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) {  // inf or NaN
    const uint32_t mantissa = abs_bits & 0x7fffffu;
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? (0x200u | (mantissa >> 13)) : 0u));
  }
  if (abs_bits < 0x33000000u) return sign;  // |value| < 2^-25: rounds to ±0.
  if (abs_bits < 0x38800000u) {
    // |value| < 2^-14: an f16 subnormal m_h · 2^-24. With value = m · 2^(e-150) (m including the
    // implicit bit), m_h = m · 2^(e-126), i.e. m shifted right by 126 - e (14..24 here).
    const uint32_t exponent = abs_bits >> 23;
    const uint32_t mantissa = (abs_bits & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);  // half == 0x400 is the smallest normal: correct.
  }
  // Normal range: rebias the exponent by -112 and drop 13 mantissa bits, rounding to nearest even.
  uint32_t half = (abs_bits >> 13) - (112u << 10);
  const uint32_t remainder = abs_bits & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  if (half > 0x7c00u) half = 0x7c00u;  // Overflow → inf.
  return static_cast<uint16_t>(sign | half);
}

bool FloatElementsToF32(DType dtype, const uint8_t* src, uint64_t count, float* out) {
  switch (dtype) {
    case DType::kF32:
      if (count > 0) std::memcpy(out, src, count * sizeof(float));
      return true;
    case DType::kBF16:
    case DType::kF16:
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, sizeof(bits));
        out[i] = dtype == DType::kBF16 ? Bf16ToF32(bits) : F16ToF32(bits);
      }
      return true;
    default:
      return false;
  }
}

bool DequantizeBlocks(DType dtype, const uint8_t* src, uint64_t count, float* out) {
  void (*dequantize)(const void*, size_t, float*) = nullptr;
  switch (dtype) {
    case DType::kQ8_0: dequantize = ops::DequantizeRowQ8_0; break;
    case DType::kQ4_0: dequantize = ops::DequantizeRowQ4_0; break;
    case DType::kQ4_1: dequantize = ops::DequantizeRowQ4_1; break;
    case DType::kQ5_0: dequantize = ops::DequantizeRowQ5_0; break;
    case DType::kQ5_1: dequantize = ops::DequantizeRowQ5_1; break;
    case DType::kQ2_K: dequantize = ops::DequantizeRowQ2_K; break;
    case DType::kQ3_K: dequantize = ops::DequantizeRowQ3_K; break;
    case DType::kQ4_K: dequantize = ops::DequantizeRowQ4_K; break;
    case DType::kQ5_K: dequantize = ops::DequantizeRowQ5_K; break;
    case DType::kQ6_K: dequantize = ops::DequantizeRowQ6_K; break;
    case DType::kIQ4_NL: dequantize = ops::DequantizeRowIQ4_NL; break;
    case DType::kIQ4_XS: dequantize = ops::DequantizeRowIQ4_XS; break;
    default: return false;
  }
  if (count > 0) dequantize(src, static_cast<size_t>(count), out);
  return true;
}

bool FloatElementsToBF16(DType dtype, const uint8_t* src, uint64_t count, uint16_t* out) {
  switch (dtype) {
    case DType::kBF16:
      if (count > 0) std::memcpy(out, src, count * sizeof(uint16_t));
      return true;
    case DType::kF32:
      for (uint64_t i = 0; i < count; ++i) {
        float value;
        std::memcpy(&value, src + 4 * i, sizeof(value));
        out[i] = F32ToBf16(value);
      }
      return true;
    case DType::kF16:
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, sizeof(bits));
        out[i] = F32ToBf16(F16ToF32(bits));
      }
      return true;
    default:
      return false;
  }
}

}  // namespace cortiq
