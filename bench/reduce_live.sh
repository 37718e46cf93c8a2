#!/bin/sh
# reduce_live.sh — the reduction's live figures: a real oversubscribed mpirun of the simulator
# (NP ranks, tp 2 x pp 2 x dp NP/4, STEPS steps) under argus-run, with Argus's own
# reduction; prints one JSON line from rank 0's reduce.json: rank-0 inbound bytes per step
# and per rank-step against the aggregate goal (64 B x P + 64 KB per step), the windows,
# whether every rank's data arrived, and rank 0's Argus thread CPU as a share of the
# job's wall time. With ARGUS_CONDENSE=0 in the environment the tree condenses (the mode
# of jobs past 96 ranks, reduce/condense.h) and the line says how many cells reached
# rank 0 in full (exemplars) and as rows only (thin), and what rank 0's pulls from its
# condensing children did. Run from the build directory:
# make bench-reduce-live (both modes), or
# top_builddir=. top_srcdir=SRC sh SRC/bench/reduce_live.sh [NP] [STEPS]
set -eu
: "${top_builddir:?run from the build directory (make bench-reduce-live)}"
NP=${1:-32}
STEPS=${2:-60}
[ $((NP % 4)) = 0 ] || { echo "reduce_live: NP must be a multiple of 4" >&2; exit 2; }
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export ARGUS_DEADLINE_MS=${ARGUS_DEADLINE_MS:-30000}
[ "$(id -u)" != 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-live.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
t0=$(date +%s.%N)
ARGUS_JOBID=live timeout 600 "$top_builddir/tests/argus-run-build" --outdir "$WORK" -- \
    mpirun -np "$NP" "$top_builddir/argus-simtrain" --tp 2 --pp 2 --dp $((NP / 4)) \
    --microbatches 4 --steps "$STEPS" >"$WORK/stdout" 2>"$WORK/stderr" ||
    { tail -5 "$WORK/stderr" >&2; echo "reduce_live: the simulated job failed" >&2; exit 1; }
t1=$(date +%s.%N)
python3 - "$WORK/argus-live/reduce.json" "$t0" "$t1" "$NP" <<'PY'
import json, sys
x = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
p = int(sys.argv[4])
per_step = x["rank0_bytes_in_per_step"]
goal = 64 * p + 65536
print(json.dumps({
    "ranks": x["ranks"], "steps": x["steps"], "windows": x["windows"],
    "exchange": x["exchange"], "tree_fanin": x["tree"]["fanin"],
    "condensed": x["condense"]["on"], "cells_full": x["condense"]["exemplars"],
    "cells_thin": x["condense"]["thin"], "pull": x["condense"].get("pull"),
    "tree_depth": x["tree"]["depth"], "missing_ranks": len(x["missing"]),
    "rank0_bytes_in_per_step": round(per_step, 1),
    "rank0_bytes_in_per_rank_step": round(per_step / p, 1),
    "aggregate_goal_bytes_per_step": goal,
    "ratio_to_goal": round(per_step / goal, 3),
    "argus_thread_cpu_s": x["argus_thread_cpu_s"], "job_wall_s": round(wall, 2),
    "argus_thread_cpu_share": round(x["argus_thread_cpu_s"] / wall, 4)}))
PY
