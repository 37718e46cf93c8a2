#!/bin/sh
# Argus's NCCL profiler plugin (tracer/nccl_profiler.c) against a driver that plays NCCL's
# side of the contract (tests/tracer/nccl_profiler_driver.c): each API version NCCL may
# pick (v6, v5, v4), chained to v6, v5-only and v4-only plugins that count what reaches them, a
# v4-only NCCL picking the plugin's v4 table, a NCCL whose plugin is the v4-only one (the
# loader's fallback), the plugin without libargus.so in the process (records nothing,
# still chains), a chain target that cannot be loaded (one line, records still made),
# a chain that names Argus's own plugin (no recursion), and the real libargus.so
# preloaded under the plugin (its sink found by name).
set -eu
: "${top_builddir:?run through make check}"
t="$top_builddir/tests/tracer"
plugin="$top_builddir/.libs/libargus_nccl.so"
chain6="$t/.libs/libncclp_chain6.so"
chain4="$t/.libs/libncclp_chain4.so"
chain5="$t/.libs/libncclp_chain5.so"
drv="$t/nccl_profiler_driver"
bare="$t/nccl_profiler_bare"
for f in "$plugin" "$chain6" "$chain5" "$chain4" "$drv" "$bare"; do
    [ -e "$f" ] || { echo "FAIL: missing $f" >&2; exit 1; }
done
unset ARGUS_NCCL_PROFILER_CHAIN || true
ARGUS_MODE=on
export ARGUS_MODE
fails=0

run() { # expect-version label command...
    want=$1 label=$2
    shift 2
    if out=$("$@" 2>&1); then
        if echo "$out" | grep -q "^ok: NCCL side v$want,"; then
            echo "pass: $label: $(echo "$out" | tail -n 1)"
            return 0
        fi
    fi
    echo "FAIL: $label:" >&2
    echo "$out" >&2
    fails=$((fails + 1))
}

run 6 "v6" "$drv" "$plugin" 6 pool
run 5 "v5" "$drv" "$plugin" 5
run 4 "v4 (an older NCCL)" "$drv" "$plugin" 4
run 6 "v6 chained to v6" env ARGUS_NCCL_PROFILER_CHAIN="$chain6" "$drv" "$plugin" 6
run 6 "v6 chained to v4" env ARGUS_NCCL_PROFILER_CHAIN="$chain4" "$drv" "$plugin" 6
run 5 "v5 chained to v4" env ARGUS_NCCL_PROFILER_CHAIN="$chain4" "$drv" "$plugin" 5
run 6 "v6 chained to v5" env ARGUS_NCCL_PROFILER_CHAIN="$chain5" "$drv" "$plugin" 6
run 4 "v4 chained to v5" env ARGUS_NCCL_PROFILER_CHAIN="$chain5" "$drv" "$plugin" 4
run 4 "v4 chained to v6" env ARGUS_NCCL_PROFILER_CHAIN="$chain6" "$drv" "$plugin" 4
run 6 "ARGUS_MODE=off: chains only" env ARGUS_MODE=off ARGUS_NCCL_PROFILER_CHAIN="$chain6" \
    "$drv" "$plugin" 6
run 6 "ARGUS_MODE unset: off" env -u ARGUS_MODE "$drv" "$plugin" 6
run 6 "no libargus.so" "$bare" "$plugin" 6
run 6 "no libargus.so, chained" env ARGUS_NCCL_PROFILER_CHAIN="$chain6" "$bare" "$plugin" 6
# the real libargus.so preloaded: the plugin finds its sink with dlsym(RTLD_DEFAULT)
lib="$top_builddir/.libs/libargus.so"
if [ -e "$lib" ]; then
    run 6 "libargus.so preloaded" env LD_PRELOAD="$lib" ARGUS_LOG=error DRV_WANT_LIBARGUS=1 \
        ARGUS_NCCL_PROFILER_CHAIN="$chain4" "$bare" "$plugin" 6
fi
run 6 "chain names Argus's own plugin" env ARGUS_NCCL_PROFILER_CHAIN="$plugin" \
    "$drv" "$plugin" 6

# the chained plugins agree with what they were built as, and a v4-only plugin is found
# by NCCL's fallback from v6 (the chained counts are read from its own table)
out=$(env ARGUS_NCCL_PROFILER_CHAIN="$chain4" "$drv" "$plugin" 6 2>&1) || true
echo "$out" | grep -q "chained plugin v4:" || {
    echo "FAIL: chain4 not used as v4: $out" >&2; fails=$((fails + 1)); }
out=$(env ARGUS_NCCL_PROFILER_CHAIN="$chain6" "$drv" "$plugin" 4 2>&1) || true
echo "$out" | grep -q "chained plugin v6:" || {
    echo "FAIL: chain6 not used as v6: $out" >&2; fails=$((fails + 1)); }
out=$("$bare" "$chain4" 6 2>&1) || true
echo "$out" | grep -q "^ok: NCCL side v4," || {
    echo "FAIL: a v4-only plugin not found by v6 -> v5 -> v4 fallback: $out" >&2
    fails=$((fails + 1)); }

# a chain target that cannot be loaded: one line naming it; Argus still records
out=$(env ARGUS_NCCL_PROFILER_CHAIN=/nonexistent/libnope.so "$drv" "$plugin" 6 2>&1) || {
    echo "FAIL: missing chain target broke the plugin: $out" >&2; fails=$((fails + 1)); }
n=$(echo "$out" | grep -c "argus: NCCL profiler plugin /nonexistent/libnope.so" || true)
[ "$n" = 1 ] || { echo "FAIL: expected one line about the chain target, got $n: $out" >&2
    fails=$((fails + 1)); }

[ "$fails" = 0 ] || exit 1
