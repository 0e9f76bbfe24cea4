#!/usr/bin/env python3
"""Writes a Gemma-4 text-decoder GGUF of any shape with seeded random weights.

Development tool only (the tests read the committed output). Python 3 standard library only.

The metadata (tokenizer, rope, softcapping, epsilon, ...) and the tensor names and order are
those of a template GGUF written by llama.cpp's convert_hf_to_gguf.py (by default the golden
tiny-d-f32.gguf); the shape keys are replaced by the ones given and every tensor is drawn anew at
its new shape, with the template's statistics per kind: matrices N(0, 0.03), the token and PLE
tables N(0, 0.2), norm gains N(1, 0.1), layer scalars U(0.9, 1.2). rope_freqs keeps the
template's rule (1 for the first partial_rotary_factor of the full-attention pairs, 1e30 for the
rest). The vocabulary is the template's (its tokenizer is copied as it is).

--dtype bf16 writes the matrices in BF16 (rounded to nearest even from the f32 draw) and the 1-D
tensors in F32, as the converter's --outtype bf16 does; f32 writes everything in F32.

Example (tests/data/models/tiny-e-bf16.gguf):
    tests/e2e/make_synthetic_gguf.py --hidden 256 --ffn 512 --per-layer 256 \
        --pattern SFS --shared 1 --heads 2 --kv-heads 1 --head-dim 128 --global-head-dim 256 \
        --dtype bf16 --seed 5 -o tests/data/models/tiny-e-bf16.gguf
"""

import argparse
import os
import random
import struct

GGUF_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q",
               11: "q", 12: "d"}


class Template:
    """A GGUF's key-value entries (type and value kept) and its tensor names and shapes."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        if self.data[:4] != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        self.off = 4
        self.version = self._rd("I")
        n_tensors, n_kv = self._rd("Q"), self._rd("Q")
        self.kv = {}  # key -> (type, value, element type for arrays)
        for _ in range(n_kv):
            key = self._str()
            t = self._rd("I")
            if t == 9:
                et = self._rd("I")
                self.kv[key] = (9, [self._value(et) for _ in range(self._rd("Q"))], et)
            else:
                self.kv[key] = (t, self._value(t), None)
        self.tensors = []  # (name, dims, ggml type, offset in the data section)
        for _ in range(n_tensors):
            name = self._str()
            dims = [self._rd("Q") for _ in range(self._rd("I"))]
            ggml_type = self._rd("I")
            self.tensors.append((name, dims, ggml_type, self._rd("Q")))
        align = self.kv.get("general.alignment", (4, 32, None))[1]
        self.data_start = (self.off + align - 1) // align * align

    def f32_values(self, name):
        """An F32 tensor's values."""
        _, dims, ggml_type, offset = next(x for x in self.tensors if x[0] == name)
        if ggml_type != 0:
            raise ValueError(f"{name}: not F32")
        count = 1
        for x in dims:
            count *= x
        return struct.unpack_from(f"<{count}f", self.data, self.data_start + offset)

    def _rd(self, fmt):
        v = struct.unpack_from("<" + fmt, self.data, self.off)[0]
        self.off += struct.calcsize("<" + fmt)
        return v

    def _str(self):
        n = self._rd("Q")
        s = self.data[self.off:self.off + n].decode("utf-8")
        self.off += n
        return s

    def _value(self, t):
        if t in GGUF_SCALAR:
            return self._rd(GGUF_SCALAR[t])
        if t == 8:
            return self._str()
        raise ValueError(f"nested GGUF value type {t}")


def enc_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def enc_value(t, v, et):
    if t in GGUF_SCALAR:
        return struct.pack("<" + GGUF_SCALAR[t], v)
    if t == 8:
        return enc_str(v)
    return struct.pack("<IQ", et, len(v)) + b"".join(enc_value(et, x, None) for x in v)


def bf16_bits(f32_bytes):
    """Round-to-nearest-even of little-endian f32 values to bf16 bytes."""
    n = len(f32_bytes) // 4
    out = bytearray(2 * n)
    for i, u in enumerate(struct.unpack(f"<{n}I", f32_bytes)):
        u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        out[2 * i] = u & 0xFF
        out[2 * i + 1] = u >> 8
    return bytes(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--template", default=os.path.join(
        os.path.dirname(root), "shared/golden/models/tiny-d-f32.gguf"))
    p.add_argument("--hidden", type=int, required=True, help="hidden_size")
    p.add_argument("--ffn", type=int, required=True, help="intermediate_size")
    p.add_argument("--per-layer", type=int, required=True, help="hidden_size_per_layer_input")
    p.add_argument("--pattern", required=True,
                   help="layer_types, one letter a layer: S sliding, F full attention")
    p.add_argument("--shared", type=int, required=True, help="num_kv_shared_layers")
    p.add_argument("--heads", type=int, required=True, help="num_attention_heads")
    p.add_argument("--kv-heads", type=int, required=True, help="num_key_value_heads")
    p.add_argument("--head-dim", type=int, required=True, help="head_dim (sliding layers)")
    p.add_argument("--global-head-dim", type=int, required=True,
                   help="global_head_dim (full-attention layers)")
    p.add_argument("--sliding-window", type=int, help="default: the template's")
    p.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-o", "--out", required=True)
    a = p.parse_args()
    if set(a.pattern) - {"S", "F"} or not a.pattern:
        raise SystemExit("--pattern: letters S and F only")

    t = Template(a.template)
    kv = dict(t.kv)
    arch = kv["general.architecture"][1]
    L = len(a.pattern)
    vocab = len(kv["tokenizer.ggml.tokens"][1])

    def put(key, value):
        typ, _, et = kv[f"{arch}.{key}"]
        kv[f"{arch}.{key}"] = (typ, value, et)

    put("block_count", L)
    put("embedding_length", a.hidden)
    put("feed_forward_length", a.ffn)
    put("attention.head_count", a.heads)
    put("attention.head_count_kv", a.kv_heads)
    put("attention.key_length", a.global_head_dim)
    put("attention.value_length", a.global_head_dim)
    put("attention.key_length_swa", a.head_dim)
    put("attention.value_length_swa", a.head_dim)
    put("rope.dimension_count", a.global_head_dim)
    put("rope.dimension_count_swa", a.head_dim)
    put("attention.shared_kv_layers", a.shared)
    put("embedding_length_per_layer_input", a.per_layer)
    put("attention.sliding_window_pattern", [c == "S" for c in a.pattern])
    if a.sliding_window:
        put("attention.sliding_window", a.sliding_window)
    name = os.path.splitext(os.path.basename(a.out))[0]
    kv["general.name"] = (8, f"synthetic {name} (make_synthetic_gguf.py, seed {a.seed})", None)
    kv.pop("general.size_label", None)
    kv["general.file_type"] = (kv["general.file_type"][0], 32 if a.dtype == "bf16" else 0, None)

    # The template's rope_freqs rule: the fraction of full-attention pairs that rotate (1; the
    # others 1e30, which stops them).
    freqs = t.f32_values("rope_freqs.weight")
    rotated_fraction = sum(1 for v in freqs if v == 1.0) / len(freqs)
    rng = random.Random(a.seed)

    def dims_of(n):
        H, I, P, nh, nkv = a.hidden, a.ffn, a.per_layer, a.heads, a.kv_heads
        if n == "rope_freqs.weight":
            return [a.global_head_dim // 2]
        if n == "token_embd.weight":
            return [H, vocab]
        if n == "per_layer_token_embd.weight":
            return [L * P, vocab]
        if n == "per_layer_model_proj.weight":
            return [H, L * P]
        if n == "per_layer_proj_norm.weight":
            return [P]
        if n == "output_norm.weight":
            return [H]
        layer, kind = int(n.split(".")[1]), ".".join(n.split(".")[2:])
        d = a.head_dim if a.pattern[layer] == "S" else a.global_head_dim
        return {
            "attn_norm.weight": [H], "layer_output_scale.weight": [1], "ffn_down.weight": [I, H],
            "ffn_gate.weight": [H, I], "ffn_up.weight": [H, I], "inp_gate.weight": [H, P],
            "proj.weight": [P, H], "post_attention_norm.weight": [H],
            "post_ffw_norm.weight": [H], "post_norm.weight": [H], "ffn_norm.weight": [H],
            "attn_k_norm.weight": [d], "attn_k.weight": [H, nkv * d],
            "attn_output.weight": [nh * d, H], "attn_q_norm.weight": [d],
            "attn_q.weight": [H, nh * d], "attn_v.weight": [H, nkv * d],
        }[kind]

    # Tensor names in the template's order: the global ones, then layer 0's kinds per layer.
    names = []
    layer0 = [x[0][len("blk.0."):] for x in t.tensors if x[0].startswith("blk.0.")]
    for n, *_ in t.tensors:
        if n == next(x[0] for x in t.tensors if x[0].startswith("blk.0.")):
            for layer in range(L):
                names += [f"blk.{layer}.{k}" for k in layer0]
        elif not n.startswith("blk."):
            names.append(n)

    blobs = []
    for n in names:
        dims = dims_of(n)
        count = 1
        for x in dims:
            count *= x
        if n == "rope_freqs.weight":
            k = round(rotated_fraction * count)
            values = [1.0] * k + [1e30] * (count - k)
        elif n.endswith("layer_output_scale.weight"):
            values = [rng.uniform(0.9, 1.2)]
        elif len(dims) == 1:
            values = [rng.gauss(1.0, 0.1) for _ in range(count)]
        elif n in ("token_embd.weight", "per_layer_token_embd.weight"):
            values = [rng.gauss(0.0, 0.2) for _ in range(count)]
        else:
            values = [rng.gauss(0.0, 0.03) for _ in range(count)]
        raw = struct.pack(f"<{count}f", *values)
        if a.dtype == "bf16" and len(dims) == 2:
            blobs.append((n, dims, 30, bf16_bits(raw)))
        else:
            blobs.append((n, dims, 0, raw))

    align = kv.get("general.alignment", (4, 32, None))[1]
    header = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(blobs), len(kv)))
    for key, (typ, value, et) in kv.items():
        header += enc_str(key) + struct.pack("<I", typ) + enc_value(typ, value, et)
    offset = 0
    offsets = []
    for n, dims, typ, raw in blobs:
        offsets.append(offset)
        header += enc_str(n) + struct.pack("<I", len(dims))
        header += b"".join(struct.pack("<Q", x) for x in dims)
        header += struct.pack("<IQ", typ, offset)
        offset = (offset + len(raw) + align - 1) // align * align
    header += b"\0" * (-len(header) % align)
    with open(a.out, "wb") as f:
        f.write(header)
        for (n, dims, typ, raw), o in zip(blobs, offsets):
            f.write(raw)
            f.write(b"\0" * (-len(raw) % align))
    print(f"{a.out}: {len(blobs)} tensors, {os.path.getsize(a.out)} bytes")


if __name__ == "__main__":
    main()
