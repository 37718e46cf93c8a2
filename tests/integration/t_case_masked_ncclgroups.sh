#!/bin/sh
# ARGUS case 5 with the groups from NCCL's profiler plugin (--no-layout --nccl-groups, see
# t_case_straggler_ncclgroups.sh): ranks 12,13 compute 2x and every other rank waits in
# longer collectives. The late-arriver evidence compares the sources with the other
# members of their DP group, known here only from the plugin's "dp" communicator: the
# same verdict as t_case_masked.sh.
CASE_ARGS="--no-layout --nccl-groups --inject compute_straggler:ranks=12-13,steps=10-59,factor=2"
EXPECT_KIND=compute_straggler EXPECT_RANKS=12,13
CASE_CHECK='assert "arrived last" in a["evidence"], a["evidence"]'
. "$(dirname "$0")/case.sh"
