#!/bin/sh
# The host stacks' knobs (docs/ARCHITECTURE.md, "Environment contract"): the CPython job of
# t_python.sh (rank 2 spends 0.5 s in load_batch_slowly() at three steps) keeps its
# host_stall but carries no stacks with ARGUS_STACKS=off, nor with ARGUS_STACKS_MIN_MS
# above the stall (5000 ms); a bad value of either is refused by argus-run in one line
# naming the variable (exit 2).
TIMING_ALONE=1 # wall-clock timing judged: one such test at a time (lib.sh)
. "$(dirname "$0")/../integration/lib.sh"
PY=/usr/bin/python3
APP="$top_srcdir/tests/stacks/stall_app.py"
CHECK="$PY $top_srcdir/tests/stacks/check_stacks.py"
export ARGUS_SILENCE_MS=${ARGUS_SILENCE_MS:-30000}
for bad in "ARGUS_STACKS=maybe" "ARGUS_STACKS_MIN_MS=5" "ARGUS_STACKS_MIN_MS=12x"; do
    rc=0
    env "$bad" "$ARGUS_RUN" --outdir "$WORK/bad" -- true >"$WORK/bad.out" 2>&1 || rc=$?
    [ $rc = 2 ] || { cat "$WORK/bad.out" >&2; fail "$bad: exit $rc, want 2"; }
    n=$(grep -c "${bad%%=*}=" "$WORK/bad.out" || true)
    [ "$n" = 1 ] || { cat "$WORK/bad.out" >&2; fail "$bad: $n lines name it, want 1"; }
done
for mode in off high; do
    job="stacks-knob-$mode-$$"
    if [ $mode = off ]; then knob="ARGUS_STACKS=off"; else knob="ARGUS_STACKS_MIN_MS=5000"; fi
    env "$knob" ARGUS_JOBID=$job timeout 240 "$ARGUS_RUN" --outdir "$WORK/out" -- \
        "$MPIRUN" -np 4 "$PY" "$APP" --steps 140 --stall-rank 2 --stall-steps 70,90,110 \
        --stall-ms 500 >"$WORK/stdout-$mode" 2>"$WORK/stderr-$mode" ||
        { cat "$WORK/stdout-$mode" "$WORK/stderr-$mode" >&2; fail "$mode: job failed"; }
    $CHECK "$WORK/out/argus-$job" owned 2 || fail "$knob: stacks despite it"
done
echo "PASS: ARGUS_STACKS=off and ARGUS_STACKS_MIN_MS hold; bad values refused"
