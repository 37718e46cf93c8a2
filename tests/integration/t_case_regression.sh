#!/bin/sh
# +10 % step time from step 500 of 600 (every rank alike): one step_regression with no
# source rank, starting within 3 steps of 500 and reported within 10 steps.
CASE_ARGS="--steps 600 --inject step_regression:steps=500-,factor=1.1"
EXPECT_KIND=step_regression EXPECT_RANKS=
CASE_CHECK='
assert 497 <= a["steps"][0] <= 503, a["steps"]
assert a["detected_at_step"] - 500 <= 10, a["detected_at_step"]
'
. "$(dirname "$0")/case.sh"
