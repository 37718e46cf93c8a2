#!/bin/sh
# Signal safety of the host stack sampler under load: 1,000 samples of a thread that
# allocates, forks workers and starts threads while three others allocate
# (tests/stacks/stress_app.c). No crash, no deadlock (bounded by an alarm and a timeout),
# nearly every sample answered with the working function named; the cost of a sample on
# the sampled thread is printed (bench line) and its mean must stay within 1 ms.
set -eu
: "${top_builddir:?run through make check}"
out=$(timeout 150 "$top_builddir/tests/stacks/stress_app" 1000) ||
    { echo "FAIL: stress_app exited $? (crash, deadlock or too few answers): $out" >&2; exit 1; }
echo "$out"
