/* test_parts.c — unit tests of the forecast's parts, each on its own: the order
 * statistics (forecast/order.c) against qsort, the generalised Pareto tail
 * (forecast/tail.c) against a known law, and the two-stage sampler
 * (argus_forecast_sample: its centre, its normal law past many blocks, events and their
 * spread, refused input; the level's drift on whole-millisecond steps). The forecast as a whole: test_forecast.c. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"
#include "tests/forecast/series_fixture.h"

static uint64_t rng_state = 42;

/* The order statistics (forecast/order.c) against qsort: random, sorted, reversed,
 * all-equal and few-valued inputs; the quantile and the midmean by selection equal the
 * sorted ones. */
static void test_order(void **state)
{
    static double v[5000], w[5000], x[5000];
    (void)state;

    rng_state = 11;
    for (int shape = 0; shape < 5; shape++) {
        for (size_t n = 0; n <= 5000; n = n ? n * 3 + 1 : 1) {
            for (size_t i = 0; i < n; i++)
                v[i] = shape == 0 ? sfx_gauss(&rng_state) : shape == 1 ? (double)i
                       : shape == 2 ? (double)(n - i) : shape == 3 ? 7.0
                       : (double)(int)(sfx_unif(&rng_state) * 3);
            memcpy(w, v, n * sizeof *v);
            memcpy(x, v, n * sizeof *v);
            qsort(w, n, sizeof *w, sfx_cmp_d);
            fc_sort(v, n);
            assert_memory_equal(v, w, n * sizeof *v);
            for (double p = 0; p <= 1.0; p += 0.05) {
                memcpy(v, x, n * sizeof *v);
                assert_true(fabs(fc_quantile_sel(v, n, p) - fc_quantile_sorted(w, n, p)) <
                            1e-12);
            }
            double mid = 0; /* the midmean by selection against the sorted middle half */
            for (size_t i = n / 4; i < n - n / 4; i++)
                mid += w[i] / (double)(n - n / 4 - n / 4);
            memcpy(v, x, n * sizeof *v);
            assert_true(fabs(fc_midmean(v, n) - mid) < 1e-9 * (1 + fabs(mid)));
        }
    }
}

/* The fitted tail (forecast/tail.c): steps of 100 ms plus an exponential body and 1 % of
 * them a generalised Pareto excess (shape 0.3, scale 40 ms) past the body's top: the fit
 * finds the shape and scale, the survival function falls, draws have the law's mean;
 * too few steps, no fit. The per-step law takes its top percentiles from the tail. */
static void test_tail(void **state)
{
    static double v[20000];
    struct fc_gpd g;
    (void)state;

    rng_state = 12;
    const size_t n = 20000;
    for (size_t i = 0; i < n; i++) {
        const double u = sfx_unif(&rng_state);
        v[i] = 100 + 5 * -log(1 - u * 0.99); /* the body: below 100 + 5 ln 100 = 123 */
        if (i % 100 == 0)
            v[i] = 100 + 5 * log(100.0) + 40 / 0.3 * (pow(1 - sfx_unif(&rng_state), -0.3) - 1);
    }
    assert_int_equal(fc_gpd_fit(v, n, &g), 1);
    assert_true(g.ok);
    assert_true(fabs(g.p_exc - 0.01) < 0.002);
    assert_true(g.xi > 0.15 && g.xi < 0.45);
    assert_true(g.sigma > 30 && g.sigma < 52);
    assert_true(fc_gpd_sf(&g, g.u + 10) < g.p_exc && fc_gpd_sf(&g, g.u + 100) <
                fc_gpd_sf(&g, g.u + 10));
    double m = 0;
    uint64_t s = 5;
    for (int k = 0; k < 20000; k++)
        m += fc_gpd_draw(&g, fc_rng_unif(&s)) / 20000;
    assert_true(fabs(m - g.sigma / (1 - g.xi)) < 0.15 * g.sigma / (1 - g.xi));
    assert_int_equal(fc_gpd_fit(v, 150, &g), 0);
    assert_false(g.ok);
    /* a cluster far past the threshold is no Pareto tail: not fitted */
    for (size_t i = 0; i < 500; i++)
        v[i] = i % 20 == 0 ? 300 + 20 * (double)(i % 7) : 100 + (double)(i % 13);
    assert_int_equal(fc_gpd_fit(v, 500, &g), 0);
    /* 500 steps, 5 % of them a Pareto tail (shape 0.2, scale 20) past 112: the law of one
     * step takes P96..P99 from the fitted tail, near the true ones */
    double q[ARGUS_FC_NSTEPQ];
    for (size_t i = 0; i < 500; i++) {
        const double p = ((double)(i / 20) + 0.5) / 25;
        v[i] = i % 20 == 0 ? 112 + 20 / 0.2 * (pow(1 - p, -0.2) - 1) : 100 + (double)(i % 13);
    }
    assert_int_equal(fc_step_quant(v, 500, NULL, 0, 0, NULL, q), 0);
    for (int k = 95; k < ARGUS_FC_NSTEPQ; k++) {
        const double sf = (double)(ARGUS_FC_NSTEPQ - k) / (ARGUS_FC_NSTEPQ + 1) / 0.05;
        const double want = 112 + 20 / 0.2 * (pow(sf, -0.2) - 1);
        assert_true(fabs(q[k] - want) < 0.25 * (want - 100));
    }
}

static void test_sample(void **state)
{
    double base[500];
    struct argus_fc_quant q, q2;
    (void)state;

    rng_state = 9;
    for (int i = 0; i < 500; i++)
        base[i] = 100 + 10 * sfx_gauss(&rng_state);
    assert_int_equal(argus_forecast_sample(base, 500, 8, 10000, NULL, 0, 0, 0, NULL, 0, 500,
                                           3, &q), 0);
    assert_true(fabs(q.p50 - 1000.0) < 20); /* 10,000 x ~100 ms */
    /* far more steps left than blocks drawn: the normal law, same centre */
    assert_int_equal(argus_forecast_sample(base, 500, 8, 100000000ull, NULL, 0, 0, 0, NULL, 0,
                                           200, 3, &q2), 0);
    assert_true(fabs(q2.p50 - 1e7) < 0.03 * 1e7);
    /* events: 10 of 1,000 ms add 10 s */
    const double ev[] = {1000};
    assert_int_equal(argus_forecast_sample(base, 500, 8, 10000, ev, 1, 10, 0, NULL, 0, 500, 3,
                                           &q2), 0);
    assert_true(fabs(q2.p50 - q.p50 - 10) < 1e-6); /* the same draws otherwise */
    /* 10,000 events of 0 or 2,000 ms: their sum's spread is sqrt(10,000) x 1 s, not that
     * of fewer draws scaled up (P90 - P10 = 2 x 1.2816 x 100 s) */
    const double ev2[] = {0, 2000};
    assert_int_equal(argus_forecast_sample(base, 500, 8, 10000, ev2, 2, 10000, 0, NULL, 0,
                                           2000, 3, &q2), 0);
    assert_true(fabs(q2.p50 - q.p50 - 10000) < 30);
    assert_true(fabs((q2.p90 - q2.p10) - 256.3) < 0.2 * 256.3);
    assert_int_equal(argus_forecast_sample(base, 1, 8, 10, NULL, 0, 0, 0, NULL, 0, 10, 3, &q),
                     -EINVAL);
}

/* The level's drift on steps logged in whole milliseconds (forecast/sample.c, fc_level):
 * a flat job whose steps are 100 or 101 ms at even odds. The halves' medians are whole
 * numbers, so a drift taken from them is 0 or at least 1 ms by the luck of the draw and
 * the band is either a point or 5 s wide; from the halves' midmeans (the mean of their
 * middle halves) it moves with the data. Bound: a drift of three standard errors of the
 * halves' difference (3 x 0.5 ms x sqrt(2 / 200) = 0.15 ms per step) grown x1.73 over
 * the 1,200 steps left spans P10-P90 in about 0.8 s; no seed of 24 may pass twice that. */
static void test_level_grid(void **state)
{
    static double base[400];
    double wmin = INFINITY, wmax = 0;
    (void)state;

    for (uint64_t seed = 1; seed <= 24; seed++) {
        rng_state = 1000 + seed;
        for (size_t i = 0; i < 400; i++)
            base[i] = 100 + (sfx_gauss(&rng_state) > 0);
        struct argus_fc_quant q;
        assert_int_equal(argus_forecast_sample(base, 400, 8, 1200, NULL, 0, 0, 0, NULL, 0,
                                               1000, seed, &q), 0);
        const double w = q.p90 - q.p10;
        wmin = w < wmin ? w : wmin;
        wmax = w > wmax ? w : wmax;
    }
    print_message("band P10-P90 over 24 seeds: %.4f .. %.4f s\n", wmin, wmax);
    assert_true(wmin > 0);
    assert_true(wmax < 1.6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_tail),
        cmocka_unit_test(test_sample),
        cmocka_unit_test(test_level_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
