/* test_sparse.c — rank ids are sparse keys, not array sizes (issue 16, item 3): the
 * synthetic 16-rank job of tests/synth/ copied into a store under other rank ids (ids x 10:
 * 0, 10, ..., 150; or 0..14 and 60000) is diagnosed exactly as the original, its verdicts
 * naming the new ids (sources, victims, groups, evidence, per-rank rows), and the analysis
 * holds its tables for the 16 ranks present, not for the largest id + 1: the context has
 * 16 slots and analysing a store whose largest id is 60,000 takes megabytes at most (the
 * rank x step tables by id took ~180 MB).
 */
#include <malloc.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/analysis.h"
#include "analysis/context.h"
#include "report/report.h"
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"

#define NR 16

/* A copy of src with rank r stored as id[r]; every step kept. */
static struct argus_jobstore *remap(const struct argus_jobstore *src, const uint32_t *id)
{
    struct argus_jobstore *dst = NULL;
    uint32_t top = 0;
    for (uint32_t r = 0; r < NR; r++)
        top = id[r] > top ? id[r] : top;
    assert_int_equal(argus_jobstore_nranks(src), NR);
    assert_int_equal(argus_jobstore_create(top + 1, &dst), 0);
    assert_int_equal(argus_jobstore_set_retention(dst, 0, 0), 0);
    for (uint32_t r = 0; r < NR; r++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(src, r);
        if (ri) {
            struct argus_rank_info x = *ri;
            x.rank = id[r];
            x.world_size = top + 1;
            assert_int_equal(argus_jobstore_set_rankinfo(dst, &x), 0);
        }
        const struct argus_step_summary *const *v;
        const size_t m = argus_jobstore_rank_steps(src, r, &v);
        for (size_t i = 0; i < m; i++) {
            const size_t sz = sizeof *v[i]; /* a full summary: kmodes up to the maximum */
            struct argus_step_summary *s = malloc(sz);
            assert_non_null(s);
            memset(s, 0, sz);
            memcpy(s, v[i], offsetof(struct argus_step_summary, kmodes) +
                                 v[i]->n_kmodes * sizeof v[i]->kmodes[0]);
            s->rank = id[r];
            for (uint32_t k = 0; k < s->n_kmodes; k++) {
                const char *nm = argus_jobstore_name(src, s->kmodes[k].name_hash);
                if (nm)
                    assert_int_equal(argus_jobstore_add_name(dst, s->kmodes[k].name_hash, nm), 0);
            }
            assert_int_equal(argus_jobstore_add_summary(dst, s), 0);
            free(s);
        }
    }
    return dst;
}

/* id[] as a map back: the original rank of stored id x (NR when none). */
static uint32_t back(const uint32_t *id, uint32_t x)
{
    for (uint32_t r = 0; r < NR; r++)
        if (id[r] == x)
            return r;
    return NR;
}

/* The verdicts of b are those of a, rank r named id[r]. */
static void same_verdicts(const struct argus_result *a, const struct argus_result *b,
                          const uint32_t *id)
{
    assert_int_equal(a->n_anomalies, b->n_anomalies);
    for (size_t i = 0; i < a->n_anomalies; i++) {
        const struct argus_anomaly *x = &a->anomalies[i], *y = &b->anomalies[i];
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->step_first, y->step_first);
        assert_int_equal(x->step_last, y->step_last);
        assert_int_equal(x->phase, y->phase);
        assert_true(fabs(x->slowdown - y->slowdown) < 1e-12);
        assert_int_equal(x->n_ranks, y->n_ranks);
        assert_int_equal(x->n_victims, y->n_victims);
        assert_int_equal(x->n_group, y->n_group);
        for (uint32_t j = 0; j < x->n_ranks; j++)
            assert_int_equal(id[x->ranks[j]], y->ranks[j]);
        for (uint32_t j = 0; j < x->n_victims; j++)
            assert_int_equal(id[x->victims[j]], y->victims[j]);
        for (uint32_t j = 0; j < x->n_group; j++)
            assert_int_equal(id[x->group[j]], y->group[j]);
    }
    assert_int_equal(b->n_ranks, NR);
    for (uint32_t q = 0; q < NR; q++) {
        assert_int_equal(b->ranks[q].rank, id[q]);
        assert_int_equal(b->ranks[q].flags, a->ranks[q].flags);
        assert_true(fabs(b->ranks[q].median_step_ms - a->ranks[q].median_step_ms) < 1e-9);
    }
    assert_int_equal(a->layout.tp, b->layout.tp);
    assert_int_equal(a->layout.pp, b->layout.pp);
    assert_int_equal(a->layout.dp, b->layout.dp);
}

/* Bytes the allocator holds now (mmapped blocks included). */
static size_t heap_bytes(void)
{
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* The job of o with a 1.5x straggler at rank `slow`, diagnosed under ids id[]. */
static void check(struct synth_opts *o, const uint32_t *id, uint32_t slow)
{
    struct argus_result ra, rb;
    struct synth_fault *f = synth_add(o, SY_STRAGGLER, 10, 40, 1.5);
    f->ranks[f->nranks++] = (int)slow;
    struct argus_jobstore *js = synth_run(o, &ra);
    assert_true(ra.n_anomalies >= 1);
    assert_int_equal(ra.anomalies[0].kind, ARGUS_AK_COMPUTE_STRAGGLER);
    assert_int_equal(ra.anomalies[0].n_ranks, 1);
    assert_int_equal(ra.anomalies[0].ranks[0], slow);

    struct argus_jobstore *sp = remap(js, id);
    const size_t before = heap_bytes();
    assert_int_equal(argus_analyze(sp, NULL, &rb), 0);
    const size_t used = heap_bytes() - before; /* the tables stay in the store's scratch */
    if (getenv("ARGUS_TEST_VERBOSE"))
        synth_dump(sp, &rb);
    /* 16 ranks x 60 steps: a few hundred KB; by the largest id it was ~id / 16 times more */
    fprintf(stderr, "  largest id %u: the analysis kept %zu bytes\n", id[NR - 1], used);
    assert_true(used < ((size_t)16 << 20));
    same_verdicts(&ra, &rb, id);
    char want[32];
    snprintf(want, sizeof want, "rank %u ", id[slow]);
    assert_non_null(strstr(rb.anomalies[0].evidence, want));

    /* the context: one slot per rank present, rank_of ascending, an_slot_of its inverse */
    struct an_ctx c;
    struct argus_analysis_opts ao;
    memset(&ao, 0, sizeof ao);
    assert_int_equal(an_ctx_build(&c, sp, &ao), 0);
    assert_int_equal(c.n, NR);
    for (uint32_t q = 0; q < NR; q++) {
        assert_int_equal(c.rank_of[q], id[q]);
        assert_int_equal(an_slot_of(&c, id[q]), q);
        if (back(id, id[q] + 1) == NR)
            assert_int_equal(an_slot_of(&c, id[q] + 1), -1);
    }
    an_ctx_free(&c);
    argus_result_free(&ra);
    argus_result_free(&rb);
    argus_jobstore_free(js);
    argus_jobstore_free(sp);
}

/* Ids 0, 10, ..., 150 with the layout known (coordinates in the summaries). */
static void test_ids_times_ten(void **state)
{
    (void)state;
    uint32_t id[NR];
    for (uint32_t r = 0; r < NR; r++)
        id[r] = 10 * r;
    struct synth_opts o;
    synth_default(&o, 71);
    check(&o, id, 5);
}

/* The same without coordinates: the classes and groups are inferred over the slots. */
static void test_ids_times_ten_no_layout(void **state)
{
    (void)state;
    uint32_t id[NR];
    for (uint32_t r = 0; r < NR; r++)
        id[r] = 10 * r;
    struct synth_opts o;
    synth_default(&o, 72);
    o.no_coords = 1;
    check(&o, id, 6);
}

/* Ranks 0..14 and 60000: the straggler is the far one, named by its id. */
static void test_one_far_rank(void **state)
{
    (void)state;
    uint32_t id[NR];
    for (uint32_t r = 0; r < NR; r++)
        id[r] = r < NR - 1 ? r : 60000;
    struct synth_opts o;
    synth_default(&o, 73);
    check(&o, id, NR - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_times_ten),
        cmocka_unit_test(test_ids_times_ten_no_layout),
        cmocka_unit_test(test_one_far_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
