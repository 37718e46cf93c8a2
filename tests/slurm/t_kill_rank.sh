#!/bin/sh
# A rank killed with kill -9 under srun --argus=on (tests/integration/t_kill_rank.sh is the
# mpirun twin). srun itself would keep the other tasks (KillOnBadExit=0), but slurmstepd's
# mpi/pmix plugin, the only one Debian's Open MPI works with, SIGKILLs the whole step when
# it loses a task's PMIx connection ("_errhandler ... status = -61"), whatever
# --kill-on-bad-exit, -K0 or --no-kill say; seen about 1 s after the death here. So no rank
# writes a last report: the report.json on disk must already name the dead rank, from the
# first step it did not deliver. It does, with the default settings, because the rank's
# parent hears nothing for ARGUS_SILENCE_MS (500 ms; reduce/treemsg.h), the mark goes up at
# once and rank 0 rewrites report.json when a mark comes in. Where the step lives on
# (another MPI plugin), the job is ended as a scheduler ends it (scancel).
. "$(dirname "$0")/lib.sh"
cluster_start 6897
plug "libdir=$LIBDIR" "outdir=$WORK/out" window=10
unset ARGUS_DEADLINE_MS ARGUS_SILENCE_MS || true
# rank 9 is a leaf under rank 2 (fan-in 4); 40 ms steps: its windows up to step 29 are out
# well before it dies at step 35
t0=$(date +%s)
timeout 60 srun -Q --kill-on-bad-exit=0 --argus=on -J killjob -n 16 "$SIM" --tp 2 --pp 2 \
    --dp 4 --microbatches 4 --steps 60 --pace-ms 40 --truth "$WORK/truth.json" \
    --inject crash:rank=9,step=35 >"$WORK/sim.out" 2>"$WORK/sim.err" &
job=$!

named() {
    python3 - "$WORK"/out/argus-*/report.json <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(1)
sys.exit(0 if any(m["rank"] == 9 for m in r["job"]["missing_ranks"]) else 1)
PY
}
i=0
while kill -0 $job 2>/dev/null && ! named; do
    i=$((i + 1))
    [ $i -lt 400 ] || { scancel -n killjob || true; fail "rank 9 not named in 40 s"; }
    sleep 0.1
done
if kill -0 $job 2>/dev/null; then # the step lives on: end it as a scheduler would
    scancel -n killjob
fi
rc=0
wait $job || rc=$?
[ $rc != 0 ] || fail "srun ended 0 after a task was killed"
[ $rc != 124 ] || fail "srun ran past 60 s"
[ $(($(date +%s) - t0)) -lt 45 ] || fail "the killed job took $(($(date +%s) - t0)) s"
grep -q "task 9: Killed" "$WORK/sim.err" || { cat "$WORK/sim.err" >&2; fail "task 9 not killed"; }
dir=$(ls -d "$WORK"/out/argus-*.0) || { cat "$WORK/sim.err" >&2; fail "no argus-<jobid>.0"; }
wrong() { cat "$WORK/sim.err" >&2; cat "$dir/report.json" >&2; fail "$1"; }
python3 "$top_srcdir/tests/integration/check_killed.py" "$dir/report.json" 9 35 16 ||
    wrong "report after kill -9 is wrong"
grep -q "rank 2: rank 9 (and the ranks below it) sent nothing, not even a sign of life" \
    "$WORK/sim.err" || wrong "no line naming the silent rank"
exit 0
