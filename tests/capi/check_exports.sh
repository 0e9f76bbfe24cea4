#!/bin/sh
# ctest capi_exports: libcortiq.so exports exactly the functions declared CORTIQ_API in cortiq.h
# (nothing of the runtime, ops, Abseil or Highway), versioned CORTIQ_<major>, and its SONAME is
# libcortiq.so.<CORTIQ_API_VERSION_MAJOR of cortiq.h>.
#   check_exports.sh LIBCORTIQ.so cortiq.h
set -eu
lib=$1 header=$2
soname=libcortiq.so.$(sed -n 's/^#define CORTIQ_API_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
# Defined dynamic symbols, without the version suffix and the version node itself (type A).
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u)
declared=$(sed -n 's/^CORTIQ_API .*[ *]\(cortiq_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u)
status=0
if [ "$exported" != "$declared" ]; then
  echo "exported symbols differ from cortiq.h (< exported, > declared):" >&2
  printf '%s\n' "$exported" > "${TMPDIR:-/tmp}/cortiq_exported.$$"
  printf '%s\n' "$declared" | diff "${TMPDIR:-/tmp}/cortiq_exported.$$" - >&2 || true
  rm -f "${TMPDIR:-/tmp}/cortiq_exported.$$"
  status=1
fi
unversioned=$(nm -D --defined-only "$lib" |
  awk '$2 != "A" && $3 !~ /@@CORTIQ_[0-9]+$/ { print $3 }')
if [ -n "$unversioned" ]; then
  echo "symbols without the CORTIQ_<major> version: $unversioned" >&2
  status=1
fi
actual_soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
if [ "$actual_soname" != "$soname" ]; then
  echo "SONAME is '$actual_soname', expected '$soname'" >&2
  status=1
fi
if [ $status -eq 0 ]; then
  count=$(printf '%s\n' "$exported" | wc -l)
  echo "$count symbols exported, all cortiq_* and versioned; SONAME $actual_soname"
fi
exit $status
