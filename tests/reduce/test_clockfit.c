/* test_clockfit.c — the offset line through ping bounds (reduce/clockfit.h): within the
 * legs' jitter on quick delays; on heavy-tailed asymmetric delays at least 5 times closer
 * than the per-burst minimum-RTT midpoint line clockkeep.c used before (printed); slope
 * held at 0 until the window spans 200 ms;
 * a drift that changes is followed once the window has turned over; contradictory bounds
 * give a finite line between them, and none once the server's uncertainty widens them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>

#include "reduce/clockfit.h"

static uint64_t rng;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* One leg of a message on a loaded node: 20 us, and with probability 1 - p_quick a wait
 * for a core, exponential with mean 2 ms. */
static int64_t leg(double p_quick)
{
    double d = 20000 + uniform() * 30000;
    if (uniform() >= p_quick)
        d += -log(1 - uniform()) * 2e6;
    return (int64_t)d;
}

struct truth {
    double o0, rate; /* o(t) = o0 + rate (t - T0) */
};
#define T0 1800000000000000000ll

static int64_t true_off(const struct truth *tr, int64_t t)
{
    return (int64_t)llround(tr->o0 + tr->rate * (double)(t - T0));
}

/* The old estimate, for comparison: per burst the minimum-RTT ping's midpoint, then a
 * least-squares line weighted by 1 / (rtt / 2 + 20 us)^2. */
struct old_fit {
    double t[16], y[16], w[16];
    int n;
};
static double old_at(const struct old_fit *o, double t)
{
    double sw = 0, tm = 0, ym = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < o->n; i++)
        sw += o->w[i];
    for (int i = 0; i < o->n; i++) {
        tm += o->w[i] / sw * (o->t[i] - (double)T0);
        ym += o->w[i] / sw * o->y[i];
    }
    for (int i = 0; i < o->n; i++) {
        double dt = o->t[i] - (double)T0 - tm;
        sxx += o->w[i] * dt * dt;
        sxy += o->w[i] * dt * (o->y[i] - ym);
    }
    return ym + (sxx > 0 ? sxy / sxx : 0) * (t - (double)T0 - tm);
}

/* 16 bursts of 8 pings every 300 ms from local time T0; returns the error at the end
 * (and the old estimate's in *old_err). */
static double run(struct argus_clockfit *f, const struct truth *tr, double p_quick,
                  int64_t *t, double *old_err)
{
    struct old_fit of = {.n = 0};
    for (int burst = 0; burst < 16; burst++) {
        int64_t best_rtt = INT64_MAX, best_t = 0, best_y = 0;
        for (int p = 0; p < 8; p++) {
            int64_t d1 = leg(p_quick), d2 = leg(p_quick);
            int64_t t1 = *t, at_server = t1 + d1, t2 = at_server + d2;
            int64_t s = at_server + true_off(tr, at_server);
            argus_clockfit_add(f, t1, t2, s, 0);
            if (t2 - t1 < best_rtt) {
                best_rtt = t2 - t1;
                best_t = t2;
                best_y = s - t1 - (t2 - t1) / 2;
            }
            *t = t2 + 100000;
        }
        argus_clockfit_solve(f);
        double e = (double)best_rtt / 2 + 20000;
        of.t[of.n] = (double)best_t;
        of.y[of.n] = (double)best_y;
        of.w[of.n++] = 1 / (e * e);
        *t += 300000000;
    }
    if (old_err)
        *old_err = fabs(old_at(&of, (double)*t) - (double)true_off(tr, *t));
    return fabs((double)(argus_clockfit_at(f, *t) - true_off(tr, *t)));
}

static void test_symmetric_exact(void **state)
{
    (void)state;
    struct argus_clockfit f;
    struct truth tr = {5e6, 20e-6};
    int64_t t = T0;
    rng = 1;
    argus_clockfit_init(&f, T0, 0);
    double err = run(&f, &tr, 1.0, &t, NULL); /* every leg quick: 20-50 us */
    assert_true(err < 30000);
    assert_true(fabs(f.b - 20e-6) < 20e-6);
    assert_true(f.width >= 0);
}

static void test_loaded_asymmetric(void **state)
{
    (void)state;
    double worst = 0, sum_new = 0, sum_old = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct argus_clockfit f;
        struct truth tr = {5e6 * (double)seed, 1500e-6}; /* the CI test's rank 3 */
        int64_t t = T0;
        double old_err;
        rng = seed * 0x9e3779b97f4a7c15ull;
        argus_clockfit_init(&f, T0, (int64_t)tr.o0);
        double err = run(&f, &tr, 0.15, &t, &old_err);
        worst = err > worst ? err : worst;
        sum_new += err;
        sum_old += old_err;
    }
    printf("# loaded asymmetric, 20 seeds: bounds fit mean %.1f us worst %.1f us; "
           "minimum-RTT line mean %.1f us\n", sum_new / 20e3, worst / 1e3, sum_old / 20e3);
    assert_true(worst < 100000);
    assert_true(sum_new * 5 < sum_old);
}

static void test_start_and_short_window(void **state)
{
    (void)state;
    struct argus_clockfit f;
    argus_clockfit_init(&f, T0, 1234567);
    assert_int_equal(argus_clockfit_at(&f, T0 + 5000000000ll), 1234567);
    argus_clockfit_solve(&f); /* nothing to fit: unchanged */
    assert_int_equal(argus_clockfit_at(&f, T0), 1234567);
    /* one burst within 1 ms: the level moves to the band, the slope stays 0 */
    for (int p = 0; p < 8; p++) {
        int64_t t1 = T0 + p * 100000;
        argus_clockfit_add(&f, t1, t1 + 60000, t1 + 30000 + 2000000, 0);
    }
    argus_clockfit_solve(&f);
    assert_true(f.b == 0 && !f.rated);
    assert_true(llabs(argus_clockfit_at(&f, T0 + 10000000000ll) - 2000000) < 1000);
    argus_clockfit_add(&f, T0 + 10, T0, 0, 0); /* t2 < t1: refused */
    assert_int_equal(f.n, 8);
}

static void test_drift_changes(void **state)
{
    (void)state;
    struct argus_clockfit f;
    struct truth up = {0, 100e-6};
    int64_t t = T0;
    rng = 7;
    argus_clockfit_init(&f, T0, 0);
    run(&f, &up, 1.0, &t, NULL);
    /* from now on the clock runs 100 ppm slow: continuous at the switch */
    struct truth down = {(double)true_off(&up, t), -100e-6};
    int64_t t_switch = t;
    down.o0 -= down.rate * (double)(t_switch - T0);
    double err = run(&f, &down, 1.0, &t, NULL);
    assert_true(err < 30000);
    assert_true(fabs(f.b + 100e-6) < 10e-6);
}

/* 32 pings 100 ms apart, quick both ways; the server's level jumps by 1 ms after 16 */
static void add_jump(struct argus_clockfit *f, int64_t s_err)
{
    for (int i = 0; i < 32; i++) {
        int64_t t1 = T0 + (int64_t)i * 100000000, off = i < 16 ? 0 : 1000000;
        argus_clockfit_add(f, t1, t1 + 20000, t1 + 10000 + off, s_err);
    }
}

static void test_contradiction(void **state)
{
    (void)state;
    struct argus_clockfit f;
    argus_clockfit_init(&f, T0, 0);
    /* 16 pings say 0 +-10 us, 16 later ones say 1 ms +-10 us (the parent's own estimate
     * jumped): no line satisfies both; the fit stays finite and between them */
    add_jump(&f, 0);
    argus_clockfit_solve(&f);
    int64_t at = argus_clockfit_at(&f, T0 + 3200000000ll);
    assert_true(f.width < 0);
    assert_true(at > -2000000 && at < 3000000);
}

static void test_server_uncertainty(void **state)
{
    (void)state;
    struct argus_clockfit f;
    argus_clockfit_init(&f, T0, 0);
    /* the same jump, but the server said it was only sure to +-600 us: no contradiction,
     * and the estimate at the newest ping lies within what those pings allow */
    add_jump(&f, 600000);
    argus_clockfit_solve(&f);
    int64_t at = argus_clockfit_at(&f, f.base);
    assert_true(f.width >= 0);
    assert_true(at >= 1000000 - 610000 && at <= 1000000 + 610000);
    assert_true(argus_clockfit_uncertainty(&f) <= 611000); /* 600 + the ping's 10 */
    argus_clockfit_add(&f, T0, T0 + 10, 0, -1); /* an unsettled server: refused */
    assert_int_equal(f.n, 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symmetric_exact),
        cmocka_unit_test(test_loaded_asymmetric),
        cmocka_unit_test(test_start_and_short_window),
        cmocka_unit_test(test_drift_changes),
        cmocka_unit_test(test_contradiction),
        cmocka_unit_test(test_server_uncertainty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
