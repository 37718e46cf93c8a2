/* test_nccl.c — NCCL's in-band view (analysis/ncclview.c) on synthetic jobs whose summaries
 * carry the NCCL block of the DP communicator (tests/synth: synth_opts.nccl):
 *  - a rank that arrives 15 ms late at the DP all-gather in steps 20-35 is the last
 *    arriver of its communicator, its median lateness within 10 % of 15 ms, both in the
 *    anomaly over those steps and, over the whole run, most often last;
 *  - a slow link (rank 8's transfer to its ring peer rank 10, 3x): the comm_degradation
 *    of DP group 8, 10, 12, 14 names the pair as its sources (without the block: the
 *    whole group) and its nccl view the slow pair 8 -> 10;
 *  - without the block there is no view at all and the anomalies are those of before
 *    (the same job with and without the block gives the same kinds and windows).
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
#include "report/report.h"
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"

static void dump_view(const char *what, const struct argus_nccl_view *v)
{
    if (!getenv("ARGUS_TEST_VERBOSE"))
        return;
    fprintf(stderr, "  %s: comm %016llx steps %llu-%llu members %u aligned %u last %d x%u "
            "late %.3f ms (%d) pair %d->%d %.3f ms %.2fx z %.1f\n", what,
            (unsigned long long)v->comm_hash, (unsigned long long)v->step_first,
            (unsigned long long)v->step_last, v->n_members_total, v->steps_aligned,
            v->last_arriver, v->times_last, v->median_lateness_ms, v->late, v->pair_rank,
            v->pair_peer, v->pair_xfer_ms, v->pair_ratio, v->pair_z);
    for (uint32_t i = 0; i < v->n_members; i++) {
        const struct argus_nccl_member *m = &v->members[i];
        fprintf(stderr, "    rank %u steps %u last %u wait %.3f xfer %.3f gpu %.3f peer %d "
                "%.3f\n", m->rank, m->steps, m->times_last, m->peer_wait_ms, m->xfer_ms,
                m->gpu_wait_ms, m->peer, m->peer_xfer_ms);
    }
}

/* The whole-run view whose members include rank; NULL when none. */
static const struct argus_nccl_view *run_view_of(const struct argus_result *r, uint32_t rank)
{
    for (uint32_t i = 0; i < r->n_nccl_comms; i++)
        for (uint32_t j = 0; j < r->nccl_comms[i].n_members; j++)
            if (r->nccl_comms[i].members[j].rank == rank)
                return &r->nccl_comms[i];
    return NULL;
}

static void late_job(struct synth_opts *o, int nccl)
{
    synth_default(o, 71);
    o->comm_groups = 2;
    o->nccl = nccl;
    struct synth_fault *f = synth_add(o, SY_NCCL_LATE, 20, 35, 1.0);
    f->ranks[0] = 5; /* tp 1, dp 2, pp 0: DP group 1, 3, 5, 7 */
    f->nranks = 1;
    f->ms = 15;
}

static void test_late_arriver(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    late_job(&o, 1);
    struct argus_jobstore *js = synth_run(&o, &r);
    assert_non_null(r.nccl_comms);
    assert_int_equal(r.n_nccl_comms, 4); /* the four DP communicators */
    const struct argus_nccl_view *v = run_view_of(&r, 5);
    assert_non_null(v);
    dump_view("run", v);
    assert_int_equal(v->n_members_total, 4);
    assert_int_equal(v->steps_aligned, 60);
    assert_int_equal(v->last_arriver, 5);
    assert_true(v->times_last >= 16);
    assert_true(v->median_lateness_ms > 13.5 && v->median_lateness_ms < 16.5);
    /* the anomaly over the late steps names it, with the lateness of those steps */
    int seen = 0;
    for (size_t i = 0; i < r.n_anomalies; i++) {
        const struct argus_anomaly *a = &r.anomalies[i];
        if (a->step_first > 35 || a->step_last < 20)
            continue;
        assert_non_null(r.nccl);
        const struct argus_nccl_view *w = &r.nccl[i];
        dump_view("anomaly", w);
        assert_int_equal(w->last_arriver, 5);
        assert_true(w->late);
        assert_true(w->median_lateness_ms > 13.5 && w->median_lateness_ms < 16.5);
        assert_non_null(strstr(a->evidence, "NCCL: rank 5 arrived last"));
        seen = 1;
    }
    assert_true(seen);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static void link_job(struct synth_opts *o, int nccl)
{
    synth_default(o, 51);
    o->comm_groups = 2;
    o->nccl = nccl;
    struct synth_fault *f = synth_add(o, SY_NCCL_LINK, 20, 50, 3.0);
    f->ranks[0] = 8; /* tp 0, dp 0, pp 1: DP group 8, 10, 12, 14; ring peer dp 1 = rank 10 */
    f->nranks = 1;
}

static const struct argus_anomaly *comm_anomaly(const struct argus_result *r, size_t *at)
{
    for (size_t i = 0; i < r->n_anomalies; i++)
        if (r->anomalies[i].kind == ARGUS_AK_COMM_DEGRADATION) {
            *at = i;
            return &r->anomalies[i];
        }
    return NULL;
}

static void test_slow_link(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r;
    size_t at = 0;
    /* without the block: the DP group is the source */
    link_job(&o, 0);
    struct argus_jobstore *js = synth_run(&o, &r);
    const struct argus_anomaly *a = comm_anomaly(&r, &at);
    if (!a)
        synth_dump(js, &r);
    assert_non_null(a);
    assert_int_equal(a->n_ranks, 4);
    assert_null(r.nccl);
    argus_result_free(&r);
    argus_jobstore_free(js);
    /* with it: the link's two ends */
    link_job(&o, 1);
    js = synth_run(&o, &r);
    a = comm_anomaly(&r, &at);
    if (!a)
        synth_dump(js, &r);
    assert_non_null(a);
    assert_non_null(r.nccl);
    dump_view("anomaly", &r.nccl[at]);
    assert_int_equal(a->n_ranks, 2);
    assert_int_equal(a->ranks[0], 8);
    assert_int_equal(a->ranks[1], 10);
    assert_int_equal(a->n_group, 4);
    assert_int_equal(r.nccl[at].pair_rank, 8);
    assert_int_equal(r.nccl[at].pair_peer, 10);
    assert_true(r.nccl[at].pair_ratio > 2.0);
    assert_non_null(strstr(a->evidence, "NCCL: link rank 8 -> rank 10"));
    const struct argus_nccl_view *v = run_view_of(&r, 8);
    assert_non_null(v);
    dump_view("run", v);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* The block changes nothing when it says nothing unusual: the same clean job with and
 * without it gives the same anomalies; without it, no view. */
static void test_absent_block(void **state)
{
    (void)state;
    struct synth_opts o;
    struct argus_result r0, r1;
    synth_default(&o, 72);
    o.comm_groups = 2;
    struct argus_jobstore *js0 = synth_run(&o, &r0);
    assert_null(r0.nccl);
    assert_null(r0.nccl_comms);
    assert_int_equal(r0.n_nccl_comms, 0);
    o.nccl = 1;
    struct argus_jobstore *js1 = synth_run(&o, &r1);
    assert_non_null(r1.nccl_comms);
    assert_int_equal(r0.n_anomalies, r1.n_anomalies);
    for (size_t i = 0; i < r0.n_anomalies; i++) {
        assert_int_equal(r0.anomalies[i].kind, r1.anomalies[i].kind);
        assert_int_equal(r0.anomalies[i].step_first, r1.anomalies[i].step_first);
        assert_int_equal(r0.anomalies[i].n_ranks, r1.anomalies[i].n_ranks);
    }
    for (uint32_t i = 0; i < r1.n_nccl_comms; i++) {
        assert_false(r1.nccl_comms[i].late);
        assert_int_equal(r1.nccl_comms[i].pair_rank, -1);
    }
    argus_result_free(&r0);
    argus_result_free(&r1);
    argus_jobstore_free(js0);
    argus_jobstore_free(js1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_arriver),
        cmocka_unit_test(test_slow_link),
        cmocka_unit_test(test_absent_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
