/* test_detect.c — the detectors on a synthetic 16-rank job (tp 2, pp 2, dp 4, 60 steps):
 * a clean run gives no anomaly whatever the seed, each injected fault gives exactly one
 * anomaly of the right kind naming exactly its source ranks over overlapping steps, with
 * victims never among the sources. Also the robust-statistics helpers on hand values.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/analysis.h"
#include "report/report.h"
#include "analysis/stats.h"
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"

/* Exactly one anomaly, of kind k0 (or k1), naming exactly ranks[], overlapping [lo,hi]. */
static const struct argus_anomaly *expect_one(const struct argus_jobstore *js,
                                              const struct argus_result *r, int k0, int k1,
                                              const uint32_t *ranks, uint32_t n, uint64_t lo,
                                              uint64_t hi)
{
    if (r->n_anomalies != 1)
        synth_dump(js, r);
    assert_int_equal(r->n_anomalies, 1);
    const struct argus_anomaly *a = &r->anomalies[0];
    if (a->kind != k0 && a->kind != k1)
        synth_dump(js, r);
    assert_true(a->kind == k0 || a->kind == k1);
    if (a->n_ranks != n)
        synth_dump(js, r);
    assert_int_equal(a->n_ranks, n);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(a->ranks[i], ranks[i]);
    assert_true(a->step_first <= hi && a->step_last >= lo);
    for (uint32_t i = 0; i < a->n_victims; i++)
        for (uint32_t j = 0; j < a->n_ranks; j++)
            assert_int_not_equal(a->victims[i], a->ranks[j]);
    assert_true(a->detected_at_step >= a->step_first && a->detected_at_step <= a->step_last);
    assert_true(a->evidence[0] != '\0');
    assert_true(a->slowdown > 1.0);
    assert_true(a->score > 0);
    assert_int_equal(a->id, 1);
    return a;
}

static void test_clean(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, seed);
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 0);
        assert_int_equal(r.steps.count, 60);
        assert_int_equal(r.steps.first, 0);
        assert_int_equal(r.steps.last, 59);
        assert_true(r.steps.median_ms > 0 && r.steps.p99_ms >= r.steps.median_ms);
        assert_true(r.steps.cv >= 0 && r.steps.cv < 0.05);
        assert_int_equal(r.layout.tp, 2);
        assert_int_equal(r.layout.pp, 2);
        assert_int_equal(r.layout.dp, 4);
        assert_int_equal(r.layout.inferred, 0);
        assert_int_equal(r.n_ranks, 16);
        assert_true(r.kernels_seen > 0);
        assert_true(r.summary_bytes_per_rank_step > 100);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

static void test_clean_variants(void **state)
{
    (void)state;
    /* other layouts, more noise, unknown layout */
    const int lay[][3] = { { 2, 4, 2 }, { 1, 1, 8 }, { 4, 2, 2 }, { 2, 2, 4 } };
    for (size_t i = 0; i < sizeof lay / sizeof lay[0]; i++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, 100 + i);
        o.tp = lay[i][0];
        o.pp = lay[i][1];
        o.dp = lay[i][2];
        if (i == 3) {
            o.no_coords = 1;
            o.pp = 1;
        }
        o.noise = i == 2 ? 0.06 : 0.03;
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 0);
        assert_int_equal(r.layout.inferred, i == 3);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

static void test_straggler(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 7);
    struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 20, 40, 1.5);
    f->ranks[f->nranks++] = 5;
    struct argus_jobstore *js = synth_run(&o, &r);
    const uint32_t want[] = { 5 };
    const struct argus_anomaly *a =
        expect_one(js, &r, ARGUS_AK_COMPUTE_STRAGGLER, -1, want, 1, 20, 40);
    assert_int_equal(a->level, 2);
    assert_true(a->phase == ARGUS_PH_BACKWARD || a->phase == ARGUS_PH_FORWARD);
    assert_true(a->n_kernels >= 1);
    assert_true(a->n_victims >= 8);
    assert_true(a->slowdown > 1.35 && a->slowdown < 1.65);
    assert_int_equal(a->detected_at_step, 22);
    assert_true(r.ranks[5].flags & (1u << ARGUS_AK_COMPUTE_STRAGGLER));
    assert_int_equal(r.ranks[4].flags, 0);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_straggler_replica(void **state)
{
    (void)state;
    /* both TP ranks of two DP replicas of stage 0: half of the stage */
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 8);
    struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 12, 59, 2.0);
    const int rs[] = { 2, 3, 4, 5 };
    for (int i = 0; i < 4; i++)
        f->ranks[f->nranks++] = rs[i];
    struct argus_jobstore *js = synth_run(&o, &r);
    const uint32_t want[] = { 2, 3, 4, 5 };
    expect_one(js, &r, ARGUS_AK_COMPUTE_STRAGGLER, -1, want, 4, 12, 59);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void comm_case(int tp_group, int index, const uint32_t *want, uint32_t n)
{
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 9);
    struct synth_fault *f = synth_add(&o, SY_COMM, 20, 40, 3.0);
    f->group_tp = tp_group;
    f->group_index = index;
    struct argus_jobstore *js = synth_run(&o, &r);
    const struct argus_anomaly *a =
        expect_one(js, &r, ARGUS_AK_COMM_DEGRADATION, -1, want, n, 20, 40);
    assert_int_equal(a->group_type, tp_group ? ARGUS_GT_TP : ARGUS_GT_DP);
    assert_int_equal(a->n_group, n);
    assert_int_equal(a->phase, ARGUS_PH_COMM);
    assert_true(a->n_kernels >= 1);
    assert_int_equal(a->level, 3);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_comm_dp(void **state)
{
    (void)state;
    const uint32_t want[] = { 1, 3, 5, 7 }; /* DP group index 1: pp 0, tp 1 */
    comm_case(0, 1, want, 4);
}

static void test_comm_tp(void **state)
{
    (void)state;
    const uint32_t want[] = { 12, 13 }; /* TP group index 6: pp 1, dp 2 */
    comm_case(1, 6, want, 2);
}

static void test_bubble(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 10);
    synth_add(&o, SY_BUBBLE, 20, 40, 1.5)->stage = 1;
    struct argus_jobstore *js = synth_run(&o, &r);
    const uint32_t want[] = { 8, 9, 10, 11, 12, 13, 14, 15 };
    const struct argus_anomaly *a =
        expect_one(js, &r, ARGUS_AK_PIPELINE_BUBBLE, -1, want, 8, 20, 40);
    assert_true(a->n_victims >= 1);
    for (uint32_t i = 0; i < a->n_victims; i++)
        assert_true(a->victims[i] < 8);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_host_stall(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 11);
    struct synth_fault *f = synth_add(&o, SY_HOST, 20, 40, 1.0);
    f->ranks[f->nranks++] = 3;
    f->ms = 30;
    struct argus_jobstore *js = synth_run(&o, &r);
    const uint32_t want[] = { 3 };
    const struct argus_anomaly *a = expect_one(js, &r, ARGUS_AK_HOST_STALL, -1, want, 1, 20, 40);
    assert_int_equal(a->phase, ARGUS_PH_HOST);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_regression(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 12);
    synth_add(&o, SY_REGRESSION, 30, 59, 1.15);
    struct argus_jobstore *js = synth_run(&o, &r);
    const struct argus_anomaly *a =
        expect_one(js, &r, ARGUS_AK_STEP_REGRESSION, -1, NULL, 0, 30, 59);
    assert_true(a->step_first >= 29 && a->step_first <= 31);
    assert_int_equal(a->step_last, 59);
    assert_int_equal(a->level, 1);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_kernel(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 13);
    struct synth_fault *f = synth_add(&o, SY_KERNEL, 20, 40, 2.0);
    f->ranks[f->nranks++] = 6;
    f->kernel = "flash_bwd";
    struct argus_jobstore *js = synth_run(&o, &r);
    const uint32_t want[] = { 6 };
    const struct argus_anomaly *a =
        expect_one(js, &r, ARGUS_AK_KERNEL_DEGRADATION, -1, want, 1, 20, 40);
    assert_true(a->n_kernels >= 1);
    assert_true(a->kernels[0] == argus_name_hash(synth_kernel_name("flash_bwd")));
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_kernel_big(void **state)
{
    (void)state;
    /* a kernel slow enough to push the whole compute over the ratio: still one kernel */
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 14);
    struct synth_fault *f = synth_add(&o, SY_KERNEL, 10, 59, 4.0);
    f->ranks[f->nranks++] = 9;
    f->kernel = "flash_bwd";
    struct argus_jobstore *js = synth_run(&o, &r);
    const uint32_t want[] = { 9 };
    const struct argus_anomaly *a =
        expect_one(js, &r, ARGUS_AK_KERNEL_DEGRADATION, -1, want, 1, 10, 59);
    assert_true(a->kernels[0] == argus_name_hash(synth_kernel_name("flash_bwd")));
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_jitter(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 15);
    synth_add(&o, SY_JITTER, 25, 25, 1.6);
    struct argus_jobstore *js = synth_run(&o, &r);
    const struct argus_anomaly *a =
        expect_one(js, &r, ARGUS_AK_ITERATION_JITTER, -1, NULL, 0, 25, 25);
    assert_int_equal(a->step_first, 25);
    assert_int_equal(a->detected_at_step, 25);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void test_crash(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 16);
    struct synth_fault *f = synth_add(&o, SY_CRASH, 30, 59, 1.0);
    f->ranks[f->nranks++] = 9;
    struct argus_jobstore *js = synth_run(&o, &r);
    if (r.n_anomalies)
        synth_dump(js, &r);
    assert_int_equal(r.n_anomalies, 0);
    assert_int_equal(argus_jobstore_meta_c(js)->complete, 0);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* No coordinates: peer classes come from the kernels each rank runs. */
static void test_inferred_layout(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 17);
    o.no_coords = 1;
    struct argus_jobstore *js = synth_run(&o, &r);
    if (r.n_anomalies)
        synth_dump(js, &r);
    assert_int_equal(r.n_anomalies, 0);
    assert_int_equal(r.layout.inferred, 1);
    assert_int_equal(r.layout.pp, 2);
    assert_int_equal(r.layout.dp, 8);
    argus_result_free(&r);
    argus_jobstore_free(js);

    synth_default(&o, 18);
    o.no_coords = 1;
    struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 20, 40, 1.5);
    f->ranks[f->nranks++] = 5;
    js = synth_run(&o, &r);
    const uint32_t want[] = { 5 };
    expect_one(js, &r, ARGUS_AK_COMPUTE_STRAGGLER, -1, want, 1, 20, 40);
    argus_result_free(&r);
    argus_jobstore_free(js);

    synth_default(&o, 19);
    o.no_coords = 1;
    synth_add(&o, SY_BUBBLE, 20, 40, 1.5)->stage = 1;
    js = synth_run(&o, &r);
    const uint32_t stage1[] = { 8, 9, 10, 11, 12, 13, 14, 15 };
    expect_one(js, &r, ARGUS_AK_PIPELINE_BUBBLE, -1, stage1, 8, 20, 40);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* argus_stats_sort (introsort) against qsort: random, many duplicates, sorted, reversed,
 * organ-pipe and all-equal inputs of every size up to 300 and some large ones. */
static void test_stats_sort(void **state)
{
    static double a[20000], b[20000];
    uint64_t x = 12345;
    (void)state;
    const size_t sizes[] = {0, 1, 2, 3, 23, 24, 25, 100, 300, 1000, 4096, 20000};
    for (int shape = 0; shape < 6; shape++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] + 300; k++) {
            size_t n = k < 300 ? k : sizes[k - 300];
            for (size_t i = 0; i < n; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                double r = (double)(x >> 11) / 9007199254740992.0;
                a[i] = shape == 0 ? r : shape == 1 ? floor(r * 5) : shape == 2 ? (double)i
                     : shape == 3 ? (double)(n - i) : shape == 4 ? (double)(i < n / 2 ? i : n - i)
                     : 7.0;
            }
            memcpy(b, a, n * sizeof *a);
            argus_stats_sort(a, n);
            if (n > 1)
                qsort(b, n, sizeof *b, cmp_d);
            assert_memory_equal(a, b, n * sizeof *a);
        }
}

/* Median, robust and robust_low by selection against the same statistics of a sorted copy,
 * on the shapes of test_stats_sort (ties, sorted, reversed, organ pipe), values with a
 * period of 8 (the TP ranks of a stage), mostly copies of the least value and mostly
 * copies of a middle one, odd and even sizes up to a 4096-rank class and one more. */
static void test_stats_select(void **state)
{
    static double a[5000], b[5000], t[5000];
    uint64_t x = 999;
    (void)state;
    for (int shape = 0; shape < 9; shape++)
        for (size_t n = 1; n < 5000; n = n < 64 ? n + 1 : n < 1728 ? n * 3
                                        : n == 1728 ? 4096 : n == 4096 ? 4097 : 5000) {
            for (size_t i = 0; i < n; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                double r = (double)(x >> 11) / 9007199254740992.0;
                a[i] = shape == 0 ? r : shape == 1 ? floor(r * 5) : shape == 2 ? (double)i
                     : shape == 3 ? (double)(n - i) : shape == 4 ? (double)(i < n / 2 ? i : n - i)
                     : shape == 5 ? 7.0 : shape == 6 ? (double)(i % 8 == 3 ? 9 : i % 8) + r
                     : shape == 7 ? (r < 0.7 ? 1.0 : 1.0 + r) : (r < 0.6 ? 0.5 : r);
            }
            memcpy(b, a, n * sizeof *a);
            qsort(b, n, sizeof *b, cmp_d);
            const double med = n % 2 ? b[n / 2] : 0.5 * (b[n / 2 - 1] + b[n / 2]);
            memcpy(t, a, n * sizeof *a);
            assert_true(argus_stats_median(t, n) == med);
            /* robust_low: the median and MAD of the lower ceil(n/2) sorted values */
            const size_t h = (n + 1) / 2;
            const double lref = h % 2 ? b[h / 2] : 0.5 * (b[h / 2 - 1] + b[h / 2]);
            for (size_t i = 0; i < h; i++)
                t[i] = fabs(b[i] - lref);
            qsort(t, h, sizeof *t, cmp_d);
            const double lmad = h % 2 ? t[h / 2] : 0.5 * (t[h / 2 - 1] + t[h / 2]);
            struct argus_robust r;
            memcpy(t, a, n * sizeof *a);
            argus_stats_robust_low(t, n, 0.0, b, &r); /* b: its n doubles of scratch */
            assert_true(r.ref == lref);
            assert_true(r.scale == ARGUS_MADLOW_SIGMA * lmad);
            /* the same with the whole sample's median read off its partition */
            double whole = NAN;
            memcpy(t, a, n * sizeof *a);
            argus_stats_robust_low_med(t, n, 0.0, b, &r, &whole);
            assert_true(r.ref == lref);
            assert_true(r.scale == ARGUS_MADLOW_SIGMA * lmad);
            assert_true(whole == med);
        }
}

static void test_stats(void **state)
{
    (void)state;
    double tmp[16];
    double a[] = { 3, 1, 2 };
    assert_float_equal(argus_stats_median(a, 3), 2.0, 1e-12);
    double b[] = { 4, 1, 3, 2 };
    assert_float_equal(argus_stats_median(b, 4), 2.5, 1e-12);
    assert_true(isnan(argus_stats_median(b, 0)));
    /* MAD of {1,2,3,4,100} around 3: |.|={2,1,0,1,97} -> 1 */
    double c[] = { 1, 2, 3, 4, 100 };
    assert_float_equal(argus_stats_mad(c, 5, 3, tmp), 1.0, 1e-12);
    double s[] = { 10, 20, 30, 40 };
    assert_float_equal(argus_stats_quantile_sorted(s, 4, 0.5), 25.0, 1e-12);
    assert_float_equal(argus_stats_quantile_sorted(s, 4, 1.0), 40.0, 1e-12);
    assert_float_equal(argus_stats_quantile_sorted(s, 4, 1.0 / 3), 20.0, 1e-12);

    struct argus_robust r;
    double d[] = { 100, 102, 98, 101, 99, 150, 100, 100 };
    argus_stats_robust(d, 8, 0.02, tmp, &r);
    assert_float_equal(r.ref, 100.0, 1e-12);
    /* deviations {0,2,2,1,1,50,0,0} -> MAD 1 -> 1.4826, floored at 2 */
    assert_float_equal(r.scale, 2.0, 1e-12);
    assert_float_equal(argus_stats_z(150, &r), 25.0, 1e-12);
    assert_float_equal(argus_stats_ratio(150, &r), 1.5, 1e-12);

    /* lower half survives half of the sample inflated */
    double e[] = { 100, 150, 101, 152, 99, 149, 100, 151 };
    argus_stats_robust_low(e, 8, 0.02, tmp, &r);
    assert_float_equal(r.ref, 100.0, 1e-12); /* lower half {99,100,100,101} */
    assert_float_equal(r.scale, 2.5 * 0.5 > 2.0 ? 1.25 : 2.0, 1e-12);
    assert_true(argus_stats_z(150, &r) >= 5);
    double g[] = { 10, 10, 10, 10, 10 };
    argus_stats_robust(g, 5, 0.02, tmp, &r);
    assert_float_equal(r.scale, 0.2, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_stats_sort),
        cmocka_unit_test(test_stats_select),
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_clean_variants),
        cmocka_unit_test(test_straggler),
        cmocka_unit_test(test_straggler_replica),
        cmocka_unit_test(test_comm_dp),
        cmocka_unit_test(test_comm_tp),
        cmocka_unit_test(test_bubble),
        cmocka_unit_test(test_host_stall),
        cmocka_unit_test(test_regression),
        cmocka_unit_test(test_kernel),
        cmocka_unit_test(test_kernel_big),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_crash),
        cmocka_unit_test(test_inferred_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
