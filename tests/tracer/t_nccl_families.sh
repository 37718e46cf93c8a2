#!/bin/sh
# The family of each communicator Argus's NCCL profiler plugin reports does not depend on
# the order a rank made its communicators in, nor on whether NCCL told the plugin inside
# the hooked ncclCommInitRank or outside it (tests/tracer/nccl_profiler_families.c: four
# ranks, four orders, one extra communicator on one stage), for each API version NCCL
# may pick (v6, v5, v4).
set -eu
: "${top_builddir:?run through make check}"
plugin="$top_builddir/.libs/libargus_nccl.so"
drv="$top_builddir/tests/tracer/nccl_profiler_families"
for f in "$plugin" "$drv"; do
    [ -e "$f" ] || { echo "FAIL: missing $f" >&2; exit 1; }
done
unset ARGUS_NCCL_PROFILER_CHAIN || true
fails=0
for v in 6 5 4; do
    if out=$("$drv" "$plugin" "$v" 2>&1) && echo "$out" | grep -q "^ok: plugin up to v$v,"; then
        echo "pass: v$v: $out"
    else
        echo "FAIL: v$v:" >&2
        echo "$out" >&2
        fails=$((fails + 1))
    fi
done
[ "$fails" = 0 ] || exit 1
