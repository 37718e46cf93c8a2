#!/bin/sh
# argus-simtrain --nccl-groups (sim/ncclplay.c) loads the profiler plugin as NCCL does:
# NCCL_PROFILER_PLUGIN unset, naming nothing loadable, or a library without any
# ncclProfiler_v6/_v5/_v4 is one line on stderr and exit status 2 before any MPI work;
# a plugin exporting only v6, only v5 or only v4 (the chained test plugins of
# tests/tracer/) or Argus's own (all three) is played through a short 2-rank job.
. "$(dirname "$0")/lib.sh"
t="$top_builddir/tests/tracer/.libs"
plugin="$top_builddir/.libs/libargus_nccl.so"
for f in "$plugin" "$t/libncclp_chain6.so" "$t/libncclp_chain5.so" "$t/libncclp_chain4.so"; do
    [ -e "$f" ] || fail "missing $f"
done
args="--tp 2 --steps 3 --microbatches 2 --no-layout --nccl-groups"

refused() { # label, then NCCL_PROFILER_PLUGIN's value ("-" for unset), then the reason
    if [ "$2" = - ]; then
        (unset NCCL_PROFILER_PLUGIN; "$SIM" $args) >"$WORK/out" 2>"$WORK/err" && rc=0 || rc=$?
    else
        NCCL_PROFILER_PLUGIN=$2 "$SIM" $args >"$WORK/out" 2>"$WORK/err" && rc=0 || rc=$?
    fi
    [ "$rc" = 2 ] || fail "$1: exit $rc, want 2"
    [ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err" >&2; fail "$1: not one line"; }
    grep -q -- "--nccl-groups: .*$3" "$WORK/err" || { cat "$WORK/err" >&2; fail "$1: $3"; }
    echo "refused ($1): $(cat "$WORK/err")"
}
refused unset - "NCCL_PROFILER_PLUGIN is not set"
refused missing "$WORK/nothere.so" "cannot load it"
refused "no symbol" "$top_builddir/.libs/libargus.so" "no ncclProfiler_v6, _v5 or _v4"

for p in "$t/libncclp_chain6.so" "$t/libncclp_chain5.so" "$t/libncclp_chain4.so" "$plugin"
do
    NCCL_PROFILER_PLUGIN=$p timeout 120 "$MPIRUN" -np 2 "$SIM" $args \
        >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; fail "job with $p failed"; }
    echo "played: $(basename "$p")"
done
echo "pass: --nccl-groups loads the plugin as NCCL does and refuses in one line"
