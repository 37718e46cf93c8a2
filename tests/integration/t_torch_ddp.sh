#!/bin/sh
# A real PyTorch job (issue 17, item 3): Debian's python3-torch on CPU, 4 ranks of DDP with
# the gloo backend (torch_ddp.py), steps and phases marked with python/argus.py, launched
# by argus-run around real mpirun. Injected: rank SLOW's forward pass 2x slower (its work
# done twice) for steps 20-39; rank STALL sleeps 0.5 s at the start of steps 14, 47, 58.
#
# Two parts:
#  (a) hard preconditions, which hold today: the job completes, report.json is written and
#      complete, 4 ranks, the steps as run (less the warm-up steps marked before Argus
#      was active in the ranks), forward and backward phases measured.
#      Failing one exits 99: an automake hard ERROR, never taken for the expected failure.
#  (b) the diagnosis issue 17 requires: the slow rank named alone, phase forward, over its
#      steps; the stalling rank named alone, kind host_stall, with exactly the three steps;
#      no other rank named over the injected steps. Failing exits 1.
# The job has no GPU kernels: Argus judges it on the phase marks (docs/ALGORITHMS.md,
# "Data levels"). Before issue 17 it reported rank-less iteration_jitter or
# step_regression here. What Argus reported (kind, ranks, steps, phase) is printed either
# way, for the log.
# Skipped (77) when /usr/bin/python3 cannot import torch (scripts/install-deps.sh installs
# python3-torch).
PY=/usr/bin/python3
"$PY" -c "import torch, torch.distributed" 2>/dev/null ||
    { echo "SKIP: $PY cannot import torch (apt-get install python3-torch)"; exit 77; }
TIMING_ALONE=1 # wall-clock timing judged: one such test at a time (lib.sh)
. "$(dirname "$0")/lib.sh"
hard() { echo "ERROR (precondition): $*" >&2; exit 99; }

STEPS=70 SLOW=1 SLOW_FROM=20 SLOW_STEPS=20 STALL=2 STALL_STEPS=14,47,58
# Like ARGUS_DEADLINE_MS in lib.sh: this judges the diagnosis, and 4 Python ranks on 2
# busy cores can leave a rank's Argus thread unscheduled past the 500 ms silence limit.
export ARGUS_SILENCE_MS=${ARGUS_SILENCE_MS:-30000}
export MASTER_ADDR=127.0.0.1 GLOO_SOCKET_IFNAME=lo
MASTER_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0));
print(s.getsockname()[1])') || hard "no free port"
export MASTER_PORT
JOB="torch-ddp-$$"
REPORT_DIR="$WORK/out/argus-$JOB"
t0=$(date +%s)
ARGUS_JOBID=$JOB timeout 240 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 4 --oversubscribe "$PY" "$top_srcdir/tests/integration/torch_ddp.py" \
    --steps $STEPS --master-port "$MASTER_PORT" \
    --slow-rank $SLOW --slow-from $SLOW_FROM --slow-steps $SLOW_STEPS \
    --stall-rank $STALL --stall-steps $STALL_STEPS --stall-ms 500 \
    >"$WORK/stdout" 2>"$WORK/stderr" ||
    { cat "$WORK/stdout" "$WORK/stderr" >&2; hard "the PyTorch job failed"; }
echo "job: $(( $(date +%s) - t0 )) s"
cat "$WORK/stdout"
grep "^argus: " "$WORK/stderr" || true
# mpirun may interleave the ranks' lines (one's newline after another's text): count matches
n=$(grep -o "done $STEPS steps, median step [0-9.]* ms, argus active" "$WORK/stdout" | wc -l)
[ "$n" = 4 ] || { cat "$WORK/stderr" >&2; hard "$n of 4 ranks finished with Argus active"; }
[ -f "$REPORT_DIR/report.json" ] || hard "no report.json in $REPORT_DIR"
[ -f "$REPORT_DIR/steps.csv" ] || hard "no steps.csv in $REPORT_DIR"

# (a) preconditions
# Marks made before Argus is active in a rank are dropped (tracer/api.c): the first mark
# starts MPI's self-initialisation (reduce/selfinit.h), and the steps run meanwhile are
# lost. Those warm-up steps may be missing, up to the first injected one; none after.
"$PY" - "$REPORT_DIR" $STEPS $SLOW $SLOW_FROM $SLOW_STEPS $STALL $STALL_STEPS <<'PY' ||
import csv, json, statistics, sys
d, steps = sys.argv[1], int(sys.argv[2])
slow, first, n, stall = (int(x) for x in sys.argv[3:7])
stalls = sorted(int(x) for x in sys.argv[7].split(","))
first_injected = min([first] + stalls)
r = json.load(open(d + "/report.json"))
j, s = r["job"], r["steps"]
assert j["complete"] is True and j["missing_ranks"] == [], j
assert j["ranks"] == 4, j
assert s["last"] == steps - 1 and s["first"] < first_injected, s
assert s["count"] == s["last"] - s["first"] + 1, s
print("steps: %d of %d (%d-%d), median %.1f ms" % (s["count"], steps, s["first"], s["last"],
                                                   s["median_ms"]))
rows = list(csv.DictReader(open(d + "/steps.csv")))
assert sorted({int(x["rank"]) for x in rows}) == [0, 1, 2, 3]
for ph in ("forward_ms", "backward_ms", "optimizer_ms"):
    med = statistics.median(float(x[ph]) for x in rows)
    print("phase %s: median %.3f ms" % (ph, med))
    assert ph == "optimizer_ms" or med > 0.1, (ph, med)
# the injections are in Argus's data: the slow rank's forward, the stalling rank's steps
def cell(rank, pred):
    return [x for x in rows if int(x["rank"]) == rank and pred(int(x["step"]))]
inside = lambda k: first <= k < first + n
fw_in = statistics.median(float(x["forward_ms"]) for x in cell(slow, inside))
fw_out = statistics.median(float(x["forward_ms"]) for x in cell(slow, lambda k: not inside(k)))
print("rank %d forward: %.1f ms in steps %d-%d, %.1f ms elsewhere (%.2fx)"
      % (slow, fw_in, first, first + n - 1, fw_out, fw_in / fw_out))
# 2x the work; on 2 busy cores the wall shows 1.4-2.6x: 1.2x is the issue's least severity
assert fw_in > 1.2 * fw_out, (fw_in, fw_out)
wall = {int(x["step"]): (int(x["end_ns"]) - int(x["start_ns"])) / 1e6
        for x in cell(stall, lambda k: True)}
typical = statistics.median(wall.values())
print("rank %d step wall: %s at steps %s, median %.1f ms" % (
    stall, ", ".join("%.1f" % wall[k] for k in stalls), stalls, typical))
assert all(wall[k] > typical + 300 for k in stalls), (wall, typical)
PY
    hard "the report does not describe the job as run"

# (b) the diagnosis (issue 17, item 3): ddp_verdict.py. The slow rank's range may be off
# by half its 20 steps at either edge: on 2 shared cores every rank's forward phase jumps
# between ~7 and ~15-25 ms, as large as the injected 2x: 10 runs on 2 December 2026
# named rank 1 over 16-41 ... 27-40 and a CI run 22-45; at a quarter, 3 of the 10 and
# the CI run failed (recorded: tests/data/torch-ddp, run3-run5). The rank, phase, kind
# and the stall's exact steps are judged strictly.
"$PY" "$top_srcdir/tests/integration/ddp_verdict.py" "$REPORT_DIR/report.json" \
    $SLOW $SLOW_FROM $SLOW_STEPS $STALL $STALL_STEPS 0.5 ||
    fail "the diagnosis misses the injected slow rank or host stall (issue 17, item 3)"
exit 0
