/* test_rank0.c — rank 0's missing-rank bookkeeping (reduce/rank0.c), without MPI: a job
 * of 4 ranks x 10 steps is ingested as wire records, then marks are made as the agent
 * makes them. A rank marked only from a step after the last one (it missed the deadline
 * of the empty flush at MPI_Finalize) delivered all its steps and must not be counted
 * missing; a rank marked inside the job stays missing; reduce.json tells them apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "store/jobstore.h"
#include "common/wire.h"
#include "reduce/rank0.h"

#define NRANKS 4
#define NSTEPS 10

struct fixture {
    char base[128];
    struct argus_rank0 r0;
};

/* A rank 0 over NRANKS ranks that has taken in steps 0 .. nsteps - 1 of every rank as one
 * buffer (kernel-less summaries, as the tree carries them). 0 or -1. */
static int open_ingested(struct fixture *fx, uint64_t nsteps)
{
    struct argus_config cfg;
    char err[256];

    snprintf(fx->base, sizeof fx->base, "/tmp/argus-test-rank0-XXXXXX");
    if (!mkdtemp(fx->base))
        return -1;
    argus_config_defaults(&cfg);
    snprintf(cfg.outdir, sizeof cfg.outdir, "%s", fx->base);
    cfg.spool = 0;
    if (argus_rank0_open(&fx->r0, &cfg, NRANKS, "t", "0", err, sizeof err) != 0)
        return -1;
    struct argus_step_summary *s = calloc(1, sizeof *s);
    size_t cap = (size_t)NRANKS * nsteps * argus_summary_encoded_max(0), len = 0;
    uint8_t *buf = malloc(cap);
    if (!s || !buf)
        return -1;
    for (uint32_t r = 0; r < NRANKS; r++) {
        for (uint64_t st = 0; st < nsteps; st++) {
            s->rank = r;
            s->step = st;
            s->start_ns = 1000000000ull * (st + 1);
            s->end_ns = s->start_ns + 900000000ull + 1000ull * r;
            s->compute_ns = 700000000ull;
            long n = argus_summary_encode(s, buf + len, cap - len);
            if (n <= 0)
                return -1;
            len += (size_t)n;
        }
    }
    argus_rank0_ingest(&fx->r0, buf, len);
    free(buf);
    free(s);
    return 0;
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    if (!fx || open_ingested(fx, NSTEPS) != 0)
        return -1;
    *state = fx;
    return 0;
}

/* The store cut to 16 steps (64 cells of 4 ranks); three windows of 10 steps arrive at
 * once, as when rank 0 falls behind its children. */
static int setup_lagging(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    setenv("ARGUS_TEST_STORE_CELLS", "64", 1);
    int rc = fx ? open_ingested(fx, 30) : -1;
    unsetenv("ARGUS_TEST_STORE_CELLS");
    if (rc)
        return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    char cmd[300];

    argus_rank0_close(&fx->r0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fx->base);
    free(fx);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *b = calloc(1, 1 << 16);
    if (f && b)
        b[fread(b, 1, (1 << 16) - 1, f)] = '\0';
    if (f)
        fclose(f);
    return b;
}

/* The bug: the last flush carries no step, so the mark says "from step 10" of a job whose
 * last step is 9; the rank delivered everything and the job is complete. */
static void test_late_final_flush_is_not_missing(void **state)
{
    struct fixture *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;

    argus_rank0_mark_missing(r0, 2, NSTEPS, 1);
    assert_int_equal(argus_jobstore_missing_since(r0->js, 2), NSTEPS);
    argus_rank0_report(r0, 1);
    assert_int_equal(argus_jobstore_missing_since(r0->js, 2), UINT64_MAX);
    assert_int_equal(argus_jobstore_meta(r0->js)->complete, 1);
    assert_int_equal(r0->nmiss, 0);

    argus_rank0_write_reduce_json(r0, 0.0, 0, 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/reduce.json", r0->dir);
    char *j = slurp(path);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"missing\": []"));
    assert_non_null(strstr(j, "\"late_at_finalize\": [2]"));
    free(j);
    snprintf(path, sizeof path, "%s/report.json", r0->dir);
    j = slurp(path);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"complete\": true"));
    free(j);
}

/* A rank that stopped inside the job stays missing from where it stopped. */
static void test_missing_inside_job_stays(void **state)
{
    struct fixture *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;

    argus_rank0_mark_missing(r0, 3, 5, 0);
    argus_rank0_mark_missing(r0, 1, NSTEPS, 1);
    argus_rank0_report(r0, 1);
    assert_int_equal(argus_jobstore_missing_since(r0->js, 3), 5);
    assert_int_equal(argus_jobstore_missing_since(r0->js, 1), UINT64_MAX);
    assert_int_equal(argus_jobstore_meta(r0->js)->complete, 0);
    assert_int_equal(r0->nmiss, 1);
    assert_int_equal(r0->miss[0].rank, 3);
    assert_int_equal(r0->miss[0].from_step, 5);
}

/* The bug: the store evicted steps 0-13 as they came in, before any analysis saw them
 * (with their anomalies: t_evict lost a straggler this way on a loaded machine). They stay
 * until the analysis has run, then go. */
static void test_lagging_steps_wait_for_analysis(void **state)
{
    struct fixture *fx = *state;
    struct argus_rank0 *r0 = &fx->r0;
    const uint64_t *held;

    assert_int_equal(argus_jobstore_horizon(r0->js), 16);
    assert_int_equal(argus_jobstore_steps(r0->js, &held), 30); /* none analysed yet */
    assert_int_equal(held[0], 0);
    argus_rank0_report(r0, 0);
    assert_int_equal(argus_jobstore_steps(r0->js, &held), 16); /* analysed: the horizon */
    assert_int_equal(held[0], 14);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_late_final_flush_is_not_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_inside_job_stays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lagging_steps_wait_for_analysis, setup_lagging,
                                        teardown),
    };
    return cmocka_run_group_tests_name("reduce_rank0", tests, NULL, NULL);
}
