#!/bin/sh
# ctest capi_python_chat: the ctypes chat program (examples/python_host, over the installed
# libcortiq's text and sampling calls) gives, greedily, the same replies as cortiq-chat.
#   python_chat.sh PYTHON3 CORTIQ_CTYPES.py LIBCORTIQ.so CORTIQ_CHAT MODEL.cortiq WORK_DIR
set -eu
python=$1 host=$2 lib=$3 chat=$4 model=$5 work=$6
mkdir -p "$work"
printf 'Hello there\nTell me more\nThanks\n' > "$work/input.txt"
"$python" "$host" --lib "$lib" chat "$model" --temp 0 -n 8 < "$work/input.txt" > "$work/python.out"
"$chat" "$model" --temp 0 -n 8 --special < "$work/input.txt" > "$work/chat.out" 2> "$work/chat.err"
if ! cmp -s "$work/python.out" "$work/chat.out"; then
  echo "the ctypes chat and cortiq-chat differ:" >&2
  diff "$work/python.out" "$work/chat.out" >&2 || true
  exit 1
fi
lines=$(wc -l < "$work/python.out")
[ "$lines" -ge 3 ] || { echo "expected 3 replies, got $lines lines" >&2; exit 1; }
echo "ok: 3 replies identical to cortiq-chat's"
