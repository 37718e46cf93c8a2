#!/bin/sh
# Where each rank runs, live and offline: 4 simulated ranks under argus-run with hwloc
# replaying the two-socket topology of tests/tracer/data (HWLOC_XMLFILE, HWLOC_THISSYSTEM=1,
# so the binding is this process's). Every rank's placement reaches rank 0 in its rank info:
# report.json has "placement" with the replayed NIC (mlx5_0, which this machine does not
# have) and each rank's CPUs; no GPU here, so "local" is null and there is no finding.
# argus-analyze over the spool reports the same map.
. "$(dirname "$0")/lib.sh"
export HWLOC_XMLFILE="$top_srcdir/tests/tracer/data/topo-2s-2gpu-2nic.xml" HWLOC_THISSYSTEM=1
d="$WORK/out/argus-place-$$"
ARGUS_JOBID=place-$$ timeout 300 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 4 "$SIM" --tp 1 --pp 1 --dp 4 --microbatches 2 --steps 20 \
    >"$WORK/stdout" 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; fail "simulated job failed"; }
"$top_builddir/argus-analyze" -o "$WORK/offline" "$d/summaries.argus" >"$WORK/offline.log" \
    2>&1 || { cat "$WORK/offline.log" >&2; fail "argus-analyze cannot read the spool"; }
python3 - "$d/report.json" "$WORK/offline/report.json" "$d/report.md" <<'PY' || fail "placement"
import json, sys
live, off = (json.load(open(p)) for p in sys.argv[1:3])
p = live["placement"]
assert [x["rank"] for x in p["ranks"]] == [0, 1, 2, 3], p
for x in p["ranks"]:
    assert x["nic"] == "mlx5_0", x
    assert x["cpuset"] and x["cpuset_cut"] is False, x
    assert x["gpu_bus_id"] is None and x["gpu_in_topology"] is False, x
    assert x["gpu_numa"] is None and x["local"] is None, x
    assert x["host"] == live["ranks"][x["rank"]]["host"], x
assert p["findings"] == [] and p["findings_dropped"] == 0, p
assert off["placement"] == p, (off["placement"], p)
md = open(sys.argv[3]).read()
assert "## Placement" in md and "| mlx5_0 |" in md and "misplacement" not in md, md
PY
