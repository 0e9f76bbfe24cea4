// Ops of the `cortiq` dialect. Formulas follow HF transformers `modeling_gemma4.py` and the
// project spec (shared/spec/gemma4e-text-decoder.md, cited below as "spec §N").
#ifndef CORTIQ_OPS_TD
#define CORTIQ_OPS_TD

include "compiler/dialect/CortiqDialect.td"
include "compiler/dialect/CortiqEnums.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Module-level declarations
//===----------------------------------------------------------------------===//

def Cortiq_WeightOp : Cortiq_Op<"weight", [Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "declares a checkpoint tensor or a weight derived from others at compile time";
  let description = [{
    Without a derivation, names a tensor of the checkpoint, with its shape (HF
    order, `[out, in]` for a linear) and its stored element type (`f32`, `bf16` or
    `f16`). Ops read it by symbol; the data stay in the checkpoint until the
    artifact is written. A tensor the checkpoint holds in llama.cpp blocks (a GGUF's
    Q8_0, Q4_K, IQ4_XS, ...) has `f32` elements, the values its blocks decode to, and
    `checkpoint(format)` names the block format.

    Passes derive new weights, which cortiq-compile materializes from their sources
    (computed in f32, then rounded to their storage format):
    - `concat_rows(@a, @b, ...)`: the rows of the sources stacked (fuse-linear);
    - `scale(@w) columns(@g) factor(f)`: `w[r, c] * g[c] * f`, with `columns` and
      `factor` each optional (fold-norm-gain, fold-constants). On a 1-D `w`,
      `columns` is not allowed and the result is `w[c] * f`.

    `stored(format)` is the format the artifact stores the weight in, recorded by
    assign-storage-formats before the other passes (which carry it onto the weights
    they derive) and read by lowering. A block format (`q8_0`, `q4_k`, ...) needs
    a matrix whose rows are whole blocks (storageFormatBlockSize weights).

    ```mlir
    cortiq.weight @"model.language_model.layers.0.self_attn.q_proj.weight" : tensor<64x64xbf16>
    cortiq.weight @"blk.0.attn_k.weight" checkpoint(q8_0) stored(q8_0) : tensor<32x64xf32>
    cortiq.weight @q.folded = scale(@q) columns(@input_norm) stored(bf16) : tensor<64x64xbf16>
    cortiq.weight @qkv = concat_rows(@q.folded, @k.folded, @v.folded) : tensor<128x64xbf16>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type,
                       OptionalAttr<FlatSymbolRefArrayAttr>:$concat_rows,
                       OptionalAttr<FlatSymbolRefAttr>:$scale_of,
                       OptionalAttr<FlatSymbolRefAttr>:$column_gain,
                       OptionalAttr<F32Attr>:$factor,
                       OptionalAttr<Cortiq_StorageFormat>:$checkpoint_format,
                       OptionalAttr<Cortiq_StorageFormat>:$stored_format);
  let builders = [
    // A checkpoint tensor.
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::Type":$type), [{
      build($_builder, $_state, $_builder.getStringAttr(name), ::mlir::TypeAttr::get(type),
            ::mlir::ArrayAttr(), ::mlir::FlatSymbolRefAttr(), ::mlir::FlatSymbolRefAttr(),
            ::mlir::FloatAttr(), StorageFormatAttr(), StorageFormatAttr());
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return getType().cast<::mlir::RankedTensorType>();
    }
    // True for a tensor read from the checkpoint, false for a derived weight.
    bool isCheckpointTensor() { return !getConcatRows() && !getScaleOf(); }
  }];
}

def Cortiq_KvCacheOp : Cortiq_Op<"kv_cache", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "declares the key/value cache written by one KV-owning layer";
  let description = [{
    A cache of `num_kv_heads * head_dim` keys and as many values per position.
    A `sliding` cache serves a window of the last `sliding_window` positions, a
    `full` cache every position. `layer` is the layer that writes it; KV-shared
    layers read it too (spec §3.3 step 3).

    ```mlir
    cortiq.kv_cache @kv_cache_2 layer 2 sliding kv_heads 2 head_dim 16
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$layer, Cortiq_LayerType:$layer_type,
                       I64Attr:$num_kv_heads, I64Attr:$head_dim);
  let assemblyFormat = [{
    $sym_name `layer` $layer $layer_type `kv_heads` $num_kv_heads `head_dim` $head_dim attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Lookups
//===----------------------------------------------------------------------===//

def Cortiq_EmbeddingOp : Cortiq_Op<"embedding",
    [NoSideEffect, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "table-row lookup times a scale";
  let description = [{
    `result = table[token, :] * scale` for a table `[rows, cols]`; result has `cols`
    elements. The token embedding uses `scale = sqrt(hidden_size)` (spec §3.1;
    cortiq uses the exact f32 value, as llama.cpp and f32 HF do). The per-layer
    (PLE) table `embed_tokens_per_layer` `[vocab, num_hidden_layers * hidden_size_per_layer_input]`
    is looked up the same way with `scale = sqrt(hidden_size_per_layer_input)` (spec §3.2 step 3).

    ```mlir
    %e = cortiq.embedding @"model.language_model.embed_tokens.weight"[%token] scale 8.0 : tensor<64xf32>
    ```
  }];
  let arguments = (ins I32:$token, FlatSymbolRefAttr:$table, F32Attr:$scale);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = "$table `[` $token `]` `scale` $scale attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Linear algebra and norms
//===----------------------------------------------------------------------===//

def Cortiq_LinearOp : Cortiq_Op<"linear",
    [NoSideEffect, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "matrix-vector product with a checkpoint weight";
  let description = [{
    `result[r] = sum_c weight[r, c] * input[c]` for a weight `[out, in]` (HF
    `nn.Linear` without bias; the text decoder has no biases).

    ```mlir
    %q = cortiq.linear @"model.language_model.layers.0.self_attn.q_proj.weight"(%x) : tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, FlatSymbolRefAttr:$weight);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = "$weight `(` $input `)` attr-dict `:` type($input) `->` type($result)";
}

def Cortiq_RmsNormOp : Cortiq_Op<"rms_norm",
    [NoSideEffect, SameOperandsAndResultType, Cortiq_InPlace,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "RMS norm over groups of `group_size` elements, with or without a gain";
  let description = [{
    The input is split into groups of `group_size` (one group for the hidden-state
    norms, one per head for q_norm/k_norm/v_norm, one per layer for
    `per_layer_projection_norm`). Each group: `y = x * (mean(x^2) + eps)^(-1/2) * gain`
    (HF `Gemma4RMSNorm`, spec §4: a plain gain, never `1 + gain`). Without `gain`
    it is the scale-less norm used for v (`with_scale=False`).

    ```mlir
    %x = cortiq.rms_norm %h gain @"model.language_model.layers.0.input_layernorm.weight" group 64 eps 9.99999997E-7 : tensor<64xf32>
    %v = cortiq.rms_norm %v0 group 16 eps 9.99999997E-7 : tensor<32xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, OptionalAttr<FlatSymbolRefAttr>:$gain,
                       I64Attr:$group_size, F32Attr:$eps);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = [{
    $input (`gain` $gain^)? `group` $group_size `eps` $eps attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Cortiq_RopeOp : Cortiq_Op<"rope",
    [NoSideEffect, AllTypesMatch<["input", "result"]>, Cortiq_InPlace]> {
  let summary = "rotary position embedding, rotate-half layout";
  let description = [{
    For each head of `head_dim` and each pair `i < rotated_pairs`:
    `angle = position * theta^(-2i/head_dim)`,
    `x'[i] = x[i] cos - x[i + head_dim/2] sin`, `x'[i + head_dim/2] = x[i + head_dim/2] cos + x[i] sin`.
    `default` rotates every pair (`rotated_pairs = head_dim / 2`; sliding layers).
    `proportional` rotates only the first `int(partial_rotary_factor * head_dim / 2)`
    pairs and leaves the others unchanged, with the exponent still over the full
    `head_dim` (HF `_compute_proportional_rope_parameters`; spec §3.0, §5.1-1).

    ```mlir
    %qr = cortiq.rope proportional %qn at %position theta 1.0E+6 head_dim 32 pairs 4 : tensor<128xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, I32:$position, Cortiq_RopeVariant:$variant,
                       F64Attr:$theta, I64Attr:$head_dim, I64Attr:$rotated_pairs);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = [{
    $variant $input `at` $position `theta` $theta `head_dim` $head_dim `pairs` $rotated_pairs
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention and the KV cache
//===----------------------------------------------------------------------===//

def Cortiq_KvAppendOp : Cortiq_Op<"kv_append",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "writes the key and value of one position into a cache";
  let description = [{
    Stores `key` and `value` (`[num_kv_heads * head_dim]` each, after k_norm + RoPE
    and v_norm) for `position` into the named cache. Only KV-owning layers append
    (spec §3.3 step 3).

    ```mlir
    cortiq.kv_append %k, %v into @kv_cache_2 at %position : tensor<32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$key, Cortiq_Vector:$value, I32:$position,
                       FlatSymbolRefAttr:$cache);
  let assemblyFormat = [{
    $key `,` $value `into` $cache `at` $position attr-dict `:` type($key) `,` type($value)
  }];
}

def Cortiq_AttentionOp : Cortiq_Op<"attention",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "single-query multi-head attention over a named KV cache";
  let description = [{
    Query head `h` (of `num_heads`) attends with kv head `h / (num_heads / num_kv_heads)`
    (GQA/MQA, HF `repeat_kv`) over the visible positions of `cache`:
    `s_i = scale * q_h . k_i`, `o_h = sum_i softmax(s)_i v_i`. Visible: `0..position`
    on full layers; the last `window` positions including the current one on
    sliding layers (`max(0, position - window + 1)..position`). Gemma 4 uses
    `scale = 1.0` (q_norm/k_norm replace `1/sqrt(head_dim)`; spec §3.3 step 4).

    `layer` is the reading layer. A KV-shared layer names its source layer's cache,
    which makes the shared-KV edge explicit:

    ```mlir
    %o = cortiq.attention layer 6 sliding %q over @kv_cache_2 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$query, I32:$position, I64Attr:$layer,
                       Cortiq_LayerType:$layer_type, FlatSymbolRefAttr:$cache,
                       I64Attr:$num_heads, OptionalAttr<I64Attr>:$window, F32Attr:$scale);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = [{
    `layer` $layer $layer_type $query `over` $cache `at` $position `heads` $num_heads
    (`window` $window^)? `scale` $scale attr-dict `:` type($query) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Cortiq_UnaryOp<string mnemonic, list<Trait> traits = []> :
    Cortiq_Op<mnemonic, !listconcat(traits, [NoSideEffect, SameOperandsAndResultType,
                                             Cortiq_InPlace])> {
  let results = (outs Cortiq_Vector:$result);
}

class Cortiq_BinaryOp<string mnemonic> :
    Cortiq_Op<mnemonic, [NoSideEffect, SameOperandsAndResultType, Cortiq_InPlace]> {
  let arguments = (ins Cortiq_Vector:$lhs, Cortiq_Vector:$rhs);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Cortiq_GeluTanhOp : Cortiq_UnaryOp<"gelu_tanh"> {
  let summary = "tanh-approximated GELU";
  let description = [{
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, HF `gelu_pytorch_tanh`
    (MLP gate and PLE gate; spec §3.0).

    ```mlir
    %g = cortiq.gelu_tanh %x : tensor<128xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Cortiq_MulOp : Cortiq_BinaryOp<"mul"> {
  let summary = "elementwise product";
  let description = "`%y = cortiq.mul %a, %b : tensor<128xf32>` computes `a * b`.";
}

def Cortiq_AddOp : Cortiq_BinaryOp<"add"> {
  let summary = "elementwise sum";
  let description = "`%y = cortiq.add %a, %b : tensor<64xf32>` computes `a + b` (residual adds, PLE mix).";
}

def Cortiq_ScaleOp : Cortiq_UnaryOp<"scale"> {
  let summary = "multiplies by a compile-time constant";
  let description = [{
    `result = input * factor`: the `hidden_size^-1/2` of the PLE projection and the
    `2^-1/2` of the PLE mix (spec §3.2).

    ```mlir
    %z = cortiq.scale %p by 0.125 : tensor<128xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, F32Attr:$factor);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($result)";
}

def Cortiq_LayerScalarOp : Cortiq_UnaryOp<"layer_scalar",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "multiplies the residual stream by a layer's learned scalar";
  let description = [{
    `result = input * scalar[0]` with the checkpoint's one-element `layer_scalar`
    tensor; it scales the whole hidden state after the PLE residual (spec §3.3 step 8).

    ```mlir
    %h = cortiq.layer_scalar %h7 by @"model.language_model.layers.0.layer_scalar" : tensor<64xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, FlatSymbolRefAttr:$scalar);
  let assemblyFormat = "$input `by` $scalar attr-dict `:` type($result)";
}

def Cortiq_SoftcapOp : Cortiq_UnaryOp<"softcap"> {
  let summary = "final logit soft-capping";
  let description = [{
    `result = cap * tanh(input / cap)` with `cap = final_logit_softcapping` (spec §3.4).

    ```mlir
    %l = cortiq.softcap %raw cap 30.0 : tensor<512xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, F32Attr:$cap);
  let assemblyFormat = "$input `cap` $cap attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Cortiq_SliceOp : Cortiq_Op<"slice", [NoSideEffect]> {
  let summary = "a contiguous slice of a vector";
  let description = [{
    `result = input[offset : offset + size]`, where `size` is the result length.
    Layer `l` takes its per-layer input from the PLE vector
    `[num_hidden_layers * hidden_size_per_layer_input]` at `offset = l * hidden_size_per_layer_input`
    (spec §3.2, layer-major).

    ```mlir
    %u3 = cortiq.slice %u[48] : tensor<128xf32> -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, I64Attr:$offset);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = "$input `[` $offset `]` attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Cortiq_LayerOutputOp : Cortiq_Op<"layer_output", [SameOperandsAndResultType]> {
  let summary = "marks the hidden state after a decoder layer";
  let description = [{
    Identity. Marks the residual stream after layer `layer` so tools can observe it
    (`cortiq-run --dump-layers`); lowering turns it into a named tap on a buffer,
    not a step. It is not `NoSideEffect`, so passes keep it.

    ```mlir
    %h1 = cortiq.layer_output 0, %h : tensor<64xf32>
    ```
  }];
  let arguments = (ins I64Attr:$layer, Cortiq_Vector:$input);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = "$layer `,` $input attr-dict `:` type($result)";
}

def Cortiq_LmHeadOp : Cortiq_Op<"lm_head",
    [NoSideEffect, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the tied LM head: logits = table . hidden";
  let description = [{
    `result[v] = sum_c table[v, c] * input[c]` with the raw (unscaled) token
    embedding table `[vocab_size, hidden_size]` (tied embeddings; spec §3.4 step 2).
    Kept apart from `cortiq.linear` because the runtime runs it only for the
    positions whose logits are wanted.

    ```mlir
    %raw = cortiq.lm_head @"model.language_model.embed_tokens.weight"(%hf) : tensor<64xf32> -> tensor<512xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$input, FlatSymbolRefAttr:$table);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = "$table `(` $input `)` attr-dict `:` type($input) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Fused ops (fuse-elementwise)
//===----------------------------------------------------------------------===//

def Cortiq_GeluTanhMulOp : Cortiq_Op<"gelu_tanh_mul",
    [NoSideEffect, SameOperandsAndResultType, Cortiq_InPlace]> {
  let summary = "gelu_tanh(gate) * up in one step";
  let description = [{
    `result = gelu_tanh(gate) * up`: the input of the MLP's down projection (HF
    `Gemma4TextMLP`: `act_fn(gate_proj(x)) * up_proj(x)`) and the PLE gate
    (`act_fn(per_layer_input_gate(h)) * per_layer_input`). Made by fuse-elementwise
    from `cortiq.mul(cortiq.gelu_tanh(%gate), %up)`.

    ```mlir
    %m = cortiq.gelu_tanh_mul %gate, %up : tensor<128xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$gate, Cortiq_Vector:$up);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Cortiq_ResidualRmsNormOp : Cortiq_Op<"residual_rms_norm",
    [NoSideEffect, SameOperandsAndResultType, Cortiq_InPlace,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "residual + RMS norm of an update, optionally times layer_scalar, in one step";
  let description = [{
    `result = (residual + rms_norm(update; gain, group, eps)) * scalar[0]` (scalar
    optional): the sandwich norms' residual adds of a decoder layer (spec §3.3
    steps 5-7) and, on the last one, the layer's `layer_scalar` (step 8). Made by
    fuse-elementwise from `cortiq.add(%residual, cortiq.rms_norm(%update))` and a
    following `cortiq.layer_scalar`.

    ```mlir
    %h = cortiq.residual_rms_norm %h0, %attn gain @post_attention_norm group 64 eps 9.99999997E-7 : tensor<64xf32>
    %o = cortiq.residual_rms_norm %h1, %c gain @post_norm scalar @layer_scalar group 64 eps 9.99999997E-7 : tensor<64xf32>
    ```
  }];
  let arguments = (ins Cortiq_Vector:$residual, Cortiq_Vector:$update,
                       OptionalAttr<FlatSymbolRefAttr>:$gain, OptionalAttr<FlatSymbolRefAttr>:$scalar,
                       I64Attr:$group_size, F32Attr:$eps);
  let results = (outs Cortiq_Vector:$result);
  let assemblyFormat = [{
    $residual `,` $update (`gain` $gain^)? (`scalar` $scalar^)? `group` $group_size `eps` $eps
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

#endif  // CORTIQ_OPS_TD
