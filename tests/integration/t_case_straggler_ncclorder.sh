#!/bin/sh
# ARGUS case 1 with the groups from NCCL's profiler plugin, each rank telling the plugin
# of its tp/dp/pp communicators in its own order (--nccl-shuffle: rotated by rank,
# backwards on odd ranks), as NCCL does when PyTorch makes communicators at their first
# collective. The families tracer/ncclhook.c gives them come from the communicator's
# name and size, not from the order, so exactly ranks 2-5 must be named, as with the
# ranks all in one order (t_case_straggler_ncclgroups.sh).
CASE_ARGS="--no-layout --nccl-shuffle --inject compute_straggler:ranks=2-5,steps=15-59,factor=3"
EXPECT_KIND=compute_straggler EXPECT_RANKS=2,3,4,5
. "$(dirname "$0")/case.sh"
