/* test_gone_bound.c — unit tests of the store's bounded evicted-step list
 * (store/jobstore.h: argus_jobstore_evicted, ARGUS_JOBSTORE_GONE_MAX; store/retain.c):
 *   - after 10^6 evicted steps the list holds as many bytes as after 10^5 (its bound),
 *     its entries cover every evicted step once, in order, each with the exact longest
 *     wall and wall sum of its steps, the newest 2,048 or more as single steps, the merged
 *     ones (but the newest) of one width, and the running sum is exact; the unbounded
 *     list (argus_jobstore_set_evicted_max 0, the reference) grows with the steps;
 *   - on a long series (100,000 steps: noise, a slow episode, periodic spikes, a regime
 *     change) the report's step figures and the forecast from the bounded list stay within
 *     the stated tolerances of the unbounded one's, and the live forecast (2,048 steps)
 *     is the same. */
#include "tests/common/testgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "forecast/forecast.h"
#include "store/jobstore.h"

#define NR 2
#define HELD 16

static uint64_t wall_of(uint64_t step, uint32_t rank, uint64_t *rng)
{
    double ms = step < 60000 ? 100 : 112;                     /* a regime change */
    if (step % 250 == 0)
        ms *= 3;                                              /* a checkpoint */
    if (step >= 30000 && step < 30400)
        ms *= 1.4;                                            /* a slow episode */
    ms += 8 * tg_unif(rng) + (rank == 1 ? 2 : 0);
    return (uint64_t)(ms * 1e6);
}

static struct argus_jobstore *store_new(size_t gone_max)
{
    struct argus_jobstore *js;
    assert_int_equal(argus_jobstore_create(NR, &js), 0);
    assert_int_equal(argus_jobstore_set_retention(js, HELD * NR, HELD), 0);
    if (gone_max != ARGUS_JOBSTORE_GONE_MAX) /* else the default, which is the bound */
        assert_int_equal(argus_jobstore_set_evicted_max(js, gone_max), 0);
    return js;
}

/* Steps [from, to) of every rank into each store; wmax[step] and the sum of the job's
 * step walls (the slowest rank) kept. */
static void feed(struct argus_jobstore **js, int n_js, uint64_t from, uint64_t to,
                 uint64_t *wmax, uint64_t *rng)
{
    static struct argus_step_summary s;
    for (uint64_t step = from; step < to; step++) {
        uint64_t mx = 0;
        for (uint32_t r = 0; r < NR; r++) {
            memset(&s, 0, offsetof(struct argus_step_summary, kmodes));
            s.step = step;
            s.rank = r;
            s.start_ns = step * 1000000000ull;
            s.end_ns = s.start_ns + wall_of(step, r, rng);
            s.compute_ns = s.end_ns - s.start_ns;
            mx = s.end_ns - s.start_ns > mx ? s.end_ns - s.start_ns : mx;
            for (int k = 0; k < n_js; k++)
                assert_int_equal(argus_jobstore_add_summary(js[k], &s), 0);
        }
        if (wmax)
            wmax[step] = mx;
    }
}

/* The list of js against the walls of the steps it evicted, [0, n_evicted). */
static void check_list(const struct argus_jobstore *js, const uint64_t *wmax,
                       uint64_t n_evicted, int bounded)
{
    const struct argus_jobstore_gone *g;
    const size_t n = argus_jobstore_evicted(js, &g);
    uint64_t next = 0, sum = 0, width = 0;
    size_t singles = 0;
    assert_true(n > 0 && (!bounded || n <= ARGUS_JOBSTORE_GONE_MAX));
    for (size_t i = 0; i < n; i++) {
        assert_true(g[i].step == next && g[i].last == g[i].step + g[i].n - 1 && g[i].n >= 1);
        uint64_t mx = 0, sm = 0;
        double sq = 0;
        for (uint64_t s = g[i].step; s <= g[i].last; s++) {
            mx = wmax[s] > mx ? wmax[s] : mx;
            sm += wmax[s];
            sq += (double)wmax[s] / 1e6 * ((double)wmax[s] / 1e6);
        }
        assert_true(g[i].wall_ns == mx && g[i].wall_sum_ns == sm);
        assert_true(fabs(g[i].wall_sq_ms2 - sq) <= 1e-9 * sq);
        sum += sm;
        next = g[i].last + 1;
        if (g[i].n == 1) {
            singles++;
        } else {
            assert_int_equal(singles, 0); /* merged entries come first */
            if (i + 1 < n && g[i + 1].n > 1) {
                assert_true(width == 0 || g[i].n == width);
                width = g[i].n;
            }
        }
    }
    assert_true(next == n_evicted);
    assert_true(singles >= 2048 || singles == n);
    assert_true(argus_jobstore_evicted_wall_sum(js) == sum);
}

static void test_bound(void **state)
{
    (void)state;
    const uint64_t N1 = 100000, N2 = 1000000;
    uint64_t *wmax = malloc(N2 * sizeof *wmax), rng = 11;
    struct argus_jobstore *js[2] = {store_new(ARGUS_JOBSTORE_GONE_MAX), store_new(0)};
    assert_non_null(wmax);

    feed(js, 2, 0, N1, wmax, &rng);
    check_list(js[0], wmax, N1 - HELD, 1);
    check_list(js[1], wmax, N1 - HELD, 0);
    const size_t bytes1 = argus_jobstore_evicted_bytes(js[0]);
    const size_t ref1 = argus_jobstore_evicted_bytes(js[1]);
    argus_jobstore_free(js[1]); /* the reference's growth is seen: no need for 10^6 */
    feed(js, 1, N1, N2, wmax, &rng);
    check_list(js[0], wmax, N2 - HELD, 1);
    const size_t bytes2 = argus_jobstore_evicted_bytes(js[0]);
    printf("# evicted list: %zu B after %llu evicted steps, %zu B after %llu "
           "(unbounded: %zu B after %llu)\n", bytes1, (unsigned long long)(N1 - HELD), bytes2,
           (unsigned long long)(N2 - HELD), ref1, (unsigned long long)(N1 - HELD));
    assert_true(bytes1 == bytes2);
    assert_true(bytes2 <= ARGUS_JOBSTORE_GONE_MAX * sizeof(struct argus_jobstore_gone));
    assert_true(ref1 >= (N1 - HELD) * sizeof(struct argus_jobstore_gone));
    free(wmax);
    argus_jobstore_free(js[0]);
}

static double rel(double a, double b)
{
    return fabs(a - b) / fabs(b);
}

static void test_against_unbounded(void **state)
{
    (void)state;
    const uint64_t N = 100000, TOTAL = 150000;
    uint64_t rng = 5;
    struct argus_jobstore *js[2] = {store_new(ARGUS_JOBSTORE_GONE_MAX), store_new(0)};
    struct argus_analysis_opts ao;
    struct argus_result res[2];
    static struct argus_forecast fc[2][2];

    feed(js, 2, 0, N, NULL, &rng);
    assert_true(argus_jobstore_evicted(js[0], NULL) < argus_jobstore_evicted(js[1], NULL));
    argus_analysis_opts_default(&ao);
    for (int k = 0; k < 2; k++) {
        memset(&res[k], 0, sizeof res[k]);
        assert_int_equal(argus_analyze(js[k], &ao, &res[k]), 0);
        for (int live = 0; live < 2; live++) {
            const struct argus_forecast_opts fo = {.total_steps = TOTAL, .seed = 1,
                                                   .n_sims = live ? 200 : 1000,
                                                   .max_series = live ? 2048 : 0};
            assert_int_equal(argus_forecast_run(js[k], &res[k], &fo, &fc[k][live]), 0);
            assert_true(fc[k][live].valid);
        }
    }
    const struct argus_step_stats *a = &res[0].steps, *b = &res[1].steps;
    printf("# steps: count %llu/%llu median %.3f/%.3f ms p99 %.3f/%.3f ms cv %.4f/%.4f\n",
           (unsigned long long)a->count, (unsigned long long)b->count, a->median_ms,
           b->median_ms, a->p99_ms, b->p99_ms, a->cv, b->cv);
    assert_true(a->count == N && b->count == N && a->first == 0 && b->first == 0 &&
                a->last == N - 1 && b->last == N - 1);
    assert_true(rel(a->median_ms, b->median_ms) <= 0.01); /* stated: 1 % */
    assert_true(rel(a->p99_ms, b->p99_ms) <= 0.05);       /* stated: 5 % */
    assert_true(rel(a->cv, b->cv) <= 0.10);               /* stated: 10 % */
    for (int live = 0; live < 2; live++) {
        const struct argus_forecast *x = &fc[0][live], *y = &fc[1][live];
        printf("# forecast %s: remaining p10 %.1f/%.1f p50 %.1f/%.1f p90 %.1f/%.1f s; "
               "done %llu/%llu, elapsed %.1f/%.1f s\n", live ? "live" : "sealed",
               x->remaining_s.p10, y->remaining_s.p10, x->remaining_s.p50, y->remaining_s.p50,
               x->remaining_s.p90, y->remaining_s.p90, (unsigned long long)x->steps_done,
               (unsigned long long)y->steps_done, x->elapsed_s, y->elapsed_s);
        assert_true(x->steps_done == N && y->steps_done == N && x->steps_left == TOTAL - N);
        assert_true(rel(x->elapsed_s, y->elapsed_s) <= 1e-12);
        if (live) { /* the live series is the newest 2,048 steps: single in both */
            assert_true(x->remaining_s.p10 == y->remaining_s.p10 &&
                        x->remaining_s.p50 == y->remaining_s.p50 &&
                        x->remaining_s.p90 == y->remaining_s.p90 &&
                        x->remaining_s.p99 == y->remaining_s.p99);
        } else { /* stated: P50 within 1 %, P10 and P90 within 3 % */
            assert_true(rel(x->remaining_s.p50, y->remaining_s.p50) <= 0.01);
            assert_true(rel(x->remaining_s.p10, y->remaining_s.p10) <= 0.03);
            assert_true(rel(x->remaining_s.p90, y->remaining_s.p90) <= 0.03);
        }
    }
    for (int k = 0; k < 2; k++) {
        argus_result_free(&res[k]);
        argus_jobstore_free(js[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_against_unbounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
