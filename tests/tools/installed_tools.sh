#!/bin/sh
# ctest tools_install: `cmake --install --component tools` into a fresh PREFIX, then README
# command (1) with the installed binaries only (synth -> compile -> run -p): every tool is
# installed, starts outside the build tree (its shared libraries found), and the main job
# prints text.
#   installed_tools.sh CMAKE BUILD_DIR PREFIX WORK_DIR
set -eu
cmake=$1 build=$2 prefix=$3 work=$4
rm -rf "$prefix" "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$prefix" --component tools >/dev/null
for tool in cortiq-bench cortiq-chat cortiq-compile cortiq-dump cortiq-import cortiq-run \
            cortiq-server cortiq-synth cortiq-tokenize; do
  [ -x "$prefix/bin/$tool" ] || { echo "not installed: $prefix/bin/$tool" >&2; exit 1; }
  # Outside the build tree, with no LD_LIBRARY_PATH: the installed binary must find its libraries.
  version=$(cd "$work" && env -u LD_LIBRARY_PATH "$prefix/bin/$tool" --version) ||
    { echo "$tool --version failed" >&2; exit 1; }
  case $version in
    *"$tool"*) ;;
    *) echo "$tool --version does not name the tool: $version" >&2; exit 1 ;;
  esac
done
cd "$work"
"$prefix/bin/cortiq-synth" --preset tiny -o tiny >/dev/null
"$prefix/bin/cortiq-compile" tiny -o tiny.cortiq >/dev/null 2>compile.err
"$prefix/bin/cortiq-run" tiny.cortiq -p "Once upon a time" -n 8 --seed 1 >out.txt 2>err.txt
# Text came out (the random tiny model's text is gibberish, but non-empty UTF-8), and the
# llama.cpp-style timings went to stderr.
[ -s out.txt ] || { echo "cortiq-run -p printed no text" >&2; cat err.txt >&2; exit 1; }
grep -q "eval time" err.txt || { echo "no timings on stderr:" >&2; cat err.txt >&2; exit 1; }
echo "installed tools OK; cortiq-run printed $(wc -c <out.txt) bytes"
