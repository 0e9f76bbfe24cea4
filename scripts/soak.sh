#!/usr/bin/env bash
# The soak of issue 15: builds cortiq-soak (tests/soak) and runs it for a bounded time on one
# model — concurrent C API sessions doing random eval / truncate / save / restore / reset, each
# step checked against a fresh replay of its history; the text path (tokenize → Generate); the
# model opened and closed in a loop. Prints operations per kind, RSS after the first 10% and at
# the end (flat = no leak), the largest logit difference, divergences and errors; fails on any
# divergence or error. Not part of ctest or CI (minutes).
#
#   scripts/soak.sh [--seconds N (default 300)] [--build-dir DIR] [MODEL] [-- cortiq-soak flags]
#
# MODEL is a compiled MODEL.cortiq, or a checkpoint (directory or GGUF) compiled first into a
# temporary artifact (deleted afterwards); default: tests/data/models/tiny-a-f32.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=300
build=build
model=tests/data/models/tiny-a-f32
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
    *) model=$1; shift ;;
  esac
done

cmake --build "$build" --target cortiq-soak cortiq-compile > /dev/null
artifact=$model
if [[ "$model" != *.cortiq ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  artifact=$tmp/model.cortiq
  "$build/bin/cortiq-compile" "$model" -o "$artifact" > /dev/null
fi
"$build/bin/cortiq-soak" "$artifact" --seconds "$seconds" "${extra[@]}"
