#!/bin/sh
# t_zero3.sh — the autocorrelation fallback (flows/period.h) on ZeRO-3 / FSDP traffic with
# no clean end-of-step burst (tests/flows/emit.py --mode zero3: per layer an all-gather
# before its forward and its backward and a reduce-scatter after its backward, DP 4 x TP 4,
# 1 ms idle timeout). The gaps between bursts alone make a step of every layer; the byte
# rate's period is the step's (within 1 % of the emitter's median step) and the steps
# tracked with it end where the emitter's end (median 0.1 %, P95 0.3 % of the step) with a
# 4 ms optimizer step, through three steps of a host 1.5x slower (found as slow steps);
# with a 1 ms one (shorter than a layer's gaps: no boundary to see) the period and the
# step count still right.
. "$(dirname "$0")/lib.sh"
for opt in 4 1; do
    mkdir "$WORK/z$opt"
    slow=1
    [ $opt = 4 ] && slow=1.5
    "$PY" "$HERE/emit.py" --out "$WORK/z$opt" --mode zero3 --pp 1 --dp 4 --steps 16 \
        --slow $slow --slow-steps 6,8 --opt-ms $opt --idle-ms 1 --formats ipfix ||
        fail "emit.py exit $?"
    "$FLOWS" -o "$WORK/out$opt" -t "$WORK/z$opt/topology.csv" "$WORK/z$opt/flows.ipfix" \
        >/dev/null 2>"$WORK/z$opt.err" || { cat "$WORK/z$opt.err" >&2; fail "opt $opt: exit $?"; }
    "$PY" - "$WORK/out$opt/flows.json" "$WORK/z$opt/truth.json" <<'PYEOF' || fail "opt $opt: period"
import json, statistics, sys
d, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["jobs"][0]
j = [j for j in d["jobs"] if set(j["endpoints"]) == set(t["endpoints"])][0]
T = statistics.median(b - a for a, b in zip(t["step_start"], t["step_end"]))
err = abs(j["acf_period_ns"] - T) / T
assert j["step_method"] == "autocorrelation", j["step_method"]
assert err <= 0.01, ("period", j["acf_period_ns"], T)
assert j["steps"] == t["steps"], ("steps", j["steps"], t["steps"])
print("period %.4f %% off, %d steps" % (100 * err, j["steps"]))
PYEOF
done
# the gaps' two splits disagree here, and say so (flows.json and a line in flows.md)
[ "$(jget "$WORK/out4" "d['jobs'][0]['boundary_gaps_disagree'] > 0")" = True ] ||
    fail "the change points' disagreement with the baseline not counted"
grep -q "disagree on [0-9]* of [0-9]* gaps" "$WORK/out4/flows.md" ||
    fail "the disagreement not said in flows.md"
"$PY" "$HERE/score.py" "$WORK/out4" "$WORK/z4/truth.json" --check --no-links --no-agree ||
    fail "opt 4 ms: goals missed (above)"
echo "ok: ZeRO-3 step period by autocorrelation, steps tracked with it"
