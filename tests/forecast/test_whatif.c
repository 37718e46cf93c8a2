/* test_whatif.c — unit tests of the forecast's DP and microbatch what-ifs
 * (forecast/whatif.c, forecast/whatif_mb.c) on a synthetic 4-rank job (tp 1, pp 2, dp 2)
 * whose every figure is known: per step one replica 20 ms slower than the other, so its
 * DP peers wait 20 ms inside their collectives on top of the 10 ms transfer.
 *  - dp=2: only the transfer (the least collective time of the critical rank's DP group)
 *    is scaled by the ring term (x1.5 from 2 to 4 replicas), not the peers' waiting:
 *    80 ms -> 85 ms (the median rank's collective, waiting included, would give 90 ms);
 *    with tp 2 (pp 1) and a 15 ms TP all-reduce inside forward on every rank, only the
 *    collectives outside forward/backward are DP's: 85 ms again (92.5 ms with the TP's);
 *  - mb=M: with a pipelined span of 60 ms over m + p - 1 = 5 slots, a microbatch costs
 *    12 ms: mb=8 gives 128 ms, mb=2 56 ms, mb=4 the step as it is; the note gives the
 *    bubble share; without the current count the options are refused; without
 *    forward/backward phases the what-if says it cannot model the step.
 */
#include "tests/common/testgen.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "forecast/forecast.h"
#include "store/jobstore.h"
#include "tests/forecast/whatif_find.h"

#define NR 4
#define NSTEPS 120

/* Megatron order (tp 1): rank = dp_i + 2 pp_i; replica dp_i = rank % 2, DP group of
 * stage pp_i = ranks {2 pp_i, 2 pp_i + 1}. Step s: replica s % 2 works 70 ms (10 ms in
 * collectives: the transfer), the other 50 ms (30 ms: 20 waiting + 10); every wall 80 ms
 * (x a tiny per-step jitter); forward+backward phase walls 60 ms on stage 0, 55 on 1. */
static struct argus_jobstore *job(int phases, int tp)
{
    struct argus_jobstore *js;
    uint64_t t0 = 1000000000ull, st = 7;
    assert_int_equal(argus_jobstore_create(NR, &js), 0);
    argus_jobstore_set_retention(js, 0, 0);
    for (int s = 0; s < NSTEPS; s++) {
        const double j = 1 + 0.002 * ((double)(tg_rand(&st) % 1000) / 1000.0 - 0.5);
        for (int r = 0; r < NR; r++) {
            struct argus_step_summary sm;
            /* tp 2: rank = tp_i + 2 dp_i, replica r / 2, DP groups {0, 2}, {1, 3} */
            const int slow = (tp ? r / 2 : r % 2) == s % 2, stage = r / 2;
            const double coll = (slow ? 10 : 30) + (tp ? 15 : 0);
            memset(&sm, 0, sizeof sm);
            sm.step = (uint64_t)s;
            sm.rank = (uint32_t)r;
            sm.start_ns = t0;
            sm.end_ns = t0 + (uint64_t)(80e6 * j);
            sm.collective_ns = (uint64_t)(coll * 1e6 * j);
            sm.phase_wall_ns[ARGUS_PH_COMM] = sm.collective_ns;
            if (tp) { /* the TP all-reduce in forward, the DP collective in optimizer */
                sm.n_kmodes = 2;
                sm.kmodes[0].name_hash = 1;
                sm.kmodes[0].kclass = ARGUS_KC_COLLECTIVE;
                sm.kmodes[0].phase = ARGUS_PH_FORWARD;
                sm.kmodes[0].count = 1;
                sm.kmodes[0].sum_ns = (uint64_t)(15e6 * j);
                sm.kmodes[1] = sm.kmodes[0];
                sm.kmodes[1].name_hash = 2;
                sm.kmodes[1].phase = ARGUS_PH_OPTIMIZER;
                sm.kmodes[1].sum_ns = sm.collective_ns - sm.kmodes[0].sum_ns;
            }
            if (phases) {
                sm.phase_wall_ns[ARGUS_PH_FORWARD] = (uint64_t)(20e6 * j);
                sm.phase_wall_ns[ARGUS_PH_BACKWARD] = (uint64_t)((stage ? 35e6 : 40e6) * j);
            }
            assert_int_equal(argus_jobstore_add_summary(js, &sm), 0);
        }
        t0 += (uint64_t)(80e6 * j);
    }
    return js;
}

static void layout(struct argus_result *res)
{
    memset(res, 0, sizeof *res);
    res->layout = (struct argus_layout){.tp = 1, .pp = 2, .dp = 2};
}

static void test_dp_transfer(void **state)
{
    static struct argus_forecast fc;
    struct argus_result res;
    (void)state;
    struct argus_jobstore *js = job(1, 0);
    layout(&res);
    struct argus_forecast_opts o = {.total_steps = 1000, .seed = 3, .n_whatif = 2,
                                    .step_dist = 1};
    o.whatif[0] = (struct argus_fc_whatif_spec){.kind = ARGUS_FC_WI_DP, .k = 2};
    o.whatif[1] = (struct argus_fc_whatif_spec){.kind = ARGUS_FC_WI_DP, .k = 4};
    assert_int_equal(argus_forecast_run(js, &res, &o, &fc), 0);
    assert_true(fc.valid);
    assert_true(fabs(fc.step_p50_ms - 80) < 0.2);
    const struct argus_fc_whatif *d2 = find(&fc, "dp=2"), *d4 = find(&fc, "dp=4");
    /* 70 ms not in transfer (the slow replica is the max; new replicas drawn from the
     * observed ones are no slower) + 10 ms x 1.5 */
    assert_true(fabs(d2->step_p50_ms - 85) < 0.3);
    /* 2 -> 8 replicas: (7/8) / (1/2) = 1.75 */
    assert_true(fabs(d4->step_p50_ms - 87.5) < 0.3);
    assert_true(d2->has_step_q && fabs(d2->step_q_ms[49] - 85) < 0.3);
    assert_true(strstr(d2->note, "ring term") && strstr(d2->note, "latency term not modelled"));
    argus_jobstore_free(js);

    /* tp 2: the TP all-reduce (inside forward) is not the DP transfer */
    js = job(1, 1);
    res.layout = (struct argus_layout){.tp = 2, .pp = 1, .dp = 2};
    assert_int_equal(argus_forecast_run(js, &res, &o, &fc), 0);
    assert_true(fc.valid);
    d2 = find(&fc, "dp=2");
    assert_true(fabs(d2->step_p50_ms - 85) < 0.3);
    assert_true(strstr(d2->note, "TP > 1") != NULL);
    argus_jobstore_free(js);
}

static void test_microbatches(void **state)
{
    static struct argus_forecast fc;
    struct argus_result res;
    (void)state;
    struct argus_jobstore *js = job(1, 0);
    layout(&res);
    struct argus_forecast_opts o = {.total_steps = 1000, .seed = 3, .n_whatif = 3,
                                    .microbatches = 4};
    o.whatif[0] = (struct argus_fc_whatif_spec){.kind = ARGUS_FC_WI_MB, .k = 8};
    o.whatif[1] = (struct argus_fc_whatif_spec){.kind = ARGUS_FC_WI_MB, .k = 2};
    o.whatif[2] = (struct argus_fc_whatif_spec){.kind = ARGUS_FC_WI_MB, .k = 4};
    assert_int_equal(argus_forecast_run(js, &res, &o, &fc), 0);
    assert_true(fc.valid);
    const struct argus_fc_whatif *m8 = find(&fc, "mb=8"), *m2 = find(&fc, "mb=2"),
                                 *m4 = find(&fc, "mb=4");
    assert_true(fabs(m8->step_p50_ms - 128) < 0.3);
    assert_true(fabs(m2->step_p50_ms - 56) < 0.3);
    assert_true(fabs(m4->step_p50_ms - 80) < 0.3);
    /* the remaining time follows the step: 1000 - 120 steps left */
    assert_true(fabs(m8->remaining_s.p50 / fc.remaining_s.p50 - 128.0 / 80) < 0.01);
    assert_true(strstr(m8->note, "bubble share 20.0 % -> 11.1 %") != NULL);
    assert_true(strstr(m2->note, "-> 33.3 %") != NULL);

    /* no current count: refused as bad options */
    o.microbatches = 0;
    assert_int_equal(argus_forecast_run(js, &res, &o, &fc), -EINVAL);
    o.microbatches = 4;
    o.whatif[0].k = 0;
    assert_int_equal(argus_forecast_run(js, &res, &o, &fc), -EINVAL);
    argus_jobstore_free(js);

    /* no phases: said so, the forecast's own figures kept */
    js = job(0, 0);
    o.n_whatif = 1;
    o.whatif[0].k = 8;
    assert_int_equal(argus_forecast_run(js, &res, &o, &fc), 0);
    assert_true(fc.valid);
    assert_true(strstr(fc.whatif[0].note, "no forward/backward phases") != NULL);
    assert_true(fabs(fc.whatif[0].remaining_s.p50 - fc.remaining_s.p50) < 1e-9);
    argus_jobstore_free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dp_transfer),
        cmocka_unit_test(test_microbatches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
