// Enumerations of the `cortiq` dialect: attention layer types and RoPE variants.
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

#endif  // CORTIQ_ENUMS_TD
