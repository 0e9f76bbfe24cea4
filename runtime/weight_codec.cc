// Reference row encoders and decoders of the weight formats (see weight_codec.h).
#include "runtime/weight_codec.h"

#include <cstring>

#include "hwy/base.h"
#include "ops/quantize.h"
#include "ops/quantize_iq4.h"
#include "ops/quantize_k.h"
#include "ops/quantize_legacy.h"
#include "ops/quantize_q4_0x16.h"
#include "ops/quantize_q4_kx16.h"
#include "ops/quantize_q5_kx16.h"
#include "ops/quantize_q8_0x16.h"

namespace cortiq {
namespace {

void EncodeF32(const float* x, size_t n, void* out) { std::memcpy(out, x, n * sizeof(float)); }
void DecodeF32(const void* src, size_t n, float* y) { std::memcpy(y, src, n * sizeof(float)); }

void EncodeBF16(const float* x, size_t n, void* out) {
  auto* bytes = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) {
    // Round to nearest even; NaN stays NaN (hwy::BF16FromF32 truncates).
    uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof(bits));
    uint16_t b;
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
      b = static_cast<uint16_t>((bits >> 16) | 0x40u);
    } else {
      b = static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
    }
    std::memcpy(bytes + 2 * i, &b, sizeof(b));
  }
}

void DecodeBF16(const void* src, size_t n, float* y) {
  const auto* bytes = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n; ++i) {
    uint16_t b;
    std::memcpy(&b, bytes + 2 * i, sizeof(b));
    const uint32_t bits = static_cast<uint32_t>(b) << 16;
    std::memcpy(&y[i], &bits, sizeof(bits));
  }
}

struct Codec {
  WeightFormat format;
  void (*encode)(const float* x, size_t n, void* out);
  void (*decode)(const void* src, size_t n, float* y);
};

constexpr Codec kCodecs[] = {
    {WeightFormat::kF32, EncodeF32, DecodeF32},
    {WeightFormat::kBF16, EncodeBF16, DecodeBF16},
    {WeightFormat::kQ8_0, ops::QuantizeRowQ8_0, ops::DequantizeRowQ8_0},
    {WeightFormat::kQ4_0, ops::QuantizeRowQ4_0, ops::DequantizeRowQ4_0},
    {WeightFormat::kF16, ops::QuantizeRowF16, ops::DequantizeRowF16},
    {WeightFormat::kQ4_1, ops::QuantizeRowQ4_1, ops::DequantizeRowQ4_1},
    {WeightFormat::kQ5_0, ops::QuantizeRowQ5_0, ops::DequantizeRowQ5_0},
    {WeightFormat::kQ5_1, ops::QuantizeRowQ5_1, ops::DequantizeRowQ5_1},
    {WeightFormat::kQ2_K, ops::QuantizeRowQ2_K, ops::DequantizeRowQ2_K},
    {WeightFormat::kQ3_K, ops::QuantizeRowQ3_K, ops::DequantizeRowQ3_K},
    {WeightFormat::kQ4_K, ops::QuantizeRowQ4_K, ops::DequantizeRowQ4_K},
    {WeightFormat::kQ5_K, ops::QuantizeRowQ5_K, ops::DequantizeRowQ5_K},
    {WeightFormat::kQ6_K, ops::QuantizeRowQ6_K, ops::DequantizeRowQ6_K},
    {WeightFormat::kIQ4_NL, ops::QuantizeRowIQ4_NL, ops::DequantizeRowIQ4_NL},
    {WeightFormat::kIQ4_XS, ops::QuantizeRowIQ4_XS, ops::DequantizeRowIQ4_XS},
    {WeightFormat::kQ4_0x16, ops::QuantizeRowQ4_0x16, ops::DequantizeRowQ4_0x16},
    {WeightFormat::kQ8_0x16, ops::QuantizeRowQ8_0x16, ops::DequantizeRowQ8_0x16},
    {WeightFormat::kQ4_Kx16, ops::QuantizeRowQ4_Kx16, ops::DequantizeRowQ4_Kx16},
    {WeightFormat::kQ5_Kx16, ops::QuantizeRowQ5_Kx16, ops::DequantizeRowQ5_Kx16},
};
static_assert(sizeof(kCodecs) / sizeof(kCodecs[0]) ==
                  sizeof(kAllWeightFormats) / sizeof(kAllWeightFormats[0]),
              "every weight format has a codec");

const Codec* FindCodec(WeightFormat format) {
  for (const Codec& codec : kCodecs) {
    if (codec.format == format) return &codec;
  }
  return nullptr;
}

}  // namespace

size_t WeightRowBytes(WeightFormat format, size_t cols) {
  return static_cast<size_t>(WeightFormatBytes(format, {static_cast<int64_t>(cols)}));
}

bool EncodeWeightRow(WeightFormat format, const float* x, size_t cols, void* out) {
  const Codec* codec = FindCodec(format);
  if (codec == nullptr) return false;
  if (cols > 0) codec->encode(x, cols, out);
  return true;
}

bool DecodeWeightRow(WeightFormat format, const void* src, size_t cols, float* y) {
  const Codec* codec = FindCodec(format);
  if (codec == nullptr) return false;
  if (cols > 0) codec->decode(src, cols, y);
  return true;
}

}  // namespace cortiq
