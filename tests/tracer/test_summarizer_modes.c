/* test_summarizer_modes.c — cmocka units for the mode split (tracer/modes.c) as the step
 * summariser uses it: per-mode vs mean statistics (the T8 case), budgets (dropped
 * events, folding into "[other]", a full name table), the radix sort, and the fast
 * paths (in-order kernels, _static names) matching the plain ones. Step statistics are
 * in test_summarizer.c. */
#include "tests/tracer/sm_testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include "tracer/modes.h"

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
    /* Every mode of the collective carries the end of its last instance (in any order,
     * either entry: the kmodes above are equal); other classes carry none. */
    uint64_t last = 0;
    for (int i = 2; i < N; i += 3)
        last = ev[i][1] > last ? ev[i][1] : last;
    for (uint32_t m = 0; m < k1.last.n_kmodes; m++) {
        const struct argus_kmode_stats *km = &k1.last.kmodes[m];
        assert_true(km->last_end_ns == (km->kclass == ARGUS_KC_COLLECTIVE ? last : 0));
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
        cmocka_unit_test(test_multimodal_t8),
        cmocka_unit_test(test_dropped_beyond_max_events),
        cmocka_unit_test(test_fold_into_other),
        cmocka_unit_test(test_name_table_full),
        cmocka_unit_test(test_modes_split),
        cmocka_unit_test(test_radix_sort),
        cmocka_unit_test(test_fast_paths_match),
        cmocka_unit_test(test_static_names_after_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
