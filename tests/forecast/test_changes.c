/* test_changes.c — the forecast's periodic events and own change points
 * (forecast/series.c: fc_periodic, fc_event_cost, fc_changes; docs/ALGORITHMS.md,
 * "Forecast (PRISM)", "Periodic events", "Regimes") on synthetic series built straight
 * into the working set (struct fc, forecast/internal.h), 40 seeds each: AR(1) noise of
 * the log step time (rho 0.5, sd 0.1), a level drop at step 200 of 300, and a checkpoint
 * every 25 steps that spans two steps (+65 %: written in step K, waited for by the other
 * ranks in K + 1, as in tests/data/torch/ckpt), which the analysis reports by one hit
 * per occurrence (K + 1):
 * - both steps of every occurrence seen leave the series (f->ev 1 and 2, nothing else)
 *   and an occurrence costs both steps' excess; the change points are then those of the
 *   same series without checkpoints with those steps out, whether the 10 % drop is found
 *   or not: at most 2 of 40 decisions differ (0 measured; 12 when only the hit left the
 *   series, its other step staying as a spike every 24 steps of the series, which
 *   inflated the long-run noise the drop is tested against);
 * - a 20 % drop is found, within 10 steps of where it is, in every series with its
 *   checkpoints taken out that way. */
#include "tests/common/testgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

#define N 300
#define SEEDS 40

static double gauss(uint64_t *st)
{
    const double u = fc_rng_unif(st), v = fc_rng_unif(st);
    return sqrt(-2 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

/* log step times: AR(1) noise of sd sd and lag-1 correlation rho about 0, drop from step
 * 200 on, +spike at steps K and K + 1 for K = 24, 49, ..., 274 (spike 0: none). */
static void series(uint64_t seed, double sd, double rho, double drop, double spike,
                   double *y)
{
    uint64_t st = seed * 0x9e3779b97f4a7c15ull + 1;
    double x = sd * gauss(&st);
    for (int i = 0; i < N; i++) {
        if (i)
            x = rho * x + sd * sqrt(1 - rho * rho) * gauss(&st);
        const int ck = i > 0 && i + 1 < N && (i % 25 == 24 || i % 25 == 0);
        y[i] = x - (i >= 200 ? drop : 0) + (ck ? spike : 0);
    }
}

/* The working set of 100 ms x exp(y), steps 0..N-1; with_ev: the analysis' periodic
 * finding of the checkpoints (every 25 steps, its hits at 25, 50, ...: one step of each)
 * given to fc_periodic. */
static void fc_of(struct fc *f, const double *y, int with_ev, struct argus_forecast *o)
{
    memset(f, 0, sizeof *f);
    memset(o, 0, sizeof *o);
    f->n = N;
    f->step = malloc(N * sizeof *f->step);
    f->t = malloc(N * sizeof *f->t);
    f->ev = calloc(N, 1);
    assert_non_null(f->step);
    assert_non_null(f->t);
    assert_non_null(f->ev);
    for (int i = 0; i < N; i++) {
        f->step[i] = (uint64_t)i;
        f->t[i] = 100 * exp(y[i]);
    }
    if (!with_ev)
        return;
    struct argus_anomaly an;
    memset(&an, 0, sizeof an);
    an.kind = ARGUS_AK_ITERATION_JITTER;
    an.period_steps = 25;
    for (uint64_t k = 25; k < N && an.n_hits < ARGUS_ANOMALY_MAX_HITS; k += 25)
        an.hits[an.n_hits++] = k;
    struct argus_result res;
    memset(&res, 0, sizeof res);
    res.n_anomalies = 1;
    res.anomalies = &an;
    fc_periodic(f, &res, o);
}

/* fc_changes on f: the change points into chg (at most FC_MAX_CHANGES); their number.
 * f freed. */
static size_t changes_of(struct fc *f, size_t *chg)
{
    assert_int_equal(fc_changes(f), 0);
    const size_t n = f->nchg;
    memcpy(chg, f->chg, n * sizeof *chg);
    fc_free(f);
    return n;
}

/* 1 when one of chg[0..n) lies within 10 steps of step 200 */
static int found(const size_t *chg, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (chg[k] >= 190 && chg[k] <= 210)
            return 1;
    return 0;
}

static void test_checkpoints_out_same_decision(void **state)
{
    (void)state;
    double y[N], clean[N];
    size_t chg[FC_MAX_CHANGES];
    int flips = 0, in = 0;
    for (uint64_t s = 0; s < SEEDS; s++) {
        series(s, 0.10, 0.5, 0.10, 0.5, y);
        series(s, 0.10, 0.5, 0.10, 0, clean);
        struct fc f;
        struct argus_forecast o;
        fc_of(&f, y, 1, &o);
        assert_int_equal(o.n_periodic, 1);
        assert_int_equal(o.periodic[0].seen, 11);
        for (int i = 1; i < N; i++) /* both steps of each checkpoint seen, nothing else */
            assert_int_equal(f.ev[i], i % 25 == 0 ? 1 : i % 25 == 24 && i < 275 ? 2 : 0);
        /* one occurrence's cost: both its steps' excess */
        assert_true(fabs(fc_event_cost(&f, 50, 100) - (f.t[49] - 100) - (f.t[50] - 100)) <
                    1e-9);
        const int a = found(chg, changes_of(&f, chg));
        /* the same series without its checkpoints, the same steps out */
        fc_of(&f, clean, 0, &o);
        for (int i = 1; i <= 275; i++)
            f.ev[i] = i % 25 == 0 || i % 25 == 24;
        const int b = found(chg, changes_of(&f, chg));
        flips += a != b;
        in += a;
    }
    print_message("checkpoints found and out, or none: %d flips of %d, found %d\n", flips,
                  SEEDS, in);
    assert_true(flips <= 2);
}

static void test_clear_drop_found(void **state)
{
    (void)state;
    double y[N];
    size_t chg[FC_MAX_CHANGES];
    for (uint64_t s = 300; s < 300 + SEEDS; s++) {
        series(s, 0.10, 0.5, 0.20, 0.5, y);
        struct fc f;
        struct argus_forecast o;
        fc_of(&f, y, 1, &o);
        assert_true(found(chg, changes_of(&f, chg)));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoints_out_same_decision),
        cmocka_unit_test(test_clear_drop_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
