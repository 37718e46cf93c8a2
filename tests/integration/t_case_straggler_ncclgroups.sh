#!/bin/sh
# ARGUS case 1 with the groups from NCCL's profiler plugin: no declared layout, and the
# simulator's tp/dp/pp communicators made out of Argus's PMPI sight (--nccl-groups); each
# rank plays NCCL to the plugin argus-run put in NCCL_PROFILER_PLUGIN (libargus_nccl.so:
# init per communicator, then every collective), so the memberships reach rank 0 only
# through the plugin (tracer/nccl_profiler_stats.c, tracer/ncclhook.c, analysis/groups.c).
# Exactly ranks 2-5 must be named, as with the layout (t_case_straggler.sh); without the
# plugin's groups the stragglers' peer class reads as a slow pipeline stage.
CASE_ARGS="--no-layout --nccl-groups --inject compute_straggler:ranks=2-5,steps=15-59,factor=3"
EXPECT_KIND=compute_straggler EXPECT_RANKS=2,3,4,5
. "$(dirname "$0")/case.sh"
