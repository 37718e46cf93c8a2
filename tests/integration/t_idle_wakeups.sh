#!/bin/sh
# An idle Argus sleeps until there is work (issue 19, "Overhead on a real job"): 2 ranks of
# a Python program that never calls MPI_Init (idle_app.py) sleep 4 s between steps and
# then 4 s inside an open step; over the last 3 s of each (the first holds a stall's
# host-stack samples), the voluntary context switches of the Argus
# thread ("argus-reduce", reduce/agent.c) and of the host-stack watcher ("argus-stacks",
# tracer/hoststack.c) are counted. With ARGUS_SILENCE_MS=4000 (a sign of life every
# 500 ms) the Argus thread wakes about 4 times a second and the watcher 5 (10 in a stall);
# the fixed-interval polling before woke them 60-100 times a second (measured 58-100/s on
# 2 busy cores). The bound, 25/s, is far from both; a loaded machine only lowers the count
# of the old loop (late timers) and does not raise the new one's (deadline wake-ups).
# Skipped (77) without /usr/bin/python3.
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: no $PY"; exit 77; }
. "$(dirname "$0")/lib.sh"
export ARGUS_MPI_SELF_INIT_MS=0 ARGUS_SILENCE_MS=4000
# Open MPI's idle yield (lib.sh) is a voluntary switch per MPI poll on a busy machine,
# not a wake-up: off, so that the count is of the threads' own sleeps.
export OMPI_MCA_mpi_yield_when_idle=0
BOUND=25
for where in between step; do
    ARGUS_JOBID="idle-$where-$$" timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
        "$MPIRUN" -np 2 "$PY" "$top_srcdir/tests/integration/idle_app.py" --where $where \
        --idle-s 3 >"$WORK/stdout-$where" 2>"$WORK/stderr-$where" ||
        { cat "$WORK/stdout-$where" "$WORK/stderr-$where" >&2; fail "$where: job failed"; }
    cat "$WORK/stdout-$where"
    rc=0
    "$PY" - "$WORK/stdout-$where" $where $BOUND <<'PY' || rc=$?
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
bound = float(sys.argv[3])
if len(rows) != 2 or not all(r["active"] for r in rows):
    print("ERROR (precondition): want 2 ranks with Argus active, got %s" % rows)
    sys.exit(99)
ok = True
for r in rows:
    for name in ("argus-reduce", "argus-stacks"):
        if name not in r["threads"]:
            print("ERROR (precondition): rank %d has no thread %s" % (r["rank"], name))
            sys.exit(99)
        rate = r["threads"][name]
        print("rank %d %s (%s): %.1f wake-ups/s, bound %.0f" % (r["rank"], name, sys.argv[2],
                                                                 rate, bound))
        ok &= rate < bound
sys.exit(0 if ok else 1)
PY
    [ $rc = 99 ] && exit 99
    [ $rc = 0 ] || fail "$where: Argus's threads wake more than $BOUND times a second when idle"
done
exit 0
