/* test_detect_cases.c — the detectors on harder synthetic jobs: periodic
 * spikes reported once as periodic; the online CUSUM timing a +10% regression within a few
 * steps; the W1 block structure of a degraded DP group; ARGUS case 5, a compute straggler
 * masked by communication (its peers' collectives grow, its own shrink), reported as a
 * compute straggler on exactly its ranks and never as network trouble; the late arriver
 * named in the evidence; no false spikes at 9 % multiplicative step-time variability; a
 * rank that runs more calls of a kernel (other work) is not called degraded; a rank that
 * starts its steps late is the source of its DP peers' waiting (late-arriver test);
 * heavy-tailed single calls make no kernel_degradation; a store that keeps a bounded
 * horizon still finds a straggler online and keeps the job's step statistics.
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
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"

static void test_periodic(void **state)
{
    (void)state;
    for (uint64_t seed = 31; seed <= 33; seed++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, seed);
        o.steps = 80;
        synth_add(&o, SY_JITTER, 5, 79, 1.6)->period = 10;
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies != 1)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 1);
        const struct argus_anomaly *a = &r.anomalies[0];
        assert_int_equal(a->kind, ARGUS_AK_ITERATION_JITTER);
        assert_int_equal(a->period_steps, 10);
        assert_int_equal(a->n_occurrences, 8);
        assert_int_equal(a->step_first, 5);
        assert_int_equal(a->step_last, 75);
        assert_non_null(strstr(a->evidence, "periodic"));
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

static void test_cusum_latency(void **state)
{
    (void)state;
    for (uint64_t seed = 41; seed <= 43; seed++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, seed);
        o.steps = 120;
        synth_add(&o, SY_REGRESSION, 60, 119, 1.10);
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies != 1)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 1);
        const struct argus_anomaly *a = &r.anomalies[0];
        assert_int_equal(a->kind, ARGUS_AK_STEP_REGRESSION);
        assert_true(a->step_first >= 57 && a->step_first <= 63);
        assert_true(a->detected_at_step >= 60 && a->detected_at_step <= 64);
        assert_non_null(strstr(a->evidence, "CUSUM"));
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

static void test_w1_blocks(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 51);
    struct synth_fault *f = synth_add(&o, SY_COMM, 20, 50, 3.0);
    f->group_index = 2; /* DP group pp 1, tp 0: ranks 8, 10, 12, 14 */
    struct argus_jobstore *js = synth_run(&o, &r);
    if (r.n_anomalies != 1)
        synth_dump(js, &r);
    assert_int_equal(r.n_anomalies, 1);
    const struct argus_anomaly *a = &r.anomalies[0];
    assert_int_equal(a->kind, ARGUS_AK_COMM_DEGRADATION);
    const uint32_t want[] = { 8, 10, 12, 14 };
    assert_int_equal(a->n_ranks, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(a->ranks[i], want[i]);
    assert_true(a->w1_inter_ns > 10 * a->w1_intra_ns);
    assert_non_null(strstr(a->evidence, "block structure"));
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* ARGUS case 5 on 32 ranks (tp 2, pp 2, dp 8): both TP ranks of DP replicas 4 and 5 at
 * stage 1 compute 2x slower; every other DP group's reduce-scatter waits for them. */
static void test_masked_straggler(void **state)
{
    (void)state;
    for (uint64_t seed = 61; seed <= 62; seed++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, seed);
        o.dp = 8;
        struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 15, 59, 2.0);
        const int rs[] = { 24, 25, 26, 27 };
        for (int i = 0; i < 4; i++)
            f->ranks[f->nranks++] = rs[i];
        struct argus_jobstore *js = synth_run(&o, &r);
        int found = 0;
        for (size_t i = 0; i < r.n_anomalies; i++) {
            const struct argus_anomaly *a = &r.anomalies[i];
            if (a->kind == ARGUS_AK_COMM_DEGRADATION)
                synth_dump(js, &r);
            assert_int_not_equal(a->kind, ARGUS_AK_COMM_DEGRADATION);
            if (a->kind != ARGUS_AK_COMPUTE_STRAGGLER)
                continue;
            found++;
            assert_int_equal(a->n_ranks, 4);
            for (int k = 0; k < 4; k++)
                assert_int_equal(a->ranks[k], (uint32_t)rs[k]);
            assert_true(a->n_victims >= 8);
            assert_non_null(strstr(a->evidence, "arriv"));
        }
        if (found != 1 || r.n_anomalies != 1)
            synth_dump(js, &r);
        assert_int_equal(found, 1);
        assert_int_equal(r.n_anomalies, 1);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* Clean runs at 9 % step-time variability (the bench's clean runs, seeds that each gave
 * one false 1.45-1.5x "spike" while the jitter z was taken on the linear step time): no
 * anomaly. A real 3x spike in the same noise is still found (a lone spike needs z >= 6:
 * 2x on top of a step that the noise made 0.8x is only 1.6x). */
static void test_jitter_multiplicative_noise(void **state)
{
    (void)state;
    static const uint64_t seeds[] = { 5293, 5541, 5603, 5758 }; /* detect: var 9 %, k 9-24 */
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, seeds[i]);
        o.steps = 500;
        o.step_sigma = 0.11;
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 0);
        argus_result_free(&r);
        argus_jobstore_free(js);
        synth_default(&o, seeds[i]);
        o.steps = 500;
        o.step_sigma = 0.11;
        synth_add(&o, SY_JITTER, 250, 250, 3.0);
        js = synth_run(&o, &r);
        if (r.n_anomalies != 1)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 1);
        assert_int_equal(r.anomalies[0].kind, ARGUS_AK_ITERATION_JITTER);
        assert_int_equal(r.anomalies[0].step_first, 250);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* A rank that launches the optimizer kernel twice (more parameters to update: other
 * work, not a slower GPU) is no kernel_degradation: its calls are judged one by one. */
static void test_other_work(void **state)
{
    (void)state;
    for (uint64_t seed = 71; seed <= 72; seed++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, seed);
        struct synth_fault *f = synth_add(&o, SY_EXTRA, 10, 59, 2);
        f->ranks[f->nranks++] = 5;
        f->kernel = "AdamFunctor";
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 0);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* A rank that starts its steps 15 ms late on the host (outside the step, so its own
 * step shows no idle) and then waits least in the DP collectives: the late-arriver test
 * names it (host_stall, L3) and its DP peers as victims; no comm or compute verdict. */
static void test_late_arriver(void **state)
{
    (void)state;
    for (uint64_t seed = 81; seed <= 82; seed++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, seed);
        struct synth_fault *f = synth_add(&o, SY_LATE, 20, 59, 1);
        f->ranks[f->nranks++] = 6;
        f->ms = 15;
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies != 1)
            synth_dump(js, &r);
        assert_int_equal(r.n_anomalies, 1);
        const struct argus_anomaly *a = &r.anomalies[0];
        assert_int_equal(a->kind, ARGUS_AK_HOST_STALL);
        assert_int_equal(a->level, 3);
        assert_int_equal(a->n_ranks, 1);
        assert_int_equal(a->ranks[0], 6);
        assert_true(a->step_first >= 20 && a->step_first <= 21);
        assert_true(a->detected_at_step <= 23);
        assert_int_equal(a->n_victims, 3); /* DP group of rank 6: 0, 2, 4, 6 */
        assert_int_equal(a->victims[0], 0);
        assert_int_equal(a->victims[1], 2);
        assert_int_equal(a->victims[2], 4);
        assert_non_null(strstr(a->evidence, "late"));
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* The same late rank 6, but its clock runs 15 ms behind rank 0's: in its own clock it
 * looks on time. Times are compared on rank 0's clock (start + clock_offset_ns, the
 * offset the reduction or the importer estimated), so it is still named. */
static void test_late_arriver_skewed_clock(void **state)
{
    static struct argus_step_summary s;
    const int64_t skew = 15000000;
    struct synth_opts o;
    struct argus_result r;
    struct argus_jobstore *js = NULL;
    (void)state;

    synth_default(&o, 81);
    struct synth_fault *f = synth_add(&o, SY_LATE, 20, 59, 1);
    f->ranks[f->nranks++] = 6;
    f->ms = 15;
    assert_int_equal(synth_job(&o, &js), 0);
    const struct argus_step_summary *const *v;
    size_t n = argus_jobstore_rank_steps(js, 6, &v);
    assert_true(n == 60);
    for (size_t i = 0; i < n; i++) {
        memcpy(&s, v[i], offsetof(struct argus_step_summary, kmodes) +
                             v[i]->n_kmodes * sizeof v[i]->kmodes[0]);
        s.start_ns -= (uint64_t)skew;
        s.end_ns -= (uint64_t)skew;
        s.clock_offset_ns = skew;
        assert_int_equal(argus_jobstore_add_summary(js, &s), 0);
    }
    assert_int_equal(argus_analyze(js, NULL, &r), 0);
    if (r.n_anomalies != 1)
        synth_dump(js, &r);
    assert_int_equal(r.n_anomalies, 1);
    assert_int_equal(r.anomalies[0].kind, ARGUS_AK_HOST_STALL);
    assert_int_equal(r.anomalies[0].n_ranks, 1);
    assert_int_equal(r.anomalies[0].ranks[0], 6);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Heavy-tailed kernel noise on 64 ranks (the bench's clean run var 9 % + tail, seed 4):
 * one GEMM call up to 20x now and then is no kernel_degradation. Kernels are compared on
 * their typical call (per-mode median) times their calls, not on sums an outlier lifts. */
static void test_heavy_tail_kernels(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 5145);
    o.pp = 4;
    o.dp = 8;
    o.steps = 500;
    o.step_sigma = 0.11;
    o.tail = 0.002;
    struct argus_jobstore *js = synth_run(&o, &r);
    for (size_t i = 0; i < r.n_anomalies; i++) {
        if (r.anomalies[i].kind == ARGUS_AK_KERNEL_DEGRADATION)
            synth_dump(js, &r);
        assert_int_not_equal(r.anomalies[i].kind, ARGUS_AK_KERNEL_DEGRADATION);
    }
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Rank 0 with a bounded store (store/jobstore.h retention): a job fed window by window into a
 * store that keeps 30 steps, analysed after every window, finds the straggler while it
 * lasts, and its final report keeps the whole job's step count, range, median, p99 and
 * variability exactly and every rank's median step time within the sketch's 2 %. */
static void test_bounded_store(void **state)
{
    struct synth_opts o;
    struct argus_jobstore *full = NULL, *js;
    struct argus_result want, r;
    (void)state;
    synth_default(&o, 61);
    o.steps = 100;
    struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 40, 79, 1.3);
    f->ranks[f->nranks++] = 5;
    assert_int_equal(synth_job(&o, &full), 0);
    assert_int_equal(argus_analyze(full, NULL, &want), 0);
    const uint32_t n = argus_jobstore_nranks(full);
    assert_int_equal(argus_jobstore_create(n, &js), 0);
    assert_int_equal(argus_jobstore_set_retention(js, (size_t)n * 30, 4), 0);
    int found = 0;
    for (uint64_t w = 0; w < 10; w++) {
        for (uint32_t q = 0; q < n; q++) {
            const struct argus_step_summary *const *v;
            const size_t m = argus_jobstore_rank_steps(full, q, &v);
            for (size_t i = 0; i < m; i++)
                if (v[i]->step / 10 == w)
                    assert_int_equal(argus_jobstore_add_summary(js, v[i]), 0);
        }
        assert_int_equal(argus_analyze(js, NULL, &r), 0);
        for (size_t i = 0; i < r.n_anomalies; i++)
            found |= r.anomalies[i].kind == ARGUS_AK_COMPUTE_STRAGGLER &&
                     r.anomalies[i].n_ranks == 1 && r.anomalies[i].ranks[0] == 5;
        if (w < 9)
            argus_result_free(&r);
    }
    assert_true(found);
    assert_int_equal(argus_jobstore_count(js), (size_t)n * 30);
    assert_int_equal(r.steps.count, want.steps.count);
    assert_true(r.steps.first == want.steps.first && r.steps.last == want.steps.last);
    assert_true(r.steps.median_ms == want.steps.median_ms);
    assert_true(r.steps.p99_ms == want.steps.p99_ms);
    assert_float_equal(r.steps.cv, want.steps.cv, 1e-12);
    for (uint32_t q = 0; q < n; q++)
        assert_float_equal(r.ranks[q].median_step_ms, want.ranks[q].median_step_ms,
                           ARGUS_QSKETCH_ALPHA * want.ranks[q].median_step_ms);
    argus_result_free(&r);
    argus_result_free(&want);
    argus_jobstore_free(js);
    argus_jobstore_free(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_periodic),
        cmocka_unit_test(test_cusum_latency),
        cmocka_unit_test(test_w1_blocks),
        cmocka_unit_test(test_masked_straggler),
        cmocka_unit_test(test_jitter_multiplicative_noise),
        cmocka_unit_test(test_other_work),
        cmocka_unit_test(test_late_arriver),
        cmocka_unit_test(test_late_arriver_skewed_clock),
        cmocka_unit_test(test_heavy_tail_kernels),
        cmocka_unit_test(test_bounded_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
