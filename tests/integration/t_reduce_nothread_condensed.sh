#!/bin/sh
# t_reduce_nothread.sh with the condensing tree (ARGUS_CONDENSE=0): without the Argus
# thread the whole exchange, rank 0's pulls from its condensing children included, runs
# inside MPI_Finalize; every cell arrives once and every pull is answered.
export ARGUS_CONDENSE=0
. "$(dirname "$0")/t_reduce_nothread.sh"
