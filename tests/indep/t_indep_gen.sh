#!/bin/sh
# t_indep_gen.sh — the independent scenario source (tests/indep/gen.py) writes well-formed
# Kineto traces that argus-analyze reads whole: per layout and p2p mode, every trace parses,
# kernels have their launch (correlation) and never overlap on one stream, the members of
# a collective end together, the same seed gives the same bytes, and argus-analyze reports
# the ranks, the steps, the declared layout, every kernel and job.complete true. Only the
# input is checked here, not the diagnosis: bench/detect_indep.py scores that (issue 17).
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
# bad arguments are refused with one line, not a traceback
if /usr/bin/python3 "$GEN" -o "$WORK/bad" --layout dp --scenario slow_stage 2>"$WORK/err"; then
    fail "slow_stage on a layout without pipeline accepted"
fi
[ "$(wc -l <"$WORK/err")" = 1 ] || { cat "$WORK/err" >&2; fail "not one line"; }
echo "ok: t_indep_gen"
