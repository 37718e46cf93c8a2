#!/bin/sh
# t_predict_torch.sh — argus-predict --cut 0.25 --json on two spools of a real PyTorch job
# (tests/data/torch: ckpt, a checkpoint every 25 steps, and regime, the batch 2.5x larger
# from step 60; 2 ranks of DDP over gloo on CPU, 400 steps, recorded by
# tests/forecast/record_torch.sh). Cheap (no job is run) and a sanity bound, not the
# accuracy goal (bench/forecast.py judges that; the plain run, whose machine was twice as
# loaded before the cut as after it, is 1.9x off there and would fail this bound): the JSON has the contract's keys; the
# steps fitted and left are those of the run as its live report counted them (run.json);
# P10 <= P50 <= P90 <= P99; actual_remaining_s is the time the steps after the cut took
# on the job's own clock (job_step_ms, measured without Argus) within 2 %, and lies in
# [P10 / 1.5, P90 x 1.5]. The judge must refuse what a broken reader or a unit error
# gives: a truncated spool, a wrong step count (--steps), the quantiles or the truth in
# milliseconds.
. "$(dirname "$0")/../integration/lib.sh"
PREDICT="$top_builddir/argus-predict"
T="$top_srcdir/tests/data/torch"

# judge JSON RUN_JSON: exit 0 when the forecast is sane for that run, else 1 and why
judge() {
    python3 - "$1" "$2" <<'PY'
import json, math, sys
try:
    j = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit("not JSON: %s" % e)
run = json.load(open(sys.argv[2]))
keys = {"remaining_s", "total_s", "steps_left", "whatif", "cut_step", "actual_remaining_s",
        "step_p50_ms", "step_quantiles_ms"}
if set(j) != keys:
    sys.exit("keys %s" % sorted(j))
for k in ("remaining_s", "total_s"):
    q = j[k]
    if set(q) != {"p10", "p50", "p90", "p99"} or \
            not 0 < q["p10"] <= q["p50"] <= q["p90"] <= q["p99"]:
        sys.exit("%s not ordered quantiles: %s" % (k, q))
n = run["steps"]["count"]  # the steps Argus saw (warm-up steps before it was active lost)
k = int(math.floor(0.25 * n))
if j["steps_left"] != n - k or j["cut_step"] != run["steps"]["first"] + k - 1:
    sys.exit("steps_left %s, cut_step %s; want %d, %d" % (j["steps_left"], j["cut_step"],
                                                         n - k, run["steps"]["first"] + k - 1))
own = run["job_step_ms"]
truth = sum(own[j["cut_step"] + 1:run["steps"]["last"] + 1]) / 1e3
a, r = j["actual_remaining_s"], j["remaining_s"]
if abs(a - truth) > 0.02 * truth:
    sys.exit("actual_remaining_s %.3f s; the job's own clock says %.3f s" % (a, truth))
if not r["p10"] / 1.5 <= a <= r["p90"] * 1.5:
    sys.exit("truth %.3f s outside [P10/1.5, P90*1.5] = [%.3f, %.3f]"
             % (a, r["p10"] / 1.5, r["p90"] * 1.5))
print("%s: %d steps left, truth %.2f s (own clock %.2f s), P10-P90 %.2f-%.2f s, P50 %+.1f %%"
      % (run["name"], n - k, a, truth, r["p10"], r["p90"], 100 * (r["p50"] - a) / a))
PY
}

for run in ckpt regime; do
    [ -e "$T/$run/summaries.argus" ] && [ -e "$T/$run/run.json" ] ||
        fail "missing test data $T/$run"
    "$PREDICT" --cut 0.25 --json "$T/$run/summaries.argus" >"$WORK/$run.json" \
        2>"$WORK/err" || fail "argus-predict on $run: $(cat "$WORK/err")"
    judge "$WORK/$run.json" "$T/$run/run.json" || fail "forecast of $run"
done

# the judge refuses a broken reader's or a unit error's output (each must fail)
refused() { # WHAT JSON: argus-predict's JSON (or a refusal) the judge must not pass
    if judge "$2" "$T/regime/run.json" >"$WORK/why" 2>&1; then
        fail "$1 passed the judge: $(cat "$WORK/why")"
    fi
    echo "$1: refused ($(tail -1 "$WORK/why"))"
}
S="$T/regime/summaries.argus"
head -c $(( $(wc -c <"$S") * 2 / 3 )) "$S" >"$WORK/trunc.argus"
"$PREDICT" --cut 0.25 --json "$WORK/trunc.argus" >"$WORK/trunc.json" 2>/dev/null || true
refused "a truncated spool" "$WORK/trunc.json"
"$PREDICT" --cut 0.25 --json --steps 1000 "$S" >"$WORK/steps.json" 2>"$WORK/err" ||
    fail "--steps 1000: $(cat "$WORK/err")"
refused "a wrong step count" "$WORK/steps.json"
# a unit error in the quantiles, then in the truth alone (ms for s)
python3 - "$WORK/regime.json" "$WORK/ms-q.json" "$WORK/ms-a.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
a = dict(j, actual_remaining_s=j["actual_remaining_s"] * 1e3)
for k in ("remaining_s", "total_s"):
    j[k] = {q: v * 1e3 for q, v in j[k].items()}
json.dump(j, open(sys.argv[2], "w"))
json.dump(a, open(sys.argv[3], "w"))
PY
refused "the quantiles in milliseconds" "$WORK/ms-q.json"
refused "the truth in milliseconds" "$WORK/ms-a.json"
echo "t_predict_torch: ok"
