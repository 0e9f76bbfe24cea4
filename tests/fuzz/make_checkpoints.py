#!/usr/bin/env python3
"""Writes the micro Gemma-4 checkpoints the fuzz seeds are made from (standard library only).

A decoder as small as the format rules allow (hidden 32, so a linear's input is one 32-weight
Q8_0/Q4_0 block; 4 layers sliding/full/sliding/full, the last two KV-shared; vocab 32), so that a
seed takes a few KiB and libFuzzer mutates the structure rather than weight bytes:

  OUT/micro/config.json, OUT/micro/model.safetensors        f32 (HF names and shapes)
  OUT/micro-bf16/config.json, OUT/micro-bf16/model.safetensors  bf16, text-only config form
  OUT/micro-f32.gguf, OUT/micro-f16.gguf, OUT/micro-q8_0.gguf, OUT/micro-q4_0.gguf
      llama.cpp's gemma4 keys and tensor names (formats/gguf_gemma4.h); Q8_0 / Q4_0 for the
      matrices whose rows are whole blocks, f32 for the rest, rope_freqs.weight for the
      proportional RoPE of the full layers.

Weights are deterministic (a fixed-seed LCG): the same run writes the same bytes.
Usage: make_checkpoints.py OUT_DIR
"""
import json
import math
import os
import struct
import sys

CONFIG = dict(
    vocab_size=32, hidden_size=32, intermediate_size=16, num_hidden_layers=4,
    num_attention_heads=2, num_key_value_heads=1, head_dim=8, global_head_dim=16,
    sliding_window=4, num_kv_shared_layers=2, hidden_size_per_layer_input=4,
    vocab_size_per_layer_input=32, max_position_embeddings=128, rms_norm_eps=1e-6,
    final_logit_softcapping=30.0, tie_word_embeddings=True, use_double_wide_mlp=False,
    hidden_activation="gelu_pytorch_tanh", attention_k_eq_v=False,
    layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
    rope_parameters={
        "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                           "rope_type": "proportional"},
        "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"},
    },
)
PREFIX = "model.language_model."


def tensors(c):
    """(HF name, shape) of every tensor the decoder reads (compiler/import/gemma4_tensors.h)."""
    H, L, P, V = c["hidden_size"], c["num_hidden_layers"], c["hidden_size_per_layer_input"], c["vocab_size"]
    out = [("embed_tokens.weight", [V, H]),
           ("embed_tokens_per_layer.weight", [c["vocab_size_per_layer_input"], L * P]),
           ("per_layer_model_projection.weight", [L * P, H]),
           ("per_layer_projection_norm.weight", [P]),
           ("norm.weight", [H])]
    first_shared = L - c["num_kv_shared_layers"]
    for l in range(L):
        d = c["head_dim"] if c["layer_types"][l] == "sliding_attention" else c["global_head_dim"]
        nh, nkv, I = c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
        p = f"layers.{l}."
        out.append((p + "input_layernorm.weight", [H]))
        out.append((p + "self_attn.q_proj.weight", [nh * d, H]))
        if l < first_shared:
            out.append((p + "self_attn.k_proj.weight", [nkv * d, H]))
            out.append((p + "self_attn.v_proj.weight", [nkv * d, H]))
        out.append((p + "self_attn.o_proj.weight", [H, nh * d]))
        out.append((p + "self_attn.q_norm.weight", [d]))
        if l < first_shared:
            out.append((p + "self_attn.k_norm.weight", [d]))
        out += [(p + "post_attention_layernorm.weight", [H]),
                (p + "pre_feedforward_layernorm.weight", [H]),
                (p + "mlp.gate_proj.weight", [I, H]), (p + "mlp.up_proj.weight", [I, H]),
                (p + "mlp.down_proj.weight", [H, I]),
                (p + "post_feedforward_layernorm.weight", [H]),
                (p + "per_layer_input_gate.weight", [P, H]),
                (p + "per_layer_projection.weight", [H, P]),
                (p + "post_per_layer_input_norm.weight", [H]),
                (p + "layer_scalar", [1])]
    return [(PREFIX + n, s) for n, s in out]


class Rng:
    def __init__(self, seed):
        self.state = seed

    def uniform(self):  # [-1, 1)
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 11) / float(1 << 52) - 1.0


def values(name, shape, rng):
    n = math.prod(shape)
    if name.endswith("norm.weight"):
        return [1.0 + 0.2 * rng.uniform() for _ in range(n)]
    if name.endswith("layer_scalar"):
        return [0.8 + 0.2 * rng.uniform() for _ in range(n)]
    bound = math.sqrt(3.0 / shape[-1]) if len(shape) == 2 else 1.0
    return [bound * rng.uniform() for _ in range(n)]


def f32_bytes(v):
    return struct.pack(f"<{len(v)}f", *v)


def bf16_bytes(v):
    out = bytearray()
    for x in v:
        (bits,) = struct.unpack("<I", struct.pack("<f", x))
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
        out += struct.pack("<H", bits)
    return bytes(out)


def f16_bytes(v):
    return struct.pack(f"<{len(v)}e", *v)


def q8_0_bytes(v):
    out = bytearray()
    for b in range(0, len(v), 32):
        block = v[b:b + 32]
        d = max(abs(x) for x in block) / 127.0
        inv = 1.0 / d if d else 0.0
        out += struct.pack("<e", d) + bytes((round(x * inv) & 0xFF) for x in block)
    return bytes(out)


def q4_0_bytes(v):
    out = bytearray()
    for b in range(0, len(v), 32):
        block = v[b:b + 32]
        m = max(block, key=abs)
        d = m / -8.0
        inv = 1.0 / d if d else 0.0
        q = [min(15, int(x * inv + 8.5)) for x in block]
        out += struct.pack("<e", d) + bytes(q[i] | (q[i + 16] << 4) for i in range(16))
    return bytes(out)


def write_safetensors(path, items):
    header, data = {}, bytearray()
    for name, dtype, shape, raw in items:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


GGUF_LAYER_NAMES = {
    "input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight", "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight", "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "post_attention_layernorm.weight": "post_attention_norm.weight",
    "pre_feedforward_layernorm.weight": "ffn_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
    "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
    "per_layer_input_gate.weight": "inp_gate.weight", "per_layer_projection.weight": "proj.weight",
    "post_per_layer_input_norm.weight": "post_norm.weight", "layer_scalar": "layer_output_scale.weight",
}
GGUF_GLOBAL_NAMES = {
    "embed_tokens.weight": "token_embd.weight",
    "embed_tokens_per_layer.weight": "per_layer_token_embd.weight",
    "per_layer_model_projection.weight": "per_layer_model_proj.weight",
    "per_layer_projection_norm.weight": "per_layer_proj_norm.weight", "norm.weight": "output_norm.weight",
}


def gguf_name(hf):
    rest = hf[len(PREFIX):]
    if rest in GGUF_GLOBAL_NAMES:
        return GGUF_GLOBAL_NAMES[rest]
    _, layer, suffix = rest.split(".", 2)
    return f"blk.{layer}.{GGUF_LAYER_NAMES[suffix]}"


# A 32-token tokenizer of the Gemma 4 shape (BPE, "▁" for spaces, the turn markers as special
# tokens, <bos> prepended), without byte fallback: the vocabulary is too small for 256 byte
# tokens, so unknown characters become <unk>.
TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", "<|turn>", "<turn|>", "\n", "\u2581", "a", "d", "e",
          "h", "l", "o", "r", "s", "t", "u", "w", "y", "\u2581h", "he", "ll", "lo", "\u2581w", "or",
          "ld", "er", "us", "es", "\u2581t", "th"]
MERGES = [["\u2581", "h"], ["h", "e"], ["l", "l"], ["l", "o"], ["\u2581", "w"], ["o", "r"],
          ["l", "d"], ["e", "r"], ["u", "s"], ["e", "s"], ["\u2581", "t"], ["t", "h"]]
SPECIAL = 6  # ids 0-5


def write_tokenizer(d):
    added = [{"id": i, "content": TOKENS[i], "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for i in range(SPECIAL)]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                                    {"Sequence": {"id": "A", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2],
                                                        "tokens": ["<bos>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "Fuse"}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(TOKENS)}, "merges": MERGES}}
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tokenizer, f, indent=1)
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 2, "do_sample": True, "eos_token_id": [1, 5],
                   "pad_token_id": 0, "temperature": 1.0, "top_k": 64, "top_p": 0.95}, f, indent=1)


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def write_gguf(path, c, matrix_type):
    """matrix_type: 0 F32, 1 F16, 8 Q8_0, 2 Q4_0 for the 2-D tensors whose rows are whole blocks."""
    U32, F32, BOOL, STR, ARR = 4, 6, 7, 8, 9
    kv = [("general.architecture", STR, gguf_str("gemma4"))]
    g = lambda k: "gemma4." + k

    def u32(k, v):
        kv.append((g(k), U32, struct.pack("<I", v)))

    def f32(k, v):
        kv.append((g(k), F32, struct.pack("<f", v)))

    u32("block_count", c["num_hidden_layers"])
    u32("context_length", c["max_position_embeddings"])
    u32("embedding_length", c["hidden_size"])
    u32("feed_forward_length", c["intermediate_size"])
    u32("attention.head_count", c["num_attention_heads"])
    u32("attention.head_count_kv", c["num_key_value_heads"])
    u32("attention.key_length", c["global_head_dim"])
    u32("attention.value_length", c["global_head_dim"])
    u32("attention.key_length_swa", c["head_dim"])
    u32("attention.value_length_swa", c["head_dim"])
    u32("attention.sliding_window", c["sliding_window"])
    u32("attention.shared_kv_layers", c["num_kv_shared_layers"])
    u32("embedding_length_per_layer_input", c["hidden_size_per_layer_input"])
    f32("attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    f32("rope.freq_base", c["rope_parameters"]["full_attention"]["rope_theta"])
    f32("rope.freq_base_swa", c["rope_parameters"]["sliding_attention"]["rope_theta"])
    f32("final_logit_softcapping", c["final_logit_softcapping"])
    pattern = [t == "sliding_attention" for t in c["layer_types"]]
    kv.append((g("attention.sliding_window_pattern"), ARR,
               struct.pack("<IQ", BOOL, len(pattern)) + bytes(pattern)))
    # The tokenizer as llama.cpp's converter writes it (tokenizer.ggml.*, general.sampling.*).
    I32 = 5
    kv.append(("tokenizer.ggml.model", STR, gguf_str("gemma4")))
    kv.append(("tokenizer.ggml.tokens", ARR,
               struct.pack("<IQ", STR, len(TOKENS)) + b"".join(gguf_str(t) for t in TOKENS)))
    kv.append(("tokenizer.ggml.token_type", ARR,
               struct.pack("<IQ", I32, len(TOKENS)) +
               b"".join(struct.pack("<i", 3 if i < SPECIAL else 1) for i in range(len(TOKENS)))))
    kv.append(("tokenizer.ggml.merges", ARR,
               struct.pack("<IQ", STR, len(MERGES)) +
               b"".join(gguf_str(a + " " + b) for a, b in MERGES)))
    for key, value in (("bos", 2), ("eos", 1), ("unknown", 3), ("padding", 0)):
        kv.append((f"tokenizer.ggml.{key}_token_id", U32, struct.pack("<I", value)))
    kv.append(("general.sampling.temp", F32, struct.pack("<f", 1.0)))
    kv.append(("general.sampling.top_k", I32, struct.pack("<i", 64)))

    rng = Rng(1)
    items = []
    for name, shape in tensors(c):
        v = values(name, shape, rng)
        t = 0
        if len(shape) == 2 and shape[-1] % 32 == 0 and matrix_type != 0:
            t = matrix_type
        elif len(shape) == 2 and matrix_type == 1:
            t = 1
        raw = {0: f32_bytes, 1: f16_bytes, 8: q8_0_bytes, 2: q4_0_bytes}[t](v)
        items.append((gguf_name(name), list(reversed(shape)), t, raw))
    # Proportional RoPE of the full layers: rotated pairs 1.0, the others 1e30 (as the converter).
    pairs = c["global_head_dim"] // 2
    rotated = int(c["rope_parameters"]["full_attention"]["partial_rotary_factor"] * c["global_head_dim"] // 2)
    items.append(("rope_freqs.weight", [pairs], 0, f32_bytes([1.0] * rotated + [1e30] * (pairs - rotated))))

    alignment = 32
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(items), len(kv)))
    for key, typ, value in kv:
        out += gguf_str(key) + struct.pack("<I", typ) + value
    offset, placed = 0, []
    for name, ne, t, raw in items:
        placed.append(offset)
        offset += len(raw) + (-len(raw) % alignment)
    for (name, ne, t, raw), at in zip(items, placed):
        out += gguf_str(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}q", *ne)
        out += struct.pack("<IQ", t, at)
    out += b"\0" * (-len(out) % alignment)
    for (name, ne, t, raw), at in zip(items, placed):
        out += raw + b"\0" * (-len(raw) % alignment)
    with open(path, "wb") as f:
        f.write(out)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # f32, multimodal config form (text_config), as the official releases.
    d = os.path.join(out, "micro")
    os.makedirs(d, exist_ok=True)
    text = dict(CONFIG, model_type="gemma4_text")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
                   "tie_word_embeddings": True, "text_config": text}, f, indent=1)
    rng = Rng(1)
    write_safetensors(os.path.join(d, "model.safetensors"),
                      [(n, "F32", s, f32_bytes(values(n, s, rng))) for n, s in tensors(CONFIG)])
    write_tokenizer(d)
    # bf16 with an F16 tensor among them, text-only config form.
    d = os.path.join(out, "micro-bf16")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(dict(text, architectures=["Gemma4ForCausalLM"]), f, indent=1)
    write_tokenizer(d)
    rng = Rng(2)
    items = []
    for n, s in tensors(CONFIG):
        v = values(n, s, rng)
        items.append((n, "F16", s, f16_bytes(v)) if n.endswith("down_proj.weight")
                     else (n, "BF16", s, bf16_bytes(v)))
    write_safetensors(os.path.join(d, "model.safetensors"), items)
    # The text C API's model (text_api_fuzz): the micro shapes with tiny-a's 512-token
    # vocabulary and its tokenizer files (byte fallback, the Gemma 4 special tokens).
    d = os.path.join(out, "micro-text")
    os.makedirs(d, exist_ok=True)
    text_config = dict(CONFIG, vocab_size=512, vocab_size_per_layer_input=512)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(dict(text_config, model_type="gemma4_text", architectures=["Gemma4ForCausalLM"]),
                  f, indent=1)
    tiny = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models",
                        "tiny-a-f32")
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        with open(os.path.join(tiny, name), "rb") as src, open(os.path.join(d, name), "wb") as dst:
            dst.write(src.read())
    rng = Rng(3)
    write_safetensors(os.path.join(d, "model.safetensors"),
                      [(n, "BF16", s, bf16_bytes(values(n, s, rng))) for n, s in tensors(text_config)])
    for label, t in (("f32", 0), ("f16", 1), ("q8_0", 8), ("q4_0", 2)):
        write_gguf(os.path.join(out, f"micro-{label}.gguf"), CONFIG, t)


if __name__ == "__main__":
    main()
