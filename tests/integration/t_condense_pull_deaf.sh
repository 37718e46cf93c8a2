#!/bin/sh
# The condensing tree's pull (reduce/pull.h) with a child of rank 0 that never answers
# (test knob ARGUS_TEST_DEAF_PULL_RANK): rank 0 waits for it only until each ask's
# deadline, says so once, and keeps the cells that child holds as rows only; nothing is
# lost or written twice (every (rank, step) once: in full or as a row), the report is
# complete, and the job ends well inside the finalize bound (the deaf child stops waiting
# for rank 0's final ask after its bound).
. "$(dirname "$0")/lib.sh"
# 16 ranks, fan-in 4: rank 0's children 1, 2 and 3 condense (hold), 4 is a leaf
export ARGUS_CONDENSE=0 ARGUS_TEST_DEAF_PULL_RANK=1 ARGUS_DEADLINE_MS=300 \
    ARGUS_FINALIZE_MS=5000
t0=$(date +%s)
run_sim "deaf-$$" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
t1=$(date +%s)
python3 - "$REPORT_DIR" <<'PY' || fail "a deaf pull child broke the reduction"
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
assert r["job"]["complete"] is True, r["job"]
assert r["steps"]["count"] == 60, r["steps"]
c = json.load(open(d + "/reduce.json"))["condense"]
p = c["pull"]
assert c["on"] and c["rows"] == 16 * 60, c
assert c["exemplars"] + c["thin"] == c["rows"], c  # every cell once
assert p["asks"] >= 1 and p["unanswered"] == p["asks"], p  # rank 1, every time
assert p["asks"] <= p["answers"] <= 2 * p["asks"], p  # ranks 2 and 3 answer
print("pull:", p)
PY
n=$(grep -c "rank 1 did not answer a pull within the deadline" "$WORK/stderr")
[ "$n" = 1 ] || fail "the unanswered pull was reported $n times, not once"
[ $((t1 - t0)) -lt 60 ] || fail "the job took $((t1 - t0)) s with a deaf pull child"
