// Element types of checkpoint tensors (safetensors dtype strings, and llama.cpp's Q8_0 / Q4_0
// block formats from GGUF files) and the scalar conversions between them: f32 <-> bf16
// (round-to-nearest-even) and f16 <-> f32 (IEEE 754 binary16).
#ifndef CORTIQ_FORMATS_DTYPE_H_
#define CORTIQ_FORMATS_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace cortiq {

// The tensor element types cortiq can load. A safetensors file may hold other dtypes (I8, F64,
// ...); such tensors are listed with `kUnsupported` (the original string is kept in
// `TensorInfo::dtype_name`) and only fail when they are read.
//
// kQ8_0 .. kIQ4_XS are llama.cpp's block formats (ggml-common.h; ops/quantize.h,
// quantize_legacy.h, quantize_k.h, quantize_iq4.h): each row (the last, fastest-varying
// dimension, a multiple of the block size) is stored as blocks of 32 weights (Q8_0, Q4_0, Q4_1,
// Q5_0, Q5_1, IQ4_NL) or super-blocks of 256 (Q2_K .. Q6_K, IQ4_XS). Only GGUF files hold them;
// safetensors never does.
enum class DType {
  kF32, kBF16, kF16, kUnsupported, kQ8_0, kQ4_0,
  kQ4_1, kQ5_0, kQ5_1, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K, kIQ4_NL, kIQ4_XS,
};

// True for the block formats (kQ8_0 .. kIQ4_XS).
bool IsBlockDType(DType dtype);

// Size of one element in bytes: 4 (F32), 2 (BF16, F16); 0 for kUnsupported and for the block
// types, which have no per-element size (use TensorBytes).
size_t DTypeSize(DType dtype);

// Weights per block (32 or 256) and bytes per block (ggml's type_size: Q8_0 34, Q4_K 144, ...)
// of a block type; 0 for the others.
size_t DTypeBlockElements(DType dtype);
size_t DTypeBlockBytes(DType dtype);

// The dtype's name: "F32", "BF16", "F16" (the safetensors strings), the block types' ggml names
// ("Q8_0", "Q4_K", "IQ4_XS"); "unsupported" for kUnsupported.
std::string_view DTypeName(DType dtype);

// Bytes of a tensor of `dtype` and `shape` (row-major, HF order: the last dimension is the
// row): product(shape) · DTypeSize for F32/BF16/F16; for a block type, product(shape) / block
// elements blocks of DTypeBlockBytes, which requires a non-empty shape whose last dimension is
// a multiple of the block size (0 is returned otherwise). 0 for kUnsupported. No overflow check
// (as TensorSpecNumBytes); negative dimensions are the caller's error.
uint64_t TensorBytes(DType dtype, const std::vector<int64_t>& shape);

// Maps a safetensors dtype string to a DType: "F32", "BF16", "F16" (case-sensitive, as the
// format writes them); any other string gives kUnsupported.
DType DTypeFromName(std::string_view name);

// Element size in bytes of any dtype string of the safetensors format (huggingface/safetensors
// `Dtype`): BOOL, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0 → 1; U16, I16, F16, BF16 → 2; U32, I32, F32 →
// 4; U64, I64, F64 → 8. Returns 0 for strings it does not know (including sub-byte types such as
// F4), whose byte sizes are then not checked against the shape.
size_t SafetensorsDTypeSize(std::string_view name);

// bf16 bits → f32 (exact: bf16 is the top half of an f32).
float Bf16ToF32(uint16_t bits);

// f32 → bf16 bits, rounding to nearest, ties to even. NaN stays NaN (quiet bit set), ±inf stays
// ±inf; finite values above the bf16 range round to ±inf as IEEE rounding prescribes.
uint16_t F32ToBf16(float value);

// IEEE binary16 bits → f32 (exact, including subnormals, ±inf and NaN).
float F16ToF32(uint16_t bits);

// f32 → IEEE binary16 bits, round-to-nearest-even; overflow gives ±inf, tiny values give
// subnormals or ±0, NaN stays NaN.
uint16_t F32ToF16(float value);

// Converts `count` little-endian F32 / BF16 / F16 elements at `src` (any alignment) to f32,
// exactly. Returns false, writing nothing, for any other dtype.
bool FloatElementsToF32(DType dtype, const uint8_t* src, uint64_t count, float* out);

// Decodes `count` weights of a block type at `src` (count / DTypeBlockElements blocks, count a
// multiple of the block size) to their exact f32 values with llama.cpp's dequantizers
// (ops/quantize*.h DequantizeRow*). Returns false, writing nothing, for a non-block dtype.
bool DequantizeBlocks(DType dtype, const uint8_t* src, uint64_t count, float* out);

// The same to bf16 bits: BF16 is copied, F32 rounded to nearest even, F16 widened to f32 first
// (exact) and then rounded. Returns false, writing nothing, for any other dtype.
bool FloatElementsToBF16(DType dtype, const uint8_t* src, uint64_t count, uint16_t* out);

}  // namespace cortiq

#endif  // CORTIQ_FORMATS_DTYPE_H_
