/* test_aggregate.c — the window aggregate (common/aggregate.h), property-style over random
 * inputs: trees of fan-in 2, 8 and 32 and a shuffled left fold give byte-identical
 * encodings; merge is commutative and associative; quantiles stay within alpha of the
 * exact sample quantiles; encode/decode round-trips and rejects damage. The compact rows:
 * test_aggregate_rows.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "common/aggregate.h"
#include "common/wire.h"
#include "reduce/tree.h"

#include "tests/reduce/aggtest.h"

/* Reduce the leaves up a k-ary tree: deepest ranks first, each merged into its parent,
 * children in rank order (as the live tree does, level by level). */
static uint8_t *tree_reduce(int fanin, size_t *len)
{
    struct argus_aggregate *w = calloc(NR, sizeof *w);
    for (int r = 0; r < NR; r++)
        copy(&w[r], &leaves[r]);
    for (int r = NR - 1; r > 0; r--)
        assert_int_equal(argus_agg_merge(&w[argus_tree_parent(r, fanin)], &w[r]), 0);
    uint8_t *b = enc(&w[0], len);
    for (int r = 0; r < NR; r++)
        argus_agg_free(&w[r]);
    free(w);
    return b;
}

static uint8_t *fold_shuffled(size_t *len)
{
    int *perm = malloc(NR * sizeof *perm);
    for (int i = 0; i < NR; i++)
        perm[i] = i;
    for (int i = NR - 1; i > 0; i--) {
        int j = (int)(rnd() % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    struct argus_aggregate acc;
    argus_agg_init(&acc);
    for (int i = 0; i < NR; i++)
        assert_int_equal(argus_agg_merge(&acc, &leaves[perm[i]]), 0);
    uint8_t *b = enc(&acc, len);
    argus_agg_free(&acc);
    free(perm);
    return b;
}

static void test_tree_shapes_identical(void **state)
{
    (void)state;
    size_t l2, l8, l32, lf;
    uint8_t *b2 = tree_reduce(2, &l2), *b8 = tree_reduce(8, &l8), *b32 = tree_reduce(32, &l32);
    uint8_t *bf = fold_shuffled(&lf);
    assert_int_equal(l2, l8);
    assert_int_equal(l2, l32);
    assert_int_equal(l2, lf);
    assert_memory_equal(b2, b8, l2);
    assert_memory_equal(b2, b32, l2);
    assert_memory_equal(b2, bf, l2);

    /* round trip, and the kernel part does not grow with the rank count */
    struct argus_aggregate d;
    argus_agg_init(&d);
    char err[128];
    assert_int_equal(argus_agg_decode(&d, b2, l2, err, sizeof err), 0);
    assert_int_equal(d.nrows, NR * NS);
    assert_int_equal(d.nkm, NK * 2);
    size_t l3;
    uint8_t *b3 = enc(&d, &l3);
    assert_int_equal(l3, l2);
    assert_memory_equal(b3, b2, l2);
    /* damage is refused */
    b3[l3 / 2] ^= 0x40;
    assert_int_not_equal(argus_agg_decode(&d, b3, l3, err, sizeof err), 0);
    assert_int_not_equal(argus_agg_decode(&d, b2, l2 - 3, err, sizeof err), 0);
    argus_agg_free(&d);
    free(b3);
    free(b2);
    free(b8);
    free(b32);
    free(bf);
}

static void test_commutative_associative(void **state)
{
    (void)state;
    for (int trial = 0; trial < 50; trial++) {
        const struct argus_aggregate *x = &leaves[rnd() % NR], *y = &leaves[rnd() % NR],
                                     *z = &leaves[rnd() % NR];
        struct argus_aggregate ab, ba, l, r, yz;
        size_t n1, n2, n3, n4;
        copy(&ab, x);
        argus_agg_merge(&ab, y);
        copy(&ba, y);
        argus_agg_merge(&ba, x);
        uint8_t *e1 = enc(&ab, &n1), *e2 = enc(&ba, &n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(e1, e2, n1);
        copy(&l, &ab);
        argus_agg_merge(&l, z);
        copy(&yz, y);
        argus_agg_merge(&yz, z);
        copy(&r, x);
        argus_agg_merge(&r, &yz);
        uint8_t *e3 = enc(&l, &n3), *e4 = enc(&r, &n4);
        assert_int_equal(n3, n4);
        assert_memory_equal(e3, e4, n3);
        free(e1), free(e2), free(e3), free(e4);
        argus_agg_free(&ab), argus_agg_free(&ba), argus_agg_free(&l), argus_agg_free(&r);
        argus_agg_free(&yz);
    }
}

/* Merges leave the rows as sorted runs; encoding them straight and sorting them first
 * give the same bytes; a decoder refuses rows out of canonical order. */
static void test_runs_sort_and_order_check(void **state)
{
    (void)state;
    struct argus_aggregate acc, d;
    size_t n1, n2;
    char err[128];

    argus_agg_init(&acc);
    argus_agg_init(&d);
    assert_int_equal(argus_agg_reserve(&acc, 10, 2), 0);
    for (int i = 0; i < 300; i++) /* descending ranks: every leaf starts a run */
        assert_int_equal(argus_agg_merge(&acc, &leaves[NR - 1 - (i * 7) % NR]), 0);
    assert_true(acc.nruns > 1);
    uint8_t *e1 = enc(&acc, &n1);
    assert_int_equal(argus_agg_sort_rows(&acc), 0);
    assert_true(acc.nruns <= 1);
    for (size_t i = 1; i < acc.nrows; i++)
        assert_true(acc.rows[i - 1].step < acc.rows[i].step ||
                    (acc.rows[i - 1].step == acc.rows[i].step &&
                     acc.rows[i - 1].rank <= acc.rows[i].rank));
    uint8_t *e2 = enc(&acc, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(e1, e2, n1);
    assert_int_equal(argus_agg_decode(&d, e1, n1, err, sizeof err), 0);
    assert_int_equal(d.nrows, acc.nrows);
    assert_memory_equal(d.rows, acc.rows, acc.nrows * sizeof *acc.rows);
    free(e1);
    free(e2);
    argus_agg_free(&acc);
    argus_agg_free(&d);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_quantile_error_and_extremes(void **state)
{
    (void)state;
    struct argus_aggregate acc;
    argus_agg_init(&acc);
    for (int r = 0; r < NR; r++)
        argus_agg_merge(&acc, &leaves[r]);
    for (int k = 0; k < NK; k++) {
        const struct argus_agg_kmode *m = NULL;
        for (size_t i = 0; i < acc.nkm; i++)
            if (acc.km[i].name_hash == 0x1000 + (uint64_t)k * 7919 && acc.km[i].group == 0)
                m = &acc.km[i];
        assert_non_null(m);
        assert_int_equal(m->sketch.flags & ARGUS_QS_COLLAPSED, 0);
        qsort(raw[k], nraw[k], sizeof *raw[k], cmp_u64);
        assert_int_equal(m->count, nraw[k]);
        assert_int_equal(m->min_ns, raw[k][0]);
        assert_int_equal(m->max_ns, raw[k][nraw[k] - 1]);
        static const double qs[] = {0.01, 0.25, 0.5, 0.9, 0.99};
        for (size_t qi = 0; qi < sizeof qs / sizeof qs[0]; qi++) {
            double exact = (double)raw[k][(size_t)floor(qs[qi] * (double)(nraw[k] - 1))];
            double est = argus_qsketch_quantile(&m->sketch, qs[qi]);
            assert_true(fabs(est - exact) <= ARGUS_QSKETCH_ALPHA * exact * 1.0001);
        }
        /* extremes are ordered and really the extremes of the per-rank means */
        assert_int_equal(m->ntop, ARGUS_AGG_TOPK);
        for (int t = 1; t < m->ntop; t++) {
            assert_true(m->top[t - 1].value >= m->top[t].value);
            assert_true(m->bot[t - 1].value <= m->bot[t].value);
        }
        assert_true(m->top[0].value <= m->max_ns && m->bot[0].value >= m->min_ns);
    }
    argus_agg_free(&acc);
}

/* ---- compact rows -------------------------------------------------------------------- */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_shapes_identical),
        cmocka_unit_test(test_commutative_associative),
        cmocka_unit_test(test_quantile_error_and_extremes),
        cmocka_unit_test(test_runs_sort_and_order_check),
    };
    return cmocka_run_group_tests_name("reduce_aggregate", tests, setup, teardown);
}
