#!/bin/sh
# t_regime_log.sh — argus-predict --cut 0.75 --json on a real log whose steps alternate
# and whose level rises in stages: tests/data/logs/modded_nanogpt_medium_2025-12-31_bulk_
# rank0.txt (modded-nanogpt's BulkSmallTrackTransfer record, steps 0-1600: odd and even
# steps at 137/240 ms, then x1.3 from step 1176 at 176/318 ms), cut after step 1200, 25
# steps into the last stage. The period is said ("steps repeat every 2 steps"), the
# regime starts at the last stair, the P50 of the remaining time is within 3 % of what
# happened (+0.3 % measured), P10 is no less than the steps left at the fastest step, and
# the truth is inside P10-P90.
. "$(dirname "$0")/../integration/lib.sh"
PREDICT="$top_builddir/argus-predict"
F="$top_srcdir/tests/data/logs/modded_nanogpt_medium_2025-12-31_bulk_rank0.txt"

"$PREDICT" --cut 0.75 "$F" >"$WORK/table" 2>"$WORK/err" || fail "argus-predict exit $?"
grep -q "steps repeat every 2 steps" "$WORK/table" || { cat "$WORK/table" >&2; fail "no period"; }
grep -q "current regime, from step 117[4-8]," "$WORK/table" ||
    { cat "$WORK/table" >&2; fail "regime not at the last stair"; }
grep -q "regime just changed" "$WORK/table" || fail "no short-regime warning"
"$PREDICT" --cut 0.75 --json "$F" >"$WORK/fc.json" 2>"$WORK/err" || fail "--json exit $?"
python3 - "$WORK/fc.json" "$F" <<'PY' || fail "forecast"
import json, re, sys
j = json.load(open(sys.argv[1]))
r, a = j["remaining_s"], j["actual_remaining_s"]
prev, fastest = None, float("inf")  # the fastest step before the cut, from the log
for line in open(sys.argv[2]):
    m = re.match(r"step:(\d+)/\d+ train_time:(\d+)ms", line)
    if not m or "val_loss" in line:
        continue
    s, t = int(m.group(1)), int(m.group(2))
    if prev and s == prev[0] + 1 and s <= j["cut_step"]:
        fastest = min(fastest, t - prev[1])
    prev = (s, t)
assert j["steps_left"] == 400, j["steps_left"]
assert abs(r["p50"] - a) / a <= 0.03, ("P50 error", r["p50"], a)
assert r["p10"] >= j["steps_left"] * fastest / 1e3 > 0, ("P10 below the floor", r, fastest)
assert r["p10"] <= a <= r["p90"], ("truth outside P10-P90", a, r)
print("ok: actual %.2f s, P10 %.2f P50 %.2f P90 %.2f (P50 error %+.2f %%), fastest %d ms"
      % (a, r["p10"], r["p50"], r["p90"], 100 * (r["p50"] - a) / a, fastest))
PY
echo "t_regime_log: ok"
