#!/bin/sh
# Host call stacks of a native program (tests/stacks/native_app.c: argus.h marks, no MPI
# calls) under argus-run: rank 2 busy-loops 0.5 s in stall_here() at three steps; the
# report's host_stall carries native frames with stall_here in its top source stack.
# stall_here is a static function (no dynamic symbol): named from the ELF symbol table.
TIMING_ALONE=1 # wall-clock timing judged: one such test at a time (lib.sh)
. "$(dirname "$0")/../integration/lib.sh"
APP="$top_builddir/tests/stacks/native_app"
export ARGUS_SILENCE_MS=${ARGUS_SILENCE_MS:-30000}
job="stacks-native-$$"
ARGUS_JOBID=$job timeout 240 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 4 "$APP" 140 2 70,90,110 500 >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stdout" "$WORK/stderr" >&2; fail "job failed"; }
python3 "$top_srcdir/tests/stacks/check_stacks.py" "$WORK/out/argus-$job" stall native 2 \
    stall_here || fail "the report does not name stall_here in rank 2's native frames"
