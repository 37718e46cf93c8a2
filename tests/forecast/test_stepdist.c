/* test_stepdist.c — the law of one step of the steps left (forecast/stepdist.c;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "The law of one step") where the regime drifts:
 * the held-out steps are spread over the drift to come and over what the fit cannot tell
 * of it, so the law of one step drawn from the steps left is the mixture of the regime's
 * law moved as the sampler moves a path (its slope, decay and level errors) at a
 * position uniform over the steps left, on the grid the steps were logged on. 2,400
 * steps fitted on the first 600, 10 seeds each, the KS distance between the law and the
 * 1,800 held-out steps:
 * - a staircase logged in whole milliseconds (test_drift's: +0.4 % every 100 steps, +2 %
 *   every fourth time, 0.5 % noise), whose damped drift falls short of the stairs to
 *   come: a mean KS of at most 0.60 (0.52 measured; 0.75 with the law at the fitted
 *   slope, off the grid, as before; 0.74 at the fitted slope on the grid), every quantile
 *   a whole millisecond (not so before);
 * - a damped slowdown (test_drift's: 0.15 (1 - e^(-s/600)) in log, AR(1) noise of 3 %),
 *   which the damped trend fits: no worse, at most 0.28 (0.255; 0.256 before);
 * - fc_step_quant on its own with a known drift (slope 1e-4 per step, no error, no
 *   decay to speak of, 1,000 steps left) on steps of 100 ms x 0.5 % noise: its median
 *   is that of exp(s j), j uniform over the steps left (about 100 e^0.05 = 105.1 ms), its
 *   P5 and P95 about the ends of the ramp; a slope error (se_end 3e-5 per step) widens
 *   it; unused, the steps' own law.
 */
#include "tests/common/testgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"
#include "store/jobstore.h"
#include "tests/forecast/series_fixture.h"

enum { N = 2400, CUT = 600 };

/* The job of kind k (0: a damped slowdown, 1: a staircase) and seed, N steps into ms. */
static void make_job(int kind, uint64_t seed, double *ms)
{
    uint64_t rng = (kind ? 6000 : 1000) + seed;
    double lvl = 0, ar = 0;
    for (int s = 0; s < N; s++) {
        if (kind) { /* +0.4 % every 100 steps, +2 % every fourth time, whole ms */
            if (s && s % 100 == 0)
                lvl += (s / 100 + (int)seed) % 4 == 3 ? 0.02 : 0.004;
            ms[s] = round(220 * exp(lvl + 0.005 * sfx_gauss(&rng)));
        } else { /* 0.15 (1 - e^(-s / 600)) in log, AR(1) noise of 3 % */
            ar = 0.5 * ar + sqrt(1 - 0.25) * 0.03 * sfx_gauss(&rng);
            ms[s] = 200 * exp(0.15 * -expm1(-s / 600.0) + ar);
        }
    }
}

/* The mean KS distance between the law of one step and the held-out steps over seeds
 * 1..ns of job kind, each law checked for order (and the grid on whole milliseconds). */
static double ks_jobs(int kind, int ns)
{
    static double ms[N], held[N];
    static struct argus_forecast fc;
    double ks_mean = 0;
    for (uint64_t seed = 1; seed <= (uint64_t)ns; seed++) {
        make_job(kind, seed, ms);
        struct argus_jobstore *js = sfx_store_series(ms, CUT);
        assert_non_null(js);
        struct argus_forecast_opts o = {.total_steps = N, .seed = 5, .step_dist = 1};
        assert_int_equal(argus_forecast_run(js, NULL, &o, &fc), 0);
        argus_jobstore_free(js);
        assert_true(fc.valid && fc.has_step_q);
        for (int k = 0; kind && k < ARGUS_FC_NSTEPQ; k++) /* the logged grid kept */
            assert_true(fabs(fc.step_q_ms[k] - nearbyint(fc.step_q_ms[k])) < 1e-6);
        for (int k = 1; k < ARGUS_FC_NSTEPQ; k++)
            assert_true(fc.step_q_ms[k] >= fc.step_q_ms[k - 1]);
        memcpy(held, ms + CUT, (N - CUT) * sizeof *held);
        qsort(held, N - CUT, sizeof *held, sfx_cmp_d);
        const double ks = sfx_ks_law(fc.step_q_ms, held, N - CUT);
        printf("%s %llu: law P10 %.1f P50 %.1f P90 %.1f, held-out P10 %.1f P50 %.1f "
               "P90 %.1f: KS %.3f\n", kind ? "staircase" : "slowdown",
               (unsigned long long)seed, fc.step_q_ms[9], fc.step_q_ms[49],
               fc.step_q_ms[89], held[(N - CUT) / 10], held[(N - CUT) / 2],
               held[9 * (N - CUT) / 10], ks);
        ks_mean += ks / ns;
    }
    printf("%s: mean KS %.3f\n", kind ? "staircase" : "slowdown", ks_mean);
    return ks_mean;
}

static void test_drifting_law(void **state)
{
    (void)state;
    const double slow = ks_jobs(0, 10), stairs = ks_jobs(1, 10);
    assert_true(slow <= 0.28);
    assert_true(stairs <= 0.60);
}

/* A drift of slope s per step, known exactly (no slope, decay or level error to draw). */
static void known_drift(struct fc_drift *d, double s, double se)
{
    memset(d, 0, sizeof *d);
    d->used = 1;
    d->slope = d->slope_end = s;
    d->se = 0; /* the end level not moved by the slope error (arm 0) */
    d->se_end = se;
    d->df = 1000;
    d->lam = d->lam_min = 1e-9;
    d->bt_span = 1000;
}

static void test_known_drift(void **state)
{
    enum { NV = 400 };
    static double v[NV];
    double q[ARGUS_FC_NSTEPQ], q0[ARGUS_FC_NSTEPQ], qe[ARGUS_FC_NSTEPQ];
    struct fc_drift d;
    uint64_t rng = 42;
    (void)state;
    for (int i = 0; i < NV; i++)
        v[i] = 100 * exp(0.005 * sfx_gauss(&rng));
    assert_int_equal(fc_step_quant(v, NV, NULL, 0, 0, NULL, q0), 0);
    known_drift(&d, 1e-4, 0);
    const struct fc_step_drift sd = {.d = &d, .left = 1000};
    assert_int_equal(fc_step_quant(v, NV, NULL, 0, 0, &sd, q), 0);
    printf("known drift: P5 %.2f P50 %.2f P95 %.2f (no drift: P50 %.2f)\n", q[4], q[49],
           q[94], q0[49]);
    assert_true(fabs(q0[49] - 100) < 0.3);
    /* log step = noise + 1e-4 j, j uniform on [0, 1000]: median ~ e^0.05 */
    assert_true(fabs(q[49] - 100 * exp(0.05)) < 0.3);
    assert_true(fabs(q[4] - 100 * exp(0.005)) < 0.6);   /* near the ramp's start */
    assert_true(fabs(q[94] - 100 * exp(0.095)) < 0.6);  /* near its end */
    /* a slope error widens it: slopes of sd 3e-5 move the far end by +-3 % */
    known_drift(&d, 1e-4, 3e-5);
    assert_int_equal(fc_step_quant(v, NV, NULL, 0, 0, &sd, qe), 0);
    printf("with a slope error: P5 %.2f P50 %.2f P95 %.2f\n", qe[4], qe[49], qe[94]);
    assert_true(qe[94] - qe[4] > 1.1 * (q[94] - q[4]));
    assert_true(fabs(qe[49] - q[49]) < 0.5);
    /* unused: the steps' own law, whatever the rest says */
    d.used = 0;
    assert_int_equal(fc_step_quant(v, NV, NULL, 0, 0, &sd, q), 0);
    for (int k = 0; k < ARGUS_FC_NSTEPQ; k++)
        assert_true(q[k] == q0[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drifting_law),
        cmocka_unit_test(test_known_drift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
