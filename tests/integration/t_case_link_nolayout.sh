#!/bin/sh
# ARGUS case 2 without a declared layout (--no-layout: the simulator never calls
# argus_set_layout): the groups come only from the communicators the program made
# (MPI_Comm_split of its tp/dp/pp groups, seen by reduce/pmpi.c and shipped in the rank
# info). The link degradation in DP group 1 (ranks 1,3,5,7) must be named exactly as with
# the layout (t_case_link.sh): the same sources, as a dp group, with the W1 block
# structure. Without the membership capture no groups are known and nothing is found.
CASE_ARGS="--no-layout --inject comm_degradation:group=dp,index=1,steps=15-59,factor=3"
EXPECT_KIND=comm_degradation EXPECT_RANKS=1,3,5,7
CASE_CHECK='
w = a["w1_us"]
assert w["to_other_groups"] > 5 * w["intra_group"], w
assert a["group"]["type"] == "dp" and a["group"]["ranks"] == [1, 3, 5, 7], a["group"]
assert "communicator" in a["evidence"], a["evidence"]
assert os.path.exists(os.path.join(os.path.dirname(sys.argv[1]), "w1-1.svg"))
'
. "$(dirname "$0")/case.sh"
