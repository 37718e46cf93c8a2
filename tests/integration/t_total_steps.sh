#!/bin/sh
# argus_set_total_steps() on a rank other than 0 reaches rank 0's forecast in-band (the
# rank info record, common/wire.h: planned_steps), on every path: direct, through an
# intermediate rank that condenses (ARGUS_FANIN=2, ARGUS_CONDENSE=0: rank 3's records pass
# rank 1), and from the spool (argus-analyze). Only rank 3 of 4 calls it, after step 5:
# report.json's forecast has steps_total N. When two ranks disagree, rank 0 uses the
# latest and says so once, in one line. Before the rank info carried the plan, only rank
# 0's own call counted and these reports had per_1000_steps. ARGUS_TOTAL_STEPS travels
# in the rank info too: alone it is the plan of the spool (argus-analyze, argus-predict),
# with argus_set_total_steps the program's value wins.
. "$(dirname "$0")/lib.sh"
APP="$top_builddir/tests/integration/total_steps_app"
AN="$top_builddir/argus-analyze"
unset ARGUS_TOTAL_STEPS
export ARGUS_WINDOW=5
run() { # NAME ARGS... (of the app after STEPS)
    name=$1; shift
    ARGUS_JOBID="plan-$name-$$" timeout 180 "$ARGUS_RUN" --outdir "$WORK/out" -- \
        "$MPIRUN" -np 4 "$APP" 40 "$@" >"$WORK/stdout-$name" 2>"$WORK/stderr-$name" ||
        { cat "$WORK/stdout-$name" "$WORK/stderr-$name" >&2; fail "$name: job failed"; }
    n=$(grep -c "done 40 steps" "$WORK/stdout-$name" || true)
    [ "$n" = 4 ] || { cat "$WORK/stdout-$name" "$WORK/stderr-$name" >&2; fail "$name: $n of 4 finished"; }
}
check() { # REPORT_JSON WANT_TOTAL NAME [WANT_FROM: the assumptions say the plan's source]
    python3 - "$1" "$2" "$3" "${4-}" <<'PY' || fail "$3: forecast wrong"
import json, sys
r = json.load(open(sys.argv[1]))
f = r.get("forecast")
assert f, "no forecast"
assert f["per_1000_steps"] is False and f["steps_total"] == int(sys.argv[2]), f
if sys.argv[4]:
    said = "the planned %s steps from %s" % (sys.argv[2], sys.argv[4])
    assert said in f["assumptions"], (said, f["assumptions"])
# the steps seen, or the last step number + 1 when marks came before Argus saw any
# (the Python program's first steps run while Argus initialises MPI)
want = max(r["steps"]["count"], r["steps"]["last"] + 1)
assert f["steps_done"] == want, (f["steps_done"], want, r["steps"])
print(sys.argv[3], "steps_total", f["steps_total"], "done", f["steps_done"], "left",
      f["steps_left"])
PY
}
# direct: every rank sends to rank 0
run direct 3:5:12345
check "$WORK/out/argus-plan-direct-$$/report.json" 12345 direct "argus_set_total_steps on rank 3"
# the spool: argus-analyze reads the plan from the recorded rank info
"$AN" -o "$WORK/offline" "$WORK/out/argus-plan-direct-$$/summaries.argus" \
    >"$WORK/offline.log" 2>&1 || { cat "$WORK/offline.log" >&2; fail "argus-analyze failed"; }
check "$WORK/offline/report.json" 12345 spool "argus_set_total_steps on rank 3"
# argus-predict without --steps takes the same recorded plan (before: per 1,000 steps)
"$top_builddir/argus-predict" --json "$WORK/out/argus-plan-direct-$$/summaries.argus" \
    >"$WORK/predict.json" 2>"$WORK/predict.log" || { cat "$WORK/predict.log" >&2; fail "argus-predict failed"; }
python3 - "$WORK/predict.json" <<'PY' || fail "argus-predict did not take the recorded plan"
import json, sys
p = json.load(open(sys.argv[1]))
assert 12345 - 200 < p["steps_left"] < 12345, p  # 1000 without the plan
print("predict steps_left", p["steps_left"])
PY
# condensed, through rank 1
ARGUS_FANIN=2 ARGUS_CONDENSE=0 run condensed 3:5:777
d="$WORK/out/argus-plan-condensed-$$"
python3 - "$d/reduce.json" <<'PY' || fail "condensed: the tree did not condense"
import json, sys
c = json.load(open(sys.argv[1]))["condense"]
assert c["on"], c
PY
check "$d/report.json" 777 condensed
# two ranks disagree: the latest (rank 3's, after step 9) is used, said once in one line
run disagree 1:2:5000 3:9:9000
check "$WORK/out/argus-plan-disagree-$$/report.json" 9000 disagree
n=$(grep -c "ranks disagree on the planned steps" "$WORK/stderr-disagree" || true)
[ "$n" = 1 ] || { cat "$WORK/stderr-disagree" >&2; fail "disagreement said $n times, want 1"; }
grep "ranks disagree" "$WORK/stderr-disagree" | grep -q "rank 1: 5000, rank 3: 9000" ||
    { cat "$WORK/stderr-disagree" >&2; fail "disagreement line wrong"; }
# the Python shim (python/argus.py) passes the call through on any rank: a program that
# never calls MPI_Init (Argus initialises MPI on its own thread), rank 3 tells
if [ -x /usr/bin/python3 ]; then
    cat >"$WORK/plan_app.py" <<PY
import os, sys, time
sys.path.insert(0, "$top_srcdir/python")
import argus
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
s = 0
while not argus.active() and s < 3000:  # until Argus has MPI up (on its own thread)
    with argus.step(s):
        time.sleep(0.01)
    s += 1
for k in range(40):
    with argus.step(s + k):
        time.sleep(0.01)
    if rank == 3 and k == 5:
        argus.set_total_steps(4321)
print("rank %d: done 40 steps" % rank)
PY
    name=python
    ARGUS_MPI_SELF_INIT_MS=0 ARGUS_JOBID="plan-$name-$$" timeout 180 "$ARGUS_RUN" \
        --outdir "$WORK/out" -- "$MPIRUN" -np 4 /usr/bin/python3 "$WORK/plan_app.py" \
        >"$WORK/stdout-$name" 2>"$WORK/stderr-$name" ||
        { cat "$WORK/stdout-$name" "$WORK/stderr-$name" >&2; fail "$name: job failed"; }
    check "$WORK/out/argus-plan-$name-$$/report.json" 4321 python
fi
# nobody tells: per 1,000 steps (the report says so)
run none
python3 - "$WORK/out/argus-plan-none-$$/report.json" <<'PY' || fail "none: forecast wrong"
import json, sys
f = json.load(open(sys.argv[1]))["forecast"]
assert f["per_1000_steps"] is True and f["steps_total"] is None, f
PY
# ARGUS_TOTAL_STEPS alone: every rank's rank info carries it too (env_planned_steps), so the
# spool keeps it: argus-analyze and argus-predict on the spool plan those steps and the
# table says where they came from (before, only rank 0's live report knew them: per 1,000
# steps offline). With argus_set_total_steps too (rank 3, after step 5), the program's
# value wins live, offline and in argus-predict, though rank 0's record with only the
# environment's came in first.
predict_plan() { # NAME SPOOL WANT_TOTAL WANT_FROM
    "$top_builddir/argus-predict" --json "$2" >"$WORK/predict-$1.json" \
        2>"$WORK/predict-$1.log" ||
        { cat "$WORK/predict-$1.log" >&2; fail "$1: argus-predict failed"; }
    python3 - "$WORK/predict-$1.json" "$3" "$1" <<'PY' || fail "$1: argus-predict's plan wrong"
import json, sys
p, want = json.load(open(sys.argv[1])), int(sys.argv[2])
assert want - 200 < p["steps_left"] < want, (p["steps_left"], want)  # 1000: no plan
print(sys.argv[3], "predict steps_left", p["steps_left"])
PY
    "$top_builddir/argus-predict" "$2" >"$WORK/predict-$1.txt" 2>&1 ||
        { cat "$WORK/predict-$1.txt" >&2; fail "$1: argus-predict (table) failed"; }
    grep -q "^  assumed: the planned $3 steps from $4" "$WORK/predict-$1.txt" ||
        { cat "$WORK/predict-$1.txt" >&2; fail "$1: the table does not say the plan is from $4"; }
}
(export ARGUS_TOTAL_STEPS=2500; run envonly) || exit 1
d="$WORK/out/argus-plan-envonly-$$"
check "$d/report.json" 2500 envonly "ARGUS_TOTAL_STEPS as rank 0 read it"
"$AN" -o "$WORK/offline-envonly" "$d/summaries.argus" >"$WORK/offline-envonly.log" 2>&1 ||
    { cat "$WORK/offline-envonly.log" >&2; fail "envonly: argus-analyze failed"; }
check "$WORK/offline-envonly/report.json" 2500 envonly-spool "ARGUS_TOTAL_STEPS as rank 0 read it"
predict_plan envonly "$d/summaries.argus" 2500 "ARGUS_TOTAL_STEPS as rank 0 read it"
(export ARGUS_TOTAL_STEPS=2500; run envboth 3:5:777) || exit 1
d="$WORK/out/argus-plan-envboth-$$"
check "$d/report.json" 777 envboth "argus_set_total_steps on rank 3"
"$AN" -o "$WORK/offline-envboth" "$d/summaries.argus" >"$WORK/offline-envboth.log" 2>&1 ||
    { cat "$WORK/offline-envboth.log" >&2; fail "envboth: argus-analyze failed"; }
check "$WORK/offline-envboth/report.json" 777 envboth-spool "argus_set_total_steps on rank 3"
predict_plan envboth "$d/summaries.argus" 777 "argus_set_total_steps on rank 3"
echo ok
