#!/bin/sh
# NCCL's in-band view from a second source that does not share the analysis' modelling: a
# small real MPI program (nccl_arrival.c) plays NCCL's side of the profiler-plugin
# contract to libargus_nccl.so in real time under argus-run (4 ranks, one communicator):
# rank 2 sleeps 40 ms before the collective in steps 15-24 (a late arriver), rank 1's
# SendWait to rank 2 lasts 12 ms instead of 2 ms (one slow link). report.json must name
# rank 2 the last arriver of the anomaly over those steps with its lateness within 30 % of
# 40 ms, last at every one of those steps over the run, and the slow pair 1 -> 2 in the
# run's NCCL summary.
TIMING_ALONE=1 # wall-clock timing judged: one such test at a time (lib.sh)
. "$(dirname "$0")/lib.sh"
APP="$top_builddir/tests/integration/nccl_arrival"
# A spool this test recorded on a loaded machine (rank 2 last at 28 of 40 steps, so every
# member waited and the link's rank a hair over the median): the slow pair must still be
# named (the wait gate once refused it).
"$top_builddir/argus-analyze" -o "$WORK/loaded" \
    "$top_srcdir/tests/integration/data/nccl_arrival_loaded.argus" >"$WORK/loaded.log" 2>&1 ||
    { cat "$WORK/loaded.log" >&2; fail "argus-analyze on the recorded spool failed"; }
python3 - "$WORK/loaded/report.json" <<'PY' || fail "recorded spool: slow pair 1 -> 2 not named"
import json, sys
c = json.load(open(sys.argv[1]))["nccl"]["communicators"][0]
sp = c["slow_pair"]
assert sp and sp["rank"] == 1 and sp["peer"] == 2, c
PY
export ARGUS_LOG=info
out="$WORK/out"
ARGUS_JOBID="nccl-arrival-$$" timeout 180 "$ARGUS_RUN" --outdir "$out" -- \
    "$MPIRUN" -np 4 "$APP" 40 2 15 24 40 1 12 >"$WORK/stdout" 2>"$WORK/stderr" \
    || { cat "$WORK/stdout" "$WORK/stderr" >&2; fail "job failed"; }
n=$(grep -c "done 40 steps" "$WORK/stdout" || true)
[ "$n" = 4 ] || { cat "$WORK/stdout" "$WORK/stderr" >&2; fail "$n of 4 ranks finished"; }
python3 - "$out/argus-nccl-arrival-$$/report.json" <<'PY' || fail "report wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["ranks"] == 4, r["job"]
nc = r.get("nccl")
assert nc and nc["communicators"], "no nccl summary in report.json"
c = nc["communicators"][0]
print("run:", {k: c[k] for k in ("members", "steps_aligned", "last_arriver", "times_last",
                                 "median_lateness_ms", "slow_pair")})
for m in c["ranks"]:
    print("  rank", m["rank"], "last", m["times_last"], "wait", m["peer_wait_ms"], "xfer",
          m["transfer_ms"], "gpu", m["gpu_wait_ms"], "peer", m["peer"], m["peer_transfer_ms"])
assert c["members"] == 4, c
assert c["steps_aligned"] >= 30, c
late = [m for m in c["ranks"] if m["rank"] == 2][0]
assert late["times_last"] >= 10, late                      # last at each late step
sp = c["slow_pair"]
assert sp and sp["rank"] == 1 and sp["peer"] == 2, sp        # the slow link
assert 0.7 * 12 <= sp["transfer_ms"] <= 1.3 * 12, sp
# the anomaly that covers most of steps 15-24 (on a loaded machine CPU contention can
# make another, short one that only touches them; it is not judged here)
ov = lambda a: min(a["steps"][1], 24) - max(a["steps"][0], 15) + 1
hit = sorted([a for a in r["anomalies"] if ov(a) >= 5 and "nccl" in a], key=ov, reverse=True)
print("anomalies:", [(a["kind"], a["steps"], a["ranks"], a.get("nccl", {}).get("last_arriver"),
                      a.get("nccl", {}).get("median_lateness_ms")) for a in r["anomalies"]])
assert hit, "no anomaly over most of steps 15-24 with an nccl view"
v = hit[0]["nccl"]
assert v["last_arriver"] == 2 and v["late"] is True, v
assert 0.7 * 40 <= v["median_lateness_ms"] <= 1.3 * 40, v
print("ok: last arriver 2, %.1f ms late (40 injected); slow pair 1 -> 2 %.1f ms" %
      (v["median_lateness_ms"], sp["transfer_ms"]))
PY
echo "pass: NCCL's view names the late rank and the slow link"
