#!/bin/sh
# ARGUS case 1: a compute straggler on both TP ranks of two DP replicas (stage 0, DP 1
# and 2: ranks 2-5); exactly those four ranks, as compute_straggler.
CASE_ARGS="--inject compute_straggler:ranks=2-5,steps=15-59,factor=3"
EXPECT_KIND=compute_straggler EXPECT_RANKS=2,3,4,5
. "$(dirname "$0")/case.sh"
