#!/bin/sh
# Clock offsets are kept current while the job runs, so a drifting clock is
# tracked. 4 ranks, rank r's clock 5*r ms ahead and 500*r ppm fast (a large drift, so
# that 6 s show it above the ping-pong noise of an oversubscribed 2-core machine: the
# start-up estimate of rank 3 is ~9 ms off by the end); every rank re-measures every
# 300 ms and must stay within 2 ms of the truth (about 1 us when the machine is quiet,
# up to 0.6 ms with a busy loop on every core beside it). The errors are printed, with
# the width of the range of offsets each rank's pings allowed.
. "$(dirname "$0")/lib.sh"
ARGUS_TEST_CLOCK_SKEW_NS=5000000 ARGUS_TEST_CLOCK_DRIFT_PPM=500 \
    timeout 120 "$MPIRUN" -np 4 "$top_builddir/tests/reduce/clockkeep_app" 6 \
    >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; fail "drift not tracked"; }
cat "$WORK/out"
grep -q "^rank 3: kept offset error" "$WORK/out" || fail "no figures printed"
