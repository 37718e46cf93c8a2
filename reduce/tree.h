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

/* Topology-aware tree (docs/ALGORITHMS.md, "The reduction tree"): node_of[r] names r's node
 * (any int, equal for ranks sharing a node, e.g. the lowest rank there). Inside a node the
 * ranks (in rank order) form a k-ary tree under the node's lowest rank, its leader; the
 * leaders (in rank order) form a k-ary tree under rank 0, which must lead its node (it is
 * the lowest rank there). Fills parent[size] (-1 for rank 0). 0 or -EINVAL. O(size log
 * size). Only the leaders' links cross nodes. */
int argus_tree_build_topo(int size, const int *node_of, int fanin, int *parent);
/* Children of r under parent[] in rank order, up to max of them; returns how many
 * there are. O(size). */
int argus_tree_children_of(const int *parent, int size, int r, int *kids, int max);
/* Levels below r (0 for a leaf) and the tree's depth. O(size x depth). */
int argus_tree_height_of(const int *parent, int size, int r);
int argus_tree_depth_of(const int *parent, int size);
/* 1 when x lies in the subtree rooted at r. */
int argus_tree_in_subtree(const int *parent, int size, int x, int r);

#endif /* ARGUS_REDUCE_TREE_H */
