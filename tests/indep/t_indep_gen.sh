#!/bin/sh
# t_indep_gen.sh — the independent scenario source (tests/indep/gen.py) writes well-formed
# Kineto traces that argus-analyze reads whole: per layout and p2p mode, every trace parses,
# kernels have their launch (correlation) and never overlap on one stream, the members of
# a collective end together, the same seed gives the same bytes, and argus-analyze reports
# the ranks, the steps, the declared layout, every kernel and job.complete true. The lower
# data levels: a phases job is annotation ranges only, which argus-analyze reads as phase
# walls with no kernel; a steps job is one steps.csv (every rank, every step, a positive
# own time) that it reads whole. The scenarios group_slow and speed_classes generate with
# a truth that matches what was injected. Only the input is checked here, not the
# diagnosis: bench/detect_indep.py scores that.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
GEN="$top_srcdir/tests/indep/gen.py"
ANALYZE="$top_builddir/argus-analyze"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-indep.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# name  generator arguments  (tp pp dp)
while read -r name tp pp dp args; do
    job="$WORK/$name"
    # shellcheck disable=SC2086
    /usr/bin/python3 "$GEN" -o "$job" --ranks 8 --steps 12 --clock-skew-us 0 $args ||
        fail "$name: gen.py failed"
    # shellcheck disable=SC2086
    /usr/bin/python3 "$GEN" -o "$job.again" --ranks 8 --steps 12 --clock-skew-us 0 $args
    for r in 0 1 2 3 4 5 6 7; do
        cmp -s "$job/trace_rank$r.json" "$job.again/trace_rank$r.json" ||
            fail "$name: rank $r differs between two runs of one seed"
    done
    "$ANALYZE" -o "$job.out" "$job"/trace_rank*.json >"$WORK/out" 2>"$WORK/err" ||
        { cat "$WORK/err" >&2; fail "$name: argus-analyze failed"; }
    [ ! -s "$WORK/err" ] || { cat "$WORK/err" >&2; fail "$name: argus-analyze complained"; }
    /usr/bin/python3 - "$job" "$job.out" "$tp" "$pp" "$dp" <<'PY' || fail "$name: wrong"
import json, sys
job, out, tp, pp, dp = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
truth = json.load(open(job + "/truth.json"))
assert truth["source"] == "indep" and truth["ranks"] == 8 and truth["steps"] == 12, truth
assert truth["level"] == "kernels" and truth["exec"] == "gpu", truth
assert truth["layout"] == {"tp": tp, "pp": pp, "dp": dp}, truth["layout"]
kernels = 0
ends = {}                                   # i-th all-reduce -> its end on every rank
for r in range(8):
    t = json.load(open("%s/trace_rank%d.json" % (job, r)))
    di = t["distributedInfo"]
    assert di["rank"] == r and di["world_size"] == 8, di
    ev = t["traceEvents"]
    launches = {e["args"]["correlation"] for e in ev if e["name"] == "cudaLaunchKernel"}
    gpu = [e for e in ev if e["cat"] in ("kernel", "gpu_memcpy")]
    assert gpu and all(e["dur"] > 0 and e["args"]["correlation"] in launches for e in gpu)
    kernels += len(gpu)
    for s in {e["args"]["stream"] for e in gpu}:
        k = sorted((e["ts"], e["ts"] + e["dur"]) for e in gpu if e["args"]["stream"] == s)
        assert all(a[1] <= b[0] + 0.002 for a, b in zip(k, k[1:])), (r, s, "overlap")
    steps = sorted(int(e["name"][13:]) for e in ev if e["name"].startswith("ProfilerStep#"))
    assert steps == list(range(12)), (r, steps)
    ar = [e for e in gpu if "AllReduce" in e["name"]]
    for i, e in enumerate(ar):
        ends.setdefault(i, []).append(e["ts"] + e["dur"])
if tp == 1 and pp == 1:                     # one DP group: its all-reduces end together
    assert all(len(v) == 8 and max(v) - min(v) < 0.01 for v in ends.values()), "ends differ"
rep = json.load(open(out + "/report.json"))
j = rep["job"]
assert j["source"] == "kineto" and j["ranks"] == 8 and j["complete"] is True, j
assert (rep["steps"]["count"], rep["steps"]["first"], rep["steps"]["last"]) == (12, 0, 11)
lay = rep["layout"]
assert (lay["tp"], lay["pp"], lay["dp"], lay["inferred"]) == (tp, pp, dp, False), lay
assert rep["inputs"]["analysed"] == 8 and not rep["inputs"]["skipped"], rep["inputs"]
assert not rep["inputs"]["lost"] and not rep["inputs"]["notes"], rep["inputs"]
assert rep["collection"]["kernels_seen"] == kernels, (rep["collection"], kernels)
assert sorted(x["rank"] for x in rep["ranks"]) == list(range(8))
PY
done <<'EOF_CASES'
dp-clean 1 1 8 --layout dp --scenario clean --seed 3
pp-stall 1 4 2 --layout pp --scenario host_stall --seed 4 --p2p blocking
tp-async 2 2 2 --layout tp --scenario compute_straggler --seed 5 --p2p async
EOF_CASES

# ---- the phases level: annotation ranges only (a CPU job with gloo) ----
job="$WORK/phases"
/usr/bin/python3 "$GEN" -o "$job" --ranks 8 --steps 12 --layout pp --level phases \
    --scenario compute_straggler --seed 6 || fail "phases: gen.py failed"
"$ANALYZE" -o "$job.out" "$job"/trace_rank*.json >"$WORK/out" 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "phases: argus-analyze failed"; }
[ ! -s "$WORK/err" ] || { cat "$WORK/err" >&2; fail "phases: argus-analyze complained"; }
/usr/bin/python3 - "$job" "$job.out" <<'PY' || fail "phases: wrong"
import csv, json, sys
job, out = sys.argv[1:]
truth = json.load(open(job + "/truth.json"))
assert truth["level"] == "phases" and truth["exec"] == "cpu", truth
names = set()
for r in range(8):
    t = json.load(open("%s/trace_rank%d.json" % (job, r)))
    assert t["distributedInfo"]["backend"] == "gloo"
    ev = t["traceEvents"]
    assert ev and all(e["cat"] == "user_annotation" for e in ev), r
    names |= {e["name"].rstrip("0123456789") for e in ev}
assert {"ProfilerStep#", "## forward ##", "## backward ##", "gloo:recv"} <= names, names
rep = json.load(open(out + "/report.json"))
assert rep["job"]["ranks"] == 8 and rep["job"]["complete"] is True, rep["job"]
assert rep["steps"]["count"] == 12 and rep["collection"]["kernels_seen"] == 0
rows = list(csv.DictReader(open(out + "/steps.csv")))
assert len(rows) == 8 * 12, len(rows)
for row in rows:                    # every rank's step has forward and backward walls
    assert float(row["forward_ms"]) > 0 and float(row["backward_ms"]) > 0, row
    assert float(row["optimizer_ms"]) > 0, row
PY

# ---- the steps level: one steps.csv of own iteration times ----
job="$WORK/steps"
/usr/bin/python3 "$GEN" -o "$job" --ranks 8 --steps 12 --layout tp --level steps \
    --scenario host_stall --seed 7 || fail "steps: gen.py failed"
/usr/bin/python3 "$GEN" -o "$job.again" --ranks 8 --steps 12 --layout tp --level steps \
    --scenario host_stall --seed 7
cmp -s "$job/steps.csv" "$job.again/steps.csv" || fail "steps: two runs of one seed differ"
[ ! -e "$job/trace_rank0.json" ] || fail "steps: traces written"
"$ANALYZE" -o "$job.out" "$job/steps.csv" >"$WORK/out" 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; fail "steps: argus-analyze failed"; }
[ ! -s "$WORK/err" ] || { cat "$WORK/err" >&2; fail "steps: argus-analyze complained"; }
/usr/bin/python3 - "$job" "$job.out" <<'PY' || fail "steps: wrong"
import csv, json, sys
job, out = sys.argv[1:]
truth = json.load(open(job + "/truth.json"))
assert truth["level"] == "steps", truth
rows = list(csv.reader(open(job + "/steps.csv")))
assert rows[0] == ["step", "rank", "duration_ms"], rows[0]
got = {(int(s), int(r)): float(d) for s, r, d in rows[1:]}
assert sorted(got) == [(s, r) for s in range(12) for r in range(8)]
assert all(d > 0 for d in got.values())
f = truth["faults"][0]                # the stalled rank's own time holds its stall
for s, ms in zip(f["steps"], f["stall_ms"]):
    r = f["ranks"][0]
    others = sorted(got[(s, q)] for q in range(8) if q != r)
    assert got[(s, r)] > others[-1] + 0.9 * ms, (s, r, got[(s, r)], others[-1], ms)
rep = json.load(open(out + "/report.json"))
assert rep["job"]["ranks"] == 8 and rep["job"]["complete"] is True, rep["job"]
assert (rep["steps"]["count"], rep["steps"]["first"], rep["steps"]["last"]) == (12, 0, 11)
assert rep["inputs"]["analysed"] == 1 and not rep["inputs"]["skipped"], rep["inputs"]
PY

# ---- the new scenarios: what truth.json says is what was injected ----
job="$WORK/group"
/usr/bin/python3 "$GEN" -o "$job" --ranks 16 --steps 12 --layout dp --level steps \
    --scenario group_slow --severity 1.5 --seed 8 || fail "group_slow: gen.py failed"
job="$WORK/classes"
/usr/bin/python3 "$GEN" -o "$job" --ranks 8 --steps 12 --layout dp --scenario speed_classes \
    --severity 2 --seed 9 --clock-skew-us 0 || fail "speed_classes: gen.py failed"
/usr/bin/python3 "$GEN" -o "$job.steps" --ranks 8 --steps 12 --layout dp --level steps \
    --scenario speed_classes --severity 2 --seed 9 || fail "speed_classes: gen.py failed"
/usr/bin/python3 - "$WORK/group" "$job" "$job.steps" <<'PY' || fail "new scenarios: wrong"
import csv, json, statistics, sys
def own(d):                           # (rank) -> own step times, in step order
    t = {}
    for row in csv.DictReader(open(d + "/steps.csv")):
        t.setdefault(int(row["rank"]), []).append(float(row["duration_ms"]))
    return t
def growth(t, onset):                 # each rank's after/before, over the job's median one
    g = {r: statistics.median(v[onset + 1:]) / statistics.median(v[:onset])
         for r, v in t.items()}
    m = statistics.median(g.values())
    return {r: x / m for r, x in g.items()}
group, classes, csteps = sys.argv[1:]
truth = json.load(open(group + "/truth.json"))
f = truth["faults"][0]
assert truth["scenario"] == "group_slow" and f["kind"] == "compute_straggler", truth
assert len(f["ranks"]) == 4 and f["together"] and f["steps"] == [4, 11], f
g = growth(own(group), 4)
for r in range(16):                   # the group slows down from the onset, the rest not
    assert (g[r] > 1.3) == (r in f["ranks"]), (r, g[r])
truth = json.load(open(classes + "/truth.json"))
sc, f = truth["speed_classes"], truth["faults"][0]
assert sorted(sc["fast"] + sc["slow"]) == list(range(8)) and len(sc["slow"]) == 4, sc
assert f["kind"] == "compute_straggler" and len(f["ranks"]) == 2, f
for r in range(8):                    # nothing declares who is whose peer
    di = json.load(open("%s/trace_rank%d.json" % (classes, r)))["distributedInfo"]
    assert di["rank"] == r and "pg_config" not in di, di
t = own(csteps)
fast = statistics.median(statistics.median(t[r][:4]) for r in sc["fast"])
slow = statistics.median(statistics.median(t[r][:4]) for r in sc["slow"])
assert 3.0 < slow / fast < 5.0, (fast, slow)
g = growth(t, 4)
for r in range(8):                    # the two event ranks: 2x their own past
    assert (g[r] > 1.5) == (r in f["ranks"]), (r, g[r])
PY

# bad arguments are refused with one line, not a traceback
if /usr/bin/python3 "$GEN" -o "$WORK/bad" --layout dp --scenario slow_stage 2>"$WORK/err"; then
    fail "slow_stage on a layout without pipeline accepted"
fi
[ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err" >&2; fail "not one line"; }
if /usr/bin/python3 "$GEN" -o "$WORK/bad" --layout pp --scenario speed_classes 2>"$WORK/err"
then
    fail "speed_classes with a declared layout accepted"
fi
[ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err" >&2; fail "not one line"; }
if /usr/bin/python3 "$GEN" -o "$WORK/bad" --level phases --p2p async 2>"$WORK/err"; then
    fail "phases with asynchronous receives accepted"
fi
[ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err" >&2; fail "not one line"; }
echo "ok: t_indep_gen"
