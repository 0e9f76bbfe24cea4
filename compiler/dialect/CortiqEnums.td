// Enumerations of the `cortiq` dialect: attention layer types, RoPE variants, weight storage
// formats and the prompt rows an op runs on.
#ifndef CORTIQ_ENUMS_TD
#define CORTIQ_ENUMS_TD

include "mlir/IR/EnumAttr.td"

// HF `layer_types` entries "sliding_attention" / "full_attention".
def Cortiq_LayerType : I32EnumAttr<"AttentionType", "attention layer type", [
    I32EnumAttrCase<"sliding", 0>,
    I32EnumAttrCase<"full", 1>]> {
  let cppNamespace = "::cortiq";
}

// HF `rope_parameters[...].rope_type`: "default" (all pairs rotate, exponent over head_dim)
// and "proportional" (only the first rotated_pairs pairs rotate, exponent still over head_dim).
def Cortiq_RopeVariant : I32EnumAttr<"RopeVariant", "RoPE variant", [
    I32EnumAttrCase<"Default", 0, "default">,
    I32EnumAttrCase<"Proportional", 1, "proportional">]> {
  let cppNamespace = "::cortiq";
}

// The formats a weight is stored in: in the artifact (`stored_format` of cortiq.weight) or in the
// checkpoint (`checkpoint_format`, for llama.cpp's block formats). Each case is named as
// runtime/plan.h's WeightFormat of the same format (WeightFormatName: "q8_0" for kQ8_0), and
// lowering converts by that name. Adding a format: a case here (C++ symbol as llama.cpp's
// GGML_TYPE_*, string as WeightFormatName), its block size in storageFormatBlockSize
// (CortiqDialect.cc), and the WeightFormat of the same name with its kernels.
def Cortiq_StorageFormat : I32EnumAttr<"StorageFormat", "weight storage format", [
    I32EnumAttrCase<"F32", 0, "f32">,    // IEEE binary32
    I32EnumAttrCase<"BF16", 1, "bf16">,  // bfloat16
    I32EnumAttrCase<"Q8_0", 2, "q8_0">,  // llama.cpp block_q8_0: 32 weights, f16 scale + 32 int8
    I32EnumAttrCase<"Q4_0", 3, "q4_0">,  // block_q4_0: 32 weights, f16 scale + 16 nibble bytes
    I32EnumAttrCase<"F16", 4, "f16">,    // IEEE binary16
    // llama.cpp's other block formats (ggml-common.h): 32-weight blocks ...
    I32EnumAttrCase<"Q4_1", 5, "q4_1">,
    I32EnumAttrCase<"Q5_0", 6, "q5_0">,
    I32EnumAttrCase<"Q5_1", 7, "q5_1">,
    // ... and 256-weight super-blocks (QK_K).
    I32EnumAttrCase<"Q2_K", 8, "q2_k">,
    I32EnumAttrCase<"Q3_K", 9, "q3_k">,
    I32EnumAttrCase<"Q4_K", 10, "q4_k">,
    I32EnumAttrCase<"Q5_K", 11, "q5_k">,
    I32EnumAttrCase<"Q6_K", 12, "q6_k">,
    I32EnumAttrCase<"IQ4_NL", 13, "iq4_nl">,  // 32 weights, the 16-level non-linear table
    I32EnumAttrCase<"IQ4_XS", 14, "iq4_xs">,  // 256 weights, 6-bit scales, the same table
    // cortiq's own layout (not a GGUF type): Q4_0 blocks regrouped 16 at a time, 512 weights in
    // 288 bytes (ops/quantize_q4_0x16.h); never a checkpoint format.
    I32EnumAttrCase<"Q4_0x16", 15, "q4_0x16">,
    // The same for Q8_0: 512 weights in 544 bytes (ops/quantize_q8_0x16.h).
    I32EnumAttrCase<"Q8_0x16", 16, "q8_0x16">,
    // The same for Q4_K: pairs of super-blocks, one 32-weight sub-block per 32-bit lane, the
    // 6-bit scales and mins unpacked to bytes: 512 weights in 296 bytes
    // (ops/quantize_q4_kx16.h).
    I32EnumAttrCase<"Q4_Kx16", 17, "q4_kx16">,
    // The same for Q5_K, each quant's fifth bit in 64-bit masks: 512 weights in 360 bytes
    // (ops/quantize_q5_kx16.h).
    I32EnumAttrCase<"Q5_Kx16", 18, "q5_kx16">]> {
  let cppNamespace = "::cortiq";
}

// The rows of a prompt batch an op must run on (the `cortiq.rows` op attribute, set by
// mark-rows): every row, or only the logits rows — the rows whose logits are wanted (the last
// row, or every row when every position's logits are asked for). Stored as the case's name
// (a string attribute) so the printed IR reads `cortiq.rows = "logits"`.
def Cortiq_Rows : I32EnumAttr<"Rows", "prompt rows an op runs on", [
    I32EnumAttrCase<"all", 0>,
    I32EnumAttrCase<"logits", 1>]> {
  let cppNamespace = "::cortiq";
}

#endif  // CORTIQ_ENUMS_TD
