#!/bin/sh
# Host call stacks of a real CPython job (Debian's python3) under argus-run: 4 ranks marking
# steps and phases through python/argus.py (tests/stacks/stall_app.py); rank 2 spends 0.5 s
# in load_batch_slowly() at three steps. The report's host_stall carries the Python stack
# with that function, its file and line as the top source stack, beside what the healthy
# peers rank 0 asked were doing meanwhile (elsewhere), and stacks.folded has it;
# the same job without the stall carries no stacks at all; and a program that owns the
# sampler's signal (SIGRTMAX-3) keeps it: Argus stands down with one line per rank, the
# job runs as before and its host_stall comes without stacks.
TIMING_ALONE=1 # wall-clock timing judged: one such test at a time (lib.sh)
. "$(dirname "$0")/../integration/lib.sh"
PY=/usr/bin/python3
APP="$top_srcdir/tests/stacks/stall_app.py"
CHECK="$PY $top_srcdir/tests/stacks/check_stacks.py"
export ARGUS_SILENCE_MS=${ARGUS_SILENCE_MS:-30000}
line=$(grep -n "STALL-LINE" "$APP" | cut -d: -f1)
for mode in stall healthy owned; do
    job="stacks-py-$mode-$$"
    args="--steps 140"
    [ $mode = healthy ] || args="$args --stall-rank 2 --stall-steps 70,90,110 --stall-ms 500"
    [ $mode = owned ] && args="$args --own-signal"
    ARGUS_JOBID=$job timeout 240 "$ARGUS_RUN" --outdir "$WORK/out" -- \
        "$MPIRUN" -np 4 "$PY" "$APP" $args >"$WORK/stdout-$mode" 2>"$WORK/stderr-$mode" ||
        { cat "$WORK/stdout-$mode" "$WORK/stderr-$mode" >&2; fail "$mode: job failed"; }
    # mpirun may interleave the ranks' lines: count matches, not lines
    n=$(grep -o "done 140 steps, argus active" "$WORK/stdout-$mode" | wc -l)
    [ "$n" = 4 ] ||
        { cat "$WORK/stdout-$mode" "$WORK/stderr-$mode" >&2; fail "$mode: $n of 4 ranks active"; }
    if [ $mode = stall ]; then
        $CHECK "$WORK/out/argus-$job" stall python 2 load_batch_slowly stall_app.py "$line" ||
            fail "stall: the report does not name load_batch_slowly at stall_app.py:$line"
    elif [ $mode = healthy ]; then
        $CHECK "$WORK/out/argus-$job" healthy || fail "healthy: stacks where none belong"
    else
        n=$(grep -c "host stacks off: signal .* has another handler" "$WORK/stderr-$mode" || true)
        [ "$n" = 4 ] || { cat "$WORK/stderr-$mode" >&2; fail "owned: said $n times, want 4"; }
        $CHECK "$WORK/out/argus-$job" owned 2 || fail "owned: stacks despite the signal"
    fi
done
