/* test_missing.c — two rules every verdict keeps (docs/ALGORITHMS.md, "Missing data" and
 * "Thresholds"), on the synthetic 16-rank job of tests/synth/:
 *  - no verdict rests on missing data: a rank whose data stops (marked missing, as rank 0
 *    marks a silent subtree) while it slows its groups down gives no verdict on the others
 *    over the steps it lacks, and the result says how many steps were not judged; the
 *    complete steps before are still judged;
 *  - no verdict under ARGUS_RATIO: with ratio 2 a 1.5x straggler is reported as nothing,
 *    neither as itself nor as the step-time shift it causes.
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

/* Rank 9 (dp group of ranks 1, 9 and peers) slows down 2.5x from step 30 and its data
 * stops there: its peers wait in every collective with it, and without its own data that
 * waiting has no visible source. */
static void dying_rank(struct synth_opts *o, uint64_t seed)
{
    synth_default(o, seed);
    struct synth_fault *f = synth_add(o, SY_STRAGGLER, 30, 59, 2.5);
    f->ranks[f->nranks++] = 9;
    f = synth_add(o, SY_CRASH, 30, 59, 1.0);
    f->ranks[f->nranks++] = 9;
}

static void test_no_verdict_on_missing(void **state)
{
    (void)state;
    for (uint64_t seed = 41; seed <= 44; seed++) {
        struct synth_opts o;
        struct argus_result r;
        dying_rank(&o, seed);
        struct argus_jobstore *js = synth_run(&o, &r);
        if (r.n_anomalies)
            synth_dump(js, &r);
        assert_int_equal(argus_jobstore_missing_since(js, 9), 30);
        assert_int_equal(r.n_anomalies, 0);
        /* said instead: 30 steps not judged, from step 30 */
        assert_int_equal(r.incomplete_steps, 30);
        assert_int_equal(r.incomplete_first, 30);
        /* what was received is still described: every step held */
        assert_int_equal(r.steps.count, 60);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* The complete steps before the gap are judged as ever: a straggler there is found. */
static void test_complete_steps_judged(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    dying_rank(&o, 45);
    struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 5, 25, 1.5);
    f->ranks[f->nranks++] = 5;
    struct argus_jobstore *js = synth_run(&o, &r);
    if (r.n_anomalies != 1)
        synth_dump(js, &r);
    assert_int_equal(r.n_anomalies, 1);
    const struct argus_anomaly *a = &r.anomalies[0];
    assert_int_equal(a->kind, ARGUS_AK_COMPUTE_STRAGGLER);
    assert_int_equal(a->n_ranks, 1);
    assert_int_equal(a->ranks[0], 5);
    assert_true(a->step_last < 30);
    assert_int_equal(r.incomplete_steps, 30);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Every verdict at or above the ratio; step_regression at or above 1 + (ratio - 1) / 3. */
static void expect_at_ratio(const struct argus_jobstore *js, const struct argus_result *r,
                            double ratio)
{
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        const double gate = a->kind == ARGUS_AK_STEP_REGRESSION ? 1 + (ratio - 1) / 3 : ratio;
        if (!(a->slowdown >= gate)) {
            synth_dump(js, r);
            fail_msg("%s %.2fx under the ratio %.2f (gate %.2f)",
                     argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind), a->slowdown,
                     ratio, gate);
        }
    }
}

static void test_ratio(void **state)
{
    (void)state;
    for (uint64_t seed = 51; seed <= 54; seed++) {
        struct synth_opts o;
        struct argus_result r;
        struct argus_jobstore *js = NULL;
        synth_default(&o, seed);
        o.steps = 80;
        struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 30, 79, 1.5);
        f->ranks[f->nranks++] = 5;
        assert_int_equal(synth_job(&o, &js), 0);

        /* the default ratio finds it */
        assert_int_equal(argus_analyze(js, NULL, &r), 0);
        int found = 0;
        for (size_t i = 0; i < r.n_anomalies; i++)
            found |= r.anomalies[i].kind == ARGUS_AK_COMPUTE_STRAGGLER &&
                     r.anomalies[i].n_ranks == 1 && r.anomalies[i].ranks[0] == 5;
        if (!found)
            synth_dump(js, &r);
        assert_true(found);
        argus_result_free(&r);

        /* ratio 2: nothing under 2x, and a step-time shift only from 1.33x */
        struct argus_analysis_opts ao;
        argus_analysis_opts_default(&ao);
        ao.ratio = 2.0;
        assert_int_equal(argus_analyze(js, &ao, &r), 0);
        if (getenv("ARGUS_TEST_VERBOSE"))
            synth_dump(js, &r);
        expect_at_ratio(js, &r, ao.ratio);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_verdict_on_missing),
        cmocka_unit_test(test_complete_steps_judged),
        cmocka_unit_test(test_ratio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
