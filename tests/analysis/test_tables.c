/* test_tables.c — the growing tables of analysis/ (they grow through common/grow.h): the
 * kernel-name table through several doublings of its hash index, every name found again
 * with its class and summed total; the candidate list and the per-rank run arrays across
 * their growth, each new entry zeroed (a candidate with no phase) and the earlier ones
 * kept as written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/internal.h"

#define NAMES 1000 /* index 64 -> 2048 slots: five doublings */

static uint64_t name_hash(size_t i)
{
    return 0x9e3779b97f4a7c15ull * (i + 1); /* distinct, spread over the index */
}

static void test_names_grow(void **state)
{
    struct an_names nm = { 0 };
    (void)state;
    for (size_t i = 0; i < NAMES; i++)
        assert_int_equal(an_names_add(&nm, name_hash(i), (uint8_t)(i % 3), (double)i), 0);
    for (size_t i = 0; i < NAMES; i += 2) /* seen again: totals add up, no new entry */
        assert_int_equal(an_names_add(&nm, name_hash(i), 2, 0.5), 0);
    assert_int_equal(nm.n, NAMES);
    assert_true(nm.cap >= 2 * NAMES);
    assert_int_equal(nm.cap & (nm.cap - 1), 0);
    for (size_t i = 0; i < NAMES; i++) {
        const long at = an_name_find(&nm, name_hash(i));
        assert_int_equal(at, (long)i);
        assert_int_equal(nm.kclass[at], i % 3);
        assert_true(nm.total_ns[at] == (double)i + (i % 2 ? 0 : 0.5));
    }
    assert_int_equal(an_name_find(&nm, 12345), -1);
    free(nm.hash);
    free(nm.kclass);
    free(nm.total_ns);
    free(nm.slot);
}

static void test_list_grow(void **state)
{
    struct an_list l = { 0 };
    (void)state;
    for (int i = 0; i < 100; i++) {
        struct an_cand *k;
        assert_int_equal(an_list_push(&l, &k), 0);
        assert_ptr_equal(k, &l.v[i]);
        assert_int_equal(k->a.phase, -1);
        assert_int_equal(k->a.n_ranks, 0);
        assert_int_equal(k->dropped, 0);
        k->a.id = i;
        k->si_a = (size_t)i * 3;
    }
    assert_int_equal(l.n, 100);
    assert_true(l.cap >= 100);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(l.v[i].a.id, i);
        assert_int_equal(l.v[i].si_a, (size_t)i * 3);
    }
    free(l.v);
}

static void test_rruns_grow(void **state)
{
    struct an_rruns runs = { 0 };
    (void)state;
    for (uint32_t i = 0; i < 100; i++) {
        struct an_rrun *u = an_rruns_push(&runs, i, i + 1, i + 2);
        assert_non_null(u);
        assert_ptr_equal(u, &runs.v[i]);
        assert_int_equal(u->kind, 0);
        assert_int_equal(u->nk, 0);
        assert_true(u->ratio == 0 && u->excess == 0);
        u->kind = (int)i;
    }
    assert_int_equal(runs.n, 100);
    for (uint32_t i = 0; i < 100; i++) {
        assert_int_equal(runs.v[i].rank, i);
        assert_int_equal(runs.v[i].a, i + 1);
        assert_int_equal(runs.v[i].b, i + 2);
        assert_int_equal(runs.v[i].kind, (int)i);
    }
    free(runs.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_grow),
        cmocka_unit_test(test_list_grow),
        cmocka_unit_test(test_rruns_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
