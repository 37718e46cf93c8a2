/* testgen.h — shared helpers for the common/ unit tests: a deterministic PRNG, random
 * step summaries and field-by-field comparison with cmocka assertions. Test-only code;
 * included by the tests that need it (every function is static and may go unused). */
#ifndef ARGUS_TESTS_COMMON_TESTGEN_H
#define ARGUS_TESTS_COMMON_TESTGEN_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/types.h"
#include "common/qsketch.h"

#define TG_UNUSED __attribute__((unused))

/* xorshift64*: deterministic across hosts. */
static TG_UNUSED uint64_t tg_rand(uint64_t *st)
{
    uint64_t x = *st;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *st = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in (0, 1). */
static TG_UNUSED double tg_unif(uint64_t *st)
{
    return ((double)(tg_rand(st) >> 11) + 0.5) / 9007199254740992.0;
}

/* A random sketch: either built from real values or raw random counts over a span. */
static TG_UNUSED void tg_sketch(uint64_t *st, struct argus_qsketch *q)
{
    argus_qsketch_init(q);
    if (tg_rand(st) % 2) {
        int n = (int)(tg_rand(st) % 200);
        for (int i = 0; i < n; i++)
            argus_qsketch_add(q, tg_rand(st) % 5000000);
    } else {
        q->base = (int32_t)(tg_rand(st) % 2000) - 1000;
        q->nbuckets = (uint16_t)(tg_rand(st) % (ARGUS_QSKETCH_BUCKETS + 1));
        q->flags = (uint16_t)(tg_rand(st) % 2);
        q->zeros = (uint32_t)tg_rand(st);
        for (int i = 0; i < q->nbuckets; i++)
            q->counts[i] = (uint32_t)tg_rand(st);
    }
}

/* Fill s with random values; n_kmodes = n (or random when n < 0). */
static TG_UNUSED void tg_summary(uint64_t *st, struct argus_step_summary *s, int n)
{
    memset(s, 0, sizeof *s);
    s->step = tg_rand(st);
    s->rank = (uint32_t)tg_rand(st);
    s->flags = (uint32_t)tg_rand(st);
    s->start_ns = tg_rand(st);
    s->end_ns = tg_rand(st);
    s->clock_offset_ns = (int64_t)tg_rand(st);
    s->coords.tp_size = (uint16_t)tg_rand(st);
    s->coords.pp_size = (uint16_t)tg_rand(st);
    s->coords.dp_size = (uint16_t)tg_rand(st);
    s->coords.ep_size = (uint16_t)tg_rand(st);
    s->coords.tp = (uint16_t)tg_rand(st);
    s->coords.pp = (uint16_t)tg_rand(st);
    s->coords.dp = (uint16_t)tg_rand(st);
    s->coords.ep = (uint16_t)tg_rand(st);
    for (int p = 0; p < ARGUS_PH_COUNT; p++) {
        s->phase_wall_ns[p] = tg_rand(st);
        s->phase_compute_ns[p] = tg_rand(st);
    }
    s->compute_ns = tg_rand(st);
    s->collective_ns = tg_rand(st);
    s->p2p_ns = tg_rand(st);
    s->memcpy_ns = tg_rand(st);
    s->busy_ns = tg_rand(st);
    s->host_gap_ns = tg_rand(st);
    s->kernel_count = tg_rand(st);
    s->dropped = tg_rand(st);
    s->overhead_ns = tg_rand(st);
    s->clock_gpu_ns = tg_rand(st);
    s->clock_real_ns = tg_rand(st);
    s->clock_mono_ns = tg_rand(st);
    s->idle_long_ns = tg_rand(st);
    s->idle_long_end_ns = tg_rand(st);
    s->n_kmodes = n >= 0 ? (uint32_t)n : (uint32_t)(tg_rand(st) % (ARGUS_MAX_KMODES + 1));
    for (uint32_t i = 0; i < s->n_kmodes; i++) {
        struct argus_kmode_stats *k = &s->kmodes[i];
        k->name_hash = tg_rand(st);
        k->mode = (uint8_t)tg_rand(st);
        k->kclass = (uint8_t)(tg_rand(st) % ARGUS_KC_COUNT);
        k->phase = (uint8_t)(tg_rand(st) % ARGUS_PH_COUNT);
        k->count = (uint32_t)tg_rand(st);
        k->sum_ns = tg_rand(st);
        k->min_ns = tg_rand(st);
        k->max_ns = tg_rand(st);
        tg_sketch(st, &k->sketch);
    }
}

static TG_UNUSED void tg_assert_sketch_equal(const struct argus_qsketch *a,
                                             const struct argus_qsketch *b)
{
    assert_int_equal(a->base, b->base);
    assert_int_equal(a->nbuckets, b->nbuckets);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->zeros, b->zeros);
    for (int i = 0; i < ARGUS_QSKETCH_BUCKETS; i++)
        assert_int_equal(a->counts[i], b->counts[i]);
}

/* Field-by-field equality of two summaries (kmodes up to n_kmodes only). */
static TG_UNUSED void tg_assert_summary_equal(const struct argus_step_summary *a,
                                              const struct argus_step_summary *b)
{
    assert_true(a->step == b->step);
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->flags, b->flags);
    assert_true(a->start_ns == b->start_ns);
    assert_true(a->end_ns == b->end_ns);
    assert_true(a->clock_offset_ns == b->clock_offset_ns);
    assert_int_equal(a->coords.tp_size, b->coords.tp_size);
    assert_int_equal(a->coords.pp_size, b->coords.pp_size);
    assert_int_equal(a->coords.dp_size, b->coords.dp_size);
    assert_int_equal(a->coords.ep_size, b->coords.ep_size);
    assert_int_equal(a->coords.tp, b->coords.tp);
    assert_int_equal(a->coords.pp, b->coords.pp);
    assert_int_equal(a->coords.dp, b->coords.dp);
    assert_int_equal(a->coords.ep, b->coords.ep);
    for (int p = 0; p < ARGUS_PH_COUNT; p++) {
        assert_true(a->phase_wall_ns[p] == b->phase_wall_ns[p]);
        assert_true(a->phase_compute_ns[p] == b->phase_compute_ns[p]);
    }
    assert_true(a->compute_ns == b->compute_ns);
    assert_true(a->collective_ns == b->collective_ns);
    assert_true(a->p2p_ns == b->p2p_ns);
    assert_true(a->memcpy_ns == b->memcpy_ns);
    assert_true(a->busy_ns == b->busy_ns);
    assert_true(a->host_gap_ns == b->host_gap_ns);
    assert_true(a->kernel_count == b->kernel_count);
    assert_true(a->dropped == b->dropped);
    assert_true(a->overhead_ns == b->overhead_ns);
    assert_true(a->clock_gpu_ns == b->clock_gpu_ns);
    assert_true(a->clock_real_ns == b->clock_real_ns);
    assert_true(a->clock_mono_ns == b->clock_mono_ns);
    assert_true(a->idle_long_ns == b->idle_long_ns);
    assert_true(a->idle_long_end_ns == b->idle_long_end_ns);
    assert_int_equal(a->n_kmodes, b->n_kmodes);
    for (uint32_t i = 0; i < a->n_kmodes; i++) {
        const struct argus_kmode_stats *x = &a->kmodes[i], *y = &b->kmodes[i];
        assert_true(x->name_hash == y->name_hash);
        assert_int_equal(x->mode, y->mode);
        assert_int_equal(x->kclass, y->kclass);
        assert_int_equal(x->phase, y->phase);
        assert_int_equal(x->count, y->count);
        assert_true(x->sum_ns == y->sum_ns);
        assert_true(x->min_ns == y->min_ns);
        assert_true(x->max_ns == y->max_ns);
        assert_true(x->last_end_ns == y->last_end_ns);
        tg_assert_sketch_equal(&x->sketch, &y->sketch);
    }
}

#endif /* ARGUS_TESTS_COMMON_TESTGEN_H */
