#!/usr/bin/env bash
# quickstart.sh — the main job on the embedded default: install dependencies, build and
# install Argus under ./_install, then run a simulated 16-rank training job (tp=2, pp=2,
# dp=4, 1F1B, 4 micro-batches, 60 steps) under argus-run with a compute straggler
# injected on rank 5 for steps 20-40, and print where the report is and what it found.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
./scripts/install-deps.sh
mkdir -p m4
echo "quickstart: building into _build-quickstart/ and installing into _install/ (log: _build-quickstart/build.log)"
mkdir -p _build-quickstart
if ! (autoreconf -fi && cd _build-quickstart && ../configure -q --prefix="$here/_install" && make -j2 && make install) \
        >_build-quickstart/build.log 2>&1; then
    tail -n 40 _build-quickstart/build.log
    echo "quickstart: the build failed; the whole log is _build-quickstart/build.log" >&2
    exit 1
fi

export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
out="$here/quickstart-out"
mkdir -p "$out"
export ARGUS_JOBID=${ARGUS_JOBID:-quickstart-$(date +%Y%m%dT%H%M%S)}
echo "quickstart: 16 simulated ranks, 60 steps, compute straggler on rank 5 in steps 20-40 ..."
"$here/_install/bin/argus-run" --outdir "$out" -- \
    mpirun -np 16 "$here/_install/bin/argus-simtrain" --tp 2 --pp 2 --dp 4 \
    --microbatches 4 --steps 60 \
    --inject compute_straggler:ranks=5,steps=20-40,factor=1.5 \
    --truth "$out/argus-$ARGUS_JOBID.truth.json"
echo
# Argus never reuses a directory: a rerun with the same ARGUS_JOBID gets argus-<jobid>.1
dir=$(ls -td "$out/argus-$ARGUS_JOBID"*/ 2>/dev/null | head -n 1)
echo "quickstart: report in ${dir:-$out/argus-$ARGUS_JOBID/} (report.md for people, report.json for scripts)"
