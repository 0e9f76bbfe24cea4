#!/usr/bin/env python3
"""Makes tests/data/llama_quantize/: blocks written by llama.cpp's llama-quantize.

Development tool only (the tests read the committed output, never llama.cpp). Python 3 standard
library only (a minimal GGUF reader/writer below; no numpy).

1. Copies tests/data/models/tiny-d-f32.gguf (every matrix width a multiple of 256) with the
   first kCraftedRows rows of `token_embd.weight` replaced by crafted rows that reach the corner
   cases of the reference quantizers (all-zero and constant blocks, all-positive and all-negative
   blocks, values below GROUP_MAX_EPS, exact rounding ties, outliers, sub-blocks of very different
   scales, subnormal products, ...). The other rows keep the checkpoint's random weights.
2. Runs `llama-quantize --pure COPY OUT TYPE` for each type (every tensor of one type).
3. Writes, per type, the blocks of the first kEmbdRows rows of `token_embd.weight` (256 columns)
   followed by those of the first kDownRows rows of `blk.0.ffn_down.weight` (768 columns) as
   `<type>.bin`, and the f32 source of the same rows as `source.f32` (little-endian, row after
   row). Every reference quantizer works block by block (QK_K = 256 or 32 weights, no state
   across blocks), so `<type>.bin` is exactly the quantization of `source.f32` as one flat row.
4. Dequantizes each `<type>.bin` with llama.cpp's own `dequantize_row_*` (ggml_fp16_to_fp32_row
   for F16), called through ctypes from the reference build's libggml-base, and writes the
   64-bit FNV-1a hash of the resulting f32 bytes to `dequantized.txt` (`TYPE HASH COUNT`), so the
   tests check the project's dequantizers against llama.cpp's bit for bit without storing the
   values.

Usage (from the repository root):
    tests/ops/make_llama_quantize_blocks.py \
        --llama-quantize ../shared/reference/llama.cpp/bin/llama-quantize

(If the reference build's lib/ holds its .so symlinks as plain text files, as a copy without
symlinks does, the bin/ wrappers fail to load; pass a wrapper that sets LD_LIBRARY_PATH to a
directory of real links to lib/*.so.X.Y.Z, and --ggml-base lib/libggml-base.so.X.Y.Z.)
"""

import argparse
import ctypes
import glob
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

TYPES = ["F16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
         "Q6_K", "IQ4_NL", "IQ4_XS"]
# ggml_type ids (ggml.h) and block geometry (ggml-common.h): (weights per block, bytes per block).
GGML_TYPES = {
    "F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20),
    "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24), "Q8_0": (8, 32, 34), "Q2_K": (10, 256, 84),
    "Q3_K": (11, 256, 110), "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176),
    "Q6_K": (14, 256, 210), "IQ4_NL": (20, 32, 18), "IQ4_XS": (23, 256, 136),
}
kCraftedRows = 40
kEmbdRows = 48
kDownRows = 16


class Gguf:
    """The parts of a GGUF file this script needs: header bytes, tensor infos, data offset."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.off = 0
        if self.data[:4] != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        self.off = 4
        self.version = self._rd("I")
        n_tensors = self._rd("Q")
        n_kv = self._rd("Q")
        self.kv = {}
        for _ in range(n_kv):
            key = self._str()
            self.kv[key] = self._value(self._rd("I"))
        self.tensors = {}
        for _ in range(n_tensors):
            name = self._str()
            dims = [self._rd("Q") for _ in range(self._rd("I"))]
            ggml_type = self._rd("I")
            offset = self._rd("Q")
            self.tensors[name] = (dims, ggml_type, offset)
        align = self.kv.get("general.alignment", 32)
        self.data_start = (self.off + align - 1) // align * align

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
        scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q",
                  11: "q", 12: "d"}
        if t in scalar:
            return self._rd(scalar[t])
        if t == 8:
            return self._str()
        if t == 9:
            et = self._rd("I")
            return [self._value(et) for _ in range(self._rd("Q"))]
        raise ValueError(f"unknown GGUF value type {t}")

    def tensor_bytes(self, name, first_rows):
        """Bytes of rows [0, first_rows) of a 2-D tensor, and its type name."""
        dims, ggml_type, offset = self.tensors[name]
        type_name = next(k for k, v in GGML_TYPES.items() if v[0] == ggml_type)
        _, block_weights, block_bytes = GGML_TYPES[type_name]
        row_bytes = dims[0] // block_weights * block_bytes
        start = self.data_start + offset
        return self.data[start:start + first_rows * row_bytes], type_name


def f32(v):
    """v rounded to the nearest f32 (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def crafted_rows():
    """kCraftedRows rows of 256 values: corner cases of the reference quantizers."""
    rng = random.Random(20240917)
    rows = []

    def gauss(n, sigma=1.0, mean=0.0):
        return [rng.gauss(mean, sigma) for _ in range(n)]

    rows.append([0.0] * 256)                                     # all zero
    rows.append([-0.0] * 256)                                    # all negative zero
    rows.append([1.0] * 256)                                     # constant > 0 (max == min)
    rows.append([-0.5] * 256)                                    # constant < 0
    rows.append(gauss(256))                                      # plain Gaussian
    r = gauss(256)                                               # one outlier per 32
    for j in range(0, 256, 32):
        r[j + (j // 32) * 3 % 32] = 25.0 * (1 if j % 64 else -1)
    rows.append(r)
    rows.append([rng.random() for _ in range(256)])              # all >= 0 (min clamps to 0)
    rows.append([-rng.random() - 1e-3 for _ in range(256)])      # all < 0
    rows.append([v * 1e-6 for v in gauss(256)])                  # small magnitudes
    rows.append([v * 1e-17 for v in gauss(256)])                 # below GROUP_MAX_EPS (1e-15)
    rows.append([v * 1e-19 for v in gauss(256)])                 # products x*x subnormal
    rows.append([float(rng.randint(-8, 7)) for _ in range(256)])  # integer grid (exact ties)
    rows.append([rng.randint(-16, 15) + 0.5 for _ in range(256)])  # half-integers (ties)
    rows.append([float(rng.randint(0, 15)) for _ in range(256)])  # 0..15 (Q4_K/Q4_1 grid)
    rows.append([float(rng.randint(-32, 31)) for _ in range(256)])  # Q6_K-sized grid
    r = gauss(256)                                               # sub-block scales 2^-8..2^7
    rows.append([v * 2.0 ** (j // 16 - 8) for j, v in enumerate(r)])
    r = gauss(256)                                               # 32-blocks 2^-4..2^3
    rows.append([v * 2.0 ** (j // 32 - 4) for j, v in enumerate(r)])
    rows.append([0.0 if (j // 16) % 2 else v for j, v in enumerate(gauss(256))])  # zero halves
    rows.append([0.0 if (j // 32) % 2 else v for j, v in enumerate(gauss(256))])
    r = [0.0] * 256                                              # one nonzero per 16
    for j in range(0, 256, 16):
        r[j + (j // 16) % 16] = rng.gauss(0, 1)
    rows.append(r)
    rows.append([(1 if j % 2 else -1) * 0.75 for j in range(256)])  # +-x, symmetric ties
    rows.append(gauss(256, 0.1, 3.0))                            # offset: mean 3, sigma 0.1
    rows.append(gauss(256, 0.1, -3.0))                           # mean -3
    rows.append(gauss(256, 2000.0))                              # large (f16 d stays finite)
    rows.append([v * 3e4 / 4 for v in gauss(256)])               # near the f16 range
    rows.append([rng.uniform(-1, 1) ** 3 for _ in range(256)])   # heavy center
    rows.append([math.copysign(abs(v) ** 0.25, v) for v in gauss(256)])  # flat, near +-1
    rows.append([1e-3 * rng.randint(-1000, 1000) for _ in range(256)])   # decimal grid
    r = [0.0] * 256                                              # constant sub-blocks
    for j in range(256):
        r[j] = (j // 16 - 7.5) * 0.25
    rows.append(r)
    r = gauss(256)                                               # mins of both signs
    rows.append([v + (2.0 if (j // 32) % 2 else -2.0) for j, v in enumerate(r)])
    rows.append([rng.choice([-1.0, 1.0]) for _ in range(256)])   # signs only
    rows.append([rng.choice([0.0, 0.0, 0.0, 1.0]) for _ in range(256)])  # sparse positive
    rows.append([rng.gauss(0, 1) * rng.choice([1e-3, 1, 1e3]) for _ in range(256)])  # mixed
    rows.append([(j % 32) / 31.0 for j in range(256)])            # ramp 0..1 per 32
    rows.append([(j % 16) / 15.0 - 0.5 for j in range(256)])      # ramp per 16
    rows.append([113.0 / 127.0 * rng.choice([-1, 1]) for _ in range(256)])  # IQ4 table ends
    r = gauss(256)                                               # first 16 tiny, rest normal
    rows.append([v * (1e-30 if j < 16 else 1.0) for j, v in enumerate(r)])
    rows.append([rng.gauss(0, 1) for _ in range(256)])
    rows.append([rng.gauss(0, 0.02) for _ in range(256)])        # typical LLM weight scale
    rows.append([rng.gauss(0, 0.02) + (0.5 if j % 97 == 0 else 0) for j in range(256)])
    assert len(rows) == kCraftedRows, len(rows)
    return [[f32(v) for v in row] for row in rows]


def write_crafted(src_path, dst_path):
    g = Gguf(src_path)
    dims, ggml_type, offset = g.tensors["token_embd.weight"]
    if ggml_type != 0 or dims[0] != 256:
        raise ValueError("expected an F32 token_embd.weight with 256 columns")
    data = bytearray(g.data)
    start = g.data_start + offset
    for i, row in enumerate(crafted_rows()):
        struct.pack_into("<256f", data, start + i * 256 * 4, *row)
    with open(dst_path, "wb") as f:
        f.write(data)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def llama_dequantize(lib, type_name, blocks):
    """llama.cpp's dequantization of `blocks` (bytes of type_name) as f32 bytes."""
    _, block_weights, block_bytes = GGML_TYPES[type_name]
    n = len(blocks) // block_bytes * block_weights
    src = ctypes.create_string_buffer(blocks, len(blocks))
    dst = (ctypes.c_float * n)()
    fn = lib.ggml_fp16_to_fp32_row if type_name == "F16" else getattr(
        lib, "dequantize_row_" + type_name.lower().replace("_k", "_K"))
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    fn.restype = None
    fn(src, dst, n)
    return bytes(dst), n


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--llama-quantize", required=True)
    p.add_argument("--ggml-base", help="libggml-base of the same build (default: next to "
                   "llama-quantize, ../lib/libggml-base.so.X.Y.Z)")
    p.add_argument("--model", default=os.path.join(
        os.path.dirname(root), "shared/golden/models/tiny-d-f32.gguf"))
    p.add_argument("--out", default=os.path.join(root, "tests/data/llama_quantize"))
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ggml_base = args.ggml_base or sorted(glob.glob(os.path.join(
        os.path.dirname(os.path.abspath(args.llama_quantize)), "..", "lib",
        "libggml-base.so.*.*.*")))[-1]
    lib = ctypes.CDLL(ggml_base)
    manifest = []
    with tempfile.TemporaryDirectory() as tmp:
        crafted = os.path.join(tmp, "crafted-f32.gguf")
        write_crafted(args.model, crafted)
        src = Gguf(crafted)
        embd, _ = src.tensor_bytes("token_embd.weight", kEmbdRows)
        down, _ = src.tensor_bytes("blk.0.ffn_down.weight", kDownRows)
        with open(os.path.join(args.out, "source.f32"), "wb") as f:
            f.write(embd + down)
        for type_name in TYPES:
            out = os.path.join(tmp, f"{type_name}.gguf")
            subprocess.run([args.llama_quantize, "--pure", crafted, out, type_name], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            q = Gguf(out)
            embd, t1 = q.tensor_bytes("token_embd.weight", kEmbdRows)
            down, t2 = q.tensor_bytes("blk.0.ffn_down.weight", kDownRows)
            if t1 != type_name or t2 != type_name:
                raise ValueError(f"{type_name}: llama-quantize wrote {t1} / {t2}")
            with open(os.path.join(args.out, f"{type_name}.bin"), "wb") as f:
                f.write(embd + down)
            values, n = llama_dequantize(lib, type_name, embd + down)
            manifest.append(f"{type_name} {fnv1a64(values):016x} {n}")
            print(f"{type_name}: {len(embd) + len(down)} bytes", file=sys.stderr)
    with open(os.path.join(args.out, "dequantized.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")


if __name__ == "__main__":
    main()
