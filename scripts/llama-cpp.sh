#!/usr/bin/env bash
# Runs a tool of the prebuilt llama.cpp reference (../shared/reference/llama.cpp, or
# $CORTIQ_LLAMA_CPP) with its own libraries:
#
#   scripts/llama-cpp.sh llama-bench -m X.gguf -p 16 -n 4 -t 2
#   scripts/llama-cpp.sh llama-quantize --pure IN.gguf OUT.gguf Q4_0
#   scripts/llama-cpp.sh convert-hf-to-gguf DIR --outtype bf16 --outfile X.gguf
#
# Why: in that copy the versioned .so symlinks of lib/ (libggml.so -> libggml.so.0 ->
# libggml.so.0.18.1, ...) are stored as small regular files holding the link target's name, so
# the loader finds a "library" of 12 bytes and llama-bench / llama-quantize fail to start. This
# script makes the real symlinks in a directory of its own (one per user and reference copy, kept
# for the next run; the reference itself is read-only and left alone) and puts that directory on
# LD_LIBRARY_PATH. convert-hf-to-gguf (Python) needs no libraries and is run as it is.
#
# Called through a symlink named after a tool, it runs that tool: for side_by_side.sh,
#   ln -s "$PWD/scripts/llama-cpp.sh" /tmp/llama-bench && LLAMA_BENCH=/tmp/llama-bench ...
set -euo pipefail

script_path=$(readlink -f "${BASH_SOURCE[0]}")
llama_cpp=${CORTIQ_LLAMA_CPP:-$(dirname "$(dirname "$script_path")")/../shared/reference/llama.cpp}
if [ "$(basename "$0")" != "llama-cpp.sh" ]; then
  tool=$(basename "$0")
else
  [ $# -ge 1 ] || { echo "usage: $0 TOOL [ARGS...] (a tool of $llama_cpp/bin)" >&2; exit 2; }
  tool=$1
  shift
fi
[ -d "$llama_cpp/bin" ] || { echo "$0: no llama.cpp at $llama_cpp (set CORTIQ_LLAMA_CPP)" >&2; exit 2; }
llama_cpp=$(cd "$llama_cpp" && pwd -P)
if [ -x "$llama_cpp/bin/$tool.bin" ]; then
  binary="$llama_cpp/bin/$tool.bin"
elif [ -x "$llama_cpp/bin/$tool" ]; then
  exec "$llama_cpp/bin/$tool" "$@"  # a script (the converter)
else
  echo "$0: $llama_cpp/bin has no tool '$tool'" >&2
  exit 2
fi

lib="$llama_cpp/lib"
# One directory per user and reference copy (by the path's checksum).
key=$(printf '%s' "$lib" | cksum | cut -d' ' -f1)
libs="${TMPDIR:-/tmp}/cortiq-llama-cpp-libs.$(id -u).$key"
mkdir -p "$libs"
for file in "$lib"/*; do
  name=$(basename "$file")
  target="$file"
  # A stored symlink: a small regular file whose whole content is the name of a file beside it.
  if [ -f "$file" ] && [ "$(stat -c %s "$file")" -lt 256 ]; then
    content=$(tr -d '\n' < "$file")
    if [ -n "$content" ] && [ "${content#*/}" = "$content" ] && [ -e "$lib/$content" ]; then
      target="$content"
    fi
  fi
  ln -sfn "$target" "$libs/$name"
done
exec env LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$binary" "$@"
