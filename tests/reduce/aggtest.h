/* aggtest.h — shared by tests/reduce/test_aggregate*.c: NR ranks x NS steps of random
 * step summaries (NK kernel modes), each rank's leaf aggregate (setup/teardown), and the
 * checked encoder enc(). Test-only; static inline so each test takes what it uses.
 */
#ifndef ARGUS_TESTS_REDUCE_AGGTEST_H
#define ARGUS_TESTS_REDUCE_AGGTEST_H

#define NR 2000 /* ranks (x 5 steps = 10,000 inputs) */
#define NS 5
#define NK 6

static uint64_t rng = 88172645463325252ull;
static inline uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Durations of kernel k stay within a 3x span so that no sketch collapses. */
static inline uint64_t dur(int k)
{
    uint64_t base = 10000ull << k;
    return base + rnd() % (2 * base);
}

static struct argus_step_summary *sum;
static uint64_t *raw[NK];   /* every duration of kernel k (mode 0, group 0) */
static size_t nraw[NK];

static inline void make_summary(uint32_t rank, uint64_t step)
{
    memset(sum, 0, sizeof *sum);
    sum->rank = rank;
    sum->step = step;
    sum->start_ns = 1000000000ull * step + rnd() % 1000;
    sum->end_ns = sum->start_ns + 90000000 + rnd() % 1000000;
    sum->compute_ns = rnd() % 50000000;
    sum->host_gap_ns = rnd() % 1000000;
    sum->coords.pp = (uint16_t)(rank % 2);
    sum->n_kmodes = NK;
    for (int k = 0; k < NK; k++) {
        struct argus_kmode_stats *m = &sum->kmodes[k];
        m->name_hash = 0x1000 + (uint64_t)k * 7919;
        m->kclass = k < 4 ? 0 : 1;
        argus_qsketch_init(&m->sketch);
        m->min_ns = UINT64_MAX;
        int n = 1 + (int)(rnd() % 4);
        for (int i = 0; i < n; i++) {
            uint64_t d = dur(k);
            m->count++;
            m->sum_ns += d;
            if (d < m->min_ns)
                m->min_ns = d;
            if (d > m->max_ns)
                m->max_ns = d;
            argus_qsketch_add(&m->sketch, d);
            if (sum->coords.pp == 0)
                raw[k][nraw[k]++] = d;
        }
    }
}

static struct argus_aggregate leaves[NR];

static inline int setup(void **state)
{
    (void)state;
    sum = malloc(sizeof *sum);
    for (int k = 0; k < NK; k++)
        raw[k] = malloc(NR * NS * 4 * sizeof *raw[k]);
    for (uint32_t r = 0; r < NR; r++) {
        argus_agg_init(&leaves[r]);
        for (uint64_t s = 0; s < NS; s++) {
            make_summary(r, s);
            assert_int_equal(argus_agg_add_summary(&leaves[r], sum), 0);
        }
    }
    return 0;
}

static inline int teardown(void **state)
{
    (void)state;
    for (int r = 0; r < NR; r++)
        argus_agg_free(&leaves[r]);
    for (int k = 0; k < NK; k++)
        free(raw[k]);
    free(sum);
    return 0;
}

static inline void copy(struct argus_aggregate *dst, const struct argus_aggregate *src)
{
    argus_agg_init(dst);
    assert_int_equal(argus_agg_merge(dst, src), 0);
}

/* Encode with the bound as the buffer, check the exact size, then again into a buffer of
 * exactly that size (no slack: the encoder must not need the bound) and one byte less. */
static inline uint8_t *enc(const struct argus_aggregate *a, size_t *len)
{
    const size_t bound = argus_agg_encoded_size(a);
    const size_t rows = argus_agg_rows_encoded_size(a);
    uint8_t *b = malloc(bound);
    long n = argus_agg_encode(a, b, bound);
    assert_true(n > 0 && (size_t)n <= bound);
    assert_int_equal((size_t)n, bound - a->nrows * ARGUS_AGG_ROW_BYTES + rows);
    *len = (size_t)n;
    uint8_t *e = malloc(*len);
    assert_int_equal(argus_agg_encode(a, e, *len), n);
    assert_memory_equal(e, b, *len);
    assert_int_equal(argus_agg_encode(a, e, *len - 1), -ENOSPC);
    free(b);
    return e;
}

#endif /* ARGUS_TESTS_REDUCE_AGGTEST_H */
