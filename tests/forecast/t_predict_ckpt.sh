#!/bin/sh
# t_predict_ckpt.sh — a real PyTorch job with a checkpoint every 25 steps (tests/data/torch/
# ckpt: rank 0 writes ~25 MB inside step K, rank 1 waits for it in step K + 1; the first
# ~100 steps are noisier than the rest): argus-predict --cut 0.5 must find the checkpoint
# (analysis/periodic.c) although no occurrence is a spike strong enough alone (z >= 5)
# over that noise, and the forecast must count it: the table says "periodic event every
# 25 steps", seen in at least 6 of the 8 occurrences before the cut, 7-8 expected in the
# steps left (24/25 ... 374/375 and 399, by the step the anchor hit), each costing
# 80-200 ms (both its steps, K and K + 1, each ~1.6x a ~100 ms step: the forecast takes
# the step beside the analysis' hit out with it, forecast/series.c); the JSON's P50 error stays
# within 30 % (the job speeds up by a fifth after the cut, which the fit cannot know: the
# error is +24-25 % with or without the checkpoints counted). Cheap: no job is run.
. "$(dirname "$0")/../integration/lib.sh"
PREDICT="$top_builddir/argus-predict"
S="$top_srcdir/tests/data/torch/ckpt/summaries.argus"
[ -e "$S" ] || fail "missing test data $S"

"$PREDICT" --cut 0.5 "$S" >"$WORK/table" 2>"$WORK/err" ||
    fail "argus-predict --cut 0.5: $(cat "$WORK/err")"
"$PREDICT" --cut 0.5 --json "$S" >"$WORK/fc.json" 2>"$WORK/err" ||
    fail "argus-predict --cut 0.5 --json: $(cat "$WORK/err")"
python3 - "$WORK/table" "$WORK/fc.json" <<'PY' || fail "the checkpoints of the ckpt run"
import json, re, sys
table = open(sys.argv[1]).read()
m = re.search(r"periodic event every (\d+) steps, ([0-9.]+) ms each: (\d+) seen, "
              r"(\d+) expected in the steps left", table)
if not m:
    sys.exit("no periodic event in the forecast:\n" + table)
period, cost, seen, left = int(m[1]), float(m[2]), int(m[3]), int(m[4])
if period != 25 or not 6 <= seen <= 8 or not 7 <= left <= 8 or not 80 <= cost <= 200:
    sys.exit("periodic event: every %d steps, %.1f ms, %d seen, %d left; want 25, "
             "80-200 ms, 6-8 seen, 7-8 left" % (period, cost, seen, left))
j = json.load(open(sys.argv[2]))
a, p50 = j["actual_remaining_s"], j["remaining_s"]["p50"]
err = (p50 - a) / a
if abs(err) > 0.30:
    sys.exit("P50 error %+.1f %% (P50 %.2f s, truth %.2f s)" % (100 * err, p50, a))
print("ckpt --cut 0.5: every %d steps, %.1f ms each, %d seen, %d left; P50 %.2f s, "
      "truth %.2f s, error %+.1f %%" % (period, cost, seen, left, p50, a, 100 * err))
PY
