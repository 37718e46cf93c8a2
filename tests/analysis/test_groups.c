/* test_groups.c — communication groups from communicator membership (analysis/groups.c)
 * on a synthetic job that declares no layout: its rank infos list the TP, DP and PP
 * communicators as reduce/pmpi.c records them. The W1 group test names a degraded DP
 * group exactly, which it cannot without the memberships; the late-arriver test takes
 * its victims from the DP communicator of the late rank (not its whole stage); peer
 * classes split by differing kernel names are joined back along TP/DP communicators.
 * Without memberships, the DP groups are inferred from which ranks' collectives end
 * together (analysis/groups_infer.c), through constant clock errors of several hundred
 * microseconds; and refused when nothing tells groups apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/analysis.h"
#include "analysis/internal.h"
#include "report/report.h"
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"

static size_t count_kind(const struct argus_result *r, int kind)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_anomalies; i++)
        n += r->anomalies[i].kind == kind;
    return n;
}

/* The one verdict of the link-degradation cases: communication degradation of DP group
 * 8, 10, 12, 14 (the third), with W1 block structure and `why` in its evidence. */
static void expect_dp_group_8_to_14(const struct argus_jobstore *js,
                                    const struct argus_result *r, const char *why)
{
    if (r->n_anomalies != 1)
        synth_dump(js, r);
    assert_int_equal(r->n_anomalies, 1);
    const struct argus_anomaly *a = &r->anomalies[0];
    assert_int_equal(a->kind, ARGUS_AK_COMM_DEGRADATION);
    assert_int_equal(a->group_type, ARGUS_GT_DP);
    const uint32_t want[] = { 8, 10, 12, 14 };
    assert_int_equal(a->n_ranks, 4);
    assert_int_equal(a->n_group, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(a->ranks[i], want[i]);
        assert_int_equal(a->group[i], want[i]);
    }
    assert_true(a->w1_inter_ns > 10 * a->w1_intra_ns);
    assert_non_null(strstr(a->evidence, why));
}

/* DP group 2 (pp 1, tp 0: ranks 8, 10, 12, 14) collectives 3x slower, no layout. */
static void test_comm_group_from_membership(void **state)
{
    (void)state;
    for (int groups = 0; groups <= 1; groups++) {
        struct synth_opts o;
        struct argus_result r;
        synth_default(&o, 51);
        o.no_coords = 1;
        o.comm_groups = groups;
        struct synth_fault *f = synth_add(&o, SY_COMM, 20, 50, 3.0);
        f->group_index = 2;
        struct argus_jobstore *js = synth_run(&o, &r);
        if (!groups) { /* nothing tells the groups apart: no group verdict */
            assert_int_equal(count_kind(&r, ARGUS_AK_COMM_DEGRADATION), 0);
        } else {
            expect_dp_group_8_to_14(js, &r, "communicator");
        }
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* TP group 1 (ranks 2, 3) collectives 3x slower, no layout; the DP groups are listed
 * twice (MPI and NCCL): the copy is not taken for the TP role, the TP group is named. */
static void test_tp_group_beside_copies(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 52);
    o.no_coords = 1;
    o.comm_groups = 2;
    struct synth_fault *f = synth_add(&o, SY_COMM, 20, 50, 3.0);
    f->group_tp = 1;
    f->group_index = 1;
    struct argus_jobstore *js = synth_run(&o, &r);
    if (r.n_anomalies != 1)
        synth_dump(js, &r);
    assert_int_equal(r.n_anomalies, 1);
    const struct argus_anomaly *a = &r.anomalies[0];
    assert_int_equal(a->kind, ARGUS_AK_COMM_DEGRADATION);
    assert_int_equal(a->group_type, ARGUS_GT_TP);
    assert_int_equal(a->n_ranks, 2);
    assert_int_equal(a->ranks[0], 2);
    assert_int_equal(a->ranks[1], 3);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Rank 6 starts its steps 15 ms late: its DP communicator (0, 2, 4, 6) waits for it. */
static void test_late_group_from_membership(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 81);
    o.no_coords = 1;
    o.comm_groups = 1; /* without: the victims are the whole stage, 0-5 and 7 */
    struct synth_fault *f = synth_add(&o, SY_LATE, 20, 59, 1);
    f->ranks[f->nranks++] = 6;
    f->ms = 15;
    struct argus_jobstore *js = synth_run(&o, &r);
    if (r.n_anomalies != 1)
        synth_dump(js, &r);
    assert_int_equal(r.n_anomalies, 1);
    const struct argus_anomaly *a = &r.anomalies[0];
    assert_int_equal(a->kind, ARGUS_AK_HOST_STALL);
    assert_int_equal(a->n_ranks, 1);
    assert_int_equal(a->ranks[0], 6);
    assert_int_equal(a->n_victims, 3);
    assert_int_equal(a->victims[0], 0);
    assert_int_equal(a->victims[1], 2);
    assert_int_equal(a->victims[2], 4);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* Ranks 2-5 (both TP ranks of DP replicas 1 and 2 at stage 0) run a compute kernel under
 * another name (as folded modes of a straggler can look): the classes inferred from kernel
 * sets split stage 0 in two, 3 uneven classes, no stages. Their TP and DP communicators
 * join them back: two stages of 8 ranks, as the layout has it. */
static void test_classes_joined(void **state)
{
    static struct argus_step_summary s;
    (void)state;
    for (int groups = 0; groups <= 1; groups++) {
        struct synth_opts o;
        struct argus_result r;
        struct argus_jobstore *js = NULL;
        synth_default(&o, 41);
        o.no_coords = 1;
        o.comm_groups = groups;
        assert_int_equal(synth_job(&o, &js), 0);
        for (uint32_t q = 2; q <= 5; q++) {
            const struct argus_step_summary *const *v;
            const size_t n = argus_jobstore_rank_steps(js, q, &v);
            for (size_t i = 0; i < n; i++) {
                memcpy(&s, v[i], offsetof(struct argus_step_summary, kmodes) +
                                     v[i]->n_kmodes * sizeof v[i]->kmodes[0]);
                for (uint32_t k = 0; k < s.n_kmodes; k++)
                    if (s.kmodes[k].kclass == ARGUS_KC_COMPUTE)
                        s.kmodes[k].name_hash ^= 1; /* another name */
                assert_int_equal(argus_jobstore_add_summary(js, &s), 0);
            }
        }
        assert_int_equal(argus_analyze(js, NULL, &r), 0);
        assert_int_equal(r.layout.inferred, 1);
        assert_int_equal(r.layout.pp, groups ? 2 : 1);
        assert_int_equal(r.layout.dp, groups ? 8 : 16);
        argus_result_free(&r);
        argus_jobstore_free(js);
    }
}

/* The inferred DP-role partition of a job (NULL when none), from the analysis context. */
static uint32_t *inferred_groups(const struct synth_opts *o, int *inferred)
{
    struct argus_jobstore *js = NULL;
    struct an_ctx c;
    struct argus_analysis_opts ao;
    memset(&ao, 0, sizeof ao);
    assert_int_equal(synth_job(o, &js), 0);
    assert_int_equal(an_ctx_build(&c, js, &ao), 0);
    uint32_t *g = NULL;
    *inferred = c.mgrp_inferred;
    if (c.mgrp[0]) {
        g = malloc(c.n * sizeof *g);
        assert_non_null(g);
        memcpy(g, c.mgrp[0], c.n * sizeof *g);
    }
    an_ctx_free(&c);
    argus_jobstore_free(js);
    return g;
}

/* 16 ranks, tp 2, pp 2, dp 4, no layout, no memberships, every rank's clock off by a
 * constant of up to +-500 us: the DP groups (same tp and pp index) come out exactly. */
static void test_groups_inferred_exact(void **state)
{
    (void)state;
    for (uint64_t seed = 61; seed <= 63; seed++) {
        struct synth_opts o;
        int inferred = 0;
        synth_default(&o, seed);
        o.no_coords = 1;
        o.last_ends = 1;
        o.clock_err_us = 500;
        uint32_t *g = inferred_groups(&o, &inferred);
        assert_non_null(g);
        assert_int_equal(inferred, 1);
        for (uint32_t a = 0; a < 16; a++) {
            assert_int_not_equal(g[a], UINT32_MAX);
            for (uint32_t b = 0; b < 16; b++) /* dp group: tp = r % 2 and pp = r / 8 */
                assert_int_equal(g[a] == g[b], a % 2 == b % 2 && a / 8 == b / 8);
        }
        free(g);
    }
}

/* Nothing to infer: without last ends (old tracers, imports); with one DP group of all
 * ranks (tp 1, pp 1, dp 16: every collective ends together everywhere); with the layout
 * known or the memberships known, which come first. */
static void test_groups_inferred_refused(void **state)
{
    (void)state;
    struct synth_opts o;
    int inferred = 0;
    synth_default(&o, 64);
    o.no_coords = 1;
    o.clock_err_us = 300;
    assert_null(inferred_groups(&o, &inferred)); /* no last ends */
    o.last_ends = 1;
    o.tp = 1;
    o.pp = 1;
    o.dp = 16;
    assert_null(inferred_groups(&o, &inferred));
    synth_default(&o, 64);
    o.last_ends = 1;
    assert_null(inferred_groups(&o, &inferred)); /* layout known */
    o.no_coords = 1;
    o.comm_groups = 1;
    uint32_t *g = inferred_groups(&o, &inferred);
    assert_non_null(g);
    assert_int_equal(inferred, 0);
    free(g);
}

/* DP group 2 (ranks 8, 10, 12, 14) collectives 3x slower in steps 20-50, no layout, no
 * memberships, clocks off by up to +-400 us: named exactly as with the memberships
 * (test_comm_group_from_membership), the group said to be inferred. */
static void test_comm_group_inferred(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    synth_default(&o, 51);
    o.no_coords = 1;
    o.last_ends = 1;
    o.clock_err_us = 400;
    struct synth_fault *f = synth_add(&o, SY_COMM, 20, 50, 3.0);
    f->group_index = 2;
    struct argus_jobstore *js = synth_run(&o, &r);
    expect_dp_group_8_to_14(js, &r, "inferred");
    argus_result_free(&r);
    argus_jobstore_free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_group_from_membership),
        cmocka_unit_test(test_tp_group_beside_copies),
        cmocka_unit_test(test_late_group_from_membership),
        cmocka_unit_test(test_classes_joined),
        cmocka_unit_test(test_groups_inferred_exact),
        cmocka_unit_test(test_groups_inferred_refused),
        cmocka_unit_test(test_comm_group_inferred),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
