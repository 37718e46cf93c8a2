/* test_whatif_mb.c — the microbatch what-if (forecast/whatif_mb.c; docs/ALGORITHMS.md,
 * "Forecast (PRISM)", "What-ifs") on a 4-rank job (tp 1, pp 2, dp 2) whose pipeline
 * stages are unequal, as a last stage that also computes the logits is: per microbatch
 * stage 0 computes 10 ms and stage 1 12 ms, each slot 0.5 ms more (launch gaps,
 * transfers), so the 1F1B span of m microbatches is u0 + u1 + (m - 1) u1 = 60.5 ms at
 * m = 4 and the step (20 ms besides) 80.5 ms, each step's pipelined part x a factor
 * uniform in [0.98, 1.02]. The truth at m' microbatches is the same schedule re-run:
 * 20 + j (u0 + u1 + (m' - 1) u1) ms.
 *  - mb=8 and mb=2: the median step within 0.3 ms of the truth's (130.4 and 55.5 ms;
 *    the equal-slots estimate, span / (m + p - 1) = 12.1 ms a slot, gave 128.8 ms at
 *    mb=8), and the law of one step (P1..P99) within KS 0.15 of the 120 true steps
 *    (0.04 each; 0.44 at mb=8 with the equal slots);
 *  - the note says the stages' slots came from their kernels, and the bubble share
 *    (the lighter stage's slot over the span: 17.4 % at 4, 9.5 % at 8).
 */
#include "tests/common/testgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "forecast/forecast.h"
#include "store/jobstore.h"
#include "tests/forecast/series_fixture.h"
#include "tests/forecast/whatif_find.h"

#define NR 4
#define NSTEPS 120
#define M0 4

static const double U0 = 10.5, U1 = 12.5, K0 = 10, K1 = 12, REST = 20;

/* The pipelined span of m microbatches at factor j: the first microbatch through both
 * stages, each later one the slower stage's slot. */
static double span_ms(int m, double j)
{
    return j * (U0 + U1 + (m - 1) * U1);
}

/* Megatron order (tp 1): rank = dp_i + 2 pp_i, stage r / 2. The first stage's
 * forward+backward phases span the pipelined part; the last stage's a little less. */
static struct argus_jobstore *job(double *jit)
{
    struct argus_jobstore *js;
    uint64_t t0 = 1000000000ull, st = 11;
    assert_int_equal(argus_jobstore_create(NR, &js), 0);
    argus_jobstore_set_retention(js, 0, 0);
    for (int s = 0; s < NSTEPS; s++) {
        const double j = 0.98 + 0.04 * tg_unif(&st), wall = REST + span_ms(M0, j);
        jit[s] = j;
        for (int r = 0; r < NR; r++) {
            struct argus_step_summary sm;
            const int stage = r / 2;
            memset(&sm, 0, sizeof sm);
            sm.step = (uint64_t)s;
            sm.rank = (uint32_t)r;
            sm.start_ns = t0;
            sm.end_ns = t0 + (uint64_t)(wall * 1e6);
            sm.collective_ns = (uint64_t)(5e6);
            sm.phase_wall_ns[ARGUS_PH_COMM] = sm.collective_ns;
            const double fb = stage ? span_ms(M0, j) - j * U0 : span_ms(M0, j);
            sm.phase_wall_ns[ARGUS_PH_FORWARD] = (uint64_t)(0.3 * fb * 1e6);
            sm.phase_wall_ns[ARGUS_PH_BACKWARD] = (uint64_t)(0.7 * fb * 1e6);
            const double k = M0 * j * (stage ? K1 : K0);
            sm.phase_compute_ns[ARGUS_PH_FORWARD] = (uint64_t)(k / 3 * 1e6);
            sm.phase_compute_ns[ARGUS_PH_BACKWARD] = (uint64_t)(2 * k / 3 * 1e6);
            sm.compute_ns = (uint64_t)(k * 1e6);
            assert_int_equal(argus_jobstore_add_summary(js, &sm), 0);
        }
        t0 += (uint64_t)(wall * 1e6);
    }
    return js;
}

static void test_unequal_stages(void **state)
{
    static struct argus_forecast fc;
    static double jit[NSTEPS], truth[NSTEPS];
    struct argus_result res;
    (void)state;
    struct argus_jobstore *js = job(jit);
    memset(&res, 0, sizeof res);
    res.layout = (struct argus_layout){.tp = 1, .pp = 2, .dp = 2};
    struct argus_forecast_opts o = {.total_steps = 1000, .seed = 3, .n_whatif = 2,
                                    .microbatches = M0, .step_dist = 1};
    o.whatif[0] = (struct argus_fc_whatif_spec){.kind = ARGUS_FC_WI_MB, .k = 8};
    o.whatif[1] = (struct argus_fc_whatif_spec){.kind = ARGUS_FC_WI_MB, .k = 2};
    assert_int_equal(argus_forecast_run(js, &res, &o, &fc), 0);
    assert_true(fc.valid);
    const int ms[2] = {8, 2};
    for (int w = 0; w < 2; w++) {
        char name[16];
        snprintf(name, sizeof name, "mb=%d", ms[w]);
        const struct argus_fc_whatif *wo = find(&fc, name);
        for (int s = 0; s < NSTEPS; s++)
            truth[s] = REST + span_ms(ms[w], jit[s]);
        qsort(truth, NSTEPS, sizeof *truth, sfx_cmp_d);
        const double med = (truth[NSTEPS / 2 - 1] + truth[NSTEPS / 2]) / 2;
        assert_true(wo->has_step_q);
        const double ks = sfx_ks_law(wo->step_q_ms, truth, NSTEPS);
        printf("%s: median step %.2f ms (truth %.2f), KS %.3f; %s\n", name, wo->step_p50_ms,
               med, ks, wo->note);
        assert_true(fabs(wo->step_p50_ms - med) < 0.3);
        assert_true(ks <= 0.15);
        assert_true(strstr(wo->note, "stages' slots from their kernels") != NULL);
    }
    assert_true(strstr(find(&fc, "mb=8")->note, "bubble share 17.4 % -> 9.5 %") != NULL);
    argus_jobstore_free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unequal_stages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
