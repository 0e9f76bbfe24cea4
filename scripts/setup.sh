#!/usr/bin/env bash
# Installs the Debian 12 packages cortiq builds against. Idempotent: quiet and fast when
# everything is already installed.
#   scripts/setup.sh          the build and its tests
#   scripts/setup.sh --fuzz   also the fuzz build (tests/fuzz, scripts/fuzz.sh): clang 14 and
#                             libclang-rt-14-dev, which holds libFuzzer (libclang_rt.fuzzer*.a)
#                             and the sanitizer runtimes for clang 14 (clang-14 only recommends
#                             it, and recommendations are not installed here)
set -euo pipefail
packages=(
  cmake ninja-build g++ ccache python3
  libmlir-15-dev mlir-15-tools llvm-15-dev llvm-15-tools
  libhwy-dev libabsl-dev googletest libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev libutf8proc-dev libxxhash-dev pkg-config xz-utils
  libcpp-httplib-dev nlohmann-json3-dev
)
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    *) echo "setup: unknown option $arg (use --fuzz or nothing)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
