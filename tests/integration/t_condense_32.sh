#!/bin/sh
# The condensing tree where it thins more (32 ranks, tp 2 x pp 2 x dp 8, ARGUS_CONDENSE=0:
# about 40 % of the cells reach rank 0 as rows only): link degradation of one DP group,
# (1,3,...,15) and of another (16,18,...,30) are each named as exactly one
# comm_degradation of that group over the injected steps; reduce.json shows the thin
# share. On condensed data analysis/l3comm.c values every DP group on its two reference
# members (dp 0 and 1) and judges no TP group (too few have references). Before it did,
# the first case gave only a step_regression (a group with a thin member was never
# judged) and a TP case gave false verdicts on other TP groups.
. "$(dirname "$0")/lib.sh"
export ARGUS_CONDENSE=0
run32() {
    ARGUS_JOBID=$1 timeout 300 "$ARGUS_RUN" --outdir "$WORK/out" -- \
        "$MPIRUN" -np 32 "$SIM" --tp 2 --pp 2 --dp 8 --microbatches 4 --steps 60 \
        --truth "$WORK/truth-$1.json" --inject "$2" >"$WORK/stdout" 2>"$WORK/stderr" ||
        { cat "$WORK/stderr" >&2; fail "simulated job $1 failed"; }
}
check() { # JOBID RANKS
    python3 - "$WORK/out/argus-$1" "$2" <<'PY' || fail "condensed diagnosis wrong ($1)"
import json, os, sys
d, want = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
c = json.load(open(os.path.join(d, "reduce.json")))["condense"]
assert c["on"] and c["thin"] >= 0.3 * c["rows"], c
an = json.load(open(os.path.join(d, "report.json")))["anomalies"]
assert len(an) == 1, [(a["kind"], a["ranks"], a["steps"]) for a in an]
a = an[0]
assert a["kind"] == "comm_degradation" and a["ranks"] == want, (a["kind"], a["ranks"])
assert a["steps"][0] <= 17 and a["steps"][1] >= 50, a["steps"]
print("ok", a["ranks"], a["steps"], "detected at", a["detected_at_step"], "thin",
      c["thin"], "of", c["rows"])
PY
    $SCORE "$WORK/out/argus-$1/report.json" "$WORK/truth-$1.json" ||
        fail "score.py rejects the report ($1)"
}
run32 dp-link2 "comm_degradation:group=dp,index=2,steps=15-59,factor=3"
check dp-link2 16,18,20,22,24,26,28,30
run32 dp-link "comm_degradation:group=dp,index=1,steps=15-59,factor=3"
check dp-link 1,3,5,7,9,11,13,15
