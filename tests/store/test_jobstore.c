/* test_jobstore.c — unit tests of the job store (store/jobstore.h; its files:
 * store/jobstore_int.h): add / replace / lookup of trimmed summaries, step order, step
 * range, the name dictionary (growth, replacement), rank info, missing marks, ingest of
 * encoded records and of a damaged buffer, retention (eviction, what it keeps, memory
 * reuse). The batch add of rows: tests/store/test_jobstore_rows.c. */
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

/* What the store keeps of s: its kernel modes in name-hash order, the modes of one name
 * in their order (written here as a plain stable selection, not the store's sort). */
static const struct argus_step_summary *by_hash(const struct argus_step_summary *s)
{
    static struct argus_step_summary out;
    uint8_t used[ARGUS_MAX_KMODES] = {0};
    out = *s;
    for (uint32_t k = 0; k < s->n_kmodes; k++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < s->n_kmodes; i++)
            if (!used[i] && (best == UINT32_MAX ||
                             s->kmodes[i].name_hash < s->kmodes[best].name_hash))
                best = i;
        used[best] = 1;
        out.kmodes[k] = s->kmodes[best];
    }
    return &out;
}

static void mk(struct argus_step_summary *s, uint32_t rank, uint64_t step, uint32_t nk)
{
    uint64_t st = step * 1000 + rank + 1;
    tg_summary(&st, s, (int)nk);
    s->rank = rank;
    s->step = step;
}

static void test_create_invalid(void **state)
{
    struct argus_jobstore *js = (void *)1;
    (void)state;
    assert_int_equal(argus_jobstore_create(0, &js), -EINVAL);
    assert_int_equal(argus_jobstore_create(4, NULL), -EINVAL);
    assert_int_equal(argus_jobstore_create(4, &js), 0);
    assert_int_equal(argus_jobstore_nranks(js), 4);
    assert_int_equal(argus_jobstore_count(js), 0);
    uint64_t a, b;
    assert_int_equal(argus_jobstore_step_range(js, &a, &b), -ENOENT);
    assert_null(argus_jobstore_get(js, 0, 0));
    assert_null(argus_jobstore_rankinfo(js, 0));
    assert_null(argus_jobstore_name(js, 1));
    const struct argus_step_summary *const *v = (void *)1;
    assert_int_equal(argus_jobstore_rank_steps(js, 0, &v), 0);
    argus_jobstore_free(js);
    argus_jobstore_free(NULL);
}

static void test_add_sorted_lookup_replace(void **state)
{
    struct argus_jobstore *js;
    (void)state;

    assert_int_equal(argus_jobstore_create(3, &js), 0);
    const uint64_t order[] = {5, 1, 3, 2, 4, 10, 7};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        mk(&s1, 1, order[i], (uint32_t)(order[i] % 4));
        assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    }
    assert_int_equal(argus_jobstore_count(js), 7);
    const struct argus_step_summary *const *v;
    size_t n = argus_jobstore_rank_steps(js, 1, &v);
    assert_int_equal(n, 7);
    const uint64_t sorted[] = {1, 2, 3, 4, 5, 7, 10};
    for (size_t i = 0; i < n; i++) {
        assert_true(v[i]->step == sorted[i]);
        mk(&s2, 1, sorted[i], (uint32_t)(sorted[i] % 4));
        tg_assert_summary_equal(v[i], by_hash(&s2)); /* trimmed copy keeps every used field */
    }
    assert_int_equal(argus_jobstore_rank_steps(js, 0, &v), 0);
    assert_non_null(argus_jobstore_get(js, 1, 3));
    assert_true(argus_jobstore_get(js, 1, 3)->step == 3);
    assert_null(argus_jobstore_get(js, 1, 6));
    assert_null(argus_jobstore_get(js, 1, 11));
    assert_null(argus_jobstore_get(js, 0, 3));
    assert_null(argus_jobstore_get(js, 3, 3));

    /* Replace (rank 1, step 3) with a bigger summary: count unchanged, new content. */
    mk(&s1, 1, 3, 200);
    s1.kernel_count = 123456;
    assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    assert_int_equal(argus_jobstore_count(js), 7);
    const struct argus_step_summary *g = argus_jobstore_get(js, 1, 3);
    assert_int_equal(g->n_kmodes, 200);
    assert_true(g->kernel_count == 123456);
    tg_assert_summary_equal(g, by_hash(&s1));
    /* Replace the last one too (the append fast path must not duplicate it). */
    mk(&s1, 1, 10, 0);
    s1.dropped = 9;
    assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    assert_int_equal(argus_jobstore_count(js), 7);
    assert_true(argus_jobstore_get(js, 1, 10)->dropped == 9);

    /* Rank outside the job, too many kmodes. */
    mk(&s1, 3, 1, 1);
    assert_int_equal(argus_jobstore_add_summary(js, &s1), -EINVAL);
    mk(&s1, 0, 1, 1);
    s1.n_kmodes = ARGUS_MAX_KMODES + 1;
    assert_int_equal(argus_jobstore_add_summary(js, &s1), -EINVAL);

    /* Step range over all ranks. */
    mk(&s1, 2, 0, 1);
    assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    mk(&s1, 0, 99, 1);
    assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    uint64_t first = 7, last = 7;
    assert_int_equal(argus_jobstore_step_range(js, &first, &last), 0);
    assert_true(first == 0);
    assert_true(last == 99);
    assert_int_equal(argus_jobstore_count(js), 9);
    argus_jobstore_free(js);
}

static void test_many_in_order(void **state)
{
    struct argus_jobstore *js;
    (void)state;

    assert_int_equal(argus_jobstore_create(4, &js), 0);
    for (uint64_t step = 0; step < 3000; step++) {
        for (uint32_t r = 0; r < 4; r++) {
            memset(&s1, 0, offsetof(struct argus_step_summary, kmodes));
            s1.rank = r;
            s1.step = step * 2;
            s1.busy_ns = step * 10 + r;
            assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
        }
    }
    assert_int_equal(argus_jobstore_count(js), 12000);
    for (uint64_t step = 0; step < 6000; step++) {
        const struct argus_step_summary *g = argus_jobstore_get(js, 2, step);
        if (step % 2) {
            assert_null(g);
        } else {
            assert_non_null(g);
            assert_true(g->busy_ns == step / 2 * 10 + 2);
        }
    }
    argus_jobstore_free(js);
}

static void test_names(void **state)
{
    struct argus_jobstore *js;
    char name[64];
    (void)state;

    assert_int_equal(argus_jobstore_create(1, &js), 0);
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "kernel_%d", i);
        assert_int_equal(argus_jobstore_add_name(js, argus_name_hash(name), name), 0);
    }
    /* Hashes that agree in their low bits must not collide into each other. */
    for (uint64_t i = 1; i <= 64; i++) {
        snprintf(name, sizeof name, "high_%llu", (unsigned long long)i);
        assert_int_equal(argus_jobstore_add_name(js, i << 40, name), 0);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "kernel_%d", i);
        const char *got = argus_jobstore_name(js, argus_name_hash(name));
        assert_non_null(got);
        assert_string_equal(got, name);
    }
    for (uint64_t i = 1; i <= 64; i++) {
        snprintf(name, sizeof name, "high_%llu", (unsigned long long)i);
        assert_string_equal(argus_jobstore_name(js, i << 40), name);
    }
    assert_null(argus_jobstore_name(js, argus_name_hash("never added")));
    /* Same hash again: same name is a no-op, a new spelling replaces. */
    assert_int_equal(argus_jobstore_add_name(js, 1ull << 40, "high_1"), 0);
    assert_int_equal(argus_jobstore_add_name(js, 1ull << 40, "renamed"), 0);
    assert_string_equal(argus_jobstore_name(js, 1ull << 40), "renamed");
    assert_int_equal(argus_jobstore_add_name(js, 0, "zero hash"), 0);
    assert_string_equal(argus_jobstore_name(js, 0), "zero hash");
    assert_int_equal(argus_jobstore_add_name(js, 5, NULL), -EINVAL);
    argus_jobstore_free(js);
}

static void test_rankinfo_missing_meta(void **state)
{
    struct argus_jobstore *js;
    struct argus_rank_info ri;
    (void)state;

    assert_int_equal(argus_jobstore_create(2, &js), 0);
    memset(&ri, 0, sizeof ri);
    ri.rank = 1;
    ri.world_size = 2;
    ri.device = 3;
    snprintf(ri.host, sizeof ri.host, "node7");
    assert_int_equal(argus_jobstore_set_rankinfo(js, &ri), 0);
    assert_null(argus_jobstore_rankinfo(js, 0));
    assert_non_null(argus_jobstore_rankinfo(js, 1));
    assert_string_equal(argus_jobstore_rankinfo(js, 1)->host, "node7");
    assert_int_equal(argus_jobstore_rankinfo(js, 1)->device, 3);
    ri.rank = 2;
    assert_int_equal(argus_jobstore_set_rankinfo(js, &ri), -EINVAL);

    assert_true(argus_jobstore_missing_since(js, 0) == UINT64_MAX);
    argus_jobstore_mark_missing(js, 0, 10);
    assert_true(argus_jobstore_missing_since(js, 0) == 10);
    argus_jobstore_mark_missing(js, 0, 20);
    assert_true(argus_jobstore_missing_since(js, 0) == 10);
    argus_jobstore_mark_missing(js, 0, 5);
    assert_true(argus_jobstore_missing_since(js, 0) == 5);
    assert_true(argus_jobstore_missing_since(js, 1) == UINT64_MAX);
    argus_jobstore_mark_missing(js, 9, 1); /* ignored */
    assert_true(argus_jobstore_missing_since(js, 9) == UINT64_MAX);

    struct argus_job_meta *m = argus_jobstore_meta(js);
    snprintf(m->id, sizeof m->id, "12345");
    m->source = ARGUS_SRC_REPLAY;
    m->complete = 1;
    assert_string_equal(argus_jobstore_meta_c(js)->id, "12345");
    assert_string_equal(argus_jobstore_meta_c(js)->step, "0");
    assert_int_equal(argus_jobstore_meta_c(js)->complete, 1);
    argus_jobstore_free(js);
}

/* Encode names, rank infos and summaries back to back; ingest; check everything arrived.
 * Then damage the fourth record: the first three stay, the error names its offset. */
static void test_ingest_buffer(void **state)
{
    static uint8_t buf[1 << 18];
    static struct argus_step_summary want[4];
    size_t off = 0, offs[16];
    int nrec = 0;
    char err[256];
    struct argus_jobstore *js;
    (void)state;

    offs[nrec++] = off;
    off += (size_t)argus_name_encode(argus_name_hash("gemm"), "gemm", buf + off,
                                     sizeof buf - off);
    struct argus_rank_info ri = {.rank = 1, .world_size = 2, .device = 0, .pid = 9};
    snprintf(ri.host, sizeof ri.host, "h1");
    offs[nrec++] = off;
    off += (size_t)argus_rankinfo_encode(&ri, buf + off, sizeof buf - off);
    for (int i = 0; i < 4; i++) {
        mk(&want[i], (uint32_t)(i % 2), (uint64_t)(100 + i / 2), (uint32_t)(i * 40));
        offs[nrec++] = off;
        long n = argus_summary_encode(&want[i], buf + off, sizeof buf - off);
        assert_true(n > 0);
        off += (size_t)n;
    }

    assert_int_equal(argus_jobstore_create(2, &js), 0);
    assert_int_equal(argus_jobstore_ingest_buffer(js, buf, off, 0, err, sizeof err), 0);
    assert_int_equal(argus_jobstore_count(js), 4);
    assert_string_equal(argus_jobstore_name(js, argus_name_hash("gemm")), "gemm");
    assert_string_equal(argus_jobstore_rankinfo(js, 1)->host, "h1");
    for (int i = 0; i < 4; i++) {
        const struct argus_step_summary *g =
            argus_jobstore_get(js, want[i].rank, want[i].step);
        assert_non_null(g);
        tg_assert_summary_equal(g, by_hash(&want[i]));
    }
    uint64_t first, last;
    assert_int_equal(argus_jobstore_step_range(js, &first, &last), 0);
    assert_true(first == 100 && last == 101);
    argus_jobstore_free(js);

    /* One record through argus_jobstore_ingest directly. */
    assert_int_equal(argus_jobstore_create(2, &js), 0);
    int type = 0;
    long n = argus_record_peek(buf + offs[2], off - offs[2], 0, &type, err, sizeof err);
    assert_true(n > 0);
    assert_int_equal(argus_jobstore_ingest(js, type, buf + offs[2], (size_t)n, err,
                                           sizeof err), 0);
    assert_int_equal(argus_jobstore_count(js), 1);
    argus_jobstore_free(js);

    /* Damage in record 3 (a summary): records 0..2 kept, message names its offset. */
    buf[offs[3] + 40] ^= 0x01;
    assert_int_equal(argus_jobstore_create(2, &js), 0);
    assert_int_equal(argus_jobstore_ingest_buffer(js, buf, off, 5000, err, sizeof err),
                     -EBADMSG);
    char expect[64];
    snprintf(expect, sizeof expect, "checksum mismatch at offset %zu", 5000 + offs[3]);
    assert_non_null(strstr(err, expect));
    assert_int_equal(argus_jobstore_count(js), 1);
    assert_non_null(argus_jobstore_get(js, want[0].rank, want[0].step));
    assert_non_null(argus_jobstore_name(js, argus_name_hash("gemm")));
    argus_jobstore_free(js);
    buf[offs[3] + 40] ^= 0x01;

    /* A truncated buffer: everything before the cut is kept. */
    assert_int_equal(argus_jobstore_create(2, &js), 0);
    assert_true(argus_jobstore_ingest_buffer(js, buf, off - 3, 0, err, sizeof err) < 0);
    snprintf(expect, sizeof expect, "truncated record at offset %zu", offs[5]);
    assert_non_null(strstr(err, expect));
    assert_int_equal(argus_jobstore_count(js), 3);
    argus_jobstore_free(js);

    /* A summary whose rank is outside the job. */
    assert_int_equal(argus_jobstore_create(1, &js), 0);
    assert_int_equal(argus_jobstore_ingest_buffer(js, buf, off, 0, err, sizeof err), -EINVAL);
    /* The rank-info record of rank 1 is the first refused one. */
    snprintf(expect, sizeof expect, "record at offset %zu: rank info of rank 1", offs[1]);
    assert_non_null(strstr(err, expect));
    argus_jobstore_free(js);
}

/* Summaries of every size, across arena chunks; replacements that shrink and grow; a
 * missing mark taken back. */
static void test_arena_sizes_and_clear_missing(void **state)
{
    struct argus_jobstore *js;
    (void)state;

    assert_int_equal(argus_jobstore_create(2, &js), 0);
    for (uint64_t step = 0; step < 80; step++) {
        mk(&s1, (uint32_t)(step % 2), step, (uint32_t)(step * 37 % (ARGUS_MAX_KMODES + 1)));
        assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    }
    for (uint64_t step = 0; step < 80; step += 3) { /* replace: smaller or larger */
        mk(&s1, (uint32_t)(step % 2), step, (uint32_t)(step * 11 % (ARGUS_MAX_KMODES + 1)));
        s1.dropped = step + 1;
        assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    }
    assert_int_equal(argus_jobstore_count(js), 80);
    for (uint64_t step = 0; step < 80; step++) {
        uint32_t nk = (uint32_t)((step % 3 ? step * 37 : step * 11) % (ARGUS_MAX_KMODES + 1));
        mk(&s2, (uint32_t)(step % 2), step, nk);
        if (step % 3 == 0)
            s2.dropped = step + 1;
        const struct argus_step_summary *g = argus_jobstore_get(js, (uint32_t)(step % 2), step);
        assert_non_null(g);
        tg_assert_summary_equal(g, by_hash(&s2));
    }
    argus_jobstore_mark_missing(js, 1, 40);
    argus_jobstore_mark_missing(js, 1, UINT64_MAX); /* "never" is not a mark */
    assert_true(argus_jobstore_missing_since(js, 1) == 40);
    argus_jobstore_clear_missing(js, 1);
    assert_true(argus_jobstore_missing_since(js, 1) == UINT64_MAX);
    argus_jobstore_clear_missing(js, 7); /* outside the job: ignored */
    argus_jobstore_free(js);
}

/* Retention: a store of 4 ranks keeping 10 steps evicts the oldest step of every rank as
 * newer ones arrive, keeps the job-wide step range, each evicted step's longest wall
 * (missing ranks left out) and each rank's walls in a sketch, drops late summaries of
 * evicted steps, reuses the evicted summaries' memory, and keeps rows in step with the
 * summaries. */
static void test_retention(void **state)
{
    struct argus_jobstore *js;
    const struct argus_step_summary *held[4 * 20];
    size_t nheld = 0;
    (void)state;

    assert_int_equal(argus_jobstore_create(4, &js), 0);
    assert_true(argus_jobstore_horizon(js) == ARGUS_JOBSTORE_MAX_CELLS / 4);
    assert_int_equal(argus_jobstore_set_retention(js, 4 * 10, 4), 0);
    assert_true(argus_jobstore_horizon(js) == 10);
    argus_jobstore_mark_missing(js, 3, 15);
    for (uint64_t step = 0; step < 30; step++) {
        for (uint32_t r = 0; r < 4; r++) {
            if (r == 3 && step >= 15)
                continue; /* rank 3 died */
            mk(&s1, r, step, (uint32_t)(r == 1 ? step % 5 : 0));
            s1.start_ns = 1000 * step;
            s1.end_ns = s1.start_ns + 100 + 10 * r + step; /* rank 3 longest */
            assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
            if (step < 20) /* the memory of the steps that will be evicted */
                held[nheld++] = argus_jobstore_get(js, r, step);
        }
    }
    assert_int_equal(argus_jobstore_count(js), 3 * 10);
    uint64_t first, last;
    assert_int_equal(argus_jobstore_step_range(js, &first, &last), 0);
    assert_true(first == 0 && last == 29);
    for (uint32_t r = 0; r < 4; r++) {
        const struct argus_step_summary *const *v;
        const struct argus_jobstore_row *w;
        const uint64_t *id;
        size_t n = argus_jobstore_rank_steps(js, r, &v);
        assert_int_equal(n, r == 3 ? 0 : 10);
        assert_int_equal(argus_jobstore_rank_rows(js, r, &w), n);
        assert_int_equal(argus_jobstore_rank_step_ids(js, r, &id), n);
        for (size_t i = 0; i < n; i++) {
            assert_true(id[i] == 20 + i && v[i]->step == id[i]);
            assert_true(w[i].wall_ns == (double)(v[i]->end_ns - v[i]->start_ns));
            assert_true(w[i].n_kmodes == v[i]->n_kmodes);
            assert_true(w[i].thin == ((v[i]->flags & ARGUS_SF_THIN) != 0));
            int reused = 0; /* steps 20-29 live in the memory of evicted ones */
            for (size_t k = 0; k < nheld; k++)
                reused |= held[k] == v[i];
            assert_true(reused);
        }
        assert_null(argus_jobstore_get(js, r, 19));
    }
    const uint64_t *st; /* the distinct held steps */
    assert_int_equal(argus_jobstore_steps(js, &st), 10);
    for (uint64_t k = 0; k < 10; k++)
        assert_true(st[k] == 20 + k);
    const struct argus_jobstore_gone *g;
    assert_int_equal(argus_jobstore_evicted(js, &g), 20);
    for (uint64_t k = 0; k < 20; k++) {
        assert_true(g[k].step == k);
        assert_true(g[k].wall_ns == 100 + 10 * (k < 15 ? 3 : 2) + k); /* not rank 3 after 15 */
    }
    for (uint32_t r = 0; r < 4; r++) {
        const struct argus_qsketch *q = argus_jobstore_rank_gone(js, r);
        assert_non_null(q);
        assert_true(argus_qsketch_count(q) == (r == 3 ? 15 : 20));
    }
    /* late: a step already evicted is dropped and counted */
    mk(&s1, 0, 5, 0);
    assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    assert_true(argus_jobstore_stale(js) == 1);
    assert_int_equal(argus_jobstore_count(js), 30);
    /* replacing a held summary keeps its row in step */
    mk(&s1, 1, 25, 3);
    s1.start_ns = 0;
    s1.end_ns = 12345;
    s1.flags |= ARGUS_SF_THIN;
    assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    const struct argus_jobstore_row *w;
    argus_jobstore_rank_rows(js, 1, &w);
    assert_true(w[5].wall_ns == 12345.0 && w[5].n_kmodes == 3 && w[5].thin == 1);
    /* a tighter retention evicts at once; none keeps everything from then on */
    assert_int_equal(argus_jobstore_set_retention(js, 0, 2), 0);
    assert_true(argus_jobstore_horizon(js) == SIZE_MAX);
    assert_int_equal(argus_jobstore_set_retention(js, 8, 3), 0);
    assert_int_equal(argus_jobstore_count(js), 3 * 3);
    assert_int_equal(argus_jobstore_evicted(js, NULL), 27);
    /* the reader's scratch: aligned, kept while big enough */
    void *a = argus_jobstore_scratch(js, 1000), *b = argus_jobstore_scratch(js, 10);
    assert_non_null(a);
    assert_true(a == b && (uintptr_t)a % 64 == 0);
    argus_jobstore_free(js);
}

/* Pinned steps outlive the horizon by at most the pin's extra steps; moving the pin lets
 * them go at once; no pin is the plain horizon again. */
static void test_pin(void **state)
{
    (void)state;
    struct argus_jobstore *js;
    const uint64_t *held;
    assert_int_equal(argus_jobstore_create(2, &js), 0);
    assert_int_equal(argus_jobstore_set_retention(js, 8, 1), 0); /* 4 steps */
    assert_int_equal(argus_jobstore_pin(js, 0, 3), 0);
    for (uint64_t st = 0; st < 8; st++)
        for (uint32_t r = 0; r < 2; r++) {
            mk(&s1, r, st, 0);
            assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
        }
    assert_int_equal(argus_jobstore_steps(js, &held), 7); /* 4 + 3: step 0 had to go */
    assert_int_equal(held[0], 1);
    assert_int_equal(argus_jobstore_pin(js, 5, 3), 0); /* 1..4 analysed: they go */
    assert_int_equal(argus_jobstore_steps(js, &held), 4);
    assert_int_equal(held[0], 4);
    assert_int_equal(argus_jobstore_pin(js, UINT64_MAX, 0), 0);
    mk(&s1, 0, 8, 0);
    assert_int_equal(argus_jobstore_add_summary(js, &s1), 0);
    assert_int_equal(argus_jobstore_steps(js, &held), 4);
    assert_int_equal(held[0], 5);
    argus_jobstore_free(js);
}

/* A rank info record of rank `rank` told env by ARGUS_TOTAL_STEPS and steps by the
 * program at `at`, ingested. */
static void add_env_plan(struct argus_jobstore *js, uint32_t rank, uint64_t env, uint64_t steps,
                         uint64_t at)
{
    struct argus_rank_info ri;
    uint8_t rec[512];
    char err[256];
    memset(&ri, 0, sizeof ri);
    ri.rank = rank;
    ri.world_size = 4;
    snprintf(ri.host, sizeof ri.host, "n%u", rank);
    ri.env_planned_steps = env;
    ri.planned_steps = steps;
    ri.planned_at_ns = at;
    const long n = argus_rankinfo_encode(&ri, rec, sizeof rec);
    assert_true(n > 0);
    assert_int_equal(argus_jobstore_ingest(js, ARGUS_REC_JOBINFO, rec, (size_t)n, err,
                                           sizeof err), 0);
}

static void add_plan(struct argus_jobstore *js, uint32_t rank, uint64_t steps, uint64_t at)
{
    add_env_plan(js, rank, 0, steps, at);
}

/* The job's planned steps from the ranks' rank info records (argus_set_total_steps on any
 * rank, ingested as wire records): none until one is told; the latest by its time wins,
 * whatever the order the records come in; a rank that re-sends its older value neither
 * wins nor hides that the ranks disagree; a rank's own change is no disagreement. */
static void test_planned_steps(void **state)
{
    struct argus_jobstore *js;
    uint32_t who = 99, orank = 99;
    uint64_t other = 1;
    (void)state;

    assert_int_equal(argus_jobstore_create(4, &js), 0);
    assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 0 && other == 0);
    add_plan(js, 0, 0, 0);  /* a rank never told */
    add_plan(js, 1, 0, 0);
    assert_true(argus_jobstore_planned_steps(js, NULL, NULL, NULL) == 0);
    add_plan(js, 3, 5000, 200);
    assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 5000);
    assert_true(who == 3 && other == 0);
    add_plan(js, 3, 6000, 300); /* rank 3 changed its mind */
    assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 6000 && other == 0);
    add_plan(js, 1, 0, 0);      /* re-sent, never told */
    assert_true(argus_jobstore_planned_steps(js, &who, &other, NULL) == 6000 && other == 0);
    add_plan(js, 2, 4000, 100); /* an older value of another rank, coming in late */
    assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 6000);
    assert_true(who == 3 && other == 4000 && orank == 2);
    add_plan(js, 2, 7000, 400); /* a newer one */
    assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 7000);
    assert_true(who == 2 && other == 6000 && orank == 3);
    argus_jobstore_free(js);
}

/* ARGUS_TOTAL_STEPS as the ranks read it (env_planned_steps): the plan when no rank was
 * told one by the program, the lowest rank's whatever the order; the program's (any rank,
 * the latest) wins over it whether its record comes in before or after; taken back (0),
 * the environment's is the plan again. */
static void test_planned_steps_env(void **state)
{
    struct argus_jobstore *js;
    uint32_t who = 99, orank = 99;
    uint64_t other = 1;
    (void)state;

    assert_int_equal(argus_jobstore_plan_from(NULL), ARGUS_PLAN_NONE);
    for (int order = 0; order < 2; order++) { /* the program's record after, then before */
        assert_int_equal(argus_jobstore_create(4, &js), 0);
        assert_int_equal(argus_jobstore_plan_from(js), ARGUS_PLAN_NONE);
        if (order == 1)
            add_env_plan(js, 3, 0, 200, 100); /* rank 3: argus_set_total_steps(200) */
        add_env_plan(js, 2, 500, 0, 0);
        add_env_plan(js, 0, 400, 0, 0);
        add_env_plan(js, 1, 500, 0, 0);
        if (order == 0) {
            assert_int_equal(argus_jobstore_plan_from(js), ARGUS_PLAN_ENV);
            assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 400);
            assert_true(who == 0 && other == 0 && orank == 0); /* the lowest rank's */
            add_env_plan(js, 3, 0, 200, 100);
        }
        add_env_plan(js, 0, 400, 0, 0); /* rank 0 re-sends: the environment's again */
        assert_int_equal(argus_jobstore_plan_from(js), ARGUS_PLAN_PROGRAM);
        assert_true(argus_jobstore_planned_steps(js, &who, &other, NULL) == 200);
        assert_true(who == 3 && other == 0);
        add_env_plan(js, 2, 500, 300, 50); /* an older program value: the latest wins */
        assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 200);
        assert_true(who == 3 && other == 300 && orank == 2);
        add_env_plan(js, 3, 0, 0, 200); /* rank 3 takes its plan back */
        assert_int_equal(argus_jobstore_plan_from(js), ARGUS_PLAN_ENV);
        assert_true(argus_jobstore_planned_steps(js, &who, &other, &orank) == 400);
        assert_true(who == 0 && other == 0);
        argus_jobstore_free(js);
    }
    /* records of older builds (no environment's plan): as before */
    assert_int_equal(argus_jobstore_create(4, &js), 0);
    add_env_plan(js, 0, 0, 0, 0);
    assert_int_equal(argus_jobstore_plan_from(js), ARGUS_PLAN_NONE);
    assert_true(argus_jobstore_planned_steps(js, &who, NULL, NULL) == 0);
    argus_jobstore_free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_invalid),
        cmocka_unit_test(test_add_sorted_lookup_replace),
        cmocka_unit_test(test_many_in_order),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_rankinfo_missing_meta),
        cmocka_unit_test(test_ingest_buffer),
        cmocka_unit_test(test_arena_sizes_and_clear_missing),
        cmocka_unit_test(test_retention),
        cmocka_unit_test(test_pin),
        cmocka_unit_test(test_planned_steps),
        cmocka_unit_test(test_planned_steps_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
