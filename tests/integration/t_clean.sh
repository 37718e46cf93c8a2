#!/bin/sh
# A clean 16-rank run: a complete report with no anomalies, every companion file, and
# one steps.csv row per rank and step.
. "$(dirname "$0")/lib.sh"
run_sim "clean-$$" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
d=$REPORT_DIR
for f in report.json report.md steps.csv summaries.argus; do
    [ -s "$d/$f" ] || fail "missing or empty $f"
done
[ "$(stat -c %a "$d")" = 750 ] || fail "output directory mode is $(stat -c %a "$d"), want 750"
ls "$d" | grep -q partial && fail "a .partial file was left behind"
python3 - "$d" <<'PY' || fail "report.json wrong"
import csv, json, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
assert r["argus_report_version"] == 1
assert r["anomalies"] == [], r["anomalies"]
assert r["job"]["complete"] is True and r["job"]["ranks"] == 16, r["job"]
assert r["job"]["source"] == "replay", r["job"]
assert r["job"]["missing_ranks"] == [], r["job"]
assert r["layout"] == {"tp": 2, "pp": 2, "dp": 4, "ep": 1, "inferred": False}, r["layout"]
s = r["steps"]
assert s["count"] == 60 and s["first"] == 0 and s["last"] == 59, s
assert 0 < s["median_ms"] <= s["p99_ms"], s
assert r["collection"]["kernels_seen"] > 16 * 60 * 20, r["collection"]
assert 0 < r["collection"]["summary_bytes_per_rank_step"] < 16384, r["collection"]
assert len(r["ranks"]) == 16 and sorted(x["rank"] for x in r["ranks"]) == list(range(16))
rows = list(csv.DictReader(open(d + "/steps.csv")))
assert len(rows) == 16 * 60, len(rows)
assert set(rows[0]) == {"step", "rank", "start_ns", "end_ns", "forward_ms", "backward_ms",
                        "optimizer_ms", "comm_ms", "host_gap_ms"}, rows[0].keys()
assert all(float(x["forward_ms"]) > 0 and float(x["backward_ms"]) > 0 for x in rows)
PY
$SCORE "$d/report.json" "$WORK/truth.json" || fail "clean run scored wrong"
if [ -s "$d/anomalies.jsonl" ]; then fail "clean run appended anomalies"; fi
grep -q "argus: no anomalies" "$WORK/stderr" || fail "no summary line printed"
