// The cortiq graph passes: storage formats, fusion, folding and buffer planning over the `cortiq`
// dialect.
#ifndef CORTIQ_PASSES_TD
#define CORTIQ_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignStorageFormats : Pass<"assign-storage-formats", "::mlir::ModuleOp"> {
  let summary = "records the format the artifact stores each weight in";
  let description = [{
    Sets `stored(format)` on every `cortiq.weight`. cortiq-compile runs it first (with
    its `--weights` / `--tables`), so the other passes know which weights are rounded
    or quantized later — fold-norm-gain folds only into weights stored exactly as f32,
    fuse-linear stacks only weights of one format — and lowering stores each weight as
    recorded. The policy:
    - 1-D weights (norm gains, layer scalars) are f32: tiny, and exact;
    - the tables read by `cortiq.embedding` / `cortiq.lm_head` take `tables`, which
      defaults to q8_0 under `weights=q4_0` (the tied table is also the LM head, whose
      error goes straight into the logits; measured in issue 5) and to `weights`
      otherwise;
    - other matrices take `weights`; without it, a GGUF's blocks keep their
      `checkpoint(...)` format (no requantization) and other tensors follow their
      element type (bf16 stays bf16, f16 stays f16, f32 stays f32);
    - a 256-weight format on a matrix whose rows are not whole super-blocks takes
      llama-quantize's fallback (tensor_type_fallback: q2_k, q3_k -> q4_0; q4_k ->
      q5_0; q5_k -> q5_1; q6_k -> q8_0; iq4_xs -> iq4_nl);
    - a block format on a matrix whose rows are not whole blocks becomes bf16 (the
      PLE projection's rows of 16 under q8_0 / q4_0).
    - with `q4_0x16` (the default), q4_0 on a matrix whose rows are whole groups of
      16 blocks (512 weights) becomes q4_0x16: the same blocks regrouped so a 64-byte
      load holds 4 quant bytes of each of 16 blocks (ops/quantize_q4_0x16.h), which
      the decode kernel multiplies with one scale FMA per 16 blocks instead of one
      per block and without widening bytes (the same weights, no requantization). A
      q4_0x16 named by `weights` / `tables` on other rows falls back to q4_0.
    - with `q8_0x16` (the default), likewise q8_0 becomes q8_0x16
      (ops/quantize_q8_0x16.h: 64 bytes hold 4 quants of each of 16 blocks, so the
      decode applies one scale per 16 blocks and, with AVX-512 VNNI, sums each
      block's products in one 32-bit lane; ops/linear_vnni.h).
    - with `q4_kx16` (the default), likewise q4_k becomes q4_kx16
      (ops/quantize_q4_kx16.h: pairs of super-blocks with one 32-weight sub-block
      per 32-bit lane and the 6-bit scales and mins unpacked to bytes, 296 bytes
      per 512 weights instead of 288), so the VNNI decode needs no register
      transposes (ops/linear_vnni.h).
    - with `q5_kx16` (the default), likewise q5_k becomes q5_kx16
      (ops/quantize_q5_kx16.h: as q4_kx16, with each quant's fifth bit in a 64-bit
      mask per 64 quant bytes; 360 bytes per 512 weights instead of 352).
    - `mix` (q3_k_m, q4_k_s, q4_k_m, q5_k_s, q5_k_m) picks each matrix's format as
      llama-quantize does for that type without an importance matrix
      (llama_tensor_get_type in llama.cpp's src/llama-quant.cpp): the tables Q6_K,
      attn_v / ffn_down of some layers more bits, per_layer_model_projection kept,
      the rest the mix's base type (q3_k, q4_k, q5_k).
    Every weight gets the policy's format, whatever it had before.

    Before (`assign-storage-formats{weights=q4_0}`; `@embed` is read by
    `cortiq.embedding`):
    ```mlir
    cortiq.weight @embed : tensor<512x64xbf16>
    cortiq.weight @norm : tensor<64xbf16>
    cortiq.weight @q : tensor<64x64xbf16>
    cortiq.weight @proj : tensor<128x16xbf16>
    ```
    After:
    ```mlir
    cortiq.weight @embed stored(q8_0) : tensor<512x64xbf16>
    cortiq.weight @norm stored(f32) : tensor<64xbf16>
    cortiq.weight @q stored(q4_0) : tensor<64x64xbf16>
    cortiq.weight @proj stored(bf16) : tensor<128x16xbf16>
    ```
  }];
  let options = [
    Option<"weights", "weights", "std::string", /*default=*/"\"\"",
           "storage format of the matrices (f32, bf16, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs); empty: the checkpoint's">,
    Option<"tables", "tables", "std::string", /*default=*/"\"\"",
           "storage format of the embedding / LM-head tables; empty: q8_0 under weights=q4_0, else as weights">,
    Option<"mix", "mix", "std::string", /*default=*/"\"\"",
           "llama-quantize's per-tensor mix (q3_k_m, q4_k_s, q4_k_m, q5_k_s, q5_k_m) instead of weights; tables still override its tables">,
    Option<"q4_0x16", "q4_0x16", "bool", /*default=*/"true",
           "store q4_0 matrices whose rows are whole 512-weight groups as q4_0x16 (the same blocks regrouped)">,
    Option<"q8_0x16", "q8_0x16", "bool", /*default=*/"true",
           "store q8_0 matrices whose rows are whole 512-weight groups as q8_0x16 (the same blocks regrouped)">,
    Option<"q4_kx16", "q4_kx16", "bool", /*default=*/"true",
           "store q4_k matrices whose rows are whole 512-weight groups as q4_kx16 (the same super-blocks regrouped)">,
    Option<"q5_kx16", "q5_kx16", "bool", /*default=*/"true",
           "store q5_k matrices whose rows are whole 512-weight groups as q5_kx16 (the same super-blocks regrouped)">
  ];
  let constructor = "::cortiq::createAssignStorageFormatsPass()";
}

def FoldConstants : Pass<"fold-constants", "::mlir::ModuleOp"> {
  let summary = "applies scalar scales where they cost nothing";
  let description = [{
    Removes `cortiq.scale` steps by moving their factor into something that
    multiplies anyway:
    - a scale `c > 0` whose only user is an RMS norm is absorbed into the norm's
      epsilon: `rms(c z; eps) = rms(z; eps / c^2)` exactly (in real arithmetic; the
      PLE projection's `hidden_size^-1/2`, spec §3.2 step 1);
    - a scale of a sum of a gained RMS norm and an embedding lookup is pushed into
      the norm's gain (a derived f32 gain `g * c`) and the lookup's scale (the PLE
      mix's `2^-1/2`, spec §3.2 step 4);
    - consecutive scales, and a scale after an embedding lookup, multiply into one.
    Numerics: factors are multiplied in f64 and rounded once to f32; derived gains are
    f32 whatever the checkpoint dtype. The embedding's `sqrt(hidden_size)` stays the
    exact f32 value chosen at import (as llama.cpp and f32 transformers use).

    Before:
    ```mlir
    %p = cortiq.linear @proj(%e) : tensor<64xf32> -> tensor<128xf32>
    %z = cortiq.scale %p by 1.250000e-01 : tensor<128xf32>
    %zn = cortiq.rms_norm %z gain @norm group 16 eps 9.99999997E-7 : tensor<128xf32>
    %r = cortiq.embedding @table[%token] scale 4.000000e+00 : tensor<128xf32>
    %s = cortiq.add %zn, %r : tensor<128xf32>
    %u = cortiq.scale %s by 0.707106769 : tensor<128xf32>
    ```
    After:
    ```mlir
    cortiq.weight @norm.scaled = scale(@norm) factor(0.707106769) : tensor<16xf32>
    %p = cortiq.linear @proj(%e) : tensor<64xf32> -> tensor<128xf32>
    %zn = cortiq.rms_norm %p gain @norm.scaled group 16 eps 6.400000e-05 : tensor<128xf32>
    %r = cortiq.embedding @table[%token] scale 2.82842708 : tensor<128xf32>
    %u = cortiq.add %zn, %r : tensor<128xf32>
    ```
  }];
  let constructor = "::cortiq::createFoldConstantsPass()";
}

def FoldNormGain : Pass<"fold-norm-gain", "::mlir::ModuleOp"> {
  let summary = "folds an RMS norm's gain into the columns of the linears that read it";
  let description = [{
    `W (x_hat * g) = (W diag(g)) x_hat`: when every user of a gained RMS norm over the
    whole vector (group = length) is a `cortiq.linear` (or the LM head, when its table
    is not also an embedding table), each user's weight becomes a derived weight
    `scale(@W) columns(@g)` and the norm loses its gain. This is input_layernorm into
    q/k/v and pre_feedforward_layernorm into gate/up; the tied LM head keeps the final
    norm's gain because the table is also the token embedding. Only weights stored
    exactly as f32 are folded into (f32 elements, `stored(f32)` or no storage format):
    rounding `W diag(g)` to bf16 moved tiny-a's logits by 0.067, and a Q8_0/Q4_0
    weight would no longer be llama.cpp's blocks of the checkpoint tensor. With
    `allow-rounding` every weight is folded into and the derived weight keeps the
    source's storage format.

    Before:
    ```mlir
    %x = cortiq.rms_norm %h gain @input_norm group 64 eps 9.99999997E-7 : tensor<64xf32>
    %q = cortiq.linear @q(%x) : tensor<64xf32> -> tensor<64xf32>
    %k = cortiq.linear @k(%x) : tensor<64xf32> -> tensor<32xf32>
    ```
    After:
    ```mlir
    cortiq.weight @q.gain = scale(@q) columns(@input_norm) : tensor<64x64xf32>
    cortiq.weight @k.gain = scale(@k) columns(@input_norm) : tensor<32x64xf32>
    %x = cortiq.rms_norm %h group 64 eps 9.99999997E-7 : tensor<64xf32>
    %q = cortiq.linear @q.gain(%x) : tensor<64xf32> -> tensor<64xf32>
    %k = cortiq.linear @k.gain(%x) : tensor<64xf32> -> tensor<32xf32>
    ```
  }];
  let options = [
    Option<"allowRounding", "allow-rounding", "bool", /*default=*/"false",
           "also fold into bf16/f16 and quantized weights, rounding W diag(g) to their storage format">
  ];
  let constructor = "::cortiq::createFoldNormGainPass()";
}

def FuseLinear : Pass<"fuse-linear", "::mlir::ModuleOp"> {
  let summary = "merges linears that read the same input into one linear over stacked rows";
  let description = [{
    Linears with the same input (q/k/v on KV-owning layers, gate/up in the MLP) become
    one linear whose weight is `concat_rows` of theirs, followed by `cortiq.slice`
    views of the result (no copies). One weight stream and one kernel call instead of
    several; KV-shared layers keep their single q projection. Only weights of one
    storage format are stacked (`stored(...)`, or the GGUF block format they are read
    from, `checkpoint(...)`), and the stacked weight records it, so GGUF Q8_0/Q4_0 blocks stay
    blocks.

    Before:
    ```mlir
    %g = cortiq.linear @gate(%y) : tensor<64xf32> -> tensor<128xf32>
    %u = cortiq.linear @up(%y) : tensor<64xf32> -> tensor<128xf32>
    ```
    After:
    ```mlir
    cortiq.weight @"{gate,up}" = concat_rows(@gate, @up) : tensor<256x64xf32>
    %gu = cortiq.linear @"{gate,up}"(%y) : tensor<64xf32> -> tensor<256xf32>
    %g = cortiq.slice %gu[0] : tensor<256xf32> -> tensor<128xf32>
    %u = cortiq.slice %gu[128] : tensor<256xf32> -> tensor<128xf32>
    ```
  }];
  let constructor = "::cortiq::createFuseLinearPass()";
}

def FuseElementwise : Pass<"fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "fuses elementwise chains into single steps that have a kernel";
  let description = [{
    - `mul(gelu_tanh(a), b)` → `gelu_tanh_mul(a, b)` (MLP and PLE gates);
    - `add(h, rms_norm(x))` → `residual_rms_norm(h, x)` (every sandwich-norm residual);
    - `layer_scalar(residual_rms_norm(...))` → the same step with `scalar`.
    Each fused intermediate must have no other user.

    Before:
    ```mlir
    %n = cortiq.rms_norm %c gain @post_norm group 64 eps 9.99999997E-7 : tensor<64xf32>
    %h2 = cortiq.add %h1, %n : tensor<64xf32>
    %h3 = cortiq.layer_scalar %h2 by @layer_scalar : tensor<64xf32>
    ```
    After:
    ```mlir
    %h3 = cortiq.residual_rms_norm %h1, %c gain @post_norm scalar @layer_scalar group 64 eps 9.99999997E-7 : tensor<64xf32>
    ```
  }];
  let constructor = "::cortiq::createFuseElementwisePass()";
}

def MarkRows : Pass<"mark-rows", "::mlir::ModuleOp"> {
  let summary = "marks every op with the prompt rows it must run on: all, or the logits rows";
  let description = [{
    In a prompt batch of T rows, most of the decoder's work matters for every row only
    because it feeds the KV cache, the one thing that persists from token to token; the
    rest is read only by the logits of the rows whose logits are wanted (the last row,
    or every row when every position's logits are asked for: the logits rows). Sets
    `cortiq.rows` on every op of `decode_step` (the terminator excepted):
    - `"all"` when a result reaches, through the ops that read it and theirs, a
      `cortiq.kv_append` (or a `cortiq.layer_output` under `taps-all-rows`);
    - `"logits"` otherwise: the op is needed for the logits rows only.
    A `cortiq.kv_append` itself is `"all"`.

    So the KV-shared layers (the last `num_kv_shared_layers`, which append nothing)
    are logits-only, and so is whatever of the last KV-owning layer does not feed its
    own K/V (its q projection, attention, MLP and PLE); the final norm, LM head and
    softcap are logits-only as before. A KV-shared layer's attention reads its source
    layer's cache, which that layer's `kv_append` (an all-rows op) filled for every
    row before, so a logits row sees the same keys and values as in a full run. By
    construction no all-rows op reads a logits-only result: its operands reach the
    same `kv_append` it does.

    Taps: a `cortiq.layer_output` is marked like any op, so a tap marked `"logits"`
    (every layer from the first logits-only one on) is to hold a valid hidden state
    only in the logits rows of a batch, once the executor runs logits-only ops on those
    rows only (lowering does not read the marks yet). With `taps-all-rows` every tap
    counts as read on every row, and every layer runs on all rows (for dumping every
    position's hidden state).

    With `report`, a remark on the module gives each set's op count and the FLOPs per
    row of its matrix products (2 · weight elements per `cortiq.linear`; the LM head
    apart), e.g. the share of a prompt's work that only the logits rows need.

    Before:
    ```mlir
    %k = cortiq.linear @k(%h) : tensor<64xf32> -> tensor<32xf32>
    cortiq.kv_append %k, %k into @kv_cache_0 at %position : tensor<32xf32>, tensor<32xf32>
    %o = cortiq.attention layer 1 sliding %q over @kv_cache_0 at %position heads 4 window 8 scale 1.0 : tensor<64xf32> -> tensor<64xf32>
    %m = cortiq.linear @o(%o) : tensor<64xf32> -> tensor<64xf32>
    ```
    After:
    ```mlir
    %k = cortiq.linear @k(%h) {cortiq.rows = "all"} : tensor<64xf32> -> tensor<32xf32>
    cortiq.kv_append %k, %k into @kv_cache_0 at %position {cortiq.rows = "all"} : tensor<32xf32>, tensor<32xf32>
    %o = cortiq.attention layer 1 sliding %q over @kv_cache_0 at %position heads 4 window 8 scale 1.0 {cortiq.rows = "logits"} : tensor<64xf32> -> tensor<64xf32>
    %m = cortiq.linear @o(%o) {cortiq.rows = "logits"} : tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let options = [
    Option<"tapsAllRows", "taps-all-rows", "bool", /*default=*/"false",
           "count every cortiq.layer_output as read on every row (every layer then runs on all rows)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "emit a remark with each row set's op count and per-row matrix-product FLOPs">
  ];
  let constructor = "::cortiq::createMarkRowsPass()";
}

def PlanBuffers : Pass<"plan-buffers", "::mlir::ModuleOp"> {
  let summary = "assigns every intermediate an offset in one activation arena";
  let description = [{
    Liveness over the op order of `decode_step`: a value lives from its defining op to
    its last user (a `cortiq.slice` view or `cortiq.layer_output` keeps its parent
    alive). Buffers are allocated best-fit from a free list with merging, 64-byte
    aligned, freed at their last use, and reused in place by the ops with the
    `Cortiq_InPlace` trait (norms, RoPE, elementwise) whose operand dies at that op and
    has no other user (ggml-alloc's rule); a linear, LM head or attention always gets
    a buffer of its own. The returned
    logits and the `layer_output` taps are pinned. Each op gets a
    `cortiq.arena_offset` attribute (bytes) and the module `cortiq.arena_bytes`.

    Before:
    ```mlir
    %a = cortiq.linear @w(%x) : tensor<64xf32> -> tensor<64xf32>
    %b = cortiq.gelu_tanh %a : tensor<64xf32>
    ```
    After:
    ```mlir
    %a = cortiq.linear @w(%x) {cortiq.arena_offset = 256 : i64} : tensor<64xf32> -> tensor<64xf32>
    %b = cortiq.gelu_tanh %a {cortiq.arena_offset = 256 : i64} : tensor<64xf32>
    ```
  }];
  let constructor = "::cortiq::createPlanBuffersPass()";
}

#endif  // CORTIQ_PASSES_TD
