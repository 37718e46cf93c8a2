/* test_reportpace.c — rank 0's provisional report rewrites are paced (reduce/reportpace.h,
 * reduce/rank0.c): the arithmetic of the pace (a rewrite waits 199 times what the last one
 * took, at most 30 s; sooner when the windows stop); and over a real rank 0 without MPI (4
 * ranks, kernel-less summaries: rank0_fixture.h), a report asked for right after one was
 * written is analysed but its files are held, written when due by argus_rank0_report_held,
 * and the final report is never held. Before the pace every window rewrote every file
 * (some fifteen fsyncs): 3 % of the job's CPU on rank 0 of the PyTorch job
 * (bench/overhead.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "reduce/rank0.h"
#include "reduce/reportpace.h"
#include "tests/reduce/rank0_fixture.h"

#define NRANKS 4

static void test_pace_arithmetic(void **state)
{
    (void)state;
    struct argus_reportpace p = {0};

    /* windows every 50-100 us; a rewrite of 1 us waits 199 us */
    assert_int_equal(argus_reportpace_want(&p, 0), 1); /* the first goes at once */
    assert_true(argus_reportpace_due(&p) == UINT64_MAX);
    argus_reportpace_wrote(&p, 0, 1000);
    assert_true(p.next_ns == 1000 + 1000ull * ARGUS_REPORTPACE_FACTOR);
    assert_int_equal(argus_reportpace_want(&p, 100000), 0); /* held */
    assert_true(argus_reportpace_due(&p) == 200000); /* the pace, not 100000 + 2 gaps */
    assert_int_equal(argus_reportpace_want(&p, 150000), 0);
    assert_true(argus_reportpace_due(&p) == 200000);
    assert_int_equal(argus_reportpace_want(&p, 199999), 0);
    assert_int_equal(argus_reportpace_want(&p, 200000), 1);
    argus_reportpace_wrote(&p, 200000, 200000); /* took nothing: at once again */
    assert_true(argus_reportpace_due(&p) == UINT64_MAX);
    assert_int_equal(argus_reportpace_want(&p, 200001), 1);

    /* the windows stop: a held rewrite is due two gaps after the last ask */
    struct argus_reportpace q = {0};
    assert_int_equal(argus_reportpace_want(&q, 5000), 1);
    argus_reportpace_wrote(&q, 5000, 6000); /* next at 205,000 */
    assert_int_equal(argus_reportpace_want(&q, 15000), 0); /* gap 10,000 */
    assert_true(argus_reportpace_due(&q) == 35000);
    assert_int_equal(argus_reportpace_want(&q, 25000), 0); /* the next window: held on */
    assert_true(argus_reportpace_due(&q) == 45000);
    assert_int_equal(argus_reportpace_want(&q, 45000), 0); /* not the pace's turn yet */

    /* a rewrite of 10 s waits 30 s, not 1,990 s */
    struct argus_reportpace r = {0};
    argus_reportpace_wrote(&r, 0, 10000000000ull);
    assert_int_equal(argus_reportpace_want(&r, 10000000001ull), 0);
    assert_true(argus_reportpace_due(&r) == 10000000000ull + ARGUS_REPORTPACE_MAX_NS);
}

/* Steps first .. first + n - 1 of every rank into rank 0, as one window. */
static void ingest(struct argus_rank0 *r0, uint64_t first, uint64_t n)
{
    assert_int_equal(r0fx_ingest(r0, NRANKS, first, n, 0, UINT64_MAX), 0);
}

static int setup(void **state)
{
    struct r0fx *fx = calloc(1, sizeof *fx);

    if (!fx || r0fx_open(fx, "reportpace", NRANKS, 0) != 0)
        return -1;
    *state = fx;
    return 0;
}

/* report.json's steps.last; -1 when there is no report.json. */
static long long report_last_step(const struct argus_rank0 *r0)
{
    char *text = r0fx_slurp(r0, "report.json");
    if (!text)
        return -1;
    char err[256];
    yajl_val v = yajl_tree_parse(text, err, sizeof err);
    free(text);
    assert_non_null(v);
    const char *at[] = {"steps", "last", NULL};
    yajl_val last = yajl_tree_get(v, at, yajl_t_number);
    assert_non_null(last);
    long long x = YAJL_GET_INTEGER(last);
    yajl_tree_free(v);
    return x;
}

static void test_rewrites_held_then_due(void **state)
{
    struct r0fx *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;

    ingest(r0, 0, 10);
    argus_rank0_report(r0, 0); /* the first is written at once */
    assert_int_equal(report_last_step(r0), 9);
    assert_true(argus_rank0_report_due(r0) == UINT64_MAX);

    ingest(r0, 10, 10);
    argus_rank0_report(r0, 0); /* right after: analysed, its files held */
    assert_int_equal(report_last_step(r0), 9);
    const uint64_t due = argus_rank0_report_due(r0);
    assert_true(due != UINT64_MAX);
    assert_true(due <= r0->pace.next_ns);
    assert_int_equal(argus_rank0_report_held(r0, due - 1), 0);
    assert_int_equal(report_last_step(r0), 9);
    assert_int_equal(argus_rank0_report_held(r0, due), 1); /* due: the latest analysis */
    assert_int_equal(report_last_step(r0), 19);
    assert_true(argus_rank0_report_due(r0) == UINT64_MAX);
    assert_int_equal(argus_rank0_report_held(r0, UINT64_MAX - 1), 0); /* nothing held */

    ingest(r0, 20, 10);
    argus_rank0_report(r0, 0);
    assert_int_equal(report_last_step(r0), 19); /* held again */
    ingest(r0, 30, 10);
    argus_rank0_report(r0, 1); /* the final report is never held */
    assert_int_equal(report_last_step(r0), 39);
    assert_true(argus_rank0_report_due(r0) == UINT64_MAX);
}

/* A rank marked missing is news: the files go to disk at once, held pace or not (a
 * launcher may kill the whole job a second after one rank dies: tests/slurm/t_kill_rank.sh
 * failed with the mark held). */
static void test_missing_rank_not_held(void **state)
{
    struct r0fx *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;

    ingest(r0, 0, 10);
    argus_rank0_report(r0, 0);
    assert_int_equal(report_last_step(r0), 9);
    ingest(r0, 10, 10);
    argus_rank0_report(r0, 0); /* held by the pace */
    assert_int_equal(report_last_step(r0), 9);
    argus_rank0_mark_missing(r0, 1, 20, 2);
    argus_rank0_report(r0, 0); /* a new mark: written although the pace would hold it */
    assert_int_equal(report_last_step(r0), 19);
    ingest(r0, 20, 10);
    argus_rank0_report(r0, 0); /* no new mark: held again */
    assert_int_equal(report_last_step(r0), 19);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pace_arithmetic),
        cmocka_unit_test_setup_teardown(test_rewrites_held_then_due, setup, r0fx_teardown),
        cmocka_unit_test_setup_teardown(test_missing_rank_not_held, setup, r0fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
