/* test_modes.c — cmocka units for the KDE mode clustering (tracer/modes.c): known
 * mixtures (50/200/800 us), unimodal data that must not split, the 4-mode cap, the 1 %
 * side rule, and mode ids that stay the same step after step through the summariser. */
#include <math.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracer/modes.h"
#include "tracer/summarizer.h"

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Standard normal (Box-Muller). */
static double gauss(uint32_t *s)
{
    double u = ((double)(rnd(s) >> 8) + 0.5) / (double)(1u << 24);
    double v = ((double)(rnd(s) >> 8) + 0.5) / (double)(1u << 24);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double y[20000];

/* n points per centre (us) with relative noise sd, log2 of ns, sorted. */
static size_t mixture(const double *us, const size_t *n, int k, double sd, uint32_t seed)
{
    size_t m = 0;
    for (int i = 0; i < k; i++)
        for (size_t j = 0; j < n[i]; j++)
            y[m++] = log2(us[i] * 1000.0 * exp(sd * gauss(&seed)));
    qsort(y, m, sizeof y[0], cmp_d);
    return m;
}

static void test_three_modes(void **state)
{
    const double us[3] = {50, 200, 800};
    const size_t n[3] = {1000, 300, 500};
    size_t b[ARGUS_MODES_MAX + 1];
    (void)state;

    for (uint32_t seed = 1; seed <= 20; seed++) {
        size_t m = mixture(us, n, 3, 0.05, seed);
        assert_int_equal(argus_modes_kde(y, m, b, NULL), 3);
        assert_int_equal(b[1], 1000);
        assert_int_equal(b[2], 1300);
        assert_int_equal(b[3], 1800);
    }
}

static void test_unimodal_does_not_split(void **state)
{
    const double us[1] = {100};
    size_t b[ARGUS_MODES_MAX + 1];
    (void)state;

    for (uint32_t seed = 1; seed <= 20; seed++) {
        for (size_t n = 8; n <= 10000; n *= 5) {
            size_t m = mixture(us, &n, 1, 0.3, seed);
            assert_int_equal(argus_modes_kde(y, m, b, NULL), 1);
        }
    }
    /* All equal: one mode. */
    for (int i = 0; i < 100; i++)
        y[i] = 10;
    assert_int_equal(argus_modes_kde(y, 100, b, NULL), 1);
}

static void test_cap_and_small_side(void **state)
{
    const double us6[6] = {10, 40, 160, 640, 2560, 10240};
    const size_t n6[6] = {100, 100, 100, 100, 100, 100};
    const double us2[2] = {100, 1000};
    const size_t tiny[2] = {1000, 5}, ok[2] = {1000, 20};
    struct argus_kde_info info;
    size_t b[ARGUS_MODES_MAX + 1];
    (void)state;

    size_t m = mixture(us6, n6, 6, 0.03, 3);
    assert_int_equal(argus_modes_kde(y, m, b, &info), ARGUS_MODES_MAX);
    assert_true(info.h >= ARGUS_KDE_HMIN);
    for (unsigned i = 0; i < ARGUS_MODES_MAX; i++)
        assert_true(b[i + 1] > b[i]);
    m = mixture(us2, tiny, 2, 0.03, 4); /* 0.5 % on one side: not a mode */
    assert_int_equal(argus_modes_kde(y, m, b, NULL), 1);
    m = mixture(us2, ok, 2, 0.03, 4);   /* 2 %: a mode */
    assert_int_equal(argus_modes_kde(y, m, b, NULL), 2);
    assert_int_equal(b[1], 1000);
}

/* ---- through the summariser ------------------------------------------------------- */

static struct argus_step_summary last;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    memcpy(&last, s, sizeof *s);
}

static void test_mode_ids_stable_across_steps(void **state)
{
    struct argus_summarizer_opts o = {.rank = 0, .max_events = 4096, .max_names = 16,
                                      .on_summary = on_summary};
    struct argus_summarizer *sm = NULL;
    uint64_t t = 1000000000;
    (void)state;

    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    for (uint32_t step = 1; step <= 20; step++) {
        uint32_t seed = step * 7919;
        argus_summarizer_step_begin(sm, step, t);
        for (int i = 0; i < 700; i++) {
            double us = i % 7 == 0 ? 800 : i % 7 < 3 ? 200 : 50;
            uint64_t d = (uint64_t)(us * 1000 * exp(0.05 * gauss(&seed)));
            argus_summarizer_kernel(sm, "gemm", t, t + d, 0, 0, 0);
            t += d;
        }
        argus_summarizer_step_end(sm, step, t);
        assert_int_equal(last.n_kmodes, 3);
        const unsigned want[3] = {400, 200, 100};
        for (unsigned m = 0; m < 3; m++) {
            assert_int_equal(last.kmodes[m].mode, m);
            assert_int_equal(last.kmodes[m].count, want[m]);
        }
    }
    argus_summarizer_free(sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_modes),
        cmocka_unit_test(test_unimodal_does_not_split),
        cmocka_unit_test(test_cap_and_small_side),
        cmocka_unit_test(test_mode_ids_stable_across_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
