#!/bin/sh
# t_predict.sh — argus-predict --cut 0.25 --json against what really happened:
#  - the real trainer logs of tests/data/logs (modded-nanogpt with its compilation steps,
#    MLPerf GPT-3 175B, DeepSpeed-Chat RLHF): the truth inside P10-P90, the P50 within
#    15 % (a mean of the steps seen, warm-up included, is 70x off on modded-nanogpt);
#  - an argus-simtrain job run to the end (4 ranks, 200 steps) with a checkpoint-like
#    spike every 20 steps and a +15 % regime change at step 30: the truth inside P10-P90,
#    the P50 within 5 %, and a band at least twice as wide as the one of a model that
#    takes steps as independent (which misses the truth on this run); with --cut 0.5 the
#    table says it counted the periodic events; the DP x 2 what-if within 10 % of a real
#    run at twice the data parallelism; the mb=8 what-if (from --microbatches 4) its
#    median step within 5 % of a real run's at 8 microbatches, the bubble share in its
#    note; mb=M without the current count refused in one line;
#  - the forecast in report.json, report.md and metrics.prom: live (the simulator's
#    argus_set_total_steps wins over ARGUS_TOTAL_STEPS) and from argus-analyze
#    (ARGUS_TOTAL_STEPS), the three files agreeing.
# The JSON has exactly the keys of the contract; bad options cost one line and exit 2.
. "$(dirname "$0")/../integration/lib.sh"
PREDICT="$top_builddir/argus-predict"
L="$top_srcdir/tests/data/logs"

# judge JSON_FILE CUT_STEPS MAX_P50_ERR [NAIVE_CSV]: the contract's keys and properties
judge() {
    python3 - "$@" <<'PY' || fail "forecast $1"
import csv, json, math, sys
path, cut_steps, max_err = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
j = json.load(open(path))
assert set(j) == {"remaining_s", "total_s", "steps_left", "whatif", "cut_step",
                  "actual_remaining_s", "step_p50_ms", "step_quantiles_ms"}, sorted(j)
sq = j["step_quantiles_ms"]  # P1..P99 of one modelled step, around its median
assert len(sq) == 99 and all(a <= b for a, b in zip(sq, sq[1:])), sq
assert sq[0] <= j["step_p50_ms"] <= sq[-1], (j["step_p50_ms"], sq)
for w in j["whatif"].values():
    assert {"p10", "p50", "p90", "p99", "step_p50_ms"} <= set(w), w
for k in ("remaining_s", "total_s"):
    q = j[k]
    assert set(q) == {"p10", "p50", "p90", "p99"}, q
    assert 0 <= q["p10"] <= q["p50"] <= q["p90"] <= q["p99"], (k, q)
assert j["total_s"]["p50"] > j["remaining_s"]["p50"]
r, a = j["remaining_s"], j["actual_remaining_s"]
assert r["p10"] <= a <= r["p90"], ("truth outside P10-P90", a, r)
assert abs(r["p50"] - a) / a <= max_err, ("P50 error", r["p50"], a)
if len(sys.argv) > 4:  # the naive band: steps independent, from the steps before the cut
    steps = {}
    for row in csv.DictReader(open(sys.argv[4])):
        w = (int(row["end_ns"]) - int(row["start_ns"])) / 1e9
        s = int(row["step"])
        steps[s] = max(steps.get(s, 0), w)
    fit = [steps[s] for s in sorted(steps) if s <= j["cut_step"]]
    mu = sum(fit) / len(fit)
    sd = math.sqrt(sum((x - mu) ** 2 for x in fit) / len(fit))
    left = j["steps_left"]
    naive = 2 * 1.2816 * sd * math.sqrt(left)
    assert r["p90"] - r["p10"] >= 2 * naive, ("band too narrow", r, naive)
    lo, hi = mu * left - naive / 2, mu * left + naive / 2
    assert not (lo <= a <= hi), ("the naive model should miss here", lo, hi, a)
print(path, "ok: actual %.2f in [%.2f, %.2f], p50 %.2f" % (a, r["p10"], r["p90"], r["p50"]))
PY
}

for f in modded_nanogpt_medium_2025-01-18_rank0.txt mlperf_gpt3_175b_eos_n64_result_0.txt \
         deepspeed_chat_step3_rlhf_rank0.log; do
    [ -e "$L/$f" ] || fail "missing test data $L/$f"
    "$PREDICT" --cut 0.25 --json "$L/$f" >"$WORK/$f.json" 2>"$WORK/err" ||
        fail "argus-predict on $f: $(cat "$WORK/err")"
    judge "$WORK/$f.json" 0 0.15
done
# logs that give step times in whole milliseconds (modded-nanogpt) or tens of them
# (DeepSpeed-Chat): the law of one step keeps the log's grid (every quantile on it)
python3 - "$WORK/modded_nanogpt_medium_2025-01-18_rank0.txt.json" 1 \
    "$WORK/deepspeed_chat_step3_rlhf_rank0.log.json" 10 <<'PY' || fail "step law off the grid"
import json, sys
for path, g in zip(sys.argv[1::2], sys.argv[2::2]):
    sq, g = json.load(open(path))["step_quantiles_ms"], float(g)
    off = [x for x in sq if abs(x / g - round(x / g)) > 1e-6]
    assert not off, (path, "quantiles off the %g ms grid" % g, off[:5])
print("step laws on the logs' grids: ok")
PY

# the simulated job, to the end
sim() { # JOBID DP [MICROBATCHES]
    ARGUS_JOBID=$1 timeout 300 "$ARGUS_RUN" --outdir "$WORK/out" -- \
        "$MPIRUN" -np $((2 * $2)) "$SIM" --tp 1 --pp 2 --dp "$2" --microbatches "${3:-4}" \
        --steps 200 --seed 5 --inject step_regression:steps=30-,factor=1.15 $INJ \
        >"$WORK/stdout.$1" 2>&1 || fail "simulated job $1: $(tail -3 "$WORK/stdout.$1")"
}
INJ=
for s in 19 39 59 79 99 119 139 159 179 199; do
    INJ="$INJ --inject iteration_jitter:steps=$s,factor=3"
done
ARGUS_TOTAL_STEPS=999 sim fc2 2
sim fc4 4
sim fc2m8 2 8
J="$WORK/out/argus-fc2"
# the forecast in every report: the live one (the program's argus_set_total_steps(200)
# wins over ARGUS_TOTAL_STEPS=999), and argus-analyze's with ARGUS_TOTAL_STEPS=300
ARGUS_TOTAL_STEPS=300 "$top_builddir/argus-analyze" -o "$WORK/an" "$J/summaries.argus" \
    >/dev/null 2>&1 || fail "argus-analyze with ARGUS_TOTAL_STEPS"
python3 - "$J" "$WORK/an" <<'PY' || fail "forecast in the reports"
import json, re, sys
live, off = sys.argv[1], sys.argv[2]
f = json.load(open(live + "/report.json"))["forecast"]
assert f["steps_total"] == 200 and f["steps_left"] == 0 and not f["per_1000_steps"], f
j = json.load(open(off + "/report.json"))["forecast"]
assert j["steps_total"] == 300 and j["steps_done"] == 200 and j["steps_left"] == 100, j
r, t = j["remaining_s"], j["total_s"]
assert 0 < r["p10"] <= r["p50"] <= r["p90"] <= r["p99"], r
assert abs(t["p50"] - r["p50"] - j["elapsed_s"]) < 0.01, (t, r, j["elapsed_s"])
assert j["regime"]["first_step"] >= 25 and j["regime"]["change_points"] >= 1, j["regime"]
assert any(p["period_steps"] == 20 for p in j["periodic"]), j["periodic"]
assert 1.0 <= j["sync_tax"] < 1.5, j["sync_tax"]
md = open(off + "/report.md").read()
assert "## Forecast" in md and "200 of 300 planned steps done, 100 left" in md, md[-2000:]
prom = open(off + "/metrics.prom").read()
m = re.search(r'argus_forecast_remaining_seconds\{[^}]*q="p50"\} ([0-9.]+)', prom)
assert m and abs(float(m.group(1)) - r["p50"]) < 0.002, (m and m.group(1), r["p50"])
print("forecast in report.json, report.md, metrics.prom: ok")
PY
"$PREDICT" --cut 0.25 --json --whatif dp=2 "$J/summaries.argus" >"$WORK/sim.json" \
    2>"$WORK/err" || fail "argus-predict on the simulated job: $(cat "$WORK/err")"
judge "$WORK/sim.json" 50 0.05 "$J/steps.csv"
"$PREDICT" --cut 0.5 "$J/summaries.argus" >"$WORK/table" 2>&1 || fail "table: $(cat "$WORK/table")"
grep -q "periodic event every 20 steps" "$WORK/table" ||
    fail "periodic events not counted: $(cat "$WORK/table")"
grep -q "^  remaining " "$WORK/table" || fail "no remaining row: $(cat "$WORK/table")"
# DP x 2: the what-if's remaining time against the real run at DP 4 (the same steps left)
python3 - "$WORK/sim.json" "$WORK/out/argus-fc4/steps.csv" <<'PY' || fail "dp=2 what-if"
import csv, json, sys
j = json.load(open(sys.argv[1]))
steps = {}
for row in csv.DictReader(open(sys.argv[2])):
    w = (int(row["end_ns"]) - int(row["start_ns"])) / 1e9
    s = int(row["step"])
    steps[s] = max(steps.get(s, 0), w)
real = sum(steps[s] for s in steps if s > j["cut_step"])
p50 = j["whatif"]["dp=2"]["p50"]
assert abs(p50 - real) / real <= 0.10, ("dp=2 what-if", p50, "real DP x 2 run", real)
print("dp=2 what-if %.2f s, real %.2f s" % (p50, real))
PY
# microbatches 4 -> 8: the what-if's median step against the real run's at 8 (held out)
ARGUS_MICROBATCHES=4 "$PREDICT" --cut 0.25 --json --whatif mb=8 "$J/summaries.argus" \
    >"$WORK/mb.json" 2>"$WORK/err" || fail "mb=8 what-if: $(cat "$WORK/err")"
python3 - "$WORK/mb.json" "$WORK/out/argus-fc2m8/steps.csv" <<'PY' || fail "mb=8 what-if"
import csv, json, statistics, sys
j = json.load(open(sys.argv[1]))
steps = {}
for row in csv.DictReader(open(sys.argv[2])):
    w = (int(row["end_ns"]) - int(row["start_ns"])) / 1e6
    s = int(row["step"])
    steps[s] = max(steps.get(s, 0), w)
real = statistics.median(steps[s] for s in steps if s > j["cut_step"])
w = j["whatif"]["mb=8"]["step_p50_ms"]
assert abs(w - real) / real <= 0.05, ("mb=8 what-if step", w, "real at 8", real)
assert abs(w - j["step_p50_ms"]) / j["step_p50_ms"] > 0.3, ("mb=8 moved nothing", w)
print("mb=8 what-if step %.2f ms, real %.2f ms" % (w, real))
PY
"$PREDICT" --cut 0.25 --microbatches 4 --whatif mb=8 "$J/summaries.argus" >"$WORK/table" \
    2>&1 || fail "mb=8 table: $(cat "$WORK/table")"
# the bubble: the lighter stage's slot (the last stage also computes the logits), a
# share under the equal stages' 20 % at 4 microbatches and about half of it at 8
grep -Eq "what-if mb=8: 1F1B over 2 stages: 4 -> 8 microbatches.*bubble share 1[0-9]\.[0-9] % -> (9|1[01])\.[0-9] % \(stages' slots from their kernels\)" \
    "$WORK/table" || fail "mb=8 note: $(cat "$WORK/table")"

# bad options: one line, exit 2
for bad in "--whatif mb=2" "--whatif dp=1" "--whatif fast" "--cut 1.5" "--steps 0" "--bogus" \
           "--microbatches 0" "--microbatches 4 --whatif mb=0"; do
    set +e
    "$PREDICT" $bad "$L/mlperf_gpt3_175b_eos_n64_result_0.txt" >"$WORK/o" 2>"$WORK/e"
    rc=$?
    set -e
    [ $rc = 2 ] || fail "$bad: exit $rc, not 2"
    [ "$(wc -l <"$WORK/e")" = 1 ] || fail "$bad: not one line: $(cat "$WORK/e")"
done
"$PREDICT" --whatif mb=4 "$L/mlperf_gpt3_175b_eos_n64_result_0.txt" 2>&1 |
    grep -q "the current microbatch count is unknown" || fail "mb=M without a count not refused"
# a trainer log has no forward/backward phases: the what-if says it cannot model them
"$PREDICT" --microbatches 4 --whatif mb=8 "$L/mlperf_gpt3_175b_eos_n64_result_0.txt" \
    >"$WORK/table" 2>&1 || fail "mb=8 on a log: $(cat "$WORK/table")"
grep -q "what-if mb=8: no forward/backward phases.*(not modelled)" "$WORK/table" ||
    fail "mb=8 on a log: $(cat "$WORK/table")"
# the man page names every option of --help (short and long) and renders without warnings
PAGE="$top_srcdir/man/argus-predict.1"
"$PREDICT" --help >"$WORK/help" || fail "--help exit $?"
opts=$(grep -o -e ' -[A-Za-z],' -e '--[a-z][a-z-]*' "$WORK/help" | tr -d ' ,' | sort -u)
[ "$(echo "$opts" | wc -w)" -ge 16 ] || fail "options not read from --help: $opts"
sed 's/\\//g' "$PAGE" >"$WORK/page"
for o in $opts; do
    grep -q -e "$o\\([^a-z-]\\|\$\\)" "$WORK/page" || fail "$o (--help) not in $PAGE"
done
! LC_ALL=C grep -n '[^[:print:][:space:]]' "$PAGE" || fail "$PAGE: non-ASCII bytes"
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$PAGE" >"$WORK/groff.out" 2>&1 || fail "groff exit $?"
    [ ! -s "$WORK/groff.out" ] || { cat "$WORK/groff.out" >&2; fail "groff warnings"; }
fi
echo "t_predict: ok"
