/* test_traceplan.c — cmocka units for pipeline/traceplan.c: which ranks and steps an
 * anomaly's L4 trace is asked from (sources, then peers in the source's position, then
 * victims), one plan per anomaly identity however it grows, the cap, links to written
 * traces, and the "no new plans" mode of the final report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipeline/traceplan.h"

/* 16 ranks, TP 2 x DP 4 x PP 2 in the simulator's order (TP fastest, then DP, then PP). */
static struct argus_jobstore *layout_store(void)
{
    struct argus_jobstore *js = NULL;
    assert_int_equal(argus_jobstore_create(16, &js), 0);
    for (uint32_t r = 0; r < 16; r++) {
        struct argus_rank_info ri;
        memset(&ri, 0, sizeof ri);
        ri.rank = r;
        ri.world_size = 16;
        ri.coords = (struct argus_coords){.tp_size = 2, .pp_size = 2, .dp_size = 4,
                                          .ep_size = 1, .tp = (uint16_t)(r % 2),
                                          .dp = (uint16_t)((r / 2) % 4),
                                          .pp = (uint16_t)(r / 8)};
        assert_int_equal(argus_jobstore_set_rankinfo(js, &ri), 0);
    }
    return js;
}

static struct argus_anomaly straggler(uint32_t rank, uint64_t first, uint64_t last)
{
    struct argus_anomaly a;
    memset(&a, 0, sizeof a);
    a.kind = ARGUS_AK_COMPUTE_STRAGGLER;
    a.n_ranks = 1;
    a.ranks[0] = rank;
    a.n_victims = 3;
    a.victims[0] = 0;
    a.victims[1] = 1;
    a.victims[2] = 4;
    a.step_first = first;
    a.step_last = last;
    return a;
}

static void test_targets_and_steps(void **state)
{
    struct argus_traceplan tp;
    struct argus_anomaly a[2];
    struct argus_result r = {.n_anomalies = 1, .anomalies = a};
    (void)state;

    struct argus_jobstore *js = layout_store();
    assert_int_equal(argus_traceplan_init(&tp, 4, 16), 0);
    a[0] = straggler(5, 20, 38);
    assert_int_equal(argus_traceplan_update(&tp, js, &r, 1), 1);
    const struct argus_trace_plan *p = &tp.v[0];
    assert_int_equal(p->nsources, 1);
    assert_int_equal(p->ntargets, 3);
    /* rank 5 is TP 1, DP 2, PP 0: its nearest DP replicas are ranks 3 (DP 1) and 7 (DP 3) */
    assert_int_equal(p->targets[0], 5);
    assert_true((p->targets[1] == 3 && p->targets[2] == 7) ||
                (p->targets[1] == 7 && p->targets[2] == 3));
    assert_int_equal(p->from, 20);
    assert_int_equal(p->to, 38);
    assert_int_equal(p->state, ARGUS_TRACE_WANTED);

    /* the same anomaly, grown: no second plan; once written, linked */
    a[0] = straggler(5, 20, 45);
    assert_int_equal(argus_traceplan_update(&tp, js, &r, 1), 0);
    assert_string_equal(a[0].trace, "");
    tp.v[0].state = ARGUS_TRACE_WRITTEN;
    strcpy(tp.v[0].path, "traces/compute_straggler-steps-38-40.json");
    assert_int_equal(argus_traceplan_update(&tp, js, &r, 1), 0);
    assert_string_equal(a[0].trace, "traces/compute_straggler-steps-38-40.json");

    /* no layout: victims as peers */
    a[1] = straggler(9, 100, 104);
    a[1].kind = ARGUS_AK_HOST_STALL;
    r.n_anomalies = 2;
    assert_int_equal(argus_traceplan_update(&tp, NULL, &r, 1), 1);
    p = &tp.v[1];
    assert_int_equal(p->to, 104);
    assert_int_equal(p->ntargets, 3);
    assert_true(p->targets[0] == 9 && p->targets[1] == 0 && p->targets[2] == 1);
    argus_traceplan_free(&tp);
    argus_jobstore_free(js);
}

static void test_no_sources_cap_and_final(void **state)
{
    struct argus_traceplan tp;
    struct argus_anomaly a[3];
    struct argus_result r = {.n_anomalies = 1, .anomalies = a};
    (void)state;

    assert_int_equal(argus_traceplan_init(&tp, 2, 16), 0);
    memset(&a[0], 0, sizeof a[0]);
    a[0].kind = ARGUS_AK_STEP_REGRESSION;
    a[0].step_first = 500;
    a[0].step_last = 900;
    /* the final report plans nothing */
    assert_int_equal(argus_traceplan_update(&tp, NULL, &r, 0), 0);
    assert_int_equal(tp.n, 0);
    /* no sources: a sample of the job, rank 0 and the last rank */
    assert_int_equal(argus_traceplan_update(&tp, NULL, &r, 1), 1);
    assert_int_equal(tp.v[0].nsources, 0);
    assert_int_equal(tp.v[0].ntargets, 2);
    assert_true(tp.v[0].targets[0] == 0 && tp.v[0].targets[1] == 15);
    /* at most max plans */
    a[1] = straggler(2, 10, 12);
    a[2] = straggler(3, 10, 12);
    r.n_anomalies = 3;
    assert_int_equal(argus_traceplan_update(&tp, NULL, &r, 1), 1);
    assert_int_equal(tp.n, 2);
    assert_int_equal(tp.v[1].targets[0], 2);
    argus_traceplan_free(&tp);

    /* ARGUS_TRACES=0: nothing, ever */
    assert_int_equal(argus_traceplan_init(&tp, 0, 16), 0);
    assert_int_equal(argus_traceplan_update(&tp, NULL, &r, 1), 0);
    argus_traceplan_free(&tp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_targets_and_steps),
        cmocka_unit_test(test_no_sources_cap_and_final),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
