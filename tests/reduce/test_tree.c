/* test_tree.c — the k-ary reduction tree: every rank but the root has exactly one parent,
 * the parent lists it among its children, and the depth matches the level count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "reduce/tree.h"

static void test_parent_child_consistent(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 7, 16, 17, 100, 1025};
    static const int fanins[] = {2, 3, 4, 8, 32};

    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (size_t fi = 0; fi < sizeof fanins / sizeof fanins[0]; fi++) {
            int size = sizes[si], k = fanins[fi];
            int *seen = calloc((size_t)size, sizeof *seen);
            assert_non_null(seen);
            assert_int_equal(argus_tree_parent(0, k), -1);
            for (int r = 0; r < size; r++) {
                int first = argus_tree_first_child(r, k);
                int n = argus_tree_nchildren(r, size, k);
                assert_true(n >= 0 && n <= k);
                for (int c = first; c < first + n; c++) {
                    assert_true(c < size);
                    assert_int_equal(argus_tree_parent(c, k), r);
                    seen[c]++;
                }
            }
            for (int r = 1; r < size; r++)
                assert_int_equal(seen[r], 1);
            assert_int_equal(seen[0], 0);
            free(seen);
        }
    }
}

static void test_depth(void **state)
{
    (void)state;
    assert_int_equal(argus_tree_depth(1, 4), 0);
    assert_int_equal(argus_tree_depth(5, 4), 1);
    assert_int_equal(argus_tree_depth(6, 4), 2);
    assert_int_equal(argus_tree_depth(21, 4), 2);
    assert_int_equal(argus_tree_depth(22, 4), 3);
    assert_int_equal(argus_tree_depth(16384, 32), 3);
    /* a leaf's path to the root is exactly depth hops */
    int r = 20, hops = 0; /* ranks 5..20 sit on level 2 of a 4-ary tree */
    while (r > 0) {
        r = argus_tree_parent(r, 4);
        hops++;
    }
    assert_int_equal(hops, 2);
}

/* Node-aware tree: 8 ranks per node (ranks interleaved over nodes on purpose); only
 * node leaders have a parent on another node, everyone reaches rank 0, depth is
 * log_k(nodes) + log_k(ranks per node). */
static void test_topo(void **state)
{
    (void)state;
    static const int sizes[] = {1, 8, 9, 64, 1000, 4096};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int size = sizes[si], k = 4, nodes = (size + 7) / 8;
        int *node = malloc((size_t)size * sizeof *node);
        int *parent = malloc((size_t)size * sizeof *parent);
        assert_non_null(node);
        assert_non_null(parent);
        for (int r = 0; r < size; r++)
            node[r] = r % nodes; /* round-robin placement */
        assert_int_equal(argus_tree_build_topo(size, node, k, parent), 0);
        assert_int_equal(parent[0], -1);
        int cross = 0;
        for (int r = 1; r < size; r++) {
            assert_true(parent[r] >= 0 && parent[r] < size);
            assert_true(argus_tree_in_subtree(parent, size, r, 0));
            if (node[parent[r]] != node[r]) {
                cross++;
                assert_true(r < nodes); /* a leader: the lowest rank of its node */
            }
        }
        assert_int_equal(cross, nodes - 1);
        int depth = argus_tree_depth_of(parent, size);
        assert_true(depth <= argus_tree_depth(nodes, k) + argus_tree_depth(8, k));
        assert_int_equal(argus_tree_height_of(parent, size, 0), depth);
        int kids[8];
        int n = argus_tree_children_of(parent, size, 0, kids, 8);
        assert_true(n <= 2 * k);
        free(node);
        free(parent);
    }
    int bad[2] = {1, 0}, parent[2];
    assert_int_equal(argus_tree_build_topo(2, bad, 4, parent), 0); /* rank 0 still leads */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parent_child_consistent),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_topo),
    };
    return cmocka_run_group_tests_name("reduce_tree", tests, NULL, NULL);
}
