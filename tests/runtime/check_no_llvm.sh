#!/bin/sh
# Fails if the executable $1 depends on LLVM/MLIR: dynamically (ldd) or statically (symbols).
set -u
bin="$1"
deps=$(ldd "$bin") || { echo "ldd failed on $bin"; exit 1; }
echo "$deps"
if echo "$deps" | grep -i -E 'llvm|mlir'; then
  echo "FAIL: $bin links LLVM/MLIR shared libraries"
  exit 1
fi
if nm -C "$bin" 2>/dev/null | grep -E ' (llvm|mlir)::' | head -5 | grep .; then
  echo "FAIL: $bin contains LLVM/MLIR symbols"
  exit 1
fi
echo "OK: $bin has no LLVM/MLIR dependency"
