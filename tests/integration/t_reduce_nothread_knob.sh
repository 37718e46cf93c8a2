#!/bin/sh
# The test knobs (reduce/testknob.h) exist in test builds only (issue 16, item 15):
#  - libargus.so itself carries no ARGUS_TEST_ name and only a weak reference to the
#    knob lookup, so an installed library ignores ARGUS_TEST_NO_THREAD=1: a job run
#    without the test-only knob library keeps its Argus thread and says nothing of it;
#  - with the knob library (tests/argus-run-build), a knob set to 0 is off: no false
#    "MPI_THREAD_MULTIPLE refused" (ARGUS_TEST_NO_THREAD=1 is t_reduce_nothread.sh).
. "$(dirname "$0")/lib.sh"
LIB="$top_builddir/.libs/libargus.so"
if strings "$LIB" | grep 'ARGUS_TEST_'; then fail "libargus.so names a test knob"; fi
nm -D "$LIB" | grep -q ' w argus_testknob_lookup$' ||
    { nm -D "$LIB" | grep testknob >&2; fail "libargus.so: the knob lookup is not a weak reference"; }
nm -D "$top_builddir/tests/.libs/libargus_testknobs.so" | grep -qE ' [TW] argus_testknob_lookup$' ||
    fail "the test knob library does not define the lookup"

# exchange DIR: "argus-thread" or "at-finalize", from reduce.json
exchange() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exchange"])' \
    "$1/reduce.json"; }

# 1. The installed form: the simulator linked with libargus.so, no knob library.
ARGUS_TEST_NO_THREAD=1 ARGUS_MODE=on ARGUS_OUTDIR="$WORK/out" ARGUS_JOBID=plain timeout 120 \
    "$MPIRUN" -np 2 "$SIM" --dp 2 --steps 12 --layers 1 </dev/null >/dev/null 2>"$WORK/e1" ||
    { cat "$WORK/e1" >&2; fail "plain job failed"; }
grep -q 'MULTIPLE refused' "$WORK/e1" && { cat "$WORK/e1" >&2; fail "libargus.so read ARGUS_TEST_NO_THREAD"; }
[ "$(exchange "$WORK/out/argus-plain")" = argus-thread ] || fail "plain: no Argus thread"

# 2. The test build, knob at 0: off.
ARGUS_TEST_NO_THREAD=0 ARGUS_JOBID=zero timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 2 "$SIM" --dp 2 --steps 12 --layers 1 </dev/null >/dev/null 2>"$WORK/e2" ||
    { cat "$WORK/e2" >&2; fail "knob=0 job failed"; }
grep -q 'MULTIPLE refused' "$WORK/e2" && { cat "$WORK/e2" >&2; fail "ARGUS_TEST_NO_THREAD=0 turned the knob on"; }
[ "$(exchange "$WORK/out/argus-zero")" = argus-thread ] || fail "knob=0: no Argus thread"

# 3. The test build, knob at 1: on (the knob library is really there).
ARGUS_TEST_NO_THREAD=1 ARGUS_JOBID=one timeout 120 "$ARGUS_RUN" --outdir "$WORK/out" -- \
    "$MPIRUN" -np 2 "$SIM" --dp 2 --steps 12 --layers 1 </dev/null >/dev/null 2>"$WORK/e3" ||
    { cat "$WORK/e3" >&2; fail "knob=1 job failed"; }
[ "$(grep -c 'MULTIPLE refused' "$WORK/e3")" = 1 ] || { cat "$WORK/e3" >&2; fail "knob=1 is not on"; }
[ "$(exchange "$WORK/out/argus-one")" = at-finalize ] || fail "knob=1: the exchange did not wait"
exit 0
