#!/bin/sh
# Rank 0 (which writes the diagnosis) killed mid-run: the job ends within the bound, and
# the output directory keeps everything up to the last window rank 0 analysed:
# anomalies.jsonl holds the straggler found before the crash and report.json is the
# last complete rewrite, marked incomplete (docs/ARCHITECTURE.md, "Rules of the road").
# Steps are paced at 40 ms of real time so that rank 0 has windows to analyse before it dies, even on a loaded machine.
. "$(dirname "$0")/lib.sh"
start=$(date +%s)
if run_sim "r0death-$$" --inject compute_straggler:ranks=5,steps=5-59,factor=2 \
        --inject crash:rank=0,step=45 --pace-ms 40; then
    fail "the job should have failed when rank 0 was killed"
fi
took=$(( $(date +%s) - start ))
[ "$took" -lt 120 ] || fail "the job took ${took}s to end after rank 0 died"
for f in report.json anomalies.jsonl steps.csv; do
    [ -s "$REPORT_DIR/$f" ] || { ls -la "$REPORT_DIR" >&2; cat "$WORK/stderr" >&2; fail "no $f after rank 0 died"; }
done
python3 - "$REPORT_DIR" <<'PY' || fail "output after rank 0 died is wrong"
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/report.json"))  # parses: never a half-written file
assert r["job"]["complete"] is False, r["job"]
assert 10 <= r["steps"]["count"] <= 45 and r["steps"]["last"] <= 45, r["steps"]
lines = [json.loads(l) for l in open(d + "/anomalies.jsonl") if l.strip()]
hit = [a for a in lines if a["kind"] == "compute_straggler" and a["ranks"] == [5]]
assert hit, lines
assert any(a["kind"] == "compute_straggler" and a["ranks"] == [5] for a in r["anomalies"]), r["anomalies"]
print("steps", r["steps"]["count"], "anomalies.jsonl", [(a["kind"], a["ranks"]) for a in lines])
PY
echo "ended ${took}s after start"
