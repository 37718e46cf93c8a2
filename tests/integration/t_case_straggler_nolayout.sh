#!/bin/sh
# ARGUS case 1 without a declared layout (--no-layout): both TP ranks of DP replicas 1 and
# 2 at stage 0 (ranks 2-5) compute 3x slower. Peer classes inferred from kernel sets put
# the stragglers in a class of their own (their folded kernel modes differ), which reads
# as a slow pipeline stage; the program's TP/DP communicators (reduce/pmpi.c) join them
# back to their stage (analysis/groups.c), so exactly ranks 2-5 are named, as with the
# layout (t_case_straggler.sh).
CASE_ARGS="--no-layout --inject compute_straggler:ranks=2-5,steps=15-59,factor=3"
EXPECT_KIND=compute_straggler EXPECT_RANKS=2,3,4,5
. "$(dirname "$0")/case.sh"
