# lib.sh — shared helpers for the integration tests (sourced). Real mpirun, oversubscribed,
# loopback only; as root the Open MPI allow-root variables are set.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
# TIMING_ALONE=1 before sourcing: the test judges a diagnosis made from real wall-clock
# timing of several Python or MPI ranks (a 0.5 s stall, a 40 ms late arrival). Two such
# tests side by side under make check -j2 put 8 ranks on 2 cores, and the injected fault
# drowns in stragglers that are only the neighbour (a CI run read rank 2's stall as a
# compute_straggler of ranks 0 and 2). So these tests take turns: the script re-runs itself
# under flock on one lock file of the build tree (-o: the job's processes do not hold it,
# so one that outlives the test cannot keep the others waiting).
if [ "${TIMING_ALONE:-}" = 1 ] && [ -z "${ARGUS_TIMING_LOCKED:-}" ] &&
    command -v flock >/dev/null 2>&1; then
    ARGUS_TIMING_LOCKED=1 exec flock -o "$top_builddir/tests/.timing-alone.lock" \
        /bin/sh "$0" "$@"
fi
MPIRUN=${MPIRUN:-mpirun}
export OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# These tests judge the diagnosis, not the deadlines (t_reduce_mute does): 16 ranks
# oversubscribed on 2 cores, next to another test, can stall a rank for seconds, and a
# window that misses the default 2 s deadline would be reported as missing data.
export ARGUS_DEADLINE_MS=${ARGUS_DEADLINE_MS:-30000}
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
SIM="$top_builddir/argus-simtrain"
ARGUS_RUN="$top_builddir/tests/argus-run-build"
SCORE="python3 $top_srcdir/tests/integration/score.py"

# A fresh scratch directory per test, removed on success.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/argus-it.XXXXXX")
cleanup() { rc=$?; if [ $rc = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi; }
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# run_sim JOBID ARGS... : 16-rank tp2 pp2 dp4 simulated job under argus-run; sets REPORT_DIR.
run_sim() {
    local jobid=$1; shift
    REPORT_DIR="$WORK/out/argus-$jobid"
    ARGUS_JOBID=$jobid timeout 300 "$ARGUS_RUN" --outdir "$WORK/out" -- \
        "$MPIRUN" -np 16 "$SIM" --tp 2 --pp 2 --dp 4 --microbatches 4 --steps 60 \
        --truth "$WORK/truth.json" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
}
