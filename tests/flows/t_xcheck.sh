#!/bin/sh
# t_xcheck.sh — argus-flows --argus-report: one simulated job seen both ways. In band: a
# 16-rank argus-simtrain run (tp 2 x pp 2 x dp 4, real mpirun, loopback) under argus-run
# writes report.json and steps.csv. Out of band: tests/flows/emit.py lays out the same
# layout's traffic at that run's step starts (--steps-from), with the rank to NIC map in
# the topology's rank column. With the right map: the layouts agree, no pair disagrees
# with Argus's groups, no rail is crossed, the median step within 1 % and each step's
# duration within 1 % (median) on the same clock. With two hosts' ranks swapped in the
# map (host1 <-> host5, stages 0 and 1): pairs disagree and exactly those hosts' ranks are
# suspects. With one NIC on another rail (its GPU index changed): rail crossings said.
# Exit 77 without mpirun or argus-simtrain.
command -v "${MPIRUN:-mpirun}" >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
. "$(dirname "$0")/lib.sh"
[ -x "$top_builddir/argus-simtrain" ] && [ -x "$top_builddir/tests/argus-run-build" ] ||
    { echo "SKIP: argus-simtrain not built (no MPI at configure)"; exit 77; }
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export ARGUS_DEADLINE_MS=${ARGUS_DEADLINE_MS:-30000}
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
ARGUS_JOBID=xcheck-$$ timeout 300 "$top_builddir/tests/argus-run-build" --outdir "$WORK/argus" -- \
    "${MPIRUN:-mpirun}" -np 16 "$top_builddir/argus-simtrain" --tp 2 --pp 2 --dp 4 \
    --microbatches 4 --steps 30 >"$WORK/sim.out" 2>"$WORK/sim.err" ||
    { tail -20 "$WORK/sim.err" >&2; fail "simulated job exit $?"; }
A="$WORK/argus/argus-xcheck-$$"
[ -s "$A/report.json" ] && [ -s "$A/steps.csv" ] || fail "no report.json or steps.csv in $A"
mkdir "$WORK/emit"
"$PY" "$HERE/emit.py" --out "$WORK/emit" --tp 2 --pp 2 --dp 4 --microbatches 4 --fwd-ms 3 \
    --slow 1 --steps-from "$A/steps.csv" --formats ipfix || fail "emit.py exit $?"
T="$WORK/emit/topology.csv"
"$FLOWS" -o "$WORK/ok" -t "$T" --argus-report "$A" "$WORK/emit/flows.ipfix" >/dev/null ||
    fail "right map: argus-flows exit $?"
"$PY" - "$WORK" "$T" <<'PYEOF' || fail "cross-check (above)"
import csv, json, sys
w, topo = sys.argv[1], sys.argv[2]
x = json.load(open(w + "/ok/flows.json"))["argus_crosscheck"]
assert x["layout_agrees"] and x["ranks_seen"] == 16, x
assert x["pairs_checked"] >= 16 and x["pairs_disagree"] == 0 and x["suspect_ranks"] == [], x
assert x["rail_crossings"] == 0 and x["stage_disagree"] == 0, x
assert x["step_median_rel_diff"] <= 0.01 and x["step_duration_err_median"] <= 0.01, x
assert x["step_shift"] == 0 and x["steps_compared"] >= 25, x
# the wrong maps: host1 <-> host5 ranks; host0's first NIC on rail 1
rows = list(csv.reader(open(topo)))
ranks = {h: [r[6] for r in rows[1:] if r[1] == h] for h in ("host1", "host5")}
want = sorted(int(r) for h in ranks for r in ranks[h])
sw, rail = [rows[0]], [rows[0]]
for r in rows[1:]:
    s = list(r)
    if r[1] in ranks:
        o = "host5" if r[1] == "host1" else "host1"
        s[6] = ranks[o][ranks[r[1]].index(r[6])]
    sw.append(s)
    q = list(r)
    if r[1] == "host0" and r[3] == "0":
        q[3] = "1"
    rail.append(q)
csv.writer(open(w + "/swap.csv", "w"), lineterminator="\n").writerows(sw)
csv.writer(open(w + "/rail.csv", "w"), lineterminator="\n").writerows(rail)
open(w + "/want", "w").write(json.dumps(want))
PYEOF
"$FLOWS" -o "$WORK/swap" -t "$WORK/swap.csv" -A "$A/report.json" "$WORK/emit/flows.ipfix" \
    >/dev/null || fail "swapped map: exit $?"
"$FLOWS" -o "$WORK/rail" -t "$WORK/rail.csv" -A "$A" "$WORK/emit/flows.ipfix" >/dev/null ||
    fail "rail: exit $?"
"$PY" - "$WORK" <<'PYEOF' || fail "wrong maps (above)"
import json, sys
w = sys.argv[1]
x = json.load(open(w + "/swap/flows.json"))["argus_crosscheck"]
assert x["pairs_disagree"] > 0 and x["suspect_ranks"] == json.load(open(w + "/want")), x
assert x["rail_crossings"] == 0, x
md = open(w + "/swap/flows.md").read()
assert "rank to host map is likely wrong" in md, md
y = json.load(open(w + "/rail/flows.json"))["argus_crosscheck"]
assert y["rail_crossings"] >= 2 and "traffic crossing rails" in open(w + "/rail/flows.md").read(), y
print("swap: suspects %s; rail: %d crossings" % (x["suspect_ranks"], y["rail_crossings"]))
PYEOF
echo "ok: flows and the in-band run agree; a swapped rank map and a crossed rail are said"
