#!/bin/sh
# Rank 0's final report that takes longer than the finalize bound plus its grace (a
# loaded machine; test knob SLOW_REPORT_MS) is waited for once its thread is past MPI and
# only writing: the job ends with the whole report (reduce.json, all 60 steps, every
# picture report.html inlines as written), not with files from two different windows.
# Before the fix the process left after the grace, mid-write.
. "$(dirname "$0")/lib.sh"
export ARGUS_FINALIZE_MS=1000 ARGUS_TEST_SLOW_REPORT_MS=4000
t0=$(date +%s)
run_sim "slowrep-$$" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
t1=$(date +%s)
[ -f "$REPORT_DIR/reduce.json" ] || fail "no reduce.json: the final report was cut off"
python3 - "$REPORT_DIR" <<'PY' || fail "the final report is not whole"
import json, os, sys
d = sys.argv[1]
r = json.load(open(os.path.join(d, "report.json")))
assert r["steps"]["count"] == 60, r["steps"]
left = [f for f in os.listdir(d) if f.endswith(".partial")]
assert not left, left
PY
grep -q "still writing the final report" "$WORK/stderr" ||
    { cat "$WORK/stderr" >&2; fail "no line about waiting for the final report"; }
[ $((t1 - t0)) -lt 120 ] || fail "the job took $((t1 - t0)) s"
echo "ok: the final report waited for ($((t1 - t0)) s)"
