// The `cortiq` dialect: the Gemma-4 E-series text decoder spelled out op by op.
#ifndef CORTIQ_DIALECT_TD
#define CORTIQ_DIALECT_TD

include "mlir/IR/OpBase.td"

def Cortiq_Dialect : Dialect {
  let name = "cortiq";
  let cppNamespace = "::cortiq";
  let summary = "Ops of the Gemma-4 E-series text decoder, one decode step at a time.";
  let description = [{
    The dialect spells out one decode step of a Gemma-4 E-series decoder (HF
    `Gemma4TextModel` + tied LM head): a function of a token id and its position
    that returns the logits. Activations are static-shape 1-D `f32` tensors; a
    multi-head value is a flat `[num_heads * head_dim]` tensor, head-major.

    Checkpoint tensors are module-level `cortiq.weight` symbols; ops that read a
    weight name it by symbol (`@"model.language_model.layers.0.self_attn.q_proj.weight"`).
    Key/value caches are module-level `cortiq.kv_cache` symbols: `cortiq.kv_append`
    writes one position into a cache and `cortiq.attention` reads a cache by name.
    A KV-shared layer's attention names its source layer's cache, so the shared-KV
    edges of the last `num_kv_shared_layers` layers are explicit in the IR.

    The contract between the importer, the passes and lowering (names declared
    below, values checked by the dialect's attribute verifier):
    - `func.func @decode_step(%token: i32, %position: i32) -> tensor<vocab_size x f32>`
      is the step the importer emits, plan-buffers plans and lowering lowers;
    - `cortiq.model` (module): a dictionary of facts about the model for the runtime,
      `source` (string: the checkpoint) and integers named as the HF config
      (`vocab_size`, `hidden_size`, `num_hidden_layers`, `max_position_embeddings`, ...);
    - `cortiq.arena_offset` (an op with one result, i64 >= 0, a multiple of 4): the
      byte offset of the result in the activation arena, set by plan-buffers;
    - `cortiq.arena_bytes` (module, i64 >= 0): the arena's size, set by plan-buffers;
    - `cortiq.rows` (an op of the decode step, `"all"` or `"logits"`, CortiqEnums.td
      `Rows`): the rows of a prompt batch the op must run on, set by mark-rows.
    Storage formats are attributes of `cortiq.weight` itself.

    ```mlir
    module attributes {cortiq.arena_bytes = 704 : i64, cortiq.model = {source = "tiny-a", vocab_size = 512 : i64}} {
      func.func @decode_step(%token: i32, %position: i32) -> tensor<512xf32> { ... }
    }
    ```
  }];
  let emitAccessorPrefix = kEmitAccessorPrefix_Prefixed;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // The decode-step function: `(token: i32, position: i32) -> logits`.
    static constexpr ::llvm::StringLiteral getDecodeStepFunctionName() {
      return ::llvm::StringLiteral("decode_step");
    }
    // Module attribute: the model facts dictionary.
    static constexpr ::llvm::StringLiteral getModelAttrName() {
      return ::llvm::StringLiteral("cortiq.model");
    }
    // Op attribute: the byte offset of the op's result in the activation arena.
    static constexpr ::llvm::StringLiteral getArenaOffsetAttrName() {
      return ::llvm::StringLiteral("cortiq.arena_offset");
    }
    // Module attribute: the activation arena's size in bytes.
    static constexpr ::llvm::StringLiteral getArenaBytesAttrName() {
      return ::llvm::StringLiteral("cortiq.arena_bytes");
    }
    // Op attribute: the prompt rows the op runs on, a string naming a `Rows` case.
    static constexpr ::llvm::StringLiteral getRowsAttrName() {
      return ::llvm::StringLiteral("cortiq.rows");
    }
  }];
}

// The op's result may take over the bytes of a tensor operand that dies at the op (plan-buffers
// reuses buffers in place for these ops only): the kernel reads each output element's inputs —
// the same element of the operands, or its norm group, or its RoPE pair — before writing it,
// and every tensor operand has the result's type. Norms, RoPE and the elementwise ops have it;
// products (linear, lm_head), lookups and attention read whole operands and do not.
def Cortiq_InPlace : NativeOpTrait<"InPlace"> {
  let cppNamespace = "::cortiq::OpTrait";
}

class Cortiq_Op<string mnemonic, list<Trait> traits = []> :
    Op<Cortiq_Dialect, mnemonic, traits>;

// A 1-D f32 activation vector of static length.
def Cortiq_Vector : 1DTensorOf<[F32]>;

#endif  // CORTIQ_DIALECT_TD
