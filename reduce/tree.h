/* tree.h — the k-ary reduction tree over ranks 0..size-1 of Argus's private communicator.
 * Rank 0 is the root; parent(r) = (r-1)/k; children of r are r*k+1 .. r*k+k (< size).
 * Pure functions, no MPI: unit-testable and shared with the benchmarks.
 */
#ifndef ARGUS_REDUCE_TREE_H
#define ARGUS_REDUCE_TREE_H

#include <stdint.h>

/* Parent of rank r (r > 0), or -1 for the root. */
int argus_tree_parent(int r, int fanin);
/* Number of children of r, and the first one (children are consecutive). */
int argus_tree_nchildren(int r, int size, int fanin);
int argus_tree_first_child(int r, int fanin);
/* Depth of the tree (0 for one rank). */
int argus_tree_depth(int size, int fanin);

#endif /* ARGUS_REDUCE_TREE_H */
