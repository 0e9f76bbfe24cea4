// The reference encoder and decoder of every weight format (runtime/plan.h WeightFormat), one
// row at a time: what cortiq-compile writes into an artifact and the exact f32 values the
// kernels compute with. Scalar code; the formats' definitions and the llama.cpp functions each
// reproduces are in ops/quantize.h, quantize_legacy.h, quantize_k.h and quantize_iq4.h.
#ifndef CORTIQ_RUNTIME_WEIGHT_CODEC_H_
#define CORTIQ_RUNTIME_WEIGHT_CODEC_H_

#include <cstddef>
#include <cstdint>

#include "runtime/plan.h"

namespace cortiq {

// Bytes of one row of `cols` weights in `format`: WeightFormatBytes(format, {cols}) (0 when
// cols is not whole blocks).
size_t WeightRowBytes(WeightFormat format, size_t cols);

// Encodes `cols` f32 values as one row of `format` (WeightRowBytes bytes at `out`): f32 copied;
// bf16 and f16 rounded to nearest even; the block formats by llama.cpp's reference quantizers
// (quantize_row_<type>_ref, the blocks llama-quantize writes without an importance matrix:
// bit-identical). `cols` must be whole blocks of the format. False (nothing written) for a
// value outside the enum.
bool EncodeWeightRow(WeightFormat format, const float* x, size_t cols, void* out);

// Decodes one row of `cols` weights of `format` at `src` to their exact f32 values (bf16 / f16
// widened; blocks by llama.cpp's dequantize_row_<type>, which the kernels match bit for bit).
// False (nothing written) for a value outside the enum.
bool DecodeWeightRow(WeightFormat format, const void* src, size_t cols, float* y);

}  // namespace cortiq

#endif  // CORTIQ_RUNTIME_WEIGHT_CODEC_H_
