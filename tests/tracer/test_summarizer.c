/* test_summarizer.c — cmocka units for tracer/summarizer.c and tracer/modes.c: hand-computed
 * step statistics, mode splitting (including the T8 per-mode vs mean case), budgets
 * (dropped events, folding into "[other]") and step/phase edge cases. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/types.h"
#include "common/wire.h"
#include "tracer/modes.h"
#include "tracer/summarizer.h"

#define B 1000000000ull /* step base time */
#define US 1000ull

struct sink {
    struct argus_step_summary last;
    int n_summaries;
    int n_names;
    int n_other;
    uint64_t hashes[1024];
};

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    struct sink *k = ctx;
    k->last = *s;
    k->n_summaries++;
}

static void on_name(void *ctx, uint64_t hash, const char *name)
{
    struct sink *k = ctx;
    assert_int_equal(hash, argus_name_hash(name));
    for (int i = 0; i < k->n_names && i < 1024; i++)
        assert_true(k->hashes[i] != hash); /* once per name */
    if (k->n_names < 1024)
        k->hashes[k->n_names] = hash;
    k->n_names++;
    if (strcmp(name, "[other]") == 0)
        k->n_other++;
}

static struct argus_summarizer *make(struct sink *k, size_t max_events, size_t max_names)
{
    struct argus_summarizer_opts o = {
        .rank = 7, .max_events = max_events, .max_names = max_names,
        .on_summary = on_summary, .on_name = on_name, .ctx = k,
    };
    struct argus_summarizer *sm = NULL;
    memset(k, 0, sizeof *k);
    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    assert_non_null(sm);
    return sm;
}

static const struct argus_kmode_stats *find(const struct argus_step_summary *s, const char *name,
                                            unsigned mode)
{
    uint64_t h = argus_name_hash(name);
    for (uint32_t i = 0; i < s->n_kmodes; i++)
        if (s->kmodes[i].name_hash == h && s->kmodes[i].mode == mode)
            return &s->kmodes[i];
    return NULL;
}

static void check_sorted(const struct argus_step_summary *s)
{
    for (uint32_t i = 1; i < s->n_kmodes; i++) {
        const struct argus_kmode_stats *a = &s->kmodes[i - 1], *b = &s->kmodes[i];
        assert_true(a->name_hash < b->name_hash ||
                    (a->name_hash == b->name_hash && a->mode < b->mode));
    }
}

/* One step on two streams with nested ranges; every number worked out by hand. */
static void run_hand_step(struct argus_summarizer *sm, uint64_t step, uint64_t b)
{
    argus_summarizer_step_begin(sm, step, b);
    argus_summarizer_phase_push(sm, "forward", b + 100);
    argus_summarizer_kernel(sm, "gemm", b + 150, b + 450, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "gemm", b + 400, b + 900, 0, 1, ARGUS_KC_COMPUTE);
    argus_summarizer_phase_pop(sm, b + 1100);
    argus_summarizer_phase_push(sm, "backward", b + 1200);
    argus_summarizer_phase_push(sm, "misc", b + 1500);     /* OTHER, nested */
    argus_summarizer_phase_pop(sm, b + 1700);
    argus_summarizer_phase_pop(sm, b + 2200);
    argus_summarizer_phase_push(sm, "optimizer", b + 2300);
    argus_summarizer_phase_pop(sm, b + 2500);
    /* Reported late (as CUPTI would): the phase comes from the kernel's start time. */
    argus_summarizer_kernel(sm, "allreduce", b + 1250, b + 1600, 0, 1, ARGUS_KC_COLLECTIVE);
    argus_summarizer_kernel(sm, "gemm", b + 1300, b + 1550, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "elementwise", b + 1600, b + 1650, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "send", b + 2000, b + 2100, 0, 1, ARGUS_KC_P2P);
    argus_summarizer_kernel(sm, "adam", b + 2350, b + 2450, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "copy", b + 2600, b + 2700, 0, 0, ARGUS_KC_MEMCPY);
    argus_summarizer_kernel(sm, "zero", b + 2650, b + 2750, 0, 1, ARGUS_KC_MEMSET);
    argus_summarizer_step_end(sm, step, b + 3000);
}

static void test_hand_computed(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1024, 64);
    struct argus_coords c = {.tp_size = 2, .pp_size = 2, .dp_size = 4, .tp = 1, .dp = 3};
    (void)state;

    argus_summarizer_set_coords(sm, &c);
    argus_summarizer_set_clock_offset(sm, -42);
    run_hand_step(sm, 5, B);
    assert_int_equal(k.n_summaries, 1);
    const struct argus_step_summary *s = &k.last;
    assert_int_equal(s->step, 5);
    assert_int_equal(s->rank, 7);
    assert_int_equal(s->flags, 0);
    assert_int_equal(s->start_ns, B);
    assert_int_equal(s->end_ns, B + 3000);
    assert_int_equal(s->clock_offset_ns, -42);
    assert_memory_equal(&s->coords, &c, sizeof c);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 1000);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_BACKWARD], 800); /* 300 + 500, not nested */
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OTHER], 200);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OPTIMIZER], 200);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_COMM], 450);
    assert_int_equal(s->compute_ns, 1200);
    assert_int_equal(s->collective_ns, 350);
    assert_int_equal(s->p2p_ns, 100);
    assert_int_equal(s->memcpy_ns, 200);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_FORWARD], 800);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_BACKWARD], 250);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OTHER], 50);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OPTIMIZER], 100);
    /* [150,900] + [1250,1650] + [2000,2100] + [2350,2450] + [2600,2750] */
    assert_int_equal(s->busy_ns, 750 + 400 + 100 + 100 + 150);
    assert_int_equal(s->host_gap_ns, 3000 - 1500);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_HOST], 1500);
    assert_int_equal(s->kernel_count, 9);
    assert_int_equal(s->dropped, 0);

    /* gemm: 250, 300 | 500 (500/300 >= 1.5) */
    assert_int_equal(s->n_kmodes, 8);
    check_sorted(s);
    const struct argus_kmode_stats *m = find(s, "gemm", 0);
    assert_non_null(m);
    assert_int_equal(m->count, 2);
    assert_int_equal(m->sum_ns, 550);
    assert_int_equal(m->min_ns, 250);
    assert_int_equal(m->max_ns, 300);
    assert_int_equal(m->kclass, ARGUS_KC_COMPUTE);
    assert_int_equal(m->phase, ARGUS_PH_FORWARD); /* 300 ns forward vs 250 backward */
    assert_int_equal(argus_qsketch_count(&m->sketch), 2);
    m = find(s, "gemm", 1);
    assert_non_null(m);
    assert_int_equal(m->count, 1);
    assert_int_equal(m->sum_ns, 500);
    assert_int_equal(m->phase, ARGUS_PH_FORWARD);
    m = find(s, "allreduce", 0);
    assert_non_null(m);
    assert_int_equal(m->kclass, ARGUS_KC_COLLECTIVE);
    assert_int_equal(m->phase, ARGUS_PH_BACKWARD);
    assert_int_equal(m->sum_ns, 350);
    assert_int_equal(find(s, "elementwise", 0)->phase, ARGUS_PH_OTHER);
    assert_int_equal(find(s, "adam", 0)->phase, ARGUS_PH_OPTIMIZER);
    assert_int_equal(find(s, "send", 0)->kclass, ARGUS_KC_P2P);
    assert_int_equal(find(s, "copy", 0)->phase, ARGUS_PH_OTHER);
    assert_int_equal(find(s, "zero", 0)->kclass, ARGUS_KC_MEMSET);
    assert_int_equal(k.n_names, 7);

    /* A second identical step gives the same numbers and no new names. */
    run_hand_step(sm, 6, B + 10000);
    assert_int_equal(k.n_summaries, 2);
    assert_int_equal(k.last.busy_ns, 1500);
    assert_int_equal(k.last.n_kmodes, 8);
    assert_int_equal(k.n_names, 7);
    assert_int_equal(argus_summarizer_kernels(sm), 18);
    assert_int_equal(argus_summarizer_dropped(sm), 0);
    argus_summarizer_free(sm);
}

/* Deterministic noise in [-5%, +5%]. */
static uint64_t noisy(uint64_t base, uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    double f = ((double)(*seed >> 8) / (double)(1u << 24)) * 0.10 - 0.05;
    return (uint64_t)((double)base * (1.0 + f));
}

/* 40 x 50 us, 10 x 200 us (x slow), 20 x 800 us, interleaved. Counts chosen so that a 20%
 * shift of the 200 us mode moves the all-modes mean by 2%: 40*10 / (2000+2000+16000). */
static void multimodal_step(struct argus_summarizer *sm, double slow)
{
    uint32_t s50 = 1, s200 = 2, s800 = 3;
    uint64_t t = B + 1000;

    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < 40; i++) {
        uint64_t d = noisy(50 * US, &s50);
        argus_summarizer_kernel(sm, "gemm_tn", t, t + d, 0, 0, ARGUS_KC_COMPUTE);
        t += d + 10;
        if (i % 4 == 0) {
            d = (uint64_t)((double)noisy(200 * US, &s200) * slow);
            argus_summarizer_kernel(sm, "gemm_tn", t, t + d, 0, 0, ARGUS_KC_COMPUTE);
            t += d + 10;
        }
        if (i % 2 == 0) {
            d = noisy(800 * US, &s800);
            argus_summarizer_kernel(sm, "gemm_tn", t, t + d, 0, 0, ARGUS_KC_COMPUTE);
            t += d + 10;
        }
    }
    argus_summarizer_step_end(sm, 1, t + 1000);
}

static void test_multimodal_t8(void **state)
{
    struct sink ka, kb;
    struct argus_summarizer *a = make(&ka, 4096, 64);
    struct argus_summarizer *b = make(&kb, 4096, 64);
    (void)state;

    multimodal_step(a, 1.0);
    multimodal_step(b, 1.2);
    const struct argus_step_summary *sa = &ka.last, *sb = &kb.last;
    assert_int_equal(sa->n_kmodes, 3);
    assert_int_equal(sb->n_kmodes, 3);
    const unsigned want[3] = {40, 10, 20};
    uint64_t suma = 0, sumb = 0, na = 0, nb = 0;
    for (unsigned m = 0; m < 3; m++) {
        const struct argus_kmode_stats *x = find(sa, "gemm_tn", m), *y = find(sb, "gemm_tn", m);
        assert_non_null(x);
        assert_non_null(y);
        assert_int_equal(x->count, want[m]);
        assert_int_equal(y->count, want[m]);
        suma += x->sum_ns;
        sumb += y->sum_ns;
        na += x->count;
        nb += y->count;
        double pa = argus_qsketch_quantile(&x->sketch, 0.5);
        double pb = argus_qsketch_quantile(&y->sketch, 0.5);
        double r = pb / pa;
        if (m == 1) {
            assert_true(r > 1.15 && r < 1.25); /* the shifted mode stands out */
        } else {
            assert_true(r > 0.999 && r < 1.001); /* the others are untouched */
        }
    }
    double mean_ratio = ((double)sumb / (double)nb) / ((double)suma / (double)na);
    assert_true(mean_ratio > 1.01 && mean_ratio < 1.03); /* the pooled mean barely moves */
    argus_summarizer_free(a);
    argus_summarizer_free(b);
}

static void test_dropped_beyond_max_events(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 10, 64);
    (void)state;

    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < 15; i++)
        argus_summarizer_kernel(sm, "k", B + 100 * (uint64_t)i, B + 100 * (uint64_t)i + 50, 0, 0,
                                ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 1, B + 2000);
    assert_int_equal(k.last.dropped, 5);
    assert_true(k.last.flags & ARGUS_SF_PARTIAL);
    assert_int_equal(k.last.kernel_count, 15);
    assert_int_equal(k.last.compute_ns, 15 * 50); /* totals see every kernel */
    assert_int_equal(k.last.busy_ns, 10 * 50);    /* the union only the stored ones */
    assert_int_equal(k.last.n_kmodes, 1);
    assert_int_equal(k.last.kmodes[0].count, 10);
    assert_int_equal(argus_summarizer_dropped(sm), 5);
    assert_int_equal(argus_summarizer_kernels(sm), 15);

    /* The next step starts clean. */
    argus_summarizer_step_begin(sm, 2, B + 3000);
    argus_summarizer_kernel(sm, "k", B + 3100, B + 3150, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 2, B + 4000);
    assert_int_equal(k.last.dropped, 0);
    assert_int_equal(k.last.flags, 0);
    argus_summarizer_free(sm);
}

static void test_fold_into_other(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 4096, 1024);
    char name[32];
    uint64_t total = 0, t = B;
    (void)state;

    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < 300; i++) { /* 300 compute kernels, kernel i lasts 1000 + i ns */
        snprintf(name, sizeof name, "kern_%03d", i);
        argus_summarizer_kernel(sm, name, t, t + 1000 + (uint64_t)i, 0, 0, ARGUS_KC_COMPUTE);
        total += 1000 + (uint64_t)i;
        t += 2000;
    }
    /* Two tiny collectives: kept whatever their size. */
    argus_summarizer_kernel(sm, "nccl_a", t, t + 1, 0, 1, ARGUS_KC_COLLECTIVE);
    argus_summarizer_kernel(sm, "nccl_b", t, t + 2, 0, 1, ARGUS_KC_COLLECTIVE);
    argus_summarizer_step_end(sm, 1, t + 10);

    const struct argus_step_summary *s = &k.last;
    assert_int_equal(s->n_kmodes, ARGUS_MAX_KMODES);
    assert_true(s->flags & ARGUS_SF_PARTIAL);
    check_sorted(s);
    assert_non_null(find(s, "nccl_a", 0));
    assert_non_null(find(s, "nccl_b", 0));
    /* 253 compute records kept: the largest (kern_047 .. kern_299); 47 folded. */
    assert_non_null(find(s, "kern_299", 0));
    assert_non_null(find(s, "kern_047", 0));
    assert_null(find(s, "kern_046", 0));
    const struct argus_kmode_stats *o = find(s, "[other]", ARGUS_KC_COMPUTE);
    assert_non_null(o);
    assert_int_equal(o->kclass, ARGUS_KC_COMPUTE);
    assert_int_equal(o->count, 47);
    assert_int_equal(o->min_ns, 1000);
    assert_int_equal(o->max_ns, 1046);
    assert_int_equal(argus_qsketch_count(&o->sketch), 47);
    uint64_t sum = 0, cnt = 0;
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        if (s->kmodes[i].kclass == ARGUS_KC_COMPUTE) {
            sum += s->kmodes[i].sum_ns;
            cnt += s->kmodes[i].count;
        }
    }
    assert_int_equal(sum, total);
    assert_int_equal(cnt, 300);
    assert_int_equal(k.n_other, 1);

    /* Again: "[other]" is named only once. */
    argus_summarizer_step_begin(sm, 2, t + 100);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "kern_%03d", i);
        argus_summarizer_kernel(sm, name, t + 200, t + 300, 0, 0, ARGUS_KC_COMPUTE);
    }
    argus_summarizer_step_end(sm, 2, t + 1000);
    assert_int_equal(k.last.n_kmodes, ARGUS_MAX_KMODES);
    assert_int_equal(k.n_other, 1);
    assert_int_equal(k.n_names, 303);
    argus_summarizer_free(sm);
}

static void test_name_table_full(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 3);
    (void)state;

    argus_summarizer_step_begin(sm, 1, B);
    argus_summarizer_kernel(sm, "a", B + 10, B + 20, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "b", B + 10, B + 30, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "c", B + 10, B + 40, 0, 0, ARGUS_KC_COLLECTIVE);
    argus_summarizer_kernel(sm, "d", B + 10, B + 50, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "e", B + 10, B + 60, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "f", B + 10, B + 70, 0, 0, ARGUS_KC_MEMCPY);
    argus_summarizer_step_end(sm, 1, B + 100);
    const struct argus_step_summary *s = &k.last;
    assert_true(s->flags & ARGUS_SF_PARTIAL);
    assert_int_equal(s->n_kmodes, 5);
    const struct argus_kmode_stats *o = find(s, "[other]", ARGUS_KC_COMPUTE);
    assert_non_null(o);
    assert_int_equal(o->count, 2);
    assert_int_equal(o->sum_ns, 40 + 50);
    o = find(s, "[other]", ARGUS_KC_MEMCPY);
    assert_non_null(o);
    assert_int_equal(o->count, 1);
    assert_int_equal(k.n_names, 4); /* a, b, c, [other] */
    argus_summarizer_free(sm);
}

static void test_outside_step_dropped(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    (void)state;

    argus_summarizer_kernel(sm, "early", B, B + 5, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 1, B + 10); /* no begin: ignored */
    assert_int_equal(k.n_summaries, 0);
    argus_summarizer_step_begin(sm, 1, B + 100);
    argus_summarizer_kernel(sm, "in", B + 110, B + 120, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 2, B + 150); /* wrong id: ignored */
    argus_summarizer_step_end(sm, 1, B + 200);
    argus_summarizer_kernel(sm, "late", B + 300, B + 305, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_begin(sm, 1, B + 400); /* ids must increase: ignored */
    argus_summarizer_kernel(sm, "late", B + 410, B + 415, 0, 0, ARGUS_KC_COMPUTE);
    assert_int_equal(k.n_summaries, 1);
    assert_int_equal(k.last.kernel_count, 1);
    assert_int_equal(k.last.dropped, 0);
    assert_int_equal(k.last.flags, 0);
    assert_int_equal(argus_summarizer_dropped(sm), 3);
    assert_int_equal(argus_summarizer_kernels(sm), 4);
    assert_int_equal(k.n_names, 1);

    /* A begin while a step is open closes it there. */
    argus_summarizer_step_begin(sm, 2, B + 1000);
    argus_summarizer_kernel(sm, "in", B + 1100, B + 1300, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_begin(sm, 3, B + 2000);
    assert_int_equal(k.n_summaries, 2);
    assert_int_equal(k.last.step, 2);
    assert_int_equal(k.last.end_ns, B + 2000);
    assert_int_equal(k.last.busy_ns, 200);
    argus_summarizer_step_end(sm, 3, B + 2500);
    assert_int_equal(k.n_summaries, 3);
    assert_int_equal(k.last.kernel_count, 0);
    assert_int_equal(k.last.host_gap_ns, 500);
    argus_summarizer_free(sm);
}

static void test_phase_edges(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    (void)state;

    /* A range opened before the step counts from the step's begin. */
    argus_summarizer_phase_push(sm, "fwd", B - 500);
    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < 20; i++) /* 5 pushes beyond the depth limit: ignored */
        argus_summarizer_phase_push(sm, i % 2 ? "bwd" : "optimizer", B + 100);
    for (int i = 0; i < 20; i++)
        argus_summarizer_phase_pop(sm, B + 300);
    argus_summarizer_phase_pop(sm, B + 400);
    argus_summarizer_phase_pop(sm, B + 450); /* extra pop: ignored */
    argus_summarizer_kernel(sm, "k", B + 50, B + 60, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "k", B + 150, B + 160, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "k", B + 420, B + 430, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 1, B + 1000);
    const struct argus_step_summary *s = &k.last;
    /* Depth 16 innermost is push #15 (i = 14, "optimizer"). */
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 100 + 100);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OPTIMIZER], 200);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_BACKWARD], 0);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_FORWARD], 10);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OPTIMIZER], 10);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_OTHER], 10);
    assert_int_equal(s->flags, 0);
    argus_summarizer_free(sm);
}

static void test_kernel_clipping(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    (void)state;

    argus_summarizer_step_begin(sm, 1, B + 100);
    argus_summarizer_kernel(sm, "straddle", B, B + 200, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "tail", B + 900, B + 1500, 0, 1, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "backwards", B + 500, B + 400, 0, 1, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, "badclass", B + 500, B + 600, 0, 1, 99);
    argus_summarizer_step_end(sm, 1, B + 1100);
    assert_int_equal(k.last.busy_ns, 100 + 200);
    assert_int_equal(k.last.host_gap_ns, 1000 - 300);
    assert_int_equal(k.last.compute_ns, 200 + 600);
    assert_int_equal(k.last.kernel_count, 3);
    assert_int_equal(find(&k.last, "backwards", 0)->sum_ns, 0);
    assert_int_equal(argus_summarizer_dropped(sm), 1);
    argus_summarizer_free(sm);
}

/* The name cache is keyed by pointer: a reused buffer with new text is a new name; a
 * name longer than ARGUS_NAME_MAX is truncated before hashing and naming. */
static void test_names_reused_buffer_and_long(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    char buf[32], long_name[700];
    (void)state;

    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < 3; i++) {
        strcpy(buf, "alpha");
        argus_summarizer_kernel(sm, buf, B + 10, B + 20, 0, 0, ARGUS_KC_COMPUTE);
        strcpy(buf, "beta");
        argus_summarizer_kernel(sm, buf, B + 10, B + 40, 0, 0, ARGUS_KC_COMPUTE);
        argus_summarizer_kernel(sm, long_name, B + 10, B + 50, 0, 0, ARGUS_KC_COMPUTE);
    }
    argus_summarizer_step_end(sm, 1, B + 100);
    assert_int_equal(k.n_names, 3); /* on_name checks hash == argus_name_hash(name) */
    assert_int_equal(find(&k.last, "alpha", 0)->count, 3);
    assert_int_equal(find(&k.last, "beta", 0)->sum_ns, 90);
    long_name[ARGUS_NAME_MAX] = '\0';
    assert_int_equal(find(&k.last, long_name, 0)->count, 3);
    argus_summarizer_free(sm);
}

static void test_create_args(void **state)
{
    struct argus_summarizer_opts o = {.max_events = 0, .max_names = 4};
    struct argus_summarizer *sm = NULL;
    (void)state;

    assert_int_equal(argus_summarizer_create(&o, &sm), -EINVAL);
    o.max_events = 4;
    o.max_names = 0;
    assert_int_equal(argus_summarizer_create(&o, &sm), -EINVAL);
    assert_int_equal(argus_summarizer_create(NULL, &sm), -EINVAL);
    o.max_names = 4;
    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    /* Calls with NULL do nothing. */
    argus_summarizer_kernel(NULL, "x", 1, 2, 0, 0, 0);
    argus_summarizer_step_end(NULL, 1, 2);
    assert_int_equal(argus_summarizer_dropped(NULL), 0);
    argus_summarizer_free(sm);
    argus_summarizer_free(NULL);
}

static struct argus_sort_pair mk(uint64_t dur)
{
    struct argus_sort_pair p = {argus_dkey(dur, 0), 0};
    return p;
}

static void test_modes_split(void **state)
{
    struct argus_sort_pair v[16] = {{0, 0}};
    size_t b[ARGUS_MODES_MAX + 1];
    (void)state;

    assert_int_equal(argus_modes_split(v, 0, b, NULL), 0);
    v[0] = mk(100);
    assert_int_equal(argus_modes_split(v, 1, b, NULL), 1);
    assert_int_equal(b[0], 0);
    assert_int_equal(b[1], 1);
    /* 149 < 1.5 x 100: no split; 150 = 1.5 x 100: split. */
    v[1] = mk(149);
    assert_int_equal(argus_modes_split(v, 2, b, NULL), 1);
    v[1] = mk(150);
    assert_int_equal(argus_modes_split(v, 2, b, NULL), 2);
    assert_int_equal(b[1], 1);
    /* Six gaps: ratios 2, 10, 3, 1.6, 5, 4 -> keep 10, 5, 4 (split after 2nd, 5th, 6th). */
    const uint64_t d[7] = {1, 2, 20, 60, 96, 480, 1920};
    for (int i = 0; i < 7; i++)
        v[i] = mk(d[i]);
    assert_int_equal(argus_modes_split(v, 7, b, NULL), 4);
    assert_int_equal(b[1], 2);
    assert_int_equal(b[2], 5);
    assert_int_equal(b[3], 6);
    assert_int_equal(b[4], 7);
    /* Zero durations then positive: a split; equal zeros: none. */
    v[0] = mk(0);
    v[1] = mk(0);
    v[2] = mk(5);
    assert_int_equal(argus_modes_split(v, 3, b, NULL), 2);
    assert_int_equal(b[1], 2);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_radix_sort(void **state)
{
    enum { N = 20000 };
    struct argus_sort_pair *a = calloc(N, sizeof *a), *t = calloc(N, sizeof *t);
    uint64_t *ref = calloc(N, sizeof *ref);
    uint64_t x = 88172645463325252ull;
    (void)state;

    assert_non_null(a);
    assert_non_null(t);
    assert_non_null(ref);
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < N; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint64_t k = round == 0 ? x : round == 1 ? x % 1000 : (x % 5) << 40;
            a[i].key = ref[i] = k;
            a[i].val = i;
        }
        argus_sort_pairs(a, t, N);
        qsort(ref, N, sizeof *ref, cmp_u64);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(a[i].key, ref[i]);
            if (i && a[i].key == a[i - 1].key)
                assert_true(a[i].val > a[i - 1].val); /* stable */
        }
    }
    free(a);
    free(t);
    free(ref);
}

/* The fast paths give what the plain ones give: kernels in order (running busy union,
 * the part after the step end taken off) vs shuffled (sorted at the end); names through
 * the _static entry vs the comparing one; bucket runs into the sketch vs one add per
 * duration. */
static void feed_step(struct argus_summarizer *sm, const uint64_t (*ev)[2], const int *perm,
                      int n, int stat, uint64_t end)
{
    static const char *nm[3] = {"gemm_a", "gemm_b", "ncclDevKernel_AllReduce"};

    argus_summarizer_step_begin(sm, 1, B + 500);
    for (int i = 0; i < n; i++) {
        int k = perm[i];
        const char *name = nm[k % 3];
        if (stat)
            argus_summarizer_kernel_static(sm, name, ev[k][0], ev[k][1], 0, 0, k % 3 == 2);
        else
            argus_summarizer_kernel(sm, name, ev[k][0], ev[k][1], 0, 0, k % 3 == 2);
    }
    argus_summarizer_step_end(sm, 1, end);
}

static void test_fast_paths_match(void **state)
{
    enum { N = 3000 };
    static uint64_t ev[N][2];
    static int perm[N], ident[N];
    static struct sink k1, k2;
    uint64_t t = B;
    uint32_t seed = 99;
    (void)state;

    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        uint64_t d = (uint64_t)(i % 3 + 1) * 10 * US + (seed >> 16) % (2 * US);
        ev[i][0] = t;
        ev[i][1] = t + d;
        t += (seed >> 8) % 3 ? d / 2 : d + 3 * US; /* overlaps and gaps */
        perm[i] = ident[i] = i;
    }
    for (int i = N - 1; i > 0; i--) {
        seed = seed * 1103515245u + 12345u;
        int j = (int)((seed >> 8) % (uint32_t)(i + 1)), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (int cut = 0; cut < 2; cut++) {
        uint64_t end = cut ? ev[N / 2][0] + 7 : t + US; /* cut: half the kernels after it */
        struct argus_summarizer *a = make(&k1, N, 16), *b = make(&k2, N, 16);
        feed_step(a, ev, ident, N, 1, end);
        feed_step(b, ev, perm, N, 0, end);
        assert_int_equal(k1.last.busy_ns, k2.last.busy_ns);
        assert_int_equal(k1.last.host_gap_ns, k2.last.host_gap_ns);
        assert_int_equal(k1.last.n_kmodes, k2.last.n_kmodes);
        assert_memory_equal(k1.last.kmodes, k2.last.kmodes,
                            k1.last.n_kmodes * sizeof k1.last.kmodes[0]);
        argus_summarizer_free(a);
        argus_summarizer_free(b);
    }
    /* The sketch of each (kernel, mode) is the one of adding its durations one by one. */
    for (uint32_t m = 0; m < k1.last.n_kmodes; m++) {
        const struct argus_kmode_stats *km = &k1.last.kmodes[m];
        struct argus_qsketch want;
        argus_qsketch_init(&want);
        for (int i = 0; i < N; i++) {
            uint64_t d = ev[i][1] - ev[i][0];
            if (argus_name_hash(i % 3 == 0 ? "gemm_a" : i % 3 == 1 ? "gemm_b"
                                           : "ncclDevKernel_AllReduce") == km->name_hash &&
                d >= km->min_ns && d <= km->max_ns)
                argus_qsketch_add(&want, d);
        }
        assert_memory_equal(&want, &km->sketch, sizeof want);
    }
}

/* A pointer first seen through the comparing entry with other text is re-checked once by
 * the _static entry, not trusted blindly. */
static void test_static_names_after_reuse(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 64, 16);
    char buf[32] = "first_kernel";
    (void)state;

    argus_summarizer_step_begin(sm, 1, B);
    argus_summarizer_kernel(sm, buf, B, B + 10, 0, 0, 0);
    strcpy(buf, "second_kernel");
    argus_summarizer_kernel_static(sm, buf, B + 10, B + 30, 0, 0, 0);
    argus_summarizer_kernel_static(sm, buf, B + 30, B + 50, 0, 0, 0);
    argus_summarizer_step_end(sm, 1, B + 100);
    assert_int_equal(k.last.n_kmodes, 2);
    for (unsigned i = 0; i < 2; i++) {
        const struct argus_kmode_stats *km = &k.last.kmodes[i];
        int second = km->name_hash == argus_name_hash("second_kernel");
        assert_true(second || km->name_hash == argus_name_hash("first_kernel"));
        assert_int_equal(km->count, second ? 2 : 1);
    }
    argus_summarizer_free(sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_multimodal_t8),
        cmocka_unit_test(test_dropped_beyond_max_events),
        cmocka_unit_test(test_fold_into_other),
        cmocka_unit_test(test_name_table_full),
        cmocka_unit_test(test_outside_step_dropped),
        cmocka_unit_test(test_phase_edges),
        cmocka_unit_test(test_kernel_clipping),
        cmocka_unit_test(test_names_reused_buffer_and_long),
        cmocka_unit_test(test_create_args),
        cmocka_unit_test(test_modes_split),
        cmocka_unit_test(test_radix_sort),
        cmocka_unit_test(test_fast_paths_match),
        cmocka_unit_test(test_static_names_after_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
