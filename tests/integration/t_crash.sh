#!/bin/sh
# A rank killed mid-run: the job fails, but rank 0's last report stays, marked incomplete,
# with the steps it had received.
. "$(dirname "$0")/lib.sh"
if run_sim "crash-$$" --inject crash:rank=3,step=35; then
    fail "the job should have failed when rank 3 was killed"
fi
[ -f "$REPORT_DIR/report.json" ] || { cat "$WORK/stderr" >&2; fail "no report.json after a dead rank"; }
python3 - "$REPORT_DIR/report.json" <<'PY' || fail "report after a dead rank is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["complete"] is False, r["job"]
# Windows are exchanged asynchronously: how many reached rank 0 before the job was
# torn down depends on scheduling, but every one that did is in the report, and
# nothing past the crash (step 35) can be.
assert 10 <= r["steps"]["count"] <= 35 and r["steps"]["last"] <= 35, r["steps"]
PY
