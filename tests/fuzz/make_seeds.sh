#!/usr/bin/env bash
# Regenerates the seed corpora of tests/fuzz/corpus/ (the files named seed-*; regression inputs,
# named regression-*, are kept): micro checkpoints written by make_checkpoints.py, the artifacts
# cortiq-compile makes of them, the configs of tests/data, and states saved by the library
# (state_fuzz with CORTIQ_FUZZ_WRITE_SEEDS). Deterministic: rerunning it changes no byte unless
# a format changed.
#
#   tests/fuzz/make_seeds.sh [BUILD_DIR (default build)] [FUZZ_BUILD_DIR (default build-fuzz)]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
fuzz_build=${2:-build-fuzz}
corpus=tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 tests/fuzz/make_checkpoints.py "$tmp"
for target in config_fuzz safetensors_fuzz gguf_fuzz artifact_fuzz state_fuzz; do
  mkdir -p "$corpus/$target"
  rm -f "$corpus/$target"/seed-*
done

cp "$tmp/micro/config.json" "$corpus/config_fuzz/seed-micro-multimodal.json"
cp "$tmp/micro-bf16/config.json" "$corpus/config_fuzz/seed-micro-text-only.json"
cp tests/data/models/tiny-a-f32/config.json "$corpus/config_fuzz/seed-tiny-a.json"
cp tests/data/configs/e2b.json "$corpus/config_fuzz/seed-e2b.json"
cp tests/data/configs/e4b.json "$corpus/config_fuzz/seed-e4b.json"

cp "$tmp/micro/model.safetensors" "$corpus/safetensors_fuzz/seed-micro-f32.safetensors"
cp "$tmp/micro-bf16/model.safetensors" "$corpus/safetensors_fuzz/seed-micro-bf16-f16.safetensors"
# The index of a one-shard checkpoint whose shard is seed-micro-f32.safetensors (safetensors_fuzz
# opens inputs starting with '{' as that directory's model.safetensors.index.json).
python3 - "$tmp/micro/model.safetensors" > "$corpus/safetensors_fuzz/seed-index.json" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", data[:8])
names = [k for k in json.loads(data[8:8 + n]) if k != "__metadata__"]
print(json.dumps({"metadata": {"total_size": len(data) - 8 - n},
                  "weight_map": {k: "model-00001-of-00001.safetensors" for k in names}}, indent=1))
PY

for type in f32 f16 q8_0 q4_0; do
  cp "$tmp/micro-$type.gguf" "$corpus/gguf_fuzz/seed-micro-$type.gguf"
done

# Compiled from inside $tmp with relative paths: the artifact records its source path, which
# must not be the random temporary directory (the bytes, and the states' plan checksum, would
# change with every run).
root=$PWD
compile() { (cd "$tmp" && "$root/$build/bin/cortiq-compile" "$@" > /dev/null); }
# micro-q8_0.cortiq is also the model of state_fuzz (tests/fuzz/CMakeLists.txt).
compile micro-bf16 -o "$root/$corpus/artifact_fuzz/micro-q8_0.cortiq" --weights q8_0 --max-batch 4
compile micro-bf16 -o "$root/$corpus/artifact_fuzz/seed-micro-q4_0.cortiq" --weights q4_0 \
  --tables q4_0 --max-batch 4
compile micro -o "$root/$corpus/artifact_fuzz/seed-micro-f32-no-opt.cortiq" --no-opt --max-batch 3
compile micro-q4_0.gguf -o "$root/$corpus/artifact_fuzz/seed-micro-gguf-bf16.cortiq" \
  --weights bf16 --max-batch 2
# The model of text_api_fuzz: tiny-a's tokenizer on the micro shapes.
compile micro-text -o "$root/$corpus/artifact_fuzz/seed-micro-text-q8_0.cortiq" --weights q8_0 \
  --max-batch 4

CORTIQ_FUZZ_WRITE_SEEDS="$tmp" "$fuzz_build/bin/state_fuzz" > /dev/null 2>&1
for f in "$tmp"/state-*; do cp "$f" "$corpus/state_fuzz/seed-$(basename "$f")"; done
ls -l "$corpus"/*
