#!/bin/sh
# ctest capi_c_host_pkg_config: compiles examples/c_host/main.c as C99 with the flags of the
# installed cortiq.pc (no CMake), then runs it on the golden tokens and checks it against the
# reference logits (c_host exits non-zero beyond 1e-3).
#   c_host_pkg_config.sh PKG_CONFIG CC PREFIX MAIN.c OUT MODEL TOKENS REF
set -eu
pkg_config=$1 cc=$2 prefix=$3 src=$4 out=$5 model=$6 tokens=$7 ref=$8
pc=$(find "$prefix" -name cortiq.pc | head -n 1)
[ -n "$pc" ] || { echo "no cortiq.pc under $prefix" >&2; exit 1; }
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
cflags=$("$pkg_config" --cflags cortiq)
libs=$("$pkg_config" --libs cortiq)
libdir=$("$pkg_config" --variable=libdir cortiq)
echo "cortiq $("$pkg_config" --modversion cortiq): cflags '$cflags', libs '$libs'"
# shellcheck disable=SC2086  # flags are word lists
"$cc" -std=c99 -Wall -Wextra -Werror -o "$out" "$src" $cflags $libs -lm "-Wl,-rpath,$libdir"
"$out" "$model" "$tokens" "$ref"
