#!/bin/sh
# t_case_bubble.sh with the condensing reduction tree (ARGUS_CONDENSE=0, the mode of jobs past
# 96 ranks: rank 0 gets window aggregates, full summaries only for reference and extreme
# cells, rows only for the rest): the same diagnosis, and reduce.json shows both kinds of
# cells.
export ARGUS_CONDENSE=0
. "$(dirname "$0")/t_case_bubble.sh"
