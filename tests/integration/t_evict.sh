#!/bin/sh
# Rank 0's job store keeps a bounded horizon of recent steps (store/jobstore.h); an
# anomaly whose steps were evicted must stay in the final report (pipeline/carry.c), with
# its span, and the step statistics must still cover the whole job. 16 ranks with the
# store cut to 256 summaries (ARGUS_TEST_STORE_CELLS: 16 steps held of 60), a straggler
# at steps 20-40: by the end only steps 44-59 are held.
. "$(dirname "$0")/lib.sh"
ARGUS_TEST_STORE_CELLS=256 run_sim "evict-$$" \
    --inject compute_straggler:ranks=5,steps=20-40,factor=1.5 ||
    { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
python3 - "$REPORT_DIR/report.json" <<'PY' || fail "evicted anomaly lost"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["complete"] is True, r["job"]
assert r["steps"]["count"] == 60 and r["steps"]["first"] == 0 and r["steps"]["last"] == 59, r["steps"]
an = [a for a in r["anomalies"] if a["kind"] == "compute_straggler" and a["ranks"] == [5]]
assert len(an) == 1, r["anomalies"]
f, l = an[0]["steps"]
assert 18 <= f <= 24 and 36 <= l <= 42, an[0]
print("held 16 of 60 steps; the straggler of steps %d-%d is still reported" % (f, l))
PY
