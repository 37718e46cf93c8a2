#!/bin/sh
# t_dlrm_late.sh — argus-analyze on the real 8-rank DLRM trace (one step, Kineto, V100):
# rank 7 starts its step ~7.5 ms after the earliest rank and waits least in NCCL (1.75 ms
# vs 6.3 ms median) while its compute matches. The late-arriver test must name rank 7 as
# the source (host_stall: host-side lateness) with ranks 0-6 as victims; ranks 1 and 3,
# which only ran more kernels (optimizer tensors, another embedding share), must not
# become compute_straggler / kernel_degradation verdicts. The traces are in tests/data.
. "$(dirname "$0")/lib.sh"
need_data dlrm-8rank-v100
"$ANALYZE" -o "$WORK/out" "$DATA/dlrm-8rank-v100" >"$WORK/log" 2>&1 ||
    { cat "$WORK/log" >&2; fail "argus-analyze exit"; }
python3 - "$WORK/out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
an = r["anomalies"]
def show():
    for a in an:
        print(" ", a["kind"], a["ranks"], a["victims"], a["evidence"], file=sys.stderr)
late = [a for a in an if a["kind"] == "host_stall" and a["ranks"] == [7]]
if len(late) != 1:
    show(); sys.exit("FAIL: expected one host_stall on rank 7 (late arriver)")
a = late[0]
if a["victims"] != [0, 1, 2, 3, 4, 5, 6]:
    show(); sys.exit("FAIL: victims %s, expected ranks 0-6" % a["victims"])
if "late" not in a["evidence"] or a["steps"] != [10, 10] or a["level"] != "L3":
    show(); sys.exit("FAIL: evidence/steps/level of the late arriver")
bad = [x for x in an if x["kind"] in ("compute_straggler", "kernel_degradation")
       or any(q != 7 for q in x["ranks"])]
if bad:
    show(); sys.exit("FAIL: verdicts on ranks that only ran other work")
print("ok: rank 7 late arriver, ranks 0-6 victims, no verdict on ranks 1/3")
PY
