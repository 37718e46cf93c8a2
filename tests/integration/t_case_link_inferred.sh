#!/bin/sh
# ARGUS case 2 with neither a declared layout nor communicator memberships: --no-layout,
# and --late-groups past the last step keeps the simulator's tp/dp/pp communicators out of
# Argus's sight for the whole run (made with PMPI_, never split again). The DP groups can
# then only be inferred from which ranks' collectives end together (the tracer's
# last_end_ns of each collective kernel mode, analysis/groups_infer.c), through the
# oversubscribed ranks' constant clock-offset errors. The link degradation in DP group 1
# (ranks 1,3,5,7) must be named exactly as with the layout (t_case_link.sh). Without the
# inference no groups are known and no comm_degradation is found (the job's 60 steps end
# long before step 100000).
CASE_ARGS="--no-layout --late-groups 100000"
CASE_ARGS="$CASE_ARGS --inject comm_degradation:group=dp,index=1,steps=15-59,factor=3"
EXPECT_KIND=comm_degradation EXPECT_RANKS=1,3,5,7
CASE_CHECK='
w = a["w1_us"]
assert w["to_other_groups"] > 5 * w["intra_group"], w
assert a["group"]["type"] == "dp" and a["group"]["ranks"] == [1, 3, 5, 7], a["group"]
assert "inferred" in a["evidence"], a["evidence"]
'
. "$(dirname "$0")/case.sh"
