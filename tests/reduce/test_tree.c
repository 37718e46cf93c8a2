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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parent_child_consistent),
        cmocka_unit_test(test_depth),
    };
    return cmocka_run_group_tests_name("reduce_tree", tests, NULL, NULL);
}
