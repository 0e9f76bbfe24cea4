#!/usr/bin/env bash
# Makes the side-by-side benchmark set of one preset from a cortiq-synth bf16 checkpoint: the
# same weights as llama.cpp and cortiq see them, in three formats.
#
#   scripts/make_bench_models.sh PRESET CHECKPOINT_DIR OUT_DIR
#   e.g. scripts/make_bench_models.sh e2b /work/models/e2b-bf16 /work/models
#
# writes into OUT_DIR:
#   PRESET-bf16.gguf          llama.cpp's converter (convert-hf-to-gguf --outtype bf16)
#   PRESET-q8_0-pure.gguf     llama-quantize --pure ... Q8_0 (every matrix, the tables too)
#   PRESET-q4_0-pure.gguf     llama-quantize --pure ... Q4_0
#   PRESET-bf16.cortiq, PRESET-q8_0-pure.cortiq, PRESET-q4_0-pure.cortiq
#                             cortiq-compile of each GGUF (the GGUF's own bytes: bf16 stays bf16,
#                             Q8_0/Q4_0 blocks are copied as they are)
# then prints their sizes. Pairs for ../shared/reference/side_by_side.sh:
#   bf16:OUT/PRESET-bf16.gguf:OUT/PRESET-bf16.cortiq, q8_0:..., q4_0:...
#
# CHECKPOINT_DIR is read, never written: the converter runs on a staging directory of symlinks to
# its shards, with the config and tokenizer of `cortiq-synth --preset PRESET --metadata-only`
# (checked against CHECKPOINT_DIR's config.json). A file that exists already is kept (delete it
# to remake it); each is written under a temporary name and renamed when complete.
#
# Needs: build/bin/cortiq-synth and cortiq-compile; the llama.cpp reference
# (../shared/reference, or $CORTIQ_LLAMA_CPP; run through scripts/llama-cpp.sh, which works around
# its stored .so symlinks) and the converter's Debian packages python3-numpy python3-torch
# python3-yaml python3-tqdm. E2B: ~9 GB per bf16 file, ~35 GB for the set, ~10 min; the converter
# holds up to ~15 GB of RAM on real-size models.
set -euo pipefail

# (Not tiny: llama-quantize --pure refuses its PLE projection, rows of 16 < a 32-weight block.)
usage() { echo "usage: $0 e2b|e4b CHECKPOINT_DIR OUT_DIR" >&2; exit 2; }
[ $# -eq 3 ] || usage
preset=$1 checkpoint=$2 out=$3
case "$preset" in e2b|e4b) ;; *) usage ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${CORTIQ_BIN:-$root/build/bin}
llama="$root/scripts/llama-cpp.sh"
for tool in cortiq-synth cortiq-compile; do
  [ -x "$bin/$tool" ] || { echo "$0: no $bin/$tool (build first, or set CORTIQ_BIN)" >&2; exit 2; }
done
[ -f "$checkpoint/config.json" ] || { echo "$0: $checkpoint has no config.json" >&2; exit 2; }
checkpoint=$(cd "$checkpoint" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Runs "$@", which writes "$1.partial", and renames that to $1; nothing if $1 exists.
produce() {
  local target=$1
  shift
  if [ -e "$target" ]; then
    echo "make_bench_models: keeping $target"
    return
  fi
  echo "make_bench_models: making $target"
  rm -f "$target.partial"
  "$@" || { local status=$?; rm -f "$target.partial"; return $status; }
  mv "$target.partial" "$target"
}

bf16="$out/$preset-bf16.gguf"
if [ ! -e "$bf16" ]; then
  staging=$(mktemp -d "$out/.$preset-hf.XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  for f in "$checkpoint"/*.safetensors "$checkpoint"/model.safetensors.index.json; do
    [ -e "$f" ] && ln -s "$f" "$staging/"
  done
  cp "$checkpoint/config.json" "$staging/config.json"
  "$bin/cortiq-synth" --preset "$preset" --dtype bf16 --metadata-only -o "$staging"
  # The converter writes its --outfile directly: give it the temporary name.
  produce "$bf16" "$llama" convert-hf-to-gguf "$staging" --outtype bf16 --outfile "$bf16.partial"
fi
for type in q8_0 q4_0; do
  upper=$(echo "$type" | tr a-z A-Z)
  gguf="$out/$preset-$type-pure.gguf"
  produce "$gguf" "$llama" llama-quantize --pure "$bf16" "$gguf.partial" "$upper"
done
for name in bf16 q8_0-pure q4_0-pure; do
  artifact="$out/$preset-$name.cortiq"
  produce "$artifact" "$bin/cortiq-compile" "$out/$preset-$name.gguf" -o "$artifact.partial"
done
ls -l "$out/$preset-bf16.gguf" "$out/$preset-q8_0-pure.gguf" "$out/$preset-q4_0-pure.gguf" \
  "$out/$preset-bf16.cortiq" "$out/$preset-q8_0-pure.cortiq" "$out/$preset-q4_0-pure.cortiq"
du -ch "$out/$preset"-{bf16,q8_0-pure,q4_0-pure}.{gguf,cortiq} | tail -n 1
