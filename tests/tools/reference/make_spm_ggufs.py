#!/usr/bin/python3
"""Writes the vocab-only GGUFs of the SentencePiece (tokenizer.ggml.model = "llama") tokenizer
tests with llama.cpp's gguf-py (its GGUFWriter, as convert_hf_to_gguf.py writes them):

  spm-prefix.gguf     add_space_prefix = true,  add_bos_token = true
  spm-noprefix.gguf   add_space_prefix = false, add_bos_token = false

The vocabulary: <unk> (UNKNOWN), <s> and </s> (CONTROL), the 256 byte pieces <0x00>..<0xFF>
(BYTE), two USER_DEFINED tokens, then NORMAL pieces: every character of the corpora and every
substring of up to 6 characters of their words (spaces as "▁", a word with its leading "▁"),
capped at 6000 pieces by frequency, leaving out pieces spelled like a control token ("<eos>"). Scores are a fixed hash of the piece rounded to 0.5, so that
many bigrams tie (the merge order then falls to the leftmost, as llm_tokenizer_spm does) and the
longest piece is not always the best. Deterministic.

  /usr/bin/python3 make_spm_ggufs.py GGUF_PY_DIR CORPUS.jsonl... OUT_DIR
"""
import collections
import hashlib
import json
import sys

sys.path.insert(0, sys.argv[1])
import gguf  # noqa: E402

SPACE = "\u2581"
corpora = sys.argv[2:-1]
out_dir = sys.argv[-1]

texts = []
for path in corpora:
    with open(path, encoding="utf-8") as f:
        texts += [json.loads(line) for line in f if line.strip()]

counts = collections.Counter()
chars = set()
for text in texts:
    escaped = text.replace(" ", SPACE)
    chars.update(escaped)
    # Words with their leading "▁" (as SentencePiece segments them), and the inner substrings.
    words = escaped.replace(SPACE, "\0" + SPACE).split("\0")
    for w in words:
        for i in range(len(w)):
            for n in range(2, 7):
                if i + n <= len(w):
                    counts[w[i:i + n]] += 1

# Characters that stay out of the vocabulary, to exercise byte fallback (emoji, some CJK).
def in_vocab(c):
    cp = ord(c)
    return not (cp >= 0x1F000 or 0x4E00 <= cp <= 0x4E5F or c in "\x00\x01\x7f")

special = [("<unk>", 2), ("<s>", 3), ("</s>", 3)]
byte_pieces = [(f"<0x{b:02X}>", 6) for b in range(256)]
user_defined = [("<|user|>", 4), ("<sep>", 4)]
normal = sorted(c for c in chars if in_vocab(c) and c not in ("\n", "\r", "\t"))
seen = set(normal)
for piece, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
    if len(normal) >= 6000:
        break
    if piece in seen or not all(in_vocab(c) for c in piece) or any(c in "\n\r\t" for c in piece):
        continue
    # A NORMAL piece spelled like a control token ("<eos>") is made CONTROL by llama.cpp's load
    # (its "control-looking token" override, a workaround for old conversions): left out, so the
    # reference shows the SentencePiece algorithm rather than that heuristic.
    if len(piece) > 2 and piece.lstrip(SPACE).startswith("<") and piece.endswith(">"):
        continue
    seen.add(piece)
    normal.append(piece)


def score(piece):
    h = int.from_bytes(hashlib.sha256(piece.encode()).digest()[:4], "little")
    # Longer pieces score higher on average (as trained SentencePiece models), ties are common.
    return round((len(piece) * 1.5 - (h % 16)) * 2) / 2.0


vocab = special + byte_pieces + user_defined + [(p, 1) for p in normal]
tokens = [p for p, _ in vocab]
types = [t for _, t in vocab]
scores = [0.0] * (len(special) + len(byte_pieces) + len(user_defined)) + [score(p) for p in normal]

for name, prefix, bos in (("spm-prefix", True, True), ("spm-noprefix", False, False)):
    path = f"{out_dir}/{name}.gguf"
    w = gguf.GGUFWriter(path, "llama")
    # The hyperparameters llama.cpp reads before the vocabulary (a vocab-only file has no
    # tensors; llama-tokenize loads it with vocab_only).
    w.add_context_length(128)
    w.add_embedding_length(8)
    w.add_block_count(1)
    w.add_feed_forward_length(16)
    w.add_head_count(1)
    w.add_head_count_kv(1)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(bos)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(prefix)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{path}: {len(tokens)} tokens")
