#!/bin/sh
# Without MPI_THREAD_MULTIPLE (forced by a test knob) there is no Argus thread: every
# summary is kept in memory and exchanged at MPI_Finalize; the report is still complete
# and rank 0 says so exactly once.
. "$(dirname "$0")/lib.sh"
export ARGUS_TEST_NO_THREAD=1
run_sim "nothread-$$" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
n=$(grep -c "exchanged at MPI_Finalize" "$WORK/stderr" || true)
[ "$n" = 1 ] || { cat "$WORK/stderr" >&2; fail "fallback announced $n times, want 1"; }
python3 - "$REPORT_DIR" <<'PY' || fail "report wrong without the Argus thread"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
assert r["job"]["complete"] is True, r["job"]
assert r["steps"]["count"] == 60, r["steps"]
x = json.load(open(sys.argv[1] + "/reduce.json"))
assert x["exchange"] == "at-finalize" and x["missing"] == [], x
PY
