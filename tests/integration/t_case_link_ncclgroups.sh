#!/bin/sh
# ARGUS case 2 with the groups from NCCL's profiler plugin (--no-layout --nccl-groups: the
# tp/dp/pp communicators are out of Argus's PMPI sight and known only from the plugin's
# init per communicator, see t_case_straggler_ncclgroups.sh). The link degradation in DP
# group 1 (ranks 1,3,5,7) must be named exactly as with the layout (t_case_link.sh): the
# same sources, as a dp group, with the W1 block structure, and from a communicator, not
# inferred from collective end times (t_case_link_inferred.sh).
CASE_ARGS="--no-layout --nccl-groups"
CASE_ARGS="$CASE_ARGS --inject comm_degradation:group=dp,index=1,steps=15-59,factor=3"
EXPECT_KIND=comm_degradation EXPECT_RANKS=1,3,5,7
CASE_CHECK='
w = a["w1_us"]
assert w["to_other_groups"] > 5 * w["intra_group"], w
assert a["group"]["type"] == "dp" and a["group"]["ranks"] == [1, 3, 5, 7], a["group"]
assert "communicator" in a["evidence"], a["evidence"]
assert os.path.exists(os.path.join(os.path.dirname(sys.argv[1]), "w1-1.svg"))
'
. "$(dirname "$0")/case.sh"
