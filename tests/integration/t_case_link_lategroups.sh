#!/bin/sh
# Memberships made after a rank's first rank info still reach rank 0 (reduce/runtime.c
# sends the rank info again when its set of communicators changed): no layout, and the
# simulator's tp/dp/pp communicators are out of Argus's sight (--late-groups: made with
# PMPI_) until it splits copies of them before step 30, long after the first summaries
# went out. The link degradation of t_case_link_nolayout.sh must still be named as the
# dp group 1,3,5,7.
CASE_ARGS="--no-layout --late-groups 30"
CASE_ARGS="$CASE_ARGS --inject comm_degradation:group=dp,index=1,steps=15-59,factor=3"
EXPECT_KIND=comm_degradation EXPECT_RANKS=1,3,5,7
CASE_CHECK='
assert a["group"]["type"] == "dp" and a["group"]["ranks"] == [1, 3, 5, 7], a["group"]
'
. "$(dirname "$0")/case.sh"
