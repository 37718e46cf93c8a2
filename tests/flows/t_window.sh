#!/bin/sh
# t_window.sh — memory bounded by a window of flow time (argus-flows --window): the
# emitter's job over 24 steps (~10 s) read with a store of 12,000 records, too small for
# all of them. Without a window the newest records are dropped and the first steps are
# analysed; with --window 3 the oldest expire instead (counted, none dropped), flows.json
# says the time analysed, and the steps analysed are the last ones of the run: each step
# end reported is within 0.3 % of a step of the emitter's, and ends inside the window.
. "$(dirname "$0")/lib.sh"
"$PY" "$HERE/emit.py" --out "$WORK" --steps 24 --formats ipfix || fail "emit.py exit $?"
"$FLOWS" -M 12000 -o "$WORK/nowin" -t "$WORK/topology.csv" "$WORK/flows.ipfix" >/dev/null ||
    fail "no window: exit $?"
"$FLOWS" -M 12000 --window 3 -o "$WORK/win" -t "$WORK/topology.csv" "$WORK/flows.ipfix" \
    >/dev/null || fail "window: exit $?"
"$PY" - "$WORK" <<'PYEOF' || fail "window (above)"
import csv, json, sys
w = sys.argv[1]
tr = json.load(open(w + "/truth.json"))
job = tr["jobs"][0]
d = sorted(b - a for a, b in zip(job["step_start"], job["step_end"]))
step = d[len(d) // 2]
last_truth = max(job["step_end"])
def ends(out):
    e = {}
    for r in csv.DictReader(open(out + "/timeline.csv")):
        if r["endpoint"] in job["endpoints"]:
            e.setdefault(r["endpoint"], []).append(int(r["end_ns"]))
    return e
nw, ww = json.load(open(w + "/nowin/flows.json")), json.load(open(w + "/win/flows.json"))
assert nw["inputs"]["records_dropped"] > 0 and nw["inputs"]["records_expired"] == 0, nw["inputs"]
assert nw["inputs"]["window_ns"] is None
i = ww["inputs"]
assert i["records_dropped"] == 0 and i["records_expired"] > 0, i
lo, hi = i["window_ns"]
assert hi - lo == 3 * 10**9, i["window_ns"]
e_no, e_w = ends(w + "/nowin"), ends(w + "/win")
# without the window: the run's start; with it: its end
assert max(max(v) for v in e_no.values()) < last_truth - 3 * step, "no window saw the end"
n = 0
for ip, v in e_w.items():
    t = tr["step_end"][ip]
    for x in v:
        assert lo <= x <= hi, ("outside the window", ip, x, lo, hi)
        assert min(abs(x - y) for y in t) <= 0.003 * step, ("no such step end", ip, x)
        n += 1
steps = max(len(v) for v in e_w.values())
assert steps >= 3e9 / step - 2, ("too few steps in the window", steps, step)
assert max(max(v) for v in e_w.values()) >= last_truth - step, "the window missed the end"
print("window: %d step ends in [%d, %d], %d records expired" % (n, lo, hi, i["records_expired"]))
PYEOF
echo "ok: a sliding window of flow time bounds the store; the newest steps analysed"
