#!/bin/sh
# Site policy through plugstack.conf against a real srun: default=off keeps Argus out of
# the tasks; --argus=on turns it on; default=on enforce=on refuses --argus=off with a
# message naming the key; enforce=off refuses --argus=on; allow_full=no refuses full; a
# bad --argus value is refused; the ARGUS variable stands in for the option.
. "$(dirname "$0")/lib.sh"
cluster_start 6837
no_argus() { ! grep -qE '^(ARGUS_[A-Z_]*|LD_PRELOAD|CUDA_INJECTION64_PATH|NVTX_INJECTION64_PATH)=' "$WORK/$1.out"; }

plug "libdir=$LIBDIR" default=off
run_srun off -n 4 env || fail "srun -n 4 under default=off failed"
[ "$(grep -c '^SLURM_PROCID=' "$WORK/off.out")" = 4 ] || fail "srun -n 4 did not run 4 tasks"
no_argus off || fail "default=off: Argus in the tasks' environment"
[ -s "$WORK/off.err" ] && { cat "$WORK/off.err" >&2; fail "default=off printed something"; }
ARGUS=on run_srun envvar -n 2 env || fail "ARGUS=on srun failed"
[ "$(grep -c '^ARGUS_MODE=on$' "$WORK/envvar.out")" = 2 ] || fail "ARGUS=on did not turn Argus on"
run_srun full --argus=full -n 1 true && fail "--argus=full accepted under allow_full=no"
grep -q 'allow_full=no' "$WORK/full.err" || { cat "$WORK/full.err" >&2; fail "no allow_full message"; }
run_srun bogus --argus=bogus -n 1 true && fail "--argus=bogus accepted"
grep -q '^argus: --argus=bogus: expected on, off or full' "$WORK/bogus.err" ||
    { cat "$WORK/bogus.err" >&2; fail "no message for a bad value"; }

plug "libdir=$LIBDIR" default=on enforce=on allow_full=yes
run_srun enf -n 2 env || fail "srun under enforce=on failed"
[ "$(grep -c '^ARGUS_MODE=on$' "$WORK/enf.out")" = 2 ] || fail "default=on: Argus not on"
run_srun enfoff --argus=off -n 1 true && fail "--argus=off accepted under enforce=on"
grep -q '^argus: --argus=off is not allowed.*enforce=on' "$WORK/enfoff.err" ||
    { cat "$WORK/enfoff.err" >&2; fail "refusal does not say why"; }
run_srun enffull --argus=full -n 1 env || fail "--argus=full refused under allow_full=yes"
grep -q '^ARGUS_MODE=full$' "$WORK/enffull.out" || fail "--argus=full not passed on"

plug "libdir=$LIBDIR" default=on
run_srun useroff --argus=off -n 2 env || fail "srun --argus=off under default=on failed"
no_argus useroff || fail "--argus=off under default=on: Argus still there"

plug "libdir=$LIBDIR" enforce=off
run_srun enfon --argus=on -n 1 true && fail "--argus=on accepted under enforce=off"
grep -q '^argus: --argus=on is not allowed.*enforce=off' "$WORK/enfon.err" ||
    { cat "$WORK/enfon.err" >&2; fail "enforce=off refusal does not say why"; }
exit 0
