#!/bin/sh
# srun --argus=on -n 16 with the simulator and an injected straggler, under a templated
# outdir (%u user, %x job name): the report lands in <outdir>/argus-<jobid>.<stepid>/,
# mode 0750, and names the straggler; every task saw the contract.
. "$(dirname "$0")/lib.sh"
cluster_start 6817
plug "libdir=$LIBDIR" "outdir=$WORK/out/%u/%x" window=10
SPEC=compute_straggler:ranks=5,steps=20-40,factor=1.5
run_srun sim --argus=on -J simjob -n 16 "$SIM" --tp 2 --pp 2 --dp 4 --microbatches 4 \
    --steps 60 --truth "$WORK/truth.json" --inject "$SPEC" ||
    { cat "$WORK/sim.err" >&2; fail "srun --argus=on simulator job failed"; }
dir=$(ls -d "$WORK"/out/root/simjob/argus-*.0 2>/dev/null) ||
    { ls -R "$WORK/out" >&2; cat "$WORK/sim.err" >&2; fail "no argus-<jobid>.0 under the templated outdir"; }
case $(basename "$dir") in argus-[0-9]*.0) ;; *) fail "bad directory name $dir";; esac
[ "$(stat -c %a "$dir")" = 750 ] || fail "$dir is not mode 0750"
check_report "$dir" 16 60 "$WORK/truth.json"
grep -q "argus: anomaly" "$WORK/sim.err" || { cat "$WORK/sim.err" >&2; fail "no anomaly line"; }

# every task got the whole contract, ARGUS_JOBID=<job>.<step>
run_srun env --argus=on -n 4 env || fail "srun env failed"
[ "$(grep -c '^ARGUS_MODE=on$' "$WORK/env.out")" = 4 ] || fail "ARGUS_MODE=on not in 4 tasks"
[ "$(grep -c "^LD_PRELOAD=$LIBDIR/libargus_preload.so" "$WORK/env.out")" = 4 ] || fail "LD_PRELOAD"
[ "$(grep -c "^CUDA_INJECTION64_PATH=$LIBDIR/libargus.so$" "$WORK/env.out")" = 4 ] || fail "CUDA"
[ "$(grep -c "^NVTX_INJECTION64_PATH=$LIBDIR/libargus.so$" "$WORK/env.out")" = 4 ] || fail "NVTX"
[ "$(grep -c '^ARGUS_WINDOW=10$' "$WORK/env.out")" = 4 ] || fail "ARGUS_WINDOW"
[ "$(grep -c '^ARGUS_JOBID=[0-9]*\.0$' "$WORK/env.out")" = 4 ] || fail "ARGUS_JOBID"
[ -s "$WORK/env.err" ] && { cat "$WORK/env.err" >&2; fail "srun env printed something"; }

# a user's own CUDA injection is kept, and Argus says once that it stood aside
CUDA_INJECTION64_PATH=/opt/mine.so run_srun own --argus=on -n 4 env || fail "srun own failed"
[ "$(grep -c '^CUDA_INJECTION64_PATH=/opt/mine.so$' "$WORK/own.out")" = 4 ] || fail "user injection lost"
[ "$(count_argus "$WORK/own.err")" = 1 ] || { cat "$WORK/own.err" >&2; fail "want one stood-aside line"; }
grep -q 'stands aside' "$WORK/own.err" || fail "no stood-aside message"
# and the option is in srun --help
srun --help 2>&1 | grep -q -- '--argus' || fail "--argus missing from srun --help"
exit 0
