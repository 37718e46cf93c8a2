#!/bin/sh
# record_torch.sh — record the real PyTorch step series of tests/data/torch/ (issue 18:
# the forecast validated on a real PyTorch job). Each run is tests/forecast/torch_job.py,
# Debian's python3-torch on CPU, 2 ranks of DDP over gloo, launched by argus-run around
# real mpirun, 400 steps; what Argus wrote is kept: the spool (summaries.argus, what
# bench/forecast.py and t_predict_torch.sh read) and run.json (how it was run, where and
# when, the live report's step range and forecast plan, and job_step_ms: every step's
# wall time on the job's own clock, the slowest rank's, measured without Argus).
#
# Re-record (from the source tree, with a built tree; about 5 minutes on 2 cores, and up
# to QUIET_WAIT_S more per run on a busy machine):
#     tests/forecast/record_torch.sh _build-x                # every run, into tests/data/torch
#     tests/forecast/record_torch.sh _build-x /tmp/t plain   # one run, elsewhere
# Then update tests/data/torch/README.md (date, machine) and re-run make bench-forecast.
# Each recording takes the heavy-test lock (flock $ARGUS_HEAVY_LOCK, default
# /tmp/argus-heavy.lock; empty: none) so that it does not share the cores with another
# heavy test, and waits (quiet, below) for the machine's load to fall; what else the
# machine runs still shows in the steps, as a noisy neighbour does on a real cluster.
#
# The runs (what the forecast must handle):
#   plain      MLP 3 x 256, batch 64
#   plan       the same, argus.set_total_steps(400): the plan recorded in the spool
#   envplan    the same, ARGUS_TOTAL_STEPS=400 (recorded in the spool too by builds whose
#              rank info carries it; rank 0's live reports only before)
#   ckpt       MLP 3 x 1024, batch 8, a checkpoint (torch.save + fsync, ~25 MB) every
#              25 steps by rank 0
#   regime     batch 64, then 160 from step 60 (before the 25 % cut): a regime change
#   hog        a CPU-hog neighbour (a busy shell loop, started and stopped here by the
#              job's progress) during steps 40-70 and 200-250: two slowdown episodes
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR [OUTDIR [RUN...]]" >&2; exit 2; }
B=$(cd "$1" && pwd)
S=$(cd "$(dirname "$0")/../.." && pwd)
O=${2:-$S/tests/data/torch}
if [ $# -ge 2 ]; then shift 2; else shift 1; fi
RUNS=${*:-plain plan envplan ckpt regime hog}
PY=/usr/bin/python3
JOB_PY=$S/tests/forecast/torch_job.py
STEPS=400
LOCK=${ARGUS_HEAVY_LOCK-/tmp/argus-heavy.lock}
if [ -n "$LOCK" ] && [ -z "${ARGUS_REC_LOCKED:-}" ]; then
    export ARGUS_REC_LOCKED=1
    exec flock "$LOCK" sh "$0" "$B" "$O" $RUNS
fi
"$PY" -c "import torch, torch.distributed" ||
    { echo "$0: $PY cannot import torch (apt-get install python3-torch)" >&2; exit 1; }
[ -x "$B/tests/argus-run-build" ] || { echo "$0: no $B/tests/argus-run-build (make check)" >&2; exit 1; }
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# 2 Python ranks on 2 busy cores, a hog beside them: no missed deadline or silence
export ARGUS_DEADLINE_MS=30000 ARGUS_SILENCE_MS=30000
export MASTER_ADDR=127.0.0.1 GLOO_SOCKET_IFNAME=lo
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/argus-rec.XXXXXX")
HOG=
trap '[ -z "$HOG" ] || kill "$HOG" 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$O"

# done_steps: the steps the job's rank 0 has finished (its --progress file), 0 before
done_steps() { cat "$W/progress" 2>/dev/null || echo 0; }
# hog_between A B: a busy neighbour from step A to step B; the steps seen are logged
hog_between() {
    while [ "$(done_steps)" -lt "$1" ]; do kill -0 "$job" 2>/dev/null || return 0; sleep 0.05; done
    sh -c 'while :; do :; done' &
    HOG=$!
    echo "$(done_steps)" >>"$W/hog"
    while [ "$(done_steps)" -lt "$2" ] && kill -0 "$job" 2>/dev/null; do sleep 0.05; done
    kill "$HOG"
    wait "$HOG" 2>/dev/null || true
    HOG=
    echo "$(done_steps)" >>"$W/hog"
}

# quiet: wait, up to QUIET_WAIT_S (default 180) seconds, for the machine's 1-minute load
# average to fall under QUIET_LOAD (default 3; 0: no wait); run.json keeps what it was
quiet() {
    waited=0
    while [ "${QUIET_LOAD:-3}" != 0 ] && [ "$waited" -lt "${QUIET_WAIT_S:-180}" ] &&
        awk -v m="${QUIET_LOAD:-3}" '{ exit !($1 >= m) }' /proc/loadavg; do
        sleep 5
        waited=$((waited + 5))
    done
    echo "$waited $(cut -d' ' -f1 /proc/loadavg)" >"$W/quiet"
}

record() { # NAME WHAT [ENV=V...] -- [torch_job.py options]
    name=$1 what=$2
    shift 2
    quiet
    envs=
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    rm -rf "$W/out" "$W/ck" "$W/progress" "$W/hog" "$W/load" "$W"/walls.*
    mkdir -p "$W/ck"
    port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0));
print(s.getsockname()[1])')
    t0=$(date +%s)
    # shellcheck disable=SC2086  # envs: the run's VAR=VALUE words
    env ARGUS_JOBID="torch-$name" MASTER_PORT="$port" $envs timeout 300 \
        "$B/tests/argus-run-build" --outdir "$W/out" -- \
        mpirun -np 2 "$PY" "$JOB_PY" --steps $STEPS --master-port "$port" \
        --progress "$W/progress" --walls "$W/walls" "$@" >"$W/stdout" 2>"$W/stderr" &
    job=$!
    # the machine's 1-minute load average every 2 s while the job runs (run.json): what
    # else ran beside it (2 ranks and, in hog, the neighbour are about 2 and 3 of it)
    while kill -0 "$job" 2>/dev/null; do cut -d' ' -f1 /proc/loadavg >>"$W/load"; sleep 2; done &
    sampler=$!
    [ "$name" != hog ] || { hog_between 40 70; hog_between 200 250; }
    wait "$job" || { cat "$W/stdout" "$W/stderr" >&2; echo "$0: run $name failed" >&2; exit 1; }
    t1=$(date +%s)
    wait "$sampler"
    D="$W/out/argus-torch-$name"
    n=$(grep -o "done $STEPS steps, median step [0-9.]* ms, argus active" "$W/stdout" | wc -l)
    [ "$n" = 2 ] || { cat "$W/stdout" "$W/stderr" >&2; echo "$0: $name: $n of 2 ranks done" >&2; exit 1; }
    mkdir -p "$O/$name"
    cp "$D/summaries.argus" "$O/$name/summaries.argus"
    chmod 644 "$O/$name/summaries.argus"
    "$PY" - "$O/$name/run.json" "$D/report.json" "$W/stdout" "$W/hog" "$W/walls" "$W/load" \
        "$W/quiet" "$name" "$what" \
        "$((t1 - t0))" "$envs" "$(echo "$*" | sed "s|$W|TMP|g")" <<'PY'
import json, os, platform, re, sys, time
import torch
out, rep, stdout, hog, walls, load, quiet, name, what, secs, envs, args = sys.argv[1:]
waited, load0 = open(quiet).read().split()
# the job's own clock, per step the slowest rank's (ms): the truth without Argus
own = [[float(x) for x in open("%s.%d" % (walls, r))] for r in (0, 1)]
r = json.load(open(rep))
f = r.get("forecast") or {}
cpu = ""
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
h = [int(x) for x in open(hog).read().split()] if os.path.exists(hog) else []
meta = {"name": name, "what": what, "job": "tests/forecast/torch_job.py --steps 400 " + args,
        "env": envs.split(), "ranks": r["job"]["ranks"], "steps_run": 400,
        "planned_steps": (int(re.search(r"--total-steps (\d+)", args).group(1))
                          if "--total-steps" in args else
                          int(dict(e.split("=", 1) for e in envs.split())
                              .get("ARGUS_TOTAL_STEPS", 0))),
        "plan_in_spool": "--total-steps" in args or "ARGUS_TOTAL_STEPS=" in envs,
        "hog_steps": [h[i:i + 2] for i in range(0, len(h), 2)],
        "steps": {k: r["steps"][k] for k in ("first", "last", "count", "median_ms")},
        "live_forecast": {k: f.get(k) for k in ("steps_done", "steps_total", "steps_left",
                                                 "per_1000_steps")},
        "ranks_said": re.findall(r"rank \d+: done \d+ steps, median step [0-9.]+ ms",
                                 open(stdout).read()),
        "recorded_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_s": int(secs),
        "waited_for_quiet_s": int(waited), "loadavg_1min_at_start": float(load0),
        "loadavg_1min_every_2s": [float(x) for x in open(load).read().split()],
        "job_step_ms": [round(max(a, b), 3) for a, b in zip(*own)],
        "machine": {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
                    "python": platform.python_version(), "torch": torch.__version__}}
txt = json.dumps(meta, indent=1)
# the 400 step times on one line
txt = re.sub(r'"(job_step_ms|loadavg_1min_every_2s)": \[[^]]*\]',
             lambda m: re.sub(r"\s+", " ", m.group(0)), txt)
open(out, "w").write(txt + "\n")
PY
    echo "$name: $((t1 - t0)) s, $(wc -c <"$O/$name/summaries.argus") bytes"
}

for run in $RUNS; do
    case $run in
        plain) record plain "plain" -- ;;
        plan) record plan "argus.set_total_steps(400)" -- --total-steps 400 ;;
        envplan) record envplan "ARGUS_TOTAL_STEPS=400" ARGUS_TOTAL_STEPS=400 -- ;;
        ckpt) record ckpt "a checkpoint every 25 steps" -- --width 1024 --batch 8 \
                  --ckpt-every 25 --ckpt-dir "$W/ck" ;;
        regime) record regime "batch 64, then 160 from step 60" -- --regime-from 60 \
                    --regime-batch 160 ;;
        hog) record hog "a CPU-hog neighbour during steps 40-70 and 200-250" -- ;;
        *) echo "$0: unknown run $run" >&2; exit 2 ;;
    esac
done
