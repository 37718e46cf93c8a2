#!/bin/sh
# Site policy through plugstack.conf against a real srun: default=off keeps Argus out of
# the tasks; --argus=on (any case, as ARGUS_MODE) turns it on; default=on enforce=on
# refuses --argus=off (site policy, argus(8)) in one line that says nothing was
# submitted, never "Argus stays on", and srun exits 255 before any task runs;
# ARGUS=off there is ignored in one line and the job runs with Argus; enforce=off refuses
# --argus=on; a bad --argus value (full among them: there is no such mode) is refused in
# one line; ARGUS=full is ignored in one line and the job runs; the ARGUS variable
# stands in for the option; allow_full= is an unknown key (one line, Argus off, the job
# runs).
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
run_srun upper --argus=ON -n 2 env || { cat "$WORK/upper.err" >&2; fail "--argus=ON refused"; }
[ "$(grep -c '^ARGUS_MODE=on$' "$WORK/upper.out")" = 2 ] || fail "--argus=ON did not turn Argus on"
[ -s "$WORK/upper.err" ] && { cat "$WORK/upper.err" >&2; fail "--argus=ON printed something"; }
for v in bogus full; do
    run_srun "bad$v" --argus=$v -n 1 true && fail "--argus=$v accepted"
    [ "$(grep -c '^argus: ' "$WORK/bad$v.err")" = 1 ] &&
        grep -q "^argus: --argus=$v: expected on or off\$" "$WORK/bad$v.err" ||
        { cat "$WORK/bad$v.err" >&2; fail "--argus=$v: not one line saying what is accepted"; }
done
ARGUS=full run_srun envfull -n 1 env || fail "ARGUS=full: the job did not run"
no_argus envfull || fail "ARGUS=full under default=off: Argus in the tasks' environment"
[ "$(grep -c '^argus: ' "$WORK/envfull.err")" = 1 ] &&
    grep -q '^argus: ARGUS=full ignored: expected on or off$' "$WORK/envfull.err" ||
    { cat "$WORK/envfull.err" >&2; fail "ARGUS=full: not one line saying it is ignored"; }

plug "libdir=$LIBDIR" default=on allow_full=yes
run_srun allowfull -n 1 env || fail "allow_full=yes in plugstack.conf: the job did not run"
no_argus allowfull || fail "allow_full=yes: Argus on despite a bad plugstack.conf"
grep -q "^argus: plugstack.conf: unknown key 'allow_full'" "$WORK/allowfull.err" ||
    { cat "$WORK/allowfull.err" >&2; fail "allow_full=yes: no line naming the key"; }

plug "libdir=$LIBDIR" default=on enforce=on
run_srun enf -n 2 env || fail "srun under enforce=on failed"
[ "$(grep -c '^ARGUS_MODE=on$' "$WORK/enf.out")" = 2 ] || fail "default=on: Argus not on"
rc=0; run_srun enfoff --argus=off -n 1 touch "$WORK/enfoff.ran" || rc=$?
[ "$rc" = 255 ] || { cat "$WORK/enfoff.err" >&2; fail "--argus=off under enforce=on: srun exit $rc, want 255"; }
[ -e "$WORK/enfoff.ran" ] && fail "--argus=off under enforce=on: a task ran"
[ "$(count_argus "$WORK/enfoff.err")" = 1 ] &&
    grep -q '^argus: --argus=off refused: this site runs Argus on every job (plugstack.conf enforce=on); nothing was submitted' "$WORK/enfoff.err" ||
    { cat "$WORK/enfoff.err" >&2; fail "refusal: not one line saying why and that nothing ran"; }
grep -q 'stays on' "$WORK/enfoff.err" && fail "a refusal says Argus stays on"
ARGUS=off run_srun enfenv -n 2 env || { cat "$WORK/enfenv.err" >&2; fail "ARGUS=off under enforce=on: the job did not run"; }
[ "$(grep -c '^ARGUS_MODE=on$' "$WORK/enfenv.out")" = 2 ] || fail "ARGUS=off under enforce=on: Argus not on"
[ "$(count_argus "$WORK/enfenv.err")" = 1 ] &&
    grep -q '^argus: ARGUS=off ignored: this site runs Argus on every job (plugstack.conf enforce=on); Argus stays on$' "$WORK/enfenv.err" ||
    { cat "$WORK/enfenv.err" >&2; fail "ARGUS=off under enforce=on: not one line saying it is ignored"; }

plug "libdir=$LIBDIR" default=on
run_srun useroff --argus=off -n 2 env || fail "srun --argus=off under default=on failed"
no_argus useroff || fail "--argus=off under default=on: Argus still there"

plug "libdir=$LIBDIR" enforce=off
run_srun enfon --argus=on -n 1 true && fail "--argus=on accepted under enforce=off"
grep -q '^argus: --argus=on refused: Argus is disabled on this site (plugstack.conf enforce=off); nothing was submitted' "$WORK/enfon.err" ||
    { cat "$WORK/enfon.err" >&2; fail "enforce=off refusal does not say why"; }
exit 0
