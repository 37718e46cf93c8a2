#!/bin/sh
# A rank killed with kill -9 (SIGKILL: no handler runs, no last message) while the job runs,
# under a launcher that keeps the other ranks (Open MPI's orte_abort_on_non_zero_status 0,
# as Slurm does by default: --kill-on-bad-exit=0). They wait on it in the application for
# ever, so no window comes from anyone and only the living ranks' signs of life reach their
# parents (reduce/treemsg.h, docs/ALGORITHMS.md "Missing data"). Rank 0 must name the dead
# rank in report.json's missing_ranks, from the first step it did not deliver, a few
# deadlines after it died, with no verdict resting on the gap; the job is then ended as a
# scheduler ends it (SIGTERM) and the report stays.
. "$(dirname "$0")/lib.sh"
export OMPI_MCA_orte_abort_on_non_zero_status=0
export ARGUS_DEADLINE_MS=500
jobid="kill-$$"
REPORT_DIR="$WORK/out/argus-$jobid"
# rank 9 is a leaf under rank 2 (fan-in 4): its mark goes up in rank 2's sign of life,
# since rank 2's own application is stuck too. 40 ms steps: its windows up to step 29 are
# out well before it dies at step 35.
ARGUS_JOBID=$jobid timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 16 "$SIM" --tp 2 --pp 2 --dp 4 --microbatches 4 --steps 60 --pace-ms 40 \
    --truth "$WORK/truth.json" --inject crash:rank=9,step=35 >"$WORK/stdout" 2>"$WORK/stderr" &
job=$!

named() {
    python3 - "$REPORT_DIR/report.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(1)
sys.exit(0 if any(m["rank"] == 9 for m in r["job"]["missing_ranks"]) else 1)
PY
}
i=0
while ! named; do
    i=$((i + 1))
    if [ $i -gt 60 ] || ! kill -0 $job 2>/dev/null; then
        kill -TERM $job 2>/dev/null || true
        wait $job || true
        cat "$WORK/stderr" >&2
        [ -f "$REPORT_DIR/report.json" ] && cat "$REPORT_DIR/report.json" >&2
        fail "report.json does not name rank 9 missing ${i}s after it was killed"
    fi
    sleep 1
done
kill -0 $job 2>/dev/null || fail "the job ended by itself: the launcher tore it down"
kill -TERM $job
wait $job && fail "the job should have failed"
# the launcher's teardown of the ranks may outlast it: the report is read once they are gone
# (the ranks' command lines name $WORK/truth.json; the bracket keeps grep's own out)
i=0
while grep -qs "$WORK/truth.jso[n]" /proc/[0-9]*/cmdline && [ $i -lt 60 ]; do
    sleep 0.5
    i=$((i + 1))
done
wrong() { cat "$WORK/stderr" >&2; fail "$1"; }
python3 "$top_srcdir/tests/integration/check_killed.py" "$REPORT_DIR/report.json" 9 35 16 ||
    wrong "report after kill -9 is wrong"
grep -q "rank 2: rank 9 (and the ranks below it) sent nothing, not even a sign of life" \
    "$WORK/stderr" || { cat "$WORK/stderr" >&2; fail "no line naming the silent rank"; }
