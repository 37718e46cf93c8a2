#!/bin/sh
# What rank 0's Argus thread costs per window while a job steps (issue 19, "Overhead on a
# real job"): 2 ranks of a Python program that never calls MPI_Init (step_app.py) mark
# 20 ms steps (windows of 10: 5 a second); over 4 s of them each rank measures the CPU
# time and the wake-ups of its Argus thread "argus-reduce" (reduce/agent.c) per window.
# Rank 0 analyses every window and rewrites the provisional report's files at the pace of
# reduce/reportpace.h (0.5 % of the time); before, every window rewrote them (some fifteen
# files, each fsync'ed): 10 ms of CPU per window here, 1.2-2.5 ms paced. Bound: 5 ms.
# The wake-ups are printed, not judged (they vary with the two ranks' timing).
# Skipped (77) without /usr/bin/python3.
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: no $PY"; exit 77; }
. "$(dirname "$0")/lib.sh"
export ARGUS_MPI_SELF_INIT_MS=0 ARGUS_WINDOW=10
BOUND_MS=5
ARGUS_JOBID="step-cost-$$" timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 2 "$PY" "$top_srcdir/tests/integration/step_app.py" --window 10 \
    --step-ms 20 --measure-s 4 >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stdout" "$WORK/stderr" >&2; fail "job failed"; }
cat "$WORK/stdout"
rc=0
"$PY" - "$WORK/stdout" $BOUND_MS <<'PY' || rc=$?
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
bound = float(sys.argv[2])
if len(rows) != 2 or not all(r["active"] and r["windows"] >= 10 for r in rows):
    print("ERROR (precondition): want 2 ranks with Argus active over 10 windows, got %s" % rows)
    sys.exit(99)
ok = True
for r in sorted(rows, key=lambda r: r["rank"]):
    t = r["threads"].get("argus-reduce")
    if t is None:
        print("ERROR (precondition): rank %d has no thread argus-reduce" % r["rank"])
        sys.exit(99)
    cpu = t["cpu_ms"] / r["windows"]
    print("rank %d argus-reduce: %.2f ms CPU and %.1f wake-ups per window (%d windows)%s"
          % (r["rank"], cpu, t["wakeups"] / r["windows"], r["windows"],
             "; bound %.0f ms" % bound if r["rank"] == 0 else ""))
    ok &= r["rank"] != 0 or cpu <= bound
sys.exit(0 if ok else 1)
PY
[ $rc = 99 ] && exit 99
[ $rc = 0 ] || fail "rank 0's Argus thread costs more than $BOUND_MS ms of CPU per window"
exit 0
