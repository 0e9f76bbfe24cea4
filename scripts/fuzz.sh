#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang-14, -DCORTIQ_FUZZ=ON, in build-fuzz/), runs
# each over its committed corpus once (ctest: the regression inputs), then fuzzes each for a
# fixed time. Fails on any crash, sanitizer error, leak or timeout; the input that caused it is
# saved as build-fuzz/findings/TARGET-crash-* (and shown how to reproduce).
#
#   scripts/fuzz.sh [--time SECONDS per target (default 60)] [--jobs N] [--build-dir DIR]
#                   [--no-build] [TARGET...]
#
# New inputs that add coverage go to build-fuzz/corpus/TARGET/ (kept between runs, never into
# the committed corpus); copy an interesting one into tests/fuzz/corpus/TARGET/ by hand, and a
# crash input as regression-<what>. Targets are listed in build-fuzz/fuzz_targets.txt (one
# cortiq_fuzz_target line each in tests/fuzz/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
time_per_target=60
jobs=1
build=build-fuzz
do_build=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_per_target=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

if [ "$do_build" = 1 ]; then
  mkdir -p "$build"
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCORTIQ_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 1; }
  cmake --build "$build"
fi
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < "$build/fuzz_targets.txt"

# Symbolized reports; any leak fails the run (LeakSanitizer is on by default with ASan).
symbolizer=$(command -v llvm-symbolizer-14 || command -v /usr/lib/llvm-15/bin/llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# The committed corpora first: every regression input must still pass.
ctest --test-dir "$build" --output-on-failure -R '^fuzz_corpus\.'

mkdir -p "$build/findings"
failed=()
for target in "${targets[@]}"; do
  seeds=tests/fuzz/corpus/$target
  work=$build/corpus/$target
  mkdir -p "$work"
  dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
  log=$build/findings/$target.log
  echo "fuzz.sh: $target for ${time_per_target}s (log: $log)"
  # -timeout: one input taking more than 10 s is a hang; -rss_limit_mb / -malloc_limit_mb: a
  # file of at most -max_len bytes that makes the code use more than 2 GiB, or ask for more than
  # 1 GiB at once, is a finding. -jobs > 1 runs that many fuzzing processes on the same corpus.
  parallel=()
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  if "$build/bin/$target" "$work" "$seeds" "${dict[@]}" "${parallel[@]}" \
      -max_total_time="$time_per_target" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -print_final_stats=1 -artifact_prefix="$build/findings/$target-" > "$log" 2>&1; then
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tail -3 || true
  else
    echo "fuzz.sh: $target FAILED; the end of its log:" >&2
    tail -40 "$log" >&2
    for input in "$build/findings/$target-"*; do
      [ -f "$input" ] && echo "  reproduce: $build/bin/$target $input" >&2
    done
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${time_per_target}s each: no crash, leak or timeout"
