/* test_recur.c — change points that recur in the forecast (forecast/sample.c, the
 * recurring regimes; forecast/regimes.c, their sizes; docs/ALGORITHMS.md, "Forecast
 * (PRISM)", recurring regimes), on 2-rank jobs whose steps alternate between two
 * levels (odd and even steps, as modded-nanogpt's do) and climb in stairs (x1.7, x1.5,
 * x1.3: the BulkSmallTrackTransfer records' profile), then stay on the last stair:
 * - stairs from steps 0, 300, 600, 900, cut at 1,200 of 4,800 (300 steps on the last
 *   stair): the changes seen recur, but as regimes about the current level (their
 *   mean), not as a random walk of it: P90 under 1.4 x the truth and P99 under 1.6 x
 *   (1.26 x, 1.38 x measured; before: the level compounding by up to 16 changes of
 *   either sign, P90 3.9 x and P99 15 x), P10 over 0.6 x, the P50 within 3 % (0.4 %),
 *   the truth inside P10-P90 in at least 4 of 5 seeds;
 * - the same stairs down: the same bounds (P90 1.25 x, P50 +0.9 %; before P90 3.9 x);
 * - the last stair 10 steps before the cut (1,175 and 1,185 of 4,740, the records'
 *   own): the band widened x2.45 for the short regime, P90 still under 1.8 x the truth
 *   and P99 under 2.5 x (1.64 x, 2.0 x; before 5.3 x, 20 x), the P50 within 3 %;
 * - slowdown episodes (a CPU hog, a noisy neighbour: the level up x1.5 for 40 steps and
 *   back) at steps 100, 500 and 900 of 1,200, cut at 300, one seen: they recur at their
 *   observed rate on top of the level, never below it: the P50 within 3 % of the truth in
 *   every seed, P10 above the steps left at the base level (before: the rise and the
 *   return were two changes about the current level, mean-neutral: P50 -4 %, P10 -10 %);
 *   the law of one step holds them at their share: KS of the held-out steps 0.071 on
 *   average, at most 0.085 (0.102 with the level's law alone);
 *   fc_episodes_find on a rise that comes back, one that does not, one whose level rose
 *   again since (a job switching between two levels, now on the high one);
 * - fc_regime_step: a change's size is the log ratio of the levels of its two regimes
 *   (the stairs' log(1.5), log(4/3), log(1.25)), not the segmentation's split.
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

/* Forecast of ms[0..n) cut at cut (seed 3, the law of one step too); the truth (s, the
 * steps as logged). */
static double run(const double *ms, int n, int cut, struct argus_forecast *fc)
{
    struct argus_jobstore *js = sfx_store_series(ms, cut);
    assert_non_null(js);
    struct argus_forecast_opts o = {.total_steps = (uint64_t)n, .seed = 3, .step_dist = 1};
    assert_int_equal(argus_forecast_run(js, NULL, &o, fc), 0);
    assert_true(fc->valid);
    argus_jobstore_free(js);
    double truth = 0;
    for (int s = cut; s < n; s++)
        truth += (double)llround(ms[s]) / 1e3;
    return truth;
}

/* Odd and even steps at lv[g][0], lv[g][1] on stair g (from from[g]), 0.8 % noise;
 * cut at cut of n: five seeds within the bounds (relative to the truth). */
static void stairs(const double lv[4][2], const int from[4], int n, int cut, double p90,
                   double p99, double p10, double p50, const char *what)
{
    static double ms[4800];
    static struct argus_forecast fc;
    int inside = 0;
    assert_true(n <= 4800);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        uint64_t rs = 700 + seed;
        for (int s = 0, g = 0; s < n; s++) {
            while (g < 3 && s >= from[g + 1])
                g++;
            ms[s] = lv[g][s % 2] * exp(0.008 * sfx_gauss(&rs));
        }
        const double truth = run(ms, n, cut, &fc);
        const struct argus_fc_quant *q = &fc.remaining_s;
        printf("%s %llu: regime from %llu, truth %.1f s, P10 %.1f P50 %.1f P90 %.1f P99 "
               "%.1f\n", what, (unsigned long long)seed, (unsigned long long)fc.regime_start,
               truth, q->p10, q->p50, q->p90, q->p99);
        assert_true(sfx_said(&fc, "change points recur"));
        assert_true(q->p90 <= p90 * truth);
        assert_true(q->p99 <= p99 * truth);
        assert_true(q->p10 >= p10 * truth);
        assert_true(fabs(q->p50 - truth) <= p50 * truth);
        inside += q->p10 <= truth && truth <= q->p90;
    }
    assert_true(inside >= 4);
}

static const double up[4][2] = {{58, 86}, {100, 159}, {137, 241}, {176, 318}};
static const double down[4][2] = {{176, 318}, {137, 241}, {100, 159}, {58, 86}};

static void test_staircase_up(void **state)
{
    static const int from[4] = {0, 300, 600, 900};
    (void)state;
    stairs(up, from, 4800, 1200, 1.4, 1.6, 0.6, 0.03, "stairs up");
}

static void test_staircase_down(void **state)
{
    static const int from[4] = {0, 300, 600, 900};
    (void)state;
    stairs(down, from, 4800, 1200, 1.4, 1.6, 0.6, 0.03, "stairs down");
}

static void test_staircase_late(void **state)
{
    static const int from[4] = {0, 390, 790, 1175};
    (void)state;
    stairs(up, from, 4740, 1185, 1.8, 2.5, 0.3, 0.03, "late stair");
}

/* Steps at base ms with 3 % noise, x1.5 for 40 steps from each of from[0..3). */
static void episodes_series(double *ms, int n, double base, uint64_t rs)
{
    static const int from[3] = {100, 500, 900};
    for (int s = 0; s < n; s++) {
        int in = 0;
        for (int k = 0; k < 3; k++)
            in |= s >= from[k] && s < from[k] + 40;
        ms[s] = base * (in ? 1.5 : 1.0) * exp(0.03 * sfx_gauss(&rs));
    }
}

static void test_episodes_recur(void **state)
{
    enum { N = 1200, CUT = 300 };
    static double ms[N];
    static struct argus_forecast fc;
    double ks_mean = 0;
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        episodes_series(ms, N, 400, 900 + seed);
        const double truth = run(ms, N, CUT, &fc);
        const struct argus_fc_quant *q = &fc.remaining_s;
        static double held[N];
        for (int s = CUT; s < N; s++)
            held[s - CUT] = ms[s];
        qsort(held, N - CUT, sizeof held[0], sfx_cmp_d);
        assert_true(fc.has_step_q);
        const double ks = sfx_ks_law(fc.step_q_ms, held, N - CUT);
        ks_mean += ks / 5;
        printf("episodes %llu: truth %.2f s, P10 %.2f P50 %.2f P90 %.2f (%+.1f %%), KS %.3f\n",
               (unsigned long long)seed, truth, q->p10, q->p50, q->p90,
               (q->p50 / truth - 1) * 100, ks);
        assert_true(sfx_said(&fc, "slowdown episodes recur"));
        assert_false(sfx_said(&fc, "change points recur")); /* not counted twice */
        assert_true(fabs(q->p50 - truth) <= 0.03 * truth);
        assert_true(q->p10 >= (N - CUT) * 400 / 1e3 * 0.98);
    }
    printf("episodes: KS of the held-out steps %.3f on average\n", ks_mean);
    assert_true(ks_mean <= 0.085);
}

/* fc_episodes_find: a rise that comes back is an episode, one that stays is a regime. */
static void test_episodes_find(void **state)
{
    struct fc f;
    (void)state;
    memset(&f, 0, sizeof f);
    f.n = 1000;
    f.nchg = 3;
    f.chg[0] = 200, f.chg[1] = 260, f.chg[2] = 700;
    const double stair[3] = {log(1.5), -log(1.5) * 0.9, log(1.05)};
    unsigned char in_ep[3] = {0};
    struct fc_episodes ep;
    fc_episodes_find(&f, stair, in_ep, &ep);
    assert_int_equal(ep.n, 1);
    assert_true(fabs(ep.len[0] - 60) < 1e-9);
    assert_true(fabs(ep.lr[0] - 0.95 * log(1.5)) < 1e-9);
    assert_true(fabs(ep.rate - 1e-3) < 1e-12);
    assert_true(in_ep[0] && in_ep[1] && !in_ep[2]);
    /* a fall by less than half of the rise: the level stayed up, no episode */
    const double stay[3] = {log(1.5), -log(1.5) * 0.4, log(1.3)};
    memset(in_ep, 0, sizeof in_ep);
    fc_episodes_find(&f, stay, in_ep, &ep);
    assert_int_equal(ep.n, 0);
    assert_true(ep.rate == 0);
    /* the level up again since: the current regime is no base to add episodes to */
    const double again[3] = {log(1.5), -log(1.5), log(1.5)};
    memset(in_ep, 0, sizeof in_ep);
    fc_episodes_find(&f, again, in_ep, &ep);
    assert_int_equal(ep.n, 0);
    /* a rise in the warm-up (NAN) is not judged */
    const double warm[3] = {NAN, -log(1.5), log(1.3)};
    memset(in_ep, 0, sizeof in_ep);
    fc_episodes_find(&f, warm, in_ep, &ep);
    assert_int_equal(ep.n, 0);
}

/* The sizes of a staircase's change points: the stairs', not the segmentation's split. */
static void test_regime_step(void **state)
{
    enum { M = 1200 };
    static const double lv[4] = {100, 150, 200, 250};
    static double t[M], tmp[M];
    static unsigned char ev[M];
    struct fc f;
    (void)state;
    memset(&f, 0, sizeof f);
    uint64_t rs = 9;
    for (int s = 0; s < M; s++)
        t[s] = lv[s / 300] * exp(0.01 * sfx_gauss(&rs));
    ev[500] = 1; /* an event's step is no regime's step */
    t[500] = 5000;
    f.t = t;
    f.ev = ev;
    f.n = M;
    f.nchg = 3;
    for (size_t k = 0; k < 3; k++) {
        f.chg[k] = 300 * (k + 1);
        f.chg_lr[k] = 1; /* what the segmentation said: not used when both sides have steps */
    }
    for (size_t k = 0; k < 3; k++) {
        const double want = log(lv[k + 1] / lv[k]), got = fc_regime_step(&f, k, tmp);
        printf("stair %zu: %.4f (want %.4f)\n", k, got, want);
        assert_true(fabs(got - want) <= 0.005);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_staircase_up),
        cmocka_unit_test(test_staircase_down),
        cmocka_unit_test(test_staircase_late),
        cmocka_unit_test(test_regime_step),
        cmocka_unit_test(test_episodes_recur),
        cmocka_unit_test(test_episodes_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
