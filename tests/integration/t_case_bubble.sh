#!/bin/sh
# ARGUS case 3: the last pipeline stage is slower and the first idles waiting for it;
# pipeline_bubble on stage 1 (ranks 8-15), the other stage's ranks only victims.
CASE_ARGS="--inject pipeline_bubble:stage=1,steps=15-59,factor=1.5"
EXPECT_KIND=pipeline_bubble EXPECT_RANKS=8,9,10,11,12,13,14,15
CASE_CHECK='assert all(v < 8 for v in a["victims"]), a["victims"]'
. "$(dirname "$0")/case.sh"
