#!/bin/sh
# A rank whose Argus side stops sending (test knob) never holds up rank 0 or the job:
# its parent gives up after the deadline, rank 0 marks it missing, the report says
# complete:false, reduce.json names the rank and the step, and the job still ends well
# inside the finalize bound.
. "$(dirname "$0")/lib.sh"
export ARGUS_TEST_MUTE_RANK=9 ARGUS_DEADLINE_MS=300 ARGUS_FINALIZE_MS=5000
t0=$(date +%s)
run_sim "mute-$$" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
t1=$(date +%s)
python3 - "$REPORT_DIR" <<'PY' || fail "a muted rank is not reported missing"
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
assert r["job"]["complete"] is False, r["job"]
# Rank 9 is missing from the start, and only rank 9. With a 300 ms deadline on 2 loaded
# cores another rank may miss the deadline of the last, empty flush at finalize; it
# delivered all 60 steps, so it is not missing (reduce.json: late_at_finalize).
mr = {m["rank"]: m["since_step"] for m in r["job"]["missing_ranks"]}
assert mr == {9: 0}, r["job"]
x = json.load(open(d + "/reduce.json"))
miss = {m["rank"]: m for m in x["missing"]}
assert sorted(miss) == [9], x["missing"]
assert 9 not in x["late_at_finalize"], x
assert miss[9]["from_step"] == 0 and miss[9]["window"] == 0, miss
assert r["steps"]["count"] == 60, r["steps"]
PY
grep -q "rank 9 (and the ranks below it) sent nothing" "$WORK/stderr" || fail "no missing line"
[ $((t1 - t0)) -lt 120 ] || fail "the job took $((t1 - t0)) s with a muted rank"
