#!/bin/sh
# Without MPI_THREAD_MULTIPLE (forced by a test knob) there is no Argus thread: every
# summary waits until MPI_Finalize — the first windows in the ring, later ones in a
# node-local file read back in order — and is exchanged then; the report is still
# complete and rank 0 says so exactly once. Windows of 5 steps: 12 windows, so most of
# them go through the file.
. "$(dirname "$0")/lib.sh"
export ARGUS_TEST_NO_THREAD=1 ARGUS_WINDOW=5
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
assert x["windows_spilled_rank0"] >= 6, x  # 12 windows, 4 ring buffers
assert x["summaries_dropped_rank0"] == 0, x
c = x["condense"]
if c["on"]:  # t_reduce_nothread_condensed.sh: the pull runs inside MPI_Finalize too
    assert c["exemplars"] + c["thin"] == c["rows"] == 960, c
    assert c["pull"]["asks"] > 0 and c["pull"]["answers"] > 0, c
    assert c["pull"]["unanswered"] == 0, c
PY
