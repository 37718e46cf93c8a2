#!/bin/sh
# A clean run with 9 % kernel-duration noise: no anomaly at all.
CASE_ARGS="--noise 0.09"
EXPECT_KIND=none
. "$(dirname "$0")/case.sh"
