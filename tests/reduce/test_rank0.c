/* test_rank0.c — rank 0's missing-rank bookkeeping (reduce/rank0.c over pipeline/pipeline.c),
 * without MPI: a job of 4 ranks x 10 steps is ingested as wire records, then marks are
 * made as the agent makes them. A rank marked only from a step after the last one (it
 * missed the deadline of the empty flush at MPI_Finalize) delivered all its steps and
 * must not be counted missing; a rank marked inside the job stays missing; reduce.json
 * (YAJL) tells them apart, has every key the integration tests read, and stays JSON
 * whatever text a trace plan carries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "store/jobstore.h"
#include "reduce/rank0.h"
#include "tests/reduce/rank0_fixture.h"

#define NRANKS 4
#define NSTEPS 10

/* A rank 0 over NRANKS ranks that has taken in steps 0 .. nsteps - 1 of every rank as one
 * buffer (kernel-less summaries, as the tree carries them); rank 3's before stop3 only
 * (UINT64_MAX: all). 0 or -1. */
static int open_ingested(struct r0fx *fx, uint64_t nsteps, uint64_t stop3)
{
    if (r0fx_open(fx, "rank0", NRANKS, 4) != 0)
        return -1;
    return r0fx_ingest(&fx->r0, NRANKS, 0, nsteps, 3, stop3);
}

static int setup(void **state)
{
    struct r0fx *fx = calloc(1, sizeof *fx);
    if (!fx || open_ingested(fx, NSTEPS, UINT64_MAX) != 0)
        return -1;
    *state = fx;
    return 0;
}

/* The store cut to 16 steps (64 cells of 4 ranks); three windows of 10 steps arrive at
 * once, as when rank 0 falls behind its children. */
static int setup_lagging(void **state)
{
    struct r0fx *fx = calloc(1, sizeof *fx);
    setenv("ARGUS_TEST_STORE_CELLS", "64", 1);
    int rc = fx ? open_ingested(fx, 30, UINT64_MAX) : -1;
    unsetenv("ARGUS_TEST_STORE_CELLS");
    if (rc)
        return -1;
    *state = fx;
    return 0;
}

/* reduce.json parsed (fails the test when it is not JSON). */
static yajl_val reduce_json(const struct argus_rank0 *r0)
{
    yajl_val v = r0fx_json(r0, "reduce.json");
    assert_non_null(v);
    return v;
}

/* The member `key` of object v, which must be there with type t. */
static yajl_val get(yajl_val v, const char *key, yajl_type t)
{
    const char *p[] = {key, NULL};
    yajl_val x = yajl_tree_get(v, p, t);
    if (!x)
        fprintf(stderr, "reduce.json: no %s of the type wanted\n", key);
    assert_non_null(x);
    return x;
}

static const char *get_str(yajl_val v, const char *key)
{
    const char *s = YAJL_GET_STRING(get(v, key, yajl_t_string));
    assert_non_null(s);
    return s ? s : "";
}

/* The bug: the last flush carries no step, so the mark says "from step 10" of a job whose
 * last step is 9; the rank delivered everything and the job is complete. */
static void test_late_final_flush_is_not_missing(void **state)
{
    struct r0fx *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;

    argus_rank0_mark_missing(r0, 2, NSTEPS, 1);
    assert_int_equal(argus_jobstore_missing_since(r0->pl.js, 2), NSTEPS);
    argus_rank0_report(r0, 1);
    assert_int_equal(argus_jobstore_missing_since(r0->pl.js, 2), UINT64_MAX);
    assert_int_equal(argus_jobstore_meta(r0->pl.js)->complete, 1);
    assert_int_equal(r0->pl.nmiss, 0);

    assert_int_equal(argus_rank0_write_reduce_json(r0, 0.0, 0, 0), 0);
    yajl_val v = reduce_json(r0);
    assert_int_equal(YAJL_GET_ARRAY(get(v, "missing", yajl_t_array))->len, 0);
    yajl_val late = get(v, "late_at_finalize", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(late)->len, 1);
    assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(late)->values[0]), 2);
    yajl_tree_free(v);
    char *j = r0fx_slurp(r0, "report.json");
    assert_non_null(j);
    assert_non_null(strstr(j, "\"complete\": true"));
    free(j);
}

/* Rank 3 stopped at step 5. */
static int setup_stopped(void **state)
{
    struct r0fx *fx = calloc(1, sizeof *fx);
    if (!fx || open_ingested(fx, NSTEPS, 5) != 0)
        return -1;
    *state = fx;
    return 0;
}

/* A rank that stopped inside the job stays missing from where it stopped. */
static void test_missing_inside_job_stays(void **state)
{
    struct r0fx *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;

    argus_rank0_mark_missing(r0, 3, 5, 0);
    argus_rank0_mark_missing(r0, 1, NSTEPS, 1);
    argus_rank0_report(r0, 1);
    assert_int_equal(argus_jobstore_missing_since(r0->pl.js, 3), 5);
    assert_int_equal(argus_jobstore_missing_since(r0->pl.js, 1), UINT64_MAX);
    assert_int_equal(argus_jobstore_meta(r0->pl.js)->complete, 0);
    assert_int_equal(r0->pl.nmiss, 1);
    assert_int_equal(r0->pl.miss[0].rank, 3);
    assert_int_equal(r0->pl.miss[0].from_step, 5);
}

/* The bug: the store evicted steps 0-13 as they came in, before any analysis saw them
 * (with their anomalies: t_evict lost a straggler this way on a loaded machine). They stay
 * until the analysis has run, then go. */
static void test_lagging_steps_wait_for_analysis(void **state)
{
    struct r0fx *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;
    const uint64_t *held;

    assert_int_equal(argus_jobstore_horizon(r0->pl.js), 16);
    assert_int_equal(argus_jobstore_steps(r0->pl.js, &held), 30); /* none analysed yet */
    assert_int_equal(held[0], 0);
    argus_rank0_report(r0, 0);
    assert_int_equal(argus_jobstore_steps(r0->pl.js, &held), 16); /* analysed: the horizon */
    assert_int_equal(held[0], 14);
}

/* Every key the integration tests and bench/reduce_live.sh read, with the values given;
 * and a trace plan whose text needs escaping (the fprintf writer wrote it raw: not JSON). */
static void test_reduce_json_keys(void **state)
{
    struct r0fx *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;

    r0->fanin = 32;
    r0->tree_depth = 2;
    r0->threaded = 1;
    r0->window_steps = 10;
    r0->spilled_windows = 3;
    r0->condense_on = 1;
    r0->condense.exemplars = 7;
    r0->condense.thin = 33;
    r0->condense.rows = 40;
    r0->condense.wanted = 5;
    r0->pull_asks = 2;
    r0->pull_answers = 1;
    r0->pull_late = 1;
    r0->pull_unanswered = 0;
    argus_rank0_mark_missing(r0, 3, 5, 0);
    assert_true(r0->pl.traces.max > 0);
    struct argus_trace_plan *p = &r0->pl.traces.v[r0->pl.traces.n++];
    memset(p, 0, sizeof *p);
    p->kind = ARGUS_AK_HOST_STALL;
    p->ntargets = 2;
    p->state = ARGUS_TRACE_FAILED;
    snprintf(p->why, sizeof p->why, "a \"quoted\" why \\ and a tab\t");
    assert_int_equal(argus_rank0_write_reduce_json(r0, 1.25, 9, 1000), 0);

    yajl_val v = reduce_json(r0);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "ranks", yajl_t_number)), NRANKS);
    yajl_val tree = get(v, "tree", yajl_t_object);
    assert_int_equal(YAJL_GET_INTEGER(get(tree, "fanin", yajl_t_number)), 32);
    assert_int_equal(YAJL_GET_INTEGER(get(tree, "depth", yajl_t_number)), 2);
    assert_true(YAJL_IS_TRUE(get(tree, "node_aware", yajl_t_true)));
    assert_string_equal(get_str(v, "exchange"), "argus-thread");
    assert_int_equal(YAJL_GET_INTEGER(get(v, "windows", yajl_t_number)), 1);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "window_steps", yajl_t_number)), 10);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "steps", yajl_t_number)), NSTEPS);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "rank0_bytes_in", yajl_t_number)), 1000);
    assert_true(YAJL_GET_DOUBLE(get(v, "rank0_bytes_in_per_step", yajl_t_number)) == 100.0);
    assert_true(YAJL_GET_DOUBLE(get(v, "argus_thread_cpu_s", yajl_t_number)) == 1.25);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "summaries_dropped_rank0", yajl_t_number)), 9);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "windows_spilled_rank0", yajl_t_number)), 3);
    yajl_val c = get(v, "condense", yajl_t_object);
    assert_true(YAJL_IS_TRUE(get(c, "on", yajl_t_true)));
    assert_int_equal(YAJL_GET_INTEGER(get(c, "exemplars", yajl_t_number)), 7);
    assert_int_equal(YAJL_GET_INTEGER(get(c, "thin", yajl_t_number)), 33);
    assert_int_equal(YAJL_GET_INTEGER(get(c, "rows", yajl_t_number)), 40);
    yajl_val pull = get(c, "pull", yajl_t_object);
    assert_int_equal(YAJL_GET_INTEGER(get(pull, "asks", yajl_t_number)), 2);
    assert_int_equal(YAJL_GET_INTEGER(get(pull, "cells_wanted", yajl_t_number)), 5);
    assert_int_equal(YAJL_GET_INTEGER(get(pull, "answers", yajl_t_number)), 1);
    assert_int_equal(YAJL_GET_INTEGER(get(pull, "late", yajl_t_number)), 1);
    assert_int_equal(YAJL_GET_INTEGER(get(pull, "unanswered", yajl_t_number)), 0);
    yajl_val off = get(v, "clock_offsets_ns", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(off)->len, NRANKS);
    for (size_t i = 0; i < NRANKS; i++) /* the fixture's summaries have offset 0 */
        assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(off)->values[i]), 0);
    yajl_val miss = get(v, "missing", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(miss)->len, 1);
    yajl_val m0 = YAJL_GET_ARRAY(miss)->values[0];
    assert_int_equal(YAJL_GET_INTEGER(get(m0, "rank", yajl_t_number)), 3);
    assert_int_equal(YAJL_GET_INTEGER(get(m0, "from_step", yajl_t_number)), 5);
    assert_int_equal(YAJL_GET_INTEGER(get(m0, "window", yajl_t_number)), 0);
    assert_true(strlen(get_str(m0, "marked_at")) > 10);
    assert_int_equal(YAJL_GET_ARRAY(get(v, "late_at_finalize", yajl_t_array))->len, 0);
    yajl_val l4 = get(v, "l4_traces", yajl_t_object);
    assert_true(YAJL_IS_FALSE(get(l4, "on", yajl_t_false)));
    assert_int_equal(YAJL_GET_INTEGER(get(l4, "planned", yajl_t_number)), 1);
    yajl_val plans = get(l4, "plans", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(plans)->len, 1);
    yajl_val p0 = YAJL_GET_ARRAY(plans)->values[0];
    assert_string_equal(get_str(p0, "kind"), "host_stall");
    assert_int_equal(YAJL_GET_INTEGER(get(p0, "targets", yajl_t_number)), 2);
    assert_string_equal(get_str(p0, "state"), "failed");
    assert_string_equal(get_str(p0, "path"), "");
    assert_string_equal(get_str(p0, "why"),
                        "a \"quoted\" why \\ and a tab\t");
    yajl_tree_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_late_final_flush_is_not_missing, setup,
                                        r0fx_teardown),
        cmocka_unit_test_setup_teardown(test_missing_inside_job_stays, setup_stopped,
                                        r0fx_teardown),
        cmocka_unit_test_setup_teardown(test_lagging_steps_wait_for_analysis, setup_lagging,
                                        r0fx_teardown),
        cmocka_unit_test_setup_teardown(test_reduce_json_keys, setup, r0fx_teardown),
    };
    return cmocka_run_group_tests_name("reduce_rank0", tests, NULL, NULL);
}
