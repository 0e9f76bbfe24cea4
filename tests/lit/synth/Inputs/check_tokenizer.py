#!/usr/bin/env python3
"""Checks the tokenizer files cortiq-synth writes, independently of the C++ that writes them.

Usage: check_tokenizer.py CHECKPOINT_DIR VOCAB_SIZE [--encode TEXT]

What llama.cpp's converter (gguf-py LlamaHfVocab, SpecialVocab, the reference's transformers
shim) needs: a BPE model with byte_fallback and a Sequence decoder, every id 0..VOCAB_SIZE-1 in
model.vocab, added tokens that agree with it, merges of tokens into tokens. What Gemma 4's
tokenizer has: its special tokens at their ids (the table below, from the released files), " "
normalized to U+2581, <bos> prepended, eos [1, 106]. And that the vocabulary tokenizes: a small
BPE (merges by rank, byte fallback) encodes and decodes sample texts back to themselves.
Prints one summary line (with --encode, then the ids of <bos> + TEXT as llama-tokenize --ids
prints them); exits 1 with the first failure.
"""
import json
import os
import sys

SPACE = "\u2581"
# Gemma 4's special tokens (tokenizer.json added_tokens and config.json *_token_id of the
# released checkpoints).
GEMMA4_IDS = {
    "<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3, "<mask>": 4,
    "<|tool>": 46, "<tool|>": 47, "<|tool_call>": 48, "<tool_call|>": 49,
    "<|tool_response>": 50, "<tool_response|>": 51, '<|"|>': 52,
    "<|think|>": 98, "<|channel>": 100, "<channel|>": 101, "<|turn>": 105, "<turn|>": 106,
    "<|image>": 255999, "<|audio>": 256000, "<|image|>": 258880, "<|audio|>": 258881,
    "<image|>": 258882, "<audio|>": 258883, "<|video|>": 258884,
}
SAMPLES = ["hello world", " two  spaces", "Tab\tand\nnewline", "caf\u00e9 \u2615 \u4f60\u597d",
           "The quick brown fox jumps over the lazy dog."]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def load(directory, name):
    with open(os.path.join(directory, name), encoding="utf-8") as f:
        return json.load(f)


def encode(text, vocab, ranks):
    """HF BPE with byte fallback over the normalized text (no pre-tokenizer)."""
    symbols = []
    for ch in text.replace(" ", SPACE):
        if ch in vocab:
            symbols.append(ch)
        else:
            symbols.extend("<0x%02X>" % b for b in ch.encode("utf-8"))
    while True:
        best = None
        for i in range(len(symbols) - 1):
            rank = ranks.get((symbols[i], symbols[i + 1]))
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return [vocab[s] for s in symbols]
        i = best[1]
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]


def decode(ids, pieces):
    out = bytearray()
    for i in ids:
        piece = pieces[i]
        if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            out.append(int(piece[3:5], 16))
        else:
            out.extend(piece.replace(SPACE, " ").encode("utf-8"))
    return out.decode("utf-8")


def main():
    directory, vocab_size = sys.argv[1], int(sys.argv[2])
    tj = load(directory, "tokenizer.json")
    model = tj["model"]
    if model["type"] != "BPE" or model.get("byte_fallback") is not True:
        fail("model is not BPE with byte_fallback")
    if model.get("ignore_merges", False):
        fail("ignore_merges (the converter would take it for Llama 3)")
    if tj["decoder"]["type"] != "Sequence":
        fail("decoder is not a Sequence")
    if [d["type"] for d in tj["decoder"]["decoders"]] != ["Replace", "ByteFallback", "Fuse"]:
        fail("decoders are not Replace, ByteFallback, Fuse")
    norm = tj["normalizer"]
    if norm != {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}:
        fail("normalizer is not Replace ' ' -> U+2581: %r" % norm)
    if tj["post_processor"]["single"][0] != {"SpecialToken": {"id": "<bos>", "type_id": 0}}:
        fail("<bos> is not prepended")
    vocab = model["vocab"]
    if len(vocab) != vocab_size or sorted(vocab.values()) != list(range(vocab_size)):
        fail("vocab has %d entries, not the ids 0..%d" % (len(vocab), vocab_size - 1))
    pieces = {i: t for t, i in vocab.items()}
    for content, token_id in GEMMA4_IDS.items():
        if token_id < vocab_size and vocab.get(content) != token_id:
            fail("%s has id %r, Gemma 4's is %d" % (content, vocab.get(content), token_id))
        if token_id >= vocab_size and content in vocab:
            fail("%s is placed although its id %d is past the vocabulary" % (content, token_id))
    for b in range(256):
        if "<0x%02X>" % b not in vocab:
            fail("byte token <0x%02X> missing" % b)
    added = tj["added_tokens"]
    for t in added:
        if vocab.get(t["content"]) != t["id"] or not t["special"]:
            fail("added token %r disagrees with the vocab" % t)
    added_ids = {t["id"] for t in added}
    for content, token_id in GEMMA4_IDS.items():
        if token_id < vocab_size and token_id not in added_ids:
            fail("%s is not an added special token" % content)
    merges = model["merges"]
    ranks = {}
    for rank, pair in enumerate(merges):
        left, right = pair
        if left not in vocab or right not in vocab or left + right not in vocab:
            fail("merge %r of tokens not in the vocab" % pair)
        if vocab[left] in added_ids or vocab[right] in added_ids:
            fail("merge %r of an added token" % pair)
        ranks[(left, right)] = rank
    if len(ranks) != len(merges):
        fail("repeated merges")
    for text in SAMPLES:
        ids = encode(text, vocab, ranks)
        if decode(ids, pieces) != text:
            fail("%r does not decode back from %r" % (text, ids))
    cfg = load(directory, "tokenizer_config.json")
    for key, content in (("bos_token", "<bos>"), ("eos_token", "<eos>"), ("pad_token", "<pad>"),
                         ("unk_token", "<unk>")):
        if cfg.get(key) != content:
            fail("tokenizer_config.json %s is %r" % (key, cfg.get(key)))
    decoder = cfg["added_tokens_decoder"]
    if {int(k): v["content"] for k, v in decoder.items()} != {t["id"]: t["content"] for t in added}:
        fail("added_tokens_decoder disagrees with added_tokens")
    gen = load(directory, "generation_config.json")
    if gen != {"bos_token_id": 2, "eos_token_id": [1, 106], "pad_token_id": 0,
               "do_sample": True, "temperature": 1.0, "top_k": 64, "top_p": 0.95}:
        fail("generation_config.json is %r" % gen)
    hello = encode("hello world", vocab, ranks)
    print("OK: %d tokens, %d added, %d merges; 'hello world' -> %d tokens" %
          (len(vocab), len(added), len(merges), len(hello)))
    if len(sys.argv) == 5 and sys.argv[3] == "--encode":
        print("ids: [%s]" % ", ".join(str(i) for i in [vocab["<bos>"]] + encode(sys.argv[4], vocab, ranks)))


if __name__ == "__main__":
    main()
