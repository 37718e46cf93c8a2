/* test_qsketch.c — unit tests of common/qsketch.c: quantiles within ARGUS_QSKETCH_ALPHA of
 * the exact sorted quantiles on uniform, lognormal and bimodal samples; collapse keeps the
 * bound above the collapsed mass; merge equals adding every value; merge is commutative
 * and associative byte for byte, with and without collapse; quantiles of a sketch
 * together with exact values (argus_qsketch_quantile_with). */
#include "tests/common/testgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 60000

static uint64_t vals[N], sorted[N];

static double normal(uint64_t *st)
{
    double u1 = tg_unif(st), u2 = tg_unif(st);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Compare the sketch's quantiles with the exact ones (same rank convention:
 * floor(q*(n-1))). Ranks below skip_below are not checked (collapsed mass). */
static void check_quantiles(const struct argus_qsketch *s, const uint64_t *v, size_t n,
                            uint64_t skip_below, const char *what)
{
    static const double qs[] = {0,    0.001, 0.01, 0.05, 0.1,   0.25, 0.5,
                                0.75, 0.9,   0.95, 0.99, 0.999, 1};
    memcpy(sorted, v, n * sizeof *v);
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    assert_int_equal(argus_qsketch_count(s), n);
    int checked = 0;
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        uint64_t rank = (uint64_t)floor(qs[i] * (double)(n - 1));
        if (rank < skip_below)
            continue;
        double exact = (double)sorted[rank];
        double got = argus_qsketch_quantile(s, qs[i]);
        double rel = exact == 0 ? fabs(got) : fabs(got - exact) / exact;
        if (rel > ARGUS_QSKETCH_ALPHA * (1 + 1e-9))
            fail_msg("%s: q=%g exact %.0f sketch %.1f: relative error %.4f > %g", what, qs[i],
                     exact, got, rel, ARGUS_QSKETCH_ALPHA);
        checked++;
    }
    assert_true(checked >= 5);
}

static void sketch_of(struct argus_qsketch *s, const uint64_t *v, size_t n)
{
    argus_qsketch_init(s);
    for (size_t i = 0; i < n; i++)
        argus_qsketch_add(s, v[i]);
}

static void test_empty_and_zeros(void **state)
{
    struct argus_qsketch s;
    (void)state;

    argus_qsketch_init(&s);
    assert_int_equal(argus_qsketch_count(&s), 0);
    assert_true(argus_qsketch_quantile(&s, 0.5) == 0.0);
    argus_qsketch_add(&s, 0);
    argus_qsketch_add(&s, 0);
    argus_qsketch_add(&s, 1000);
    assert_int_equal(argus_qsketch_count(&s), 3);
    assert_int_equal(s.zeros, 2);
    assert_true(argus_qsketch_quantile(&s, 0.5) == 0.0);
    double top = argus_qsketch_quantile(&s, 1.0);
    assert_true(fabs(top - 1000) <= 1000 * ARGUS_QSKETCH_ALPHA);
    /* q outside [0,1] is clamped. */
    assert_true(argus_qsketch_quantile(&s, 7.0) == top);
    assert_true(argus_qsketch_quantile(&s, -1.0) == 0.0);
}

static void test_uniform(void **state)
{
    struct argus_qsketch s;
    uint64_t st = 11;
    (void)state;

    for (size_t i = 0; i < N; i++)
        vals[i] = 200000 + (uint64_t)(tg_unif(&st) * 1000000.0);
    sketch_of(&s, vals, N);
    assert_int_equal(s.flags & ARGUS_QS_COLLAPSED, 0);
    check_quantiles(&s, vals, N, 0, "uniform");
}

static void test_lognormal(void **state)
{
    struct argus_qsketch s;
    uint64_t st = 12;
    (void)state;

    for (size_t i = 0; i < N; i++)
        vals[i] = (uint64_t)(500000.0 * exp(0.2 * normal(&st)));
    sketch_of(&s, vals, N);
    assert_int_equal(s.flags & ARGUS_QS_COLLAPSED, 0);
    check_quantiles(&s, vals, N, 0, "lognormal");
}

static void test_bimodal(void **state)
{
    struct argus_qsketch s;
    uint64_t st = 13;
    (void)state;

    for (size_t i = 0; i < N; i++) {
        double x = tg_unif(&st) < 0.7 ? 300000.0 + 10000.0 * normal(&st)
                                      : 900000.0 + 30000.0 * normal(&st);
        vals[i] = (uint64_t)x;
    }
    sketch_of(&s, vals, N);
    assert_int_equal(s.flags & ARGUS_QS_COLLAPSED, 0);
    check_quantiles(&s, vals, N, 0, "bimodal");
    /* The median sits in the lower mode, p90 in the upper one. */
    assert_true(argus_qsketch_quantile(&s, 0.5) < 400000);
    assert_true(argus_qsketch_quantile(&s, 0.9) > 800000);
}

/* A span wider than the sketch: the lowest buckets collapse; quantiles above the
 * collapsed mass keep the bound, and the total count is kept. */
static void test_collapse(void **state)
{
    struct argus_qsketch s;
    uint64_t st = 14;
    (void)state;

    for (size_t i = 0; i < N; i++)
        vals[i] = 1000 + (uint64_t)(exp(tg_unif(&st) * 8.0) * 1000.0); /* ~1e3 .. 3e6 */
    sketch_of(&s, vals, N);
    assert_int_equal(s.flags & ARGUS_QS_COLLAPSED, ARGUS_QS_COLLAPSED);
    assert_int_equal(s.nbuckets, ARGUS_QSKETCH_BUCKETS);
    check_quantiles(&s, vals, N, s.zeros + s.counts[0], "collapsed");
}

static void test_add_n(void **state)
{
    struct argus_qsketch a, b;
    (void)state;

    argus_qsketch_init(&a);
    argus_qsketch_init(&b);
    argus_qsketch_add_n(&a, 12345, 7);
    argus_qsketch_add_n(&a, 0, 2);
    argus_qsketch_add_n(&a, 99, 0);
    for (int i = 0; i < 7; i++)
        argus_qsketch_add(&b, 12345);
    argus_qsketch_add(&b, 0);
    argus_qsketch_add(&b, 0);
    assert_memory_equal(&a, &b, sizeof a);
}

/* Fill vals with a distribution: 0 narrow (no collapse), 1 wide (collapse), 2 with zeros. */
static void fill(uint64_t *st, int kind, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (kind == 0)
            vals[i] = 400000 + tg_rand(st) % 800000;
        else if (kind == 1)
            vals[i] = (uint64_t)exp(tg_unif(st) * 20.0);
        else
            vals[i] = tg_rand(st) % 4 == 0 ? 0 : 1000 + tg_rand(st) % 3000;
    }
}

static void test_merge_equals_add_all(void **state)
{
    struct argus_qsketch all, parts[5], merged;
    uint64_t st = 15;
    (void)state;

    for (int kind = 0; kind < 3; kind++) {
        for (int rep = 0; rep < 20; rep++) {
            size_t n = 100 + tg_rand(&st) % 5000;
            fill(&st, kind, n);
            sketch_of(&all, vals, n);
            for (int p = 0; p < 5; p++)
                argus_qsketch_init(&parts[p]);
            for (size_t i = 0; i < n; i++)
                argus_qsketch_add(&parts[tg_rand(&st) % 5], vals[i]);
            argus_qsketch_init(&merged);
            for (int p = 0; p < 5; p++)
                argus_qsketch_merge(&merged, &parts[p]);
            if (memcmp(&merged, &all, sizeof all) != 0)
                fail_msg("kind %d rep %d: merge of parts differs from adding all", kind, rep);
            if (kind == 1)
                assert_true(all.flags & ARGUS_QS_COLLAPSED);
        }
    }
}

static void test_merge_commutative_associative(void **state)
{
    struct argus_qsketch a, b, c, ab, ba, ab_c, bc, a_bc, c_ba;
    uint64_t st = 16;
    (void)state;

    for (int kind = 0; kind < 3; kind++) {
        for (int rep = 0; rep < 30; rep++) {
            /* Each of a, b, c from a different span so merges shift and collapse. */
            struct argus_qsketch *x[3] = {&a, &b, &c};
            for (int k = 0; k < 3; k++) {
                size_t n = 1 + tg_rand(&st) % 2000;
                fill(&st, kind, n);
                uint64_t scale = 1 + tg_rand(&st) % 50;
                argus_qsketch_init(x[k]);
                for (size_t i = 0; i < n; i++)
                    argus_qsketch_add(x[k], vals[i] * scale);
            }
            ab = a;
            argus_qsketch_merge(&ab, &b);
            ba = b;
            argus_qsketch_merge(&ba, &a);
            assert_memory_equal(&ab, &ba, sizeof ab);
            ab_c = ab;
            argus_qsketch_merge(&ab_c, &c);
            bc = b;
            argus_qsketch_merge(&bc, &c);
            a_bc = a;
            argus_qsketch_merge(&a_bc, &bc);
            assert_memory_equal(&ab_c, &a_bc, sizeof ab_c);
            c_ba = c;
            argus_qsketch_merge(&c_ba, &ba);
            assert_memory_equal(&ab_c, &c_ba, sizeof ab_c);
            assert_int_equal(argus_qsketch_count(&ab_c), argus_qsketch_count(&a) +
                                                             argus_qsketch_count(&b) +
                                                             argus_qsketch_count(&c));
        }
    }
    /* Merging an empty sketch changes nothing. */
    struct argus_qsketch e;
    argus_qsketch_init(&e);
    ab = a;
    argus_qsketch_merge(&ab, &e);
    assert_memory_equal(&ab, &a, sizeof a);
    argus_qsketch_merge(&e, &a);
    assert_memory_equal(&e, &a, sizeof a);
}

/* The quantiles of a sketch of older values together with exact recent values are
 * within alpha of the exact quantiles of all of them; exact values come back exactly. */
static void test_quantile_with(void **state)
{
    static double recent[500];
    struct argus_qsketch s;
    uint64_t st = 77;
    (void)state;

    argus_qsketch_init(&s);
    assert_true(argus_qsketch_quantile_with(&s, NULL, 0, 0.5) == 0.0);
    const double one[] = { 42.0 };
    assert_true(argus_qsketch_quantile_with(&s, one, 1, 0.5) == 42.0);
    for (int shape = 0; shape < 3; shape++) {
        const size_t n_old = shape == 2 ? 0 : 20000, n_new = shape == 1 ? 0 : 500;
        for (size_t i = 0; i < n_old + n_new; i++) {
            double x = exp(18.0 + 0.3 * normal(&st)) * (shape == 2 && i % 2 ? 1.5 : 1.0);
            vals[i] = i % 97 == 0 ? 0 : (uint64_t)x; /* some zeros too */
        }
        sketch_of(&s, vals, n_old);
        for (size_t i = 0; i < n_new; i++)
            recent[i] = (double)vals[n_old + i];
        qsort(recent, n_new, sizeof *recent, cmp_d);
        memcpy(sorted, vals, (n_old + n_new) * sizeof *vals);
        qsort(sorted, n_old + n_new, sizeof *sorted, cmp_u64);
        for (double q = 0; q <= 1.0; q += 0.05) {
            const uint64_t rank = (uint64_t)floor(q * (double)(n_old + n_new - 1));
            const double exact = (double)sorted[rank];
            const double got = argus_qsketch_quantile_with(&s, recent, n_new, q);
            const double rel = exact == 0 ? fabs(got) : fabs(got - exact) / exact;
            if (rel > ARGUS_QSKETCH_ALPHA * (1 + 1e-9))
                fail_msg("shape %d q=%g exact %.0f got %.1f", shape, q, exact, got);
            if (n_old == 0)
                assert_true(got == exact); /* no sketch: the exact quantile */
            if (n_new == 0)
                assert_true(got == argus_qsketch_quantile(&s, q));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_and_zeros),
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_lognormal),
        cmocka_unit_test(test_bimodal),
        cmocka_unit_test(test_collapse),
        cmocka_unit_test(test_add_n),
        cmocka_unit_test(test_merge_equals_add_all),
        cmocka_unit_test(test_merge_commutative_associative),
        cmocka_unit_test(test_quantile_with),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
