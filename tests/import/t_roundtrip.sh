#!/bin/sh
# t_roundtrip.sh — a live run's report and argus-analyze on the same run's spool agree:
# the simulator with an injected compute straggler under argus-run, then argus-analyze on
# $REPORT_DIR/summaries.argus into another directory; anomalies (kind, ranks, steps) and
# the steps statistics of both report.json files must match.
. "$top_srcdir/tests/integration/lib.sh"
ANALYZE="$top_builddir/argus-analyze"
run_sim "rt-$$" --inject compute_straggler:ranks=5,steps=20-40,factor=1.5 ||
    { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
[ -f "$REPORT_DIR/report.json" ] || fail "no live report.json"
[ -f "$REPORT_DIR/summaries.argus" ] || fail "no spool summaries.argus"
"$ANALYZE" -o "$WORK/offline" "$REPORT_DIR/summaries.argus" >"$WORK/an.out" 2>"$WORK/an.err" ||
    { cat "$WORK/an.err" >&2; fail "argus-analyze failed on the spool"; }
grep -q "argus: anomaly" "$WORK/an.out" || fail "no anomaly line in argus-analyze's summary"
python3 - "$REPORT_DIR/report.json" "$WORK/offline/report.json" <<'PY' || fail "reports differ"
import json, sys
live, off = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: sorted((a["kind"], tuple(a["ranks"]), tuple(a["steps"])) for a in r["anomalies"])
assert key(live) == key(off), ("anomalies", key(live), key(off))
assert live["anomalies"], "the injected straggler was not found"
for f in ("count", "first", "last", "median_ms", "p99_ms", "cv"):
    assert live["steps"][f] == off["steps"][f], ("steps", f, live["steps"], off["steps"])
assert live["job"]["ranks"] == off["job"]["ranks"] == 16, (live["job"], off["job"])
assert live["job"]["id"] == off["job"]["id"], (live["job"]["id"], off["job"]["id"])
assert off["inputs"]["skipped"] == [], off["inputs"]
PY
cmp -s "$REPORT_DIR/steps.csv" "$WORK/offline/steps.csv" || fail "steps.csv differs"
