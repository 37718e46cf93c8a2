# lib.sh — shared helpers for the real-Slurm tests (sourced by tests/slurm/t_*.sh).
# Skips (exit 77) unless root with the Slurm and munge packages and a built plugin; then
# starts a private one-node cluster (slurm-local.sh) in its own directory on a free port,
# and stops it again by pid on exit, whatever happens. Jobs run in $WORK.
set -eu
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (slurmd, munged)"
for b in munged mungekey slurmctld slurmd slurmstepd srun sbatch squeue scontrol; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || skip "$b not installed (scripts/install-deps.sh)"
done
export PATH="$PATH:/usr/sbin:/sbin"
PLUGIN="$top_builddir/.libs/spank_argus.so"
LIBDIR="$top_builddir/.libs"
[ -f "$PLUGIN" ] || skip "spank_argus.so not built (configure did not find slurm/spank.h)"
[ -f "$LIBDIR/libargus.so" ] || fail "libargus.so not built"

SIM="$top_builddir/argus-simtrain"
SCORE="python3 $top_srcdir/tests/integration/score.py"
SLURM_LOCAL="$top_srcdir/tests/slurm/slurm-local.sh"
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under `make check` MAKEFLAGS holds every test log name: a line of several KB that srun
# may forward in pieces, so `srun -n 4 env` lines of different tasks interleave (seen in
# CI: one task's CUDA_INJECTION64_PATH line glued to another's MAKEFLAGS). The tasks need
# nothing from make. The same for any other variable of more than 2 KB (TEST_LOGS, which
# names every test of the build, is one and grows with it).
unset MAKEFLAGS MFLAGS MAKELEVEL TEST_LOGS || true
for v in $(env | awk -F= 'length($0) > 2048 && $1 ~ /^[A-Za-z_][A-Za-z0-9_]*$/ {print $1}'); do
    unset "$v" || true
done
unset ARGUS ARGUS_MODE ARGUS_OUTDIR ARGUS_JOBID ARGUS_WINDOW LD_PRELOAD \
      CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH 2>/dev/null || true

WORK=$(mktemp -d /tmp/argus-slurm.XXXXXX)
chmod 755 "$WORK"
export SLURM_LOCAL_DIR="$WORK/cluster"
export SLURM_LOCAL_CPUS=${SLURM_LOCAL_CPUS:-16}
# Open MPI's shared-memory files are named after the PMIx namespace (slurm.pmix.<job>.<step>):
# two tests' clusters both run job 1, so under make -j2 their jobs shared /dev/shm segments
# and segfaulted in mca_btl_vader_poll_handle_frag. Each test keeps its own.
mkdir -p "$WORK/shm"; chmod 1777 "$WORK/shm"
export OMPI_MCA_btl_vader_backing_directory="$WORK/shm"

port_busy() { grep -qiE ":$(printf %04X "$1") [0-9A-F]+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null; }
# A free slurmctld port (and +1 for slurmd) from the test's own base, so tests that make
# runs in parallel do not meet.
pick_port() {
    local p=$1
    while port_busy "$p" || port_busy $((p + 1)); do
        p=$((p + 2)); [ "$p" -lt $(($1 + 200)) ] || fail "no free port near $1"
    done
    echo "$p"
}

cleanup() {
    rc=$?
    "$SLURM_LOCAL" stop >/dev/null 2>&1 || true
    if [ $rc = 0 ]; then rm -rf "$WORK"; else
        echo "kept $WORK (logs in $SLURM_LOCAL_DIR/log)" >&2; fi
}
trap cleanup EXIT

# cluster_start BASEPORT
cluster_start() {
    export SLURM_LOCAL_PORT
    SLURM_LOCAL_PORT=$(pick_port "$1")
    "$SLURM_LOCAL" start >"$WORK/cluster-start.log" 2>&1 ||
        { cat "$WORK/cluster-start.log" >&2; fail "local Slurm did not start"; }
    eval "$("$SLURM_LOCAL" env)"
    cd "$WORK"
}

# plug WORDS... : the plugstack.conf line for our plugin (optional unless PLUG_KIND set)
plug() { echo "${PLUG_KIND:-optional} $PLUGIN $*" > "$SLURM_LOCAL_DIR/etc/plugstack.conf"; }

# run_srun OUT ARGS... : srun -Q with a time limit; stdout/stderr in OUT.out / OUT.err
run_srun() {
    local out=$1; shift
    timeout 300 srun -Q "$@" >"$WORK/$out.out" 2>"$WORK/$out.err"
}

# node_idle : wait (at most 30 s) until the node has no job, not even one completing. A
# job that root submits for another user (srun --uid) must not pend: the allocation it
# then gets later comes as a message authenticated for that user, which root's srun cannot
# decode ("Munge decode failed: Unauthorized credential for client UID=0"), and the job
# fails (Slurm 22.05, as Debian 12 ships it).
node_idle() {
    local i
    for i in $(seq 150); do
        scontrol show node 2>/dev/null | grep -q 'State=IDLE ' && return 0
        sleep 0.2
    done
    scontrol show node >&2
    fail "the node is still busy after 30 s"
}

# batch_run NAME SCRIPT : submit, wait for the end (polling, faster than sbatch --wait),
# print the job id; the job's output goes to $WORK/NAME.log.
batch_run() {
    local id st i
    id=$(sbatch --parsable -o "$WORK/$1.log" "$2") || fail "sbatch $1 refused"
    for i in $(seq 3000); do
        st=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case $st in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break;; esac
        sleep 0.2
    done
    [ "$st" = COMPLETED ] || { cat "$WORK/$1.log" >&2; fail "batch job $1 ended $st"; }
    echo "$id"
}

# count_argus FILE : lines starting with "argus: "
count_argus() { grep -c '^argus: ' "$1" || true; }

# check_report DIR RANKS STEPS TRUTH : complete report.json that names the injected fault
check_report() {
    [ -f "$1/report.json" ] || { ls -R "$WORK" >&2; fail "no report.json in $1"; }
    python3 - "$1/report.json" "$2" "$3" <<'PY' || fail "report in $1 incomplete"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"]["complete"] is True, r["job"]
assert r["job"]["ranks"] == int(sys.argv[2]), r["job"]
assert r["steps"]["count"] == int(sys.argv[3]), r["steps"]
PY
    $SCORE "$1/report.json" "$4" || fail "diagnosis in $1 wrong"
}
