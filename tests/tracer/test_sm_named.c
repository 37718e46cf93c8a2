/* test_sm_named.c — cmocka units for argus_summarizer_kernel_named (tracer/summarizer.c),
 * the entry point that classes a kernel by its name: the class it returns and files the
 * kernel under equals argus_kclass_from_name's for the names the tests use (the realistic
 * step's, NCCL collectives and p2p, compute), on the fast path and the slow one, for a
 * NULL name, a name longer than ARGUS_NAME_MAX, names beyond max_names ("[other]"), a
 * pointer first seen untrusted (through argus_summarizer_kernel) with the same or with
 * rewritten text, and a pointer first filed by the _static entry point with another class;
 * and the collector (tracer/collect.c) files kernels by name and memcpy/memset by kind,
 * in the summary and in the raw ring, with and without a summariser.
 */
#include "tests/tracer/sm_testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/kclass.h"
#include "tests/common/realistic_step.h"
#include "tracer/act.h"
#include "tracer/collect.h"
#include "tracer/ring.h"

/* The class totals a summary holds, by class. */
static uint64_t total_of(const struct argus_step_summary *s, int kclass)
{
    switch (kclass) {
    case ARGUS_KC_COMPUTE: return s->compute_ns;
    case ARGUS_KC_COLLECTIVE: return s->collective_ns;
    case ARGUS_KC_P2P: return s->p2p_ns;
    default: return s->memcpy_ns;
    }
}

/* Files n kernels of name (duration d) from *t on through the named entry point and
 * checks each returned class; adds the time to want[class]. */
static void feed(struct argus_summarizer *sm, const char *name, int n, uint64_t d, uint64_t *t,
                 uint64_t want[ARGUS_KC_COUNT])
{
    int kc = argus_kclass_from_name(name);
    for (int i = 0; i < n; i++, *t += d + 10) {
        assert_int_equal(argus_summarizer_kernel_named(sm, name, *t, *t + d, 0, 0), kc);
        want[kc] += d;
    }
}

static void check_totals(const struct sink *k, const uint64_t want[ARGUS_KC_COUNT])
{
    for (int c = 0; c <= ARGUS_KC_P2P; c++)
        assert_int_equal(total_of(&k->last, c), want[c]);
}

static void test_realistic_names(void **state)
{
    static char names[RS_NAMES][128];
    static const char *extra[] = {"ncclDevKernel_SendRecv", "ncclKernel_AllGather_RING_LL",
                                  "NCCLkernel_Send", "rcclGenericKernel_Recv",
                                  "void at::native::gemm<float>", "[memcpy HtoD]"};
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1 << 16, 1024);
    (void)state;

    rs_names(names);
    for (uint64_t s = 1; s <= 3; s++) {
        uint64_t want[ARGUS_KC_COUNT] = {0}, t = B * s;
        argus_summarizer_step_begin(sm, s, B * s);
        for (int r = 0; r < 3; r++) { /* the first kernel of a name in a step is slow */
            for (int i = 0; i < RS_NAMES; i++)
                feed(sm, names[i], 2, 100 + (uint64_t)i, &t, want);
            for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
                feed(sm, extra[i], 3, 50, &t, want);
        }
        argus_summarizer_step_end(sm, s, t + 1000);
        check_totals(&k, want);
        for (int i = 0; i < RS_NAMES; i++) {
            const struct argus_kmode_stats *m = find(&k.last, names[i], 0);
            assert_non_null(m);
            assert_int_equal(m->kclass, argus_kclass_from_name(names[i]));
        }
        for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
            assert_int_equal(find(&k.last, extra[i], 0)->kclass,
                             argus_kclass_from_name(extra[i]));
    }
    argus_summarizer_free(sm);
}

static void test_unnamed_long_and_other(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1024, 4);
    char *lng = malloc(ARGUS_NAME_MAX + 64);
    static const char *more[] = {"gemm_a", "gemm_b", "ncclDevKernel_AllReduce",
                                 "ncclDevKernel_SendRecv", "ncclKernel_Reduce_beyond"};
    (void)state;

    assert_non_null(lng);
    memset(lng, 'x', ARGUS_NAME_MAX + 32); /* "nccl" only past the kept prefix */
    memcpy(lng + ARGUS_NAME_MAX + 8, "nccl", 4);
    lng[ARGUS_NAME_MAX + 32] = '\0';
    assert_int_equal(argus_kclass_from_name(lng), ARGUS_KC_COLLECTIVE);
    /* without a summariser, and outside a step: still the name's class */
    assert_int_equal(argus_summarizer_kernel_named(NULL, more[3], 1, 2, 0, 0), ARGUS_KC_P2P);
    assert_int_equal(argus_summarizer_kernel_named(sm, more[2], 1, 2, 0, 0),
                     ARGUS_KC_COLLECTIVE);
    for (uint64_t s = 1; s <= 2; s++) {
        uint64_t want[ARGUS_KC_COUNT] = {0}, t = B * s;
        argus_summarizer_step_begin(sm, s, B * s);
        for (int r = 0; r < 3; r++) {
            for (int i = 0; i < 3; i++, t += 100) {
                assert_int_equal(argus_summarizer_kernel_named(sm, NULL, t, t + 40, 0, 0),
                                 ARGUS_KC_COMPUTE);
                want[ARGUS_KC_COMPUTE] += 40;
            }
            feed(sm, lng, 2, 70, &t, want);
            for (size_t i = 0; i < sizeof more / sizeof *more; i++) /* the last ones fold */
                feed(sm, more[i], 2, 30 + 5 * (uint64_t)i, &t, want);
        }
        argus_summarizer_step_end(sm, s, t + 1000);
        check_totals(&k, want);
        assert_int_equal(find(&k.last, "[unnamed]", 0)->kclass, ARGUS_KC_COMPUTE);
    }
    assert_true(k.n_other > 0); /* names beyond max_names folded */
    free(lng);
    argus_summarizer_free(sm);
}

static void test_untrusted_and_static_first(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1024, 64);
    char same[40], moved[40], back[40];
    static const char lit[] = "ncclDevKernel_AllGather";
    uint64_t want[ARGUS_KC_COUNT] = {0}, t = B;
    (void)state;

    snprintf(same, sizeof same, "%s", "ncclDevKernel_ReduceScatter");
    snprintf(moved, sizeof moved, "%s", "ncclDevKernel_AllReduce");
    snprintf(back, sizeof back, "%s", "gemm_small");
    argus_summarizer_step_begin(sm, 1, B);
    /* Untrusted first, with a class the name does not have: the named calls still get
     * the name's (the entry becomes trusted and takes its class from the text). */
    for (int i = 0; i < 2; i++, t += 100) {
        argus_summarizer_kernel(sm, same, t, t + 20, 0, 0, ARGUS_KC_COMPUTE);
        argus_summarizer_kernel(sm, moved, t + 30, t + 50, 0, 0, ARGUS_KC_COLLECTIVE);
        argus_summarizer_kernel(sm, back, t + 60, t + 80, 0, 0, ARGUS_KC_COMPUTE);
        want[ARGUS_KC_COMPUTE] += 20 + 20;
        want[ARGUS_KC_COLLECTIVE] += 20;
    }
    /* The buffers rewritten (another class each), then declared immutable. */
    snprintf(moved, sizeof moved, "%s", "cutlass_gemm_tile");
    snprintf(back, sizeof back, "%s", "ncclDevKernel_SendRecv");
    /* A literal filed by the _static entry point with the memcpy class first. */
    argus_summarizer_kernel_static(sm, lit, t, t + 10, 0, 0, ARGUS_KC_MEMCPY);
    argus_summarizer_kernel_static(sm, lit, t + 20, t + 30, 0, 0, ARGUS_KC_MEMCPY);
    t += 100;
    for (int r = 0; r < 4; r++) {
        feed(sm, same, 2, 25, &t, want);
        feed(sm, moved, 2, 35, &t, want);
        feed(sm, back, 2, 45, &t, want);
        feed(sm, lit, 2, 55, &t, want);
    }
    argus_summarizer_step_end(sm, 1, t + 1000);
    /* lit's memcpy time counts as memcpy; every named call under the name's class */
    assert_int_equal(k.last.memcpy_ns, 20);
    check_totals(&k, want);
    argus_summarizer_free(sm);
}

/* ---- the collector ------------------------------------------------------------------ */

/* A fake source: each buffer is an array of acts, walked as CUPTI's would be. */
static size_t walk_acts(uint8_t *buf, size_t valid, struct argus_act_stats *st, argus_act_fn fn,
                        void *ctx)
{
    const struct argus_act *a = (const struct argus_act *)(void *)buf;
    size_t n = valid / sizeof *a;
    for (size_t i = 0; i < n; i++) {
        st->records++;
        st->delivered++;
        fn(ctx, &a[i]);
    }
    return n;
}

static struct argus_summarizer *coll_sm;
static struct argus_summarizer *acquire_sm(void) { return coll_sm; }

static const char *const coll_names[] = {"gemm_fwd", "ncclDevKernel_AllReduce_Sum",
                                         "ncclDevKernel_SendRecv", "[memcpy HtoD]",
                                         "[memset]"};
static const uint8_t coll_kind[] = {ARGUS_ACT_KERNEL, ARGUS_ACT_KERNEL, ARGUS_ACT_KERNEL,
                                    ARGUS_ACT_MEMCPY, ARGUS_ACT_MEMSET};
static const char *const coll_cat[] = {"compute", "collective", "p2p", "memcpy", "memset"};

/* Three marked steps of the five activities, through the collector; the ring dumped
 * into dump (NUL-terminated). */
static void run_collector(struct argus_summarizer *sm, struct sink *k, char *dump, size_t cap)
{
    struct argus_ring *ring = NULL;
    struct argus_collect *c = NULL;
    struct argus_collect_opts o = {.buf_size = 4096, .n_bufs = 4, .max_stage = 256,
                                   .walk = walk_acts, .acquire = acquire_sm};
    uint64_t t = B;

    coll_sm = sm;
    assert_int_equal(argus_ring_create(1000, 8, &ring), 0);
    o.ring = ring;
    assert_int_equal(argus_collect_create(&o, &c), 0);
    for (uint64_t s = 1; s <= 3; s++) {
        uint8_t *buf;
        size_t sz, n = 0;
        assert_int_equal(argus_collect_buf_get(c, &buf, &sz), 0);
        struct argus_act *a = (struct argus_act *)(void *)buf;
        argus_collect_mark(c, ARGUS_MARK_STEP_BEGIN, s, t, 0);
        for (int r = 0; r < 2; r++)
            for (size_t i = 0; i < 5; i++, n++, t += 100) {
                memset(&a[n], 0, sizeof a[n]);
                a[n].kind = coll_kind[i];
                a[n].name = coll_names[i];
                a[n].start_ns = t + 10;
                a[n].end_ns = t + 10 + 10 * (i + 1);
            }
        argus_collect_buf_done(c, buf, n * sizeof *a);
        argus_collect_mark(c, ARGUS_MARK_STEP_END, s, t + 1000, 0);
        t += 2000;
        argus_collect_pump(c, 0);
    }
    argus_collect_stop(c);
    argus_collect_free(c);
    if (sm)
        assert_true(k->n_summaries >= 2);
    FILE *f = fmemopen(dump, cap, "w");
    assert_non_null(f);
    assert_int_equal(argus_ring_dump_events(ring, f, 0, NULL, 0, 10, 0, 0, 0, NULL), 0);
    fputc('\0', f);
    fclose(f);
    argus_ring_free(ring);
}

static void check_ring_classes(const char *dump)
{
    for (size_t i = 0; i < 5; i++) {
        char want[160];
        snprintf(want, sizeof want, "\"name\":\"%s\",\"cat\":\"%s\"", coll_names[i],
                 coll_cat[i]);
        assert_non_null(strstr(dump, want));
    }
}

static void test_collector_classes(void **state)
{
    static char dump[1 << 16];
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1024, 64);
    (void)state;

    run_collector(sm, &k, dump, sizeof dump);
    check_ring_classes(dump);
    /* per step: two of each; durations 10, 20, 30 (kernels), 40 + 50 (memcpy, memset) */
    assert_int_equal(k.last.compute_ns, 20);
    assert_int_equal(k.last.collective_ns, 40);
    assert_int_equal(k.last.p2p_ns, 60);
    assert_int_equal(k.last.memcpy_ns, 180);
    assert_int_equal(find(&k.last, "ncclDevKernel_SendRecv", 0)->kclass, ARGUS_KC_P2P);
    assert_int_equal(find(&k.last, "[memset]", 0)->kclass, ARGUS_KC_MEMSET);
    argus_summarizer_free(sm);
    /* no summariser: the ring still gets each kernel's class */
    run_collector(NULL, &k, dump, sizeof dump);
    check_ring_classes(dump);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_realistic_names),
        cmocka_unit_test(test_unnamed_long_and_other),
        cmocka_unit_test(test_untrusted_and_static_first),
        cmocka_unit_test(test_collector_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
