#!/bin/sh
# #SBATCH --argus=on: a batch job running srun inside and one running mpirun inside (the
# ranks are not Slurm steps there: they get the contract from the batch step's
# environment) both leave a correct report; an inner srun --argus=off has no Argus in its
# tasks; the batch shell itself and mpirun are unaffected (libargus is inert there).
. "$(dirname "$0")/lib.sh"
cluster_start 6857
plug "libdir=$LIBDIR"    # default=off, outdir=%w (the job's working directory)
SPEC=compute_straggler:ranks=5,steps=20-40,factor=1.5
SIMARGS="--tp 2 --pp 2 --dp 2 --microbatches 4 --steps 60 --inject $SPEC"

cat > "$WORK/with-srun.sh" <<EOS
#!/bin/sh
#SBATCH --argus=on
#SBATCH -n 8
#SBATCH -J with-srun
env > "$WORK/batch-shell.env"
srun -n 2 env > "$WORK/inner-on.env"
srun --argus=off -n 2 env > "$WORK/inner-off.env"
srun -n 8 "$SIM" $SIMARGS --truth "$WORK/truth-srun.json"
EOS
cat > "$WORK/with-mpirun.sh" <<EOS
#!/bin/sh
#SBATCH --argus=on
#SBATCH -n 8
#SBATCH -J with-mpirun
mpirun -np 8 "$SIM" $SIMARGS --truth "$WORK/truth-mpirun.json"
EOS

j1=$(batch_run with-srun "$WORK/with-srun.sh")
j2=$(batch_run with-mpirun "$WORK/with-mpirun.sh")

# the batch shell carries the contract under <job>.batch
grep -q '^ARGUS_MODE=on$' "$WORK/batch-shell.env" || fail "batch step has no ARGUS_MODE"
grep -q "^ARGUS_JOBID=$j1.batch$" "$WORK/batch-shell.env" || fail "batch step ARGUS_JOBID"
grep -q "^LD_PRELOAD=$LIBDIR/libargus_preload.so" "$WORK/batch-shell.env" || fail "batch LD_PRELOAD"
# inner srun: its own step id; with --argus=off nothing of Argus is left
[ "$(grep -c "^ARGUS_JOBID=$j1\.0$" "$WORK/inner-on.env")" = 2 ] || fail "inner srun ARGUS_JOBID"
if grep -qE '^(ARGUS_[A-Z_]*|CUDA_INJECTION64_PATH|NVTX_INJECTION64_PATH)=|^LD_PRELOAD=.*libargus' \
        "$WORK/inner-off.env"; then
    grep -E 'ARGUS|INJECTION|PRELOAD' "$WORK/inner-off.env" >&2
    fail "inner srun --argus=off still has Argus"
fi
[ "$(grep -c '^SLURM_PROCID=' "$WORK/inner-off.env")" = 2 ] || fail "inner srun --argus=off did not run"

check_report "$WORK/argus-$j1.2" 8 60 "$WORK/truth-srun.json"
check_report "$WORK/argus-$j2.batch" 8 60 "$WORK/truth-mpirun.json"
# nothing else appeared: the shell and mpirun wrote no Argus output of their own
n=$(ls -d "$WORK"/argus-* | wc -l)
[ "$n" = 2 ] || { ls -d "$WORK"/argus-* >&2; fail "want 2 argus-* directories, got $n"; }
grep -q '^argus: anomaly' "$WORK/with-mpirun.log" || { cat "$WORK/with-mpirun.log" >&2; fail "no anomaly line"; }
exit 0
