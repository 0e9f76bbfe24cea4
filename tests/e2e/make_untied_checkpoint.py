#!/usr/bin/env python3
"""Writes an untied-head copy of a safetensors checkpoint directory (Python 3 standard library).

The copy has tie_word_embeddings false (top level and text_config) and one more tensor,
lm_head.weight, of the embedding table's shape and dtype (F32 only), drawn from a seeded
N(0, 0.2): an LM head that is not the embedding table, so that a forward which ignores it (and
reads the table instead) gives other logits. Every other tensor and file is copied as it is.

    make_untied_checkpoint.py SRC_DIR OUT_DIR [--seed N]

Used by tests/e2e (gguf_blocks_test's UntiedHead case) on tests/data/models/tiny-a-f32.
"""

import argparse
import json
import os
import random
import shutil
import struct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("src")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.src, "config.json")) as f:
        config = json.load(f)
    config["tie_word_embeddings"] = False
    if "text_config" in config:
        config["text_config"]["tie_word_embeddings"] = False
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    for name in os.listdir(args.src):
        if name not in ("config.json", "model.safetensors"):
            shutil.copyfile(os.path.join(args.src, name), os.path.join(args.out, name))

    with open(os.path.join(args.src, "model.safetensors"), "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        data = f.read()
    embed_name = next(n for n in header if n.endswith("embed_tokens.weight"))
    embed = header[embed_name]
    if embed["dtype"] != "F32":
        raise SystemExit("only F32 checkpoints")
    rows, cols = embed["shape"]
    rng = random.Random(args.seed)
    head = struct.pack("<%df" % (rows * cols), *(rng.gauss(0.0, 0.2) for _ in range(rows * cols)))
    header["lm_head.weight"] = {"dtype": "F32", "shape": [rows, cols],
                                "data_offsets": [len(data), len(data) + len(head)]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = os.path.join(args.out, "model.safetensors.tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(data)
        f.write(head)
    os.replace(tmp, os.path.join(args.out, "model.safetensors"))


if __name__ == "__main__":
    main()
