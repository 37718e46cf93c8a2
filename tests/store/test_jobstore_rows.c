/* test_jobstore_rows.c — unit tests of store/add_rows.c: the batch add of rows
 * (argus_jobstore_add_rows) and the ingest of rows records through it leave the store
 * exactly as the rows' thin summaries added one by one do. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/aggregate.h"
#include "common/aggrow.h"
#include "store/jobstore.h"
#include "common/wire.h"
#include "common/wire_rows.h"

static struct argus_step_summary s1, s2;

static void mk(struct argus_step_summary *s, uint32_t rank, uint64_t step, uint32_t nk)
{
    uint64_t st = step * 1000 + rank + 1;
    tg_summary(&st, s, (int)nk);
    s->rank = rank;
    s->step = step;
}

/* a and b hold the same: counts, steps, what eviction left, and per rank the same ids,
 * rows, summaries (bytes) and sketch. */
static void assert_stores_equal(const struct argus_jobstore *a, const struct argus_jobstore *b)
{
    const uint64_t *sa, *sb;
    const struct argus_jobstore_gone *ga, *gb;
    assert_true(argus_jobstore_count(a) == argus_jobstore_count(b) &&
                argus_jobstore_stale(a) == argus_jobstore_stale(b));
    size_t n = argus_jobstore_steps(a, &sa);
    assert_int_equal(argus_jobstore_steps(b, &sb), n);
    assert_true(n == 0 || memcmp(sa, sb, n * sizeof *sa) == 0);
    n = argus_jobstore_evicted(a, &ga);
    assert_int_equal(argus_jobstore_evicted(b, &gb), n);
    assert_true(n == 0 || memcmp(ga, gb, n * sizeof *ga) == 0);
    for (uint32_t r = 0; r < argus_jobstore_nranks(a); r++) {
        const struct argus_step_summary *const *va, *const *vb;
        const struct argus_jobstore_row *wa, *wb;
        n = argus_jobstore_rank_steps(a, r, &va);
        assert_int_equal(argus_jobstore_rank_steps(b, r, &vb), n);
        assert_true(argus_jobstore_rank_rows(a, r, &wa) == n &&
                    argus_jobstore_rank_rows(b, r, &wb) == n);
        assert_true(n == 0 || memcmp(wa, wb, n * sizeof *wa) == 0);
        for (size_t i = 0; i < n; i++) /* n_kmodes: same rows */
            assert_memory_equal(va[i], vb[i], offsetof(struct argus_step_summary, kmodes) +
                                                  va[i]->n_kmodes * sizeof va[i]->kmodes[0]);
        const struct argus_qsketch *qa = argus_jobstore_rank_gone(a, r);
        assert_true((qa == NULL) == (argus_jobstore_rank_gone(b, r) == NULL));
        if (qa)
            tg_assert_sketch_equal(qa, argus_jobstore_rank_gone(b, r));
    }
}

static void mkrow(struct argus_agg_row *w, uint32_t rank, uint64_t step, uint64_t *rng)
{
    memset(w, 0, sizeof *w);
    w->rank = rank;
    w->step = step;
    w->flags = (uint32_t)(tg_rand(rng) % 4);
    w->start_ns = step * 1000000 + tg_rand(rng) % 1000;
    for (int k = 0; k < 8; k++)
        w->us[k] = (uint32_t)(1 + tg_rand(rng) % 900);
}

/* Rows added in batches of any size store what their thin summaries added one by one do:
 * steps that cross the horizon inside a batch, a rank missing, full summaries between
 * the batches (blocks of other sizes), and rows that replace a held thin or full summary,
 * fill in an older step, come after their step was evicted or name a rank outside the job
 * (which ends the batch: the rows before it stay). */
static void test_add_rows_as_one_by_one(void **state)
{
    enum { P = 6, STEPS = 40, MAXROWS = P * 3 + 8 };
    struct argus_jobstore *batch, *single;
    struct argus_agg_row rows[MAXROWS];
    uint64_t rng = 12345;
    (void)state;

    assert_true(!argus_jobstore_create(P, &batch) && !argus_jobstore_create(P, &single));
    assert_true(!argus_jobstore_set_retention(batch, P * 5, 5) &&
                !argus_jobstore_set_retention(single, P * 5, 5));
    argus_jobstore_mark_missing(batch, 2, 20);
    argus_jobstore_mark_missing(single, 2, 20);
    for (uint64_t step = 0; step < STEPS; step += 2) {
        size_t n = 0;
        for (uint64_t k = step; k < step + 2; k++) {
            mk(&s1, (uint32_t)(k % P), k, (uint32_t)(1 + k % 4)); /* its full summary */
            assert_int_equal(argus_jobstore_add_summary(batch, &s1), 0);
            assert_int_equal(argus_jobstore_add_summary(single, &s1), 0);
            for (uint32_t r = 0; r < P; r++)
                if (r != k % P && (r != 4 || k % 3))
                    mkrow(&rows[n++], r, k, &rng);
        }
        mkrow(&rows[n++], 1, step, &rng);                   /* replaces a thin one */
        mkrow(&rows[n++], (uint32_t)(step % P), step, &rng); /* replaces the full one */
        if (step >= 2)
            mkrow(&rows[n++], 4, step - 2, &rng); /* an older step, possibly evicted */
        if (step >= 12)
            mkrow(&rows[n++], 3, step - 12, &rng); /* evicted: stale */
        if (step % 6 == 4)
            mkrow(&rows[n++], P + 1, step, &rng); /* outside the job */
        mkrow(&rows[n++], 5, step + 1, &rng);     /* again, later in the batch */
        for (size_t at = 0; at < n;) {
            size_t len = 1 + tg_rand(&rng) % 9;
            len = len < n - at ? len : n - at;
            int want = 0;
            for (size_t i = at; i < at + len && want == 0; i++) {
                argus_aggrow_thin(&rows[i], &s2);
                want = argus_jobstore_add_summary(single, &s2);
            }
            assert_int_equal(argus_jobstore_add_rows(batch, rows + at, len), want);
            assert_stores_equal(batch, single);
            at += len;
        }
    }
    assert_true(argus_jobstore_evicted(batch, NULL) > 20 && argus_jobstore_stale(batch) > 0);
    assert_true(!argus_jobstore_add_rows(batch, NULL, 0) &&
                argus_jobstore_add_rows(batch, NULL, 1) == -EINVAL);
    argus_jobstore_free(batch);
    argus_jobstore_free(single);
}

/* A rows record ingested stores what its rows' thin summaries added one by one do; a row
 * outside the job fails the record with the rows before it stored. */
static void test_ingest_rows_as_one_by_one(void **state)
{
    enum { P = 40, STEPS = 12 };
    struct argus_jobstore *in, *single;
    struct argus_agg_row rows[P + 1];
    uint8_t rec[8192];
    char err[256];
    uint64_t rng = 777;
    (void)state;

    assert_true(!argus_jobstore_create(P, &in) && !argus_jobstore_create(P, &single));
    assert_true(!argus_jobstore_set_retention(in, P * 4, 4) &&
                !argus_jobstore_set_retention(single, P * 4, 4));
    for (uint64_t step = 0; step < STEPS; step++) {
        size_t n = 0;
        for (uint32_t r = 0; r < P; r++)
            if ((r + step) % 7)
                mkrow(&rows[n++], r, step, &rng);
        if (step == 7)
            mkrow(&rows[n++], P + 3, step, &rng);
        assert_true(n <= ARGUS_ROWS_PER_RECORD && argus_rows_encoded_max(n) <= sizeof rec);
        long len = argus_rows_encode(rows, n, rec, sizeof rec);
        assert_true(len > 0);
        int rc = argus_jobstore_ingest(in, ARGUS_REC_ROWS, rec, (size_t)len, err, sizeof err);
        assert_int_equal(rc, step == 7 ? -EINVAL : 0);
        assert_true(!rc || strstr(err, "rank outside job"));
        for (size_t i = 0; i < n && rows[i].rank < P; i++) {
            argus_aggrow_thin(&rows[i], &s2);
            assert_int_equal(argus_jobstore_add_summary(single, &s2), 0);
        }
        assert_stores_equal(in, single);
    }
    assert_true(argus_jobstore_evicted(in, NULL) == STEPS - 4);
    argus_jobstore_free(in);
    argus_jobstore_free(single);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_rows_as_one_by_one),
        cmocka_unit_test(test_ingest_rows_as_one_by_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
