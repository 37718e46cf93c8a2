#!/bin/sh
# ARGUS case 5: a compute straggler masked by communication: both TP ranks of DP replica 2
# at stage 1 (ranks 12,13) compute 2x; every other rank waits in longer collectives while
# theirs get shorter. compute_straggler on exactly 12,13 — never comm_degradation — and
# the late-arriver test in the evidence.
CASE_ARGS="--inject compute_straggler:ranks=12-13,steps=10-59,factor=2"
EXPECT_KIND=compute_straggler EXPECT_RANKS=12,13
CASE_CHECK='assert "arrived last" in a["evidence"], a["evidence"]'
. "$(dirname "$0")/case.sh"
