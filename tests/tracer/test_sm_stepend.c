/* test_sm_stepend.c — cmocka units for the shortcuts of the summariser's step end
 * (tracer/stepsplit.c, tracer/modes.c), each against the plain computation:
 * - a step whose kernels all ran in one phase takes each mode's phase time from its sum
 *   and count (sm->ph_mask), one- and two-mode kernels, kept and fresh splits: every
 *   mode's phase is that phase, and with two phases the per-mode phases still follow the
 *   keys;
 * - a mode's sketch filled straight from the fine-bin histogram, and the per-run adds
 *   when its buckets span more than one sketch (a mode wider than
 *   ARGUS_QSKETCH_BUCKETS buckets): equal to adding its durations one by one, ascending;
 * - the radix sort's narrow digits below 2048 keys: sorted and stable. */
#include "tests/tracer/sm_testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer/modes.h"

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Uniform in [0, 1). */
static double unif(uint32_t *s)
{
    return (double)(rnd(s) >> 8) / (double)(1u << 24);
}

#define MAXD 4096

/* The launches of one step: name and duration, in order. */
struct launches {
    const char *name[MAXD];
    uint64_t d[MAXD];
    uint8_t ph[MAXD]; /* the phase each ran in */
    int n;
};

/* Count, sum, min, max and the one-by-one sketch of the launches of km's kernel within
 * [km->min_ns, km->max_ns] (a mode is a range of durations) must equal km's. */
static void check_mode_exact(const struct launches *l, const struct argus_kmode_stats *km)
{
    static uint64_t v[MAXD];
    int n = 0;
    uint64_t sum = 0;
    struct argus_qsketch want;

    for (int i = 0; i < l->n; i++)
        if (argus_name_hash(l->name[i]) == km->name_hash && l->d[i] >= km->min_ns &&
            l->d[i] <= km->max_ns)
            v[n++] = l->d[i];
    for (int i = 1; i < n; i++) { /* ascending, as the summariser adds them */
        uint64_t x = v[i];
        int j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    argus_qsketch_init(&want);
    for (int i = 0; i < n; i++) {
        argus_qsketch_add(&want, v[i]);
        sum += v[i];
    }
    assert_int_equal(km->count, n);
    assert_int_equal(km->sum_ns, sum);
    assert_int_equal(km->min_ns, v[0]);
    assert_int_equal(km->max_ns, v[n - 1]);
    assert_memory_equal(&km->sketch, &want, sizeof want);
}

/* The phase with the most time (duration + 1 per launch) among km's launches. */
static unsigned want_phase(const struct launches *l, const struct argus_kmode_stats *km)
{
    uint64_t w[ARGUS_PH_COUNT] = {0};
    unsigned best = 0;

    for (int i = 0; i < l->n; i++)
        if (argus_name_hash(l->name[i]) == km->name_hash && l->d[i] >= km->min_ns &&
            l->d[i] <= km->max_ns)
            w[l->ph[i]] += l->d[i] + 1;
    for (unsigned p = 1; p < ARGUS_PH_COUNT; p++)
        if (w[p] > w[best])
            best = p;
    return best;
}

/* One step: the launches of l back to back from the step begin (static names, so the
 * fast path takes all but each name's first), inside the phase ranges of each launch
 * (a new range where the phase changes; ph = ARGUS_PH_OTHER: none open). */
static void run_step(struct argus_summarizer *sm, uint64_t step, const struct launches *l)
{
    static const char *const range[ARGUS_PH_COUNT] = {"forward", "backward", "optimizer"};
    uint64_t t = step * 100000000ull;
    int open = -1;

    argus_summarizer_step_begin(sm, step, t);
    for (int i = 0; i < l->n; i++) {
        if (l->ph[i] != open) {
            if (open >= 0 && open != ARGUS_PH_OTHER)
                argus_summarizer_phase_pop(sm, t);
            if (l->ph[i] != ARGUS_PH_OTHER)
                argus_summarizer_phase_push(sm, range[l->ph[i]], t);
            open = l->ph[i];
        }
        argus_summarizer_kernel_static(sm, l->name[i], t, t + l->d[i], 0, 0, ARGUS_KC_COMPUTE);
        t += l->d[i];
    }
    if (open >= 0 && open != ARGUS_PH_OTHER)
        argus_summarizer_phase_pop(sm, t);
    argus_summarizer_step_end(sm, step, t + 1000);
}

/* A step of a bimodal kernel (10 and 40 us, +-2 %), a one-mode one (25 us) and a small
 * one (5 launches: the ratio-gap rule); phase_of(i, d) gives each launch's phase. */
static void make_step(struct launches *l, uint32_t seed, unsigned (*phase_of)(int, uint64_t))
{
    l->n = 0;
    for (int i = 0; i < 600; i++) {
        const char *nm = i % 3 ? "bimodal" : i % 120 == 0 ? "small" : "one";
        double us = nm[0] == 'b' ? (i % 2 ? 40 : 10) : nm[0] == 'o' ? 25 : 3;
        l->name[l->n] = nm;
        l->d[l->n] = (uint64_t)(us * 1000 * (0.98 + 0.04 * unif(&seed)));
        l->ph[l->n] = (uint8_t)phase_of(l->n, l->d[l->n]);
        l->n++;
    }
}

static unsigned all_backward(int i, uint64_t d)
{
    (void)i, (void)d;
    return ARGUS_PH_BACKWARD;
}

static unsigned all_optimizer(int i, uint64_t d)
{
    (void)i, (void)d;
    return ARGUS_PH_OPTIMIZER;
}

/* The long ones in backward, the short ones in forward: ranges come and go. */
static unsigned by_length(int i, uint64_t d)
{
    (void)i;
    return d > 20000 ? ARGUS_PH_BACKWARD : ARGUS_PH_FORWARD;
}

static void check_steps(unsigned (*phase_of)(int, uint64_t), int one_phase)
{
    static struct launches l;
    static struct sink k;
    struct argus_summarizer *sm = make(&k, 8192, 64);

    /* 40 steps: each kernel's full KDE (every 32 steps) and its kept split */
    for (uint64_t s = 1; s <= 40; s++) {
        make_step(&l, 77u + (uint32_t)s, phase_of);
        run_step(sm, s, &l);
        assert_int_equal(k.n_summaries, (int)s);
        assert_int_equal(k.last.n_kmodes, 4); /* bimodal 2, one 1, small 1 */
        int two = 0;
        for (uint32_t m = 0; m < k.last.n_kmodes; m++) {
            const struct argus_kmode_stats *km = &k.last.kmodes[m];
            check_mode_exact(&l, km);
            assert_int_equal(km->phase, want_phase(&l, km));
            if (one_phase)
                assert_int_equal(km->phase, phase_of(0, 0));
            two += km->name_hash == argus_name_hash("bimodal");
        }
        assert_int_equal(two, 2);
    }
    argus_summarizer_free(sm);
}

static void test_one_phase_backward(void **state)
{
    (void)state;
    check_steps(all_backward, 1);
}

static void test_one_phase_optimizer(void **state)
{
    (void)state;
    check_steps(all_optimizer, 1);
}

static void test_two_phases(void **state)
{
    (void)state;
    check_steps(by_length, 0);
}

/* One kernel log-uniform over 10-400 us (a factor 40: ~94 sketch buckets, wider than a
 * sketch's span) beside a narrow one: every mode's sketch as one-by-one adds. */
static void test_wide_mode_sketch(void **state)
{
    static struct launches l;
    static struct sink k;
    struct argus_summarizer *sm = make(&k, 8192, 64);
    const double g = (1 + ARGUS_QSKETCH_ALPHA) / (1 - ARGUS_QSKETCH_ALPHA);
    int wide = 0;
    (void)state;

    for (uint64_t s = 1; s <= 3; s++) {
        uint32_t seed = 991u + (uint32_t)s;
        l.n = 0;
        for (int i = 0; i < 3000; i++) {
            int w = i % 4 != 0;
            l.name[l.n] = w ? "wide" : "narrow";
            l.d[l.n] = w ? (uint64_t)(10000 * pow(40, unif(&seed)))
                         : (uint64_t)(50000 * (0.99 + 0.02 * unif(&seed)));
            l.ph[l.n] = ARGUS_PH_OTHER;
            l.n++;
        }
        run_step(sm, s, &l);
        for (uint32_t m = 0; m < k.last.n_kmodes; m++) {
            const struct argus_kmode_stats *km = &k.last.kmodes[m];
            check_mode_exact(&l, km);
            assert_int_equal(km->phase, ARGUS_PH_OTHER);
            if ((double)km->max_ns / (double)km->min_ns > pow(g, ARGUS_QSKETCH_BUCKETS))
                wide++;
        }
    }
    assert_true(wide > 0); /* the per-run path was taken */
    argus_summarizer_free(sm);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_radix_small(void **state)
{
    static const size_t sizes[] = {48, 49, 100, 255, 256, 257, 1000, 2047, 2048, 2049};
    static struct argus_sort_pair a[4096], t[4096];
    static uint64_t ref[4096];
    uint64_t x = 88172645463325252ull;
    (void)state;

    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z];
        for (int round = 0; round < 4; round++) {
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                /* full width, few values, high bits only, the budget's (comm, ~sum) */
                uint64_t k = round == 0 ? x : round == 1 ? x % 7 : round == 2 ? (x % 5) << 57
                           : (x & 1) << 63 | ((UINT64_MAX >> 1) - (x % 4000000000u));
                a[i].key = ref[i] = k;
                a[i].val = i;
            }
            argus_sort_pairs(a, t, n);
            qsort(ref, n, sizeof *ref, cmp_u64);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(a[i].key, ref[i]);
                if (i && a[i].key == a[i - 1].key)
                    assert_true(a[i].val > a[i - 1].val); /* stable */
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_phase_backward),
        cmocka_unit_test(test_one_phase_optimizer),
        cmocka_unit_test(test_two_phases),
        cmocka_unit_test(test_wide_mode_sketch),
        cmocka_unit_test(test_radix_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
