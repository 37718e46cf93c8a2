#!/bin/sh
# t_csv.sh — steps.csv import: a live report's steps.csv (Argus's format) analysed offline
# gives the same step statistics; a bad row is one error line naming file and line.
. "$(dirname "$0")/lib.sh"
need_data dlrm-8rank-v100
"$ANALYZE" -o "$WORK/k" "$DATA/dlrm-8rank-v100" >/dev/null 2>&1 || fail "DLRM set"
cp "$WORK/k/steps.csv" "$WORK/in.csv"
"$ANALYZE" -o "$WORK/c" "$WORK/in.csv" >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "steps.csv not analysed"; }
python3 - "$WORK/k/report.json" "$WORK/c/report.json" <<'PY' || fail "steps differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for f in ("count", "first", "last", "median_ms", "p99_ms"):
    assert a["steps"][f] == b["steps"][f], (f, a["steps"], b["steps"])
assert b["job"]["ranks"] == 8, b["job"]
PY
cmp -s "$WORK/k/steps.csv" "$WORK/c/steps.csv" || fail "steps.csv not reproduced"
printf 'step,rank,start_ns,end_ns,forward_ms,backward_ms,optimizer_ms,comm_ms,host_gap_ms\n1,0,5,9,x,0,0,0,0\n' >"$WORK/bad.csv"
rc=0; "$ANALYZE" -o "$WORK/b" "$WORK/bad.csv" >/dev/null 2>"$WORK/err" || rc=$?
[ $rc = 1 ] && grep -q "bad.csv:2: expected" "$WORK/err" || { cat "$WORK/err" >&2; fail "bad row"; }
