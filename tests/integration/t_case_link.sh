#!/bin/sh
# ARGUS case 2: link degradation in one DP group (group 1: ranks 1,3,5,7); named as the
# group, with the W1 block structure (far larger distances to the other groups than
# inside it) in report.json and a W1 matrix picture.
CASE_ARGS="--inject comm_degradation:group=dp,index=1,steps=15-59,factor=3"
EXPECT_KIND=comm_degradation EXPECT_RANKS=1,3,5,7
CASE_CHECK='
w = a["w1_us"]
assert w["to_other_groups"] > 5 * w["intra_group"], w
assert a["group"]["type"] == "dp" and a["group"]["ranks"] == [1, 3, 5, 7], a["group"]
assert os.path.exists(os.path.join(os.path.dirname(sys.argv[1]), "w1-1.svg"))
'
. "$(dirname "$0")/case.sh"
