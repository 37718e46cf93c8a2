#!/bin/sh
# ARGUS case 4: a host-side stall (JIT compilation) on one rank, its GPU idle ~40x its
# usual host gap per step; host_stall on rank 6 in the host phase.
CASE_ARGS="--inject host_stall:ranks=6,steps=20-40,ms=40"
EXPECT_KIND=host_stall EXPECT_RANKS=6
CASE_CHECK='assert a["phase"] == "host", a'
. "$(dirname "$0")/case.sh"
