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
  }];
  let emitAccessorPrefix = kEmitAccessorPrefix_Prefixed;
}

class Cortiq_Op<string mnemonic, list<Trait> traits = []> :
    Op<Cortiq_Dialect, mnemonic, traits>;

// A 1-D f32 activation vector of static length.
def Cortiq_Vector : 1DTensorOf<[F32]>;

#endif  // CORTIQ_DIALECT_TD
