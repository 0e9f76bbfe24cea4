#!/usr/bin/python3
"""The reference ids of the SentencePiece tests: llama.cpp's llama-tokenize (llm_tokenizer_spm)
over every text of the corpora with GGUF, special tokens parsed, bos as the file says and no
escape processing (--no-escape: the text is taken byte for byte). Writes
one JSON object {"text": ..., "ids": [...]} per line of OUT.jsonl. llama.cpp takes a text as a C
string, so NUL bytes are removed from a text first (the text recorded is the one tokenized).

  /usr/bin/python3 spm_reference.py LLAMA_CPP_SH GGUF OUT.jsonl CORPUS.jsonl...
"""
import json
import os
import subprocess
import sys
import tempfile

llama_cpp, gguf_path, out = sys.argv[1:4]
texts = []
for corpus in sys.argv[4:]:
    with open(corpus, encoding="utf-8") as f:
        texts += [json.loads(line).replace("\0", "") for line in f if line.strip()]
lines = []
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "text")
    for text in texts:
        with open(path, "wb") as f:
            f.write(text.encode("utf-8"))
        r = subprocess.run([llama_cpp, "llama-tokenize", "-m", gguf_path, "-f", path, "--ids",
                            "--no-escape",
                            "--log-disable"], capture_output=True, check=True)
        ids = json.loads(r.stdout.decode().strip().splitlines()[-1])
        lines.append(json.dumps({"text": text, "ids": ids}, ensure_ascii=False))
with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
print(f"{out}: {len(lines)} texts")
