/* test_levels.c — the diagnosis of issue 17 at each level of data (docs/ALGORITHMS.md,
 * "Data levels", "Own baseline and persistent imbalance", "Intermittent host stalls",
 * "Periodic events"). The step-time and phase-only jobs here are written by hand into a
 * job store (a deterministic generator of its own, not tests/synth), the kernel-level
 * ones come from tests/synth.
 */
#include <inttypes.h>
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
#include "store/jobstore.h"
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"

#define BASE_NS 1700000000000000000ull

/* A small deterministic noise source: lognormal-ish factor exp(sigma * u), u in
 * [-1.7, 1.7] roughly normal (sum of three uniforms). */
static uint64_t lcg = 88172645463325252ull;
static double noise(double sigma)
{
    double u = 0;
    for (int i = 0; i < 3; i++) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        u += (double)(lcg >> 11) / 9007199254740992.0 - 0.5;
    }
    return exp(sigma * u * 2.0);
}

/* Flags of every summary put (ARGUS_SF_NO_CUPTI: CUPTI held by another tool). */
static uint32_t put_flags;

/* One rank's step: its wall, and (phases != 0) forward/backward/optimizer walls that sum
 * to the wall less `unmarked`. */
static void put(struct argus_jobstore *js, uint64_t step, uint32_t rank, uint64_t start,
                double wall, int phases, double fwd, double opt, double unmarked)
{
    struct argus_step_summary s;
    memset(&s, 0, sizeof s);
    s.step = step;
    s.rank = rank;
    s.flags = put_flags;
    s.start_ns = start;
    s.end_ns = start + (uint64_t)wall;
    if (phases) {
        s.phase_wall_ns[ARGUS_PH_FORWARD] = (uint64_t)fwd;
        s.phase_wall_ns[ARGUS_PH_OPTIMIZER] = (uint64_t)opt;
        const double bwd = wall - fwd - opt - unmarked;
        s.phase_wall_ns[ARGUS_PH_BACKWARD] = bwd > 0 ? (uint64_t)bwd : 0;
        s.phase_wall_ns[ARGUS_PH_HOST] = (uint64_t)wall; /* no kernels: all GPU idle */
        s.host_gap_ns = (uint64_t)wall;
    }
    assert_int_equal(argus_jobstore_add_summary(js, &s), 0);
}

static const struct argus_anomaly *only_kind(const struct argus_result *r, int kind)
{
    const struct argus_anomaly *a = NULL;
    for (size_t i = 0; i < r->n_anomalies; i++)
        if (r->anomalies[i].kind == kind) {
            assert_null(a); /* exactly one */
            a = &r->anomalies[i];
        }
    assert_non_null(a);
    return a;
}

static int names(const struct argus_anomaly *a, const uint32_t *want, uint32_t n)
{
    if (a->n_ranks != n)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (a->ranks[i] != want[i])
            return 0;
    return 1;
}

static void dump_if(int bad, const struct argus_jobstore *js, const struct argus_result *r)
{
    if (bad)
        synth_dump(js, r);
}

/* Step times only: each rank's own iteration time (no barrier), 60 steps. factor(r, s)
 * scales rank r at step s. */
typedef double (*factor_fn)(uint32_t r, uint64_t s);

static struct argus_jobstore *steps_job(uint32_t n, uint64_t S, factor_fn f, double base_ms)
{
    struct argus_jobstore *js = NULL;
    assert_int_equal(argus_jobstore_create(n, &js), 0);
    uint64_t *t = calloc(n, sizeof *t);
    assert_non_null(t);
    for (uint64_t s = 0; s < S; s++) {
        const double job = noise(0.05); /* the batch: every rank alike */
        for (uint32_t r = 0; r < n; r++) {
            const double wall = base_ms * 1e6 * job * noise(0.02) * f(r, s);
            put(js, s, r, BASE_NS + t[r], wall, 0, 0, 0, 0);
            t[r] += (uint64_t)wall + 1000;
        }
    }
    free(t);
    return js;
}

static double f_chronic(uint32_t r, uint64_t s)
{
    (void)s;
    return r == 3 ? 1.10 : 1.0;
}

/* A rank 10 % slower all along: one persistent_imbalance with its size and cost, no
 * episodes (they came as a string of short compute_stragglers before). */
static void test_steps_chronic(void **state)
{
    (void)state;
    struct argus_result r;
    struct argus_jobstore *js = steps_job(10, 60, f_chronic, 100);
    assert_int_equal(argus_analyze(js, NULL, &r), 0);
    dump_if(r.n_anomalies != 1, js, &r);
    assert_int_equal(r.data_level, ARGUS_DL_STEPS);
    assert_int_equal(r.n_anomalies, 1);
    const struct argus_anomaly *a = only_kind(&r, ARGUS_AK_PERSISTENT_IMBALANCE);
    const uint32_t want[] = { 3 };
    assert_true(names(a, want, 1));
    assert_true(a->slowdown > 1.06 && a->slowdown < 1.14);
    assert_true(a->cost_share > 0.03 && a->cost_share < 0.15);
    assert_int_equal(a->data_level, ARGUS_DL_STEPS);
    assert_true(a->confidence > 0 && a->confidence <= 1);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static double f_back_at_end(uint32_t r, uint64_t s)
{
    if (r != 3)
        return 1.0;
    return s < 15 ? 1.10 : s < 45 ? 1.9 : 1.0;
}

/* A rank a little slow in its first quarter, then very slow for half the run, and back
 * at its peers' level for the last quarter (the real PyTorch job's noisy start and its
 * injected episode): that is an episode, not a rank slower all along, so no
 * persistent_imbalance (the median and the first quarter alone said 1.10x). */
static void test_steps_back_at_end(void **state)
{
    (void)state;
    struct argus_result r;
    struct argus_jobstore *js = steps_job(10, 60, f_back_at_end, 100);
    assert_int_equal(argus_analyze(js, NULL, &r), 0);
    int persistent = 0, episode = 0;
    for (size_t i = 0; i < r.n_anomalies; i++) {
        const struct argus_anomaly *a = &r.anomalies[i];
        const uint32_t want[] = { 3 };
        persistent += a->kind == ARGUS_AK_PERSISTENT_IMBALANCE;
        episode += a->kind != ARGUS_AK_PERSISTENT_IMBALANCE && names(a, want, 1) &&
                   a->step_first <= 20 && a->step_last >= 40;
    }
    dump_if(persistent || !episode, js, &r);
    assert_int_equal(persistent, 0);
    assert_true(episode >= 1);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static uint64_t early_onset_at;

static double f_early_onset(uint32_t r, uint64_t s)
{
    return r == 3 && s >= early_onset_at ? 2.0 : 1.0;
}

/* Counts r's persistent_imbalance findings and its compute_straggler episodes on `rank`
 * from `onset` (one step either way) to the last step `last` at 1.8-2.2x. */
static void early_onset_counts(const struct argus_result *r, uint32_t rank, uint64_t onset,
                               uint64_t last, int *persistent, int *episode)
{
    *persistent = *episode = 0;
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        *persistent += a->kind == ARGUS_AK_PERSISTENT_IMBALANCE;
        *episode += a->kind == ARGUS_AK_COMPUTE_STRAGGLER && names(a, &rank, 1) &&
                    a->step_first + 1 >= onset && a->step_first <= onset + 1 &&
                    a->step_last == last && a->slowdown > 1.8 && a->slowdown < 2.2;
    }
}

/* A rank that turns 2x slow early in the run was at its peers' level before: an episode
 * with that onset, never a persistent_imbalance "from the first step judged". The first
 * quarter alone (too short to count below 32 steps, or mostly slow already when the
 * onset comes before its middle) had said so. Step times: the onset at step 8 of 20, 30
 * and 40 (below it the rank's level before a run has too few steps to judge a noisy
 * run by) and at step 12 of 100. */
static void test_steps_early_onset(void **state)
{
    (void)state;
    static const uint64_t len[] = { 20, 30, 40, 100 }, at[] = { 8, 8, 8, 12 };
    for (size_t k = 0; k < sizeof len / sizeof len[0]; k++) {
        struct argus_result r;
        int persistent, episode;
        early_onset_at = at[k];
        struct argus_jobstore *js = steps_job(8, len[k], f_early_onset, 100);
        assert_int_equal(argus_analyze(js, NULL, &r), 0);
        early_onset_counts(&r, 3, at[k], len[k] - 1, &persistent, &episode);
        if (persistent || episode != 1)
            fprintf(stderr, "%" PRIu64 " steps, onset at %" PRIu64 ":\n", len[k], at[k]);
        dump_if(persistent || episode != 1, js, &r);
        assert_int_equal(persistent, 0);
        assert_int_equal(episode, 1);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* Kernel level, 16 ranks: rank 5 2x slow from step 5 of 20 and of 30, as rank 0 of a
 * 16-rank run killed after its second or third window saw it (tests/integration/
 * t_rank0_death.sh failed when the last window it analysed was the third, not the
 * fourth). */
static void test_kernels_early_onset(void **state)
{
    (void)state;
    for (int len = 20; len <= 30; len += 10) {
        struct synth_opts o;
        struct argus_result r;
        int persistent, episode;
        synth_default(&o, 23);
        o.steps = len;
        synth_add(&o, SY_STRAGGLER, 5, len - 1, 2.0)->ranks[0] = 5;
        o.f[0].nranks = 1;
        struct argus_jobstore *js = synth_run(&o, &r);
        early_onset_counts(&r, 5, 5, (uint64_t)len - 1, &persistent, &episode);
        if (persistent || episode != 1)
            fprintf(stderr, "%d steps:\n", len);
        dump_if(persistent || episode != 1, js, &r);
        assert_int_equal(persistent, 0);
        assert_int_equal(episode, 1);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

static double f_group(uint32_t r, uint64_t s)
{
    return (r == 1 || r == 4 || r == 6 || r == 8) && s >= 25 ? 1.5 : 1.0;
}

/* Four ranks that slow down together are one anomaly naming all four from the onset. */
static void test_steps_group(void **state)
{
    (void)state;
    struct argus_result r;
    struct argus_jobstore *js = steps_job(10, 60, f_group, 100);
    assert_int_equal(argus_analyze(js, NULL, &r), 0);
    const uint32_t want[] = { 1, 4, 6, 8 };
    int ok = r.n_anomalies == 1 && names(&r.anomalies[0], want, 4);
    dump_if(!ok, js, &r);
    assert_true(ok);
    const struct argus_anomaly *a = &r.anomalies[0];
    assert_int_equal(a->kind, ARGUS_AK_COMPUTE_STRAGGLER);
    assert_true(a->step_first >= 24 && a->step_first <= 27 && a->step_last == 59);
    assert_true(a->detected_at_step <= 30);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static double f_classes(uint32_t r, uint64_t s)
{
    double f = r < 5 ? 1.0 : 4.0;      /* two speed classes, nothing says so */
    if ((r == 6 || r == 8) && s >= 30) /* two of the slow class: 4x their own past */
        f *= 4.0;
    return f;
}

/* Two speed classes without a layout: peers are the ranks of one's own class, so the
 * slow class is not a whole-run anomaly, and the real event in it is found. */
static void test_steps_speed_classes(void **state)
{
    (void)state;
    struct argus_result r;
    struct argus_jobstore *js = steps_job(10, 60, f_classes, 25);
    assert_int_equal(argus_analyze(js, NULL, &r), 0);
    const uint32_t want[] = { 6, 8 };
    int ok = r.n_anomalies == 1 && names(&r.anomalies[0], want, 2) &&
             r.anomalies[0].kind == ARGUS_AK_COMPUTE_STRAGGLER;
    dump_if(!ok, js, &r);
    assert_true(ok);
    assert_true(r.anomalies[0].step_first >= 29 && r.anomalies[0].step_first <= 31);
    assert_true(r.anomalies[0].slowdown > 3.0);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Phases without kernels (a CPU DDP job): rank 1's forward 2x slower in steps 20-39, the
 * others wait for it in their backward (a blocking all-reduce); rank 2's host stalls
 * 500 ms outside every phase at steps 14, 47, 58, and the others wait as well. */
static struct argus_jobstore *phases_job(void)
{
    struct argus_jobstore *js = NULL;
    const uint32_t n = 4;
    uint64_t t = 0;
    assert_int_equal(argus_jobstore_create(n, &js), 0);
    for (uint64_t s = 0; s < 70; s++) {
        double fwd[4], step = 0;
        const double stall = (s == 14 || s == 47 || s == 58) ? 500e6 : 0;
        for (uint32_t r = 0; r < n; r++) {
            fwd[r] = 30e6 * noise(0.06) * (r == 1 && s >= 20 && s <= 39 ? 2.0 : 1.0);
            const double own = fwd[r] + 40e6 * noise(0.06) + (r == 2 ? stall : 0);
            step = own > step ? own : step; /* everyone leaves the all-reduce together */
        }
        step += 2e6;
        for (uint32_t r = 0; r < n; r++)
            put(js, s, r, BASE_NS + t, step, 1, fwd[r], 1e6 * noise(0.05),
                (r == 2 ? stall : 0) + 0.3e6);
        t += (uint64_t)step + 1000;
    }
    return js;
}

static void test_phases(void **state)
{
    (void)state;
    struct argus_result r;
    struct argus_jobstore *js = phases_job();
    assert_int_equal(argus_analyze(js, NULL, &r), 0);
    int ok = r.n_anomalies == 2;
    dump_if(!ok, js, &r);
    assert_true(ok);
    assert_int_equal(r.data_level, ARGUS_DL_PHASES);
    const uint32_t slow[] = { 1 }, stall[] = { 2 };
    const struct argus_anomaly *a = only_kind(&r, ARGUS_AK_COMPUTE_STRAGGLER);
    assert_true(names(a, slow, 1));
    assert_int_equal(a->phase, ARGUS_PH_FORWARD);
    assert_int_equal(a->data_level, ARGUS_DL_PHASES);
    assert_true(a->step_first >= 19 && a->step_first <= 21 && a->step_last >= 38 &&
                a->step_last <= 40);
    const struct argus_anomaly *h = only_kind(&r, ARGUS_AK_HOST_STALL);
    assert_true(names(h, stall, 1));
    assert_int_equal(h->n_hits, 3);
    assert_int_equal(h->hits[0], 14);
    assert_int_equal(h->hits[1], 47);
    assert_int_equal(h->hits[2], 58);
    assert_int_equal(h->n_victims, 3); /* the others waited for it */
    assert_int_equal(r.cupti_unavailable, 0);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* The same job on GPUs whose CUPTI Nsight Systems holds (issue 19): the tracer kept the
 * phases and flagged every summary; the diagnosis is the same, and says why. */
static void test_phases_cupti_held(void **state)
{
    (void)state;
    struct argus_result r;
    put_flags = ARGUS_SF_NO_CUPTI | ARGUS_CUPTI_HELD_NSYS << ARGUS_SF_CUPTI_WHY_SHIFT;
    struct argus_jobstore *js = phases_job();
    put_flags = 0;
    assert_int_equal(argus_analyze(js, NULL, &r), 0);
    assert_int_equal(r.n_anomalies, 2);
    assert_int_equal(r.data_level, ARGUS_DL_PHASES);
    assert_int_equal(r.cupti_unavailable, ARGUS_CUPTI_HELD_NSYS);
    assert_true(names(only_kind(&r, ARGUS_AK_COMPUTE_STRAGGLER), (const uint32_t[]){1}, 1));
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Kernel level (tests/synth): a rank slower from the first step to the last is one
 * persistent_imbalance; more slowness on top of it later is an episode with its onset,
 * sized against the rank's own level. */
static void test_kernels_chronic_then_episode(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 21);
    synth_add(&o, SY_STRAGGLER, 0, 59, 1.10)->ranks[0] = 5;
    synth_add(&o, SY_STRAGGLER, 30, 59, 1.5)->ranks[0] = 5;
    o.f[0].nranks = o.f[1].nranks = 1;
    struct argus_jobstore *js = synth_run(&o, &r);
    int ok = r.n_anomalies == 2;
    dump_if(!ok, js, &r);
    assert_true(ok);
    const uint32_t want[] = { 5 };
    const struct argus_anomaly *p = only_kind(&r, ARGUS_AK_PERSISTENT_IMBALANCE);
    assert_true(names(p, want, 1));
    assert_true(p->slowdown > 1.06 && p->slowdown < 1.16);
    const struct argus_anomaly *e = only_kind(&r, ARGUS_AK_COMPUTE_STRAGGLER);
    assert_true(names(e, want, 1));
    assert_true(e->step_first >= 29 && e->step_first <= 32);
    assert_true(e->slowdown > 1.35 && e->slowdown < 1.65); /* against its own level */
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Kernel level: one rank's host stalls 300 ms at three non-consecutive steps. */
static void test_kernels_intermittent_stall(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 22);
    struct synth_fault *f = synth_add(&o, SY_HOST, 12, 46, 1.0);
    f->ranks[0] = 6;
    f->nranks = 1;
    f->ms = 300;
    f->period = 17;
    struct argus_jobstore *js = synth_run(&o, &r);
    int ok = r.n_anomalies == 1;
    dump_if(!ok, js, &r);
    assert_true(ok);
    const uint32_t want[] = { 6 };
    const struct argus_anomaly *h = only_kind(&r, ARGUS_AK_HOST_STALL);
    assert_true(names(h, want, 1));
    assert_int_equal(h->n_hits, 3);
    assert_int_equal(h->hits[0], 12);
    assert_int_equal(h->hits[1], 29);
    assert_int_equal(h->hits[2], 46);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* A checkpoint every 10 steps at 9 % step variability: one finding with period_steps,
 * the steps, and its share of the wall time, not one anomaly per spike. */
static void test_kernels_periodic(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 23);
    o.step_sigma = 0.09;
    struct synth_fault *f = synth_add(&o, SY_JITTER, 9, 59, 1.7);
    f->period = 10;
    struct argus_jobstore *js = synth_run(&o, &r);
    int ok = r.n_anomalies == 1;
    dump_if(!ok, js, &r);
    assert_true(ok);
    const struct argus_anomaly *a = only_kind(&r, ARGUS_AK_ITERATION_JITTER);
    assert_int_equal(a->period_steps, 10);
    assert_true(a->n_hits >= 5);
    assert_true(a->cost_share > 0.02 && a->cost_share < 0.2);
    for (uint32_t i = 0; i < a->n_hits; i++)
        assert_int_equal(a->hits[i] % 10, 9);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_chronic),
        cmocka_unit_test(test_steps_group),
        cmocka_unit_test(test_steps_speed_classes),
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_phases_cupti_held),
        cmocka_unit_test(test_steps_back_at_end),
        cmocka_unit_test(test_steps_early_onset),
        cmocka_unit_test(test_kernels_chronic_then_episode),
        cmocka_unit_test(test_kernels_early_onset),
        cmocka_unit_test(test_kernels_intermittent_stall),
        cmocka_unit_test(test_kernels_periodic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
