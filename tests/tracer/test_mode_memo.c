/* test_mode_memo.c — cmocka units for the summariser's kept mode splits (tracer/stepsum.c,
 * tracer/modes.c: fine-bin histogram, KDE on it, cuts reused while a step still fits
 * them, a full KDE every ARGUS_MODES_REFRESH steps). Every change a reused split could
 * hide must show in the very step it happens, whatever the refresh phase: a mode that
 * shifts, a new mode, a mode that splits, one that vanishes, a valley that fills in.
 * Also: the known mixture over many steps and seeds, determinism, reuse matching a fresh
 * KDE, and exact sketches over the whole duration range (bin/bucket tables). */
#include "tests/tracer/sm_testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer/modes.h"

#define REFRESH 32 /* ARGUS_MODES_REFRESH (tracer/sm_internal.h) */

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static double gauss(uint32_t *s)
{
    double u = ((double)(rnd(s) >> 8) + 0.5) / (double)(1u << 24);
    double v = ((double)(rnd(s) >> 8) + 0.5) / (double)(1u << 24);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* A component of a step: n kernels around us with log-normal noise sd (or, sd < 0,
 * log-uniform between us and -sd * us). */
struct comp {
    double us;
    int n;
    double sd;
};

/* One step of kernel "k" (components interleaved, each with its own noise stream so a
 * component's durations depend only on (seed, component)). */
static void step_of(struct argus_summarizer *sm, uint64_t step, const struct comp *c, int nc,
                    uint32_t seed)
{
    uint64_t t = B * step;
    uint32_t s[8];
    int left[8], total = 0;

    for (int i = 0; i < nc; i++) {
        s[i] = seed * 2654435761u + (uint32_t)i * 40503u + 1;
        left[i] = c[i].n;
        total += c[i].n;
    }
    argus_summarizer_step_begin(sm, step, t);
    for (int j = 0; total > 0; j++) {
        int i = j % nc;
        if (!left[i])
            continue;
        left[i]--;
        total--;
        double f = c[i].sd >= 0 ? exp(c[i].sd * gauss(&s[i]))
                                : exp(log(-c[i].sd) * (double)(rnd(&s[i]) >> 8) / 16777216.0);
        uint64_t d = (uint64_t)(c[i].us * 1000.0 * f);
        argus_summarizer_kernel(sm, "k", t, t + d, 0, 0, ARGUS_KC_COMPUTE);
        t += d + 100;
    }
    argus_summarizer_step_end(sm, step, t + 1000);
}

static unsigned modes_of(const struct sink *k)
{
    unsigned m = 0;
    while (find(&k->last, "k", m))
        m++;
    return m;
}

static double p50(const struct sink *k, unsigned mode)
{
    const struct argus_kmode_stats *x = find(&k->last, "k", mode);
    assert_non_null(x);
    return argus_qsketch_quantile(&x->sketch, 0.5);
}

/* The 50/200/800 us mixture is found exactly at every step, across two refreshes, for
 * 20 seeds. */
static void test_mixture_every_step(void **state)
{
    const struct comp c[3] = {{50, 1000, 0.05}, {200, 300, 0.05}, {800, 500, 0.05}};
    static struct sink k;
    (void)state;

    for (uint32_t seed = 1; seed <= 20; seed++) {
        struct argus_summarizer *sm = make(&k, 4096, 16);
        for (uint64_t st = 1; st <= 2 * REFRESH + 3; st++) {
            step_of(sm, st, c, 3, seed * 1000 + (uint32_t)st);
            assert_int_equal(modes_of(&k), 3);
            for (unsigned m = 0; m < 3; m++)
                assert_int_equal(find(&k.last, "k", m)->count, (uint32_t)c[m].n);
        }
        argus_summarizer_free(sm);
    }
}

/* After a settled run, the 200 us mode slows by 20 % (beyond the reuse margin) or by 5 %
 * (within it): the shift shows in that mode alone, in that step, whatever the refresh
 * phase. */
static void test_shift_detected(void **state)
{
    static struct sink k;
    (void)state;

    for (int pct = 5; pct <= 20; pct += 15) {
        for (uint64_t at = 6; at < 6 + REFRESH; at++) {
            struct comp c[3] = {{50, 40, 0.02}, {200, 10, 0.02}, {800, 20, 0.02}};
            struct argus_summarizer *sm = make(&k, 4096, 16);
            double base[3];
            for (uint64_t st = 1; st < at; st++)
                step_of(sm, st, c, 3, 77); /* the same durations every step */
            for (unsigned m = 0; m < 3; m++)
                base[m] = p50(&k, m);
            c[1].us *= 1 + pct / 100.0;
            step_of(sm, at, c, 3, 77);
            assert_int_equal(modes_of(&k), 3);
            for (unsigned m = 0; m < 3; m++) {
                double r = p50(&k, m) / base[m];
                assert_int_equal(find(&k.last, "k", m)->count, (uint32_t)c[m].n);
                if (m == 1)
                    assert_true(r > 1 + pct / 200.0 && r < 1 + 2 * pct / 100.0);
                else
                    assert_true(r == 1.0);
            }
            argus_summarizer_free(sm);
        }
    }
}

/* Run `steps` steps of `before`, then one of `after`; the modes of that last step. */
static unsigned after_change(struct sink *k, const struct comp *before, int nb,
                             const struct comp *after, int na, uint64_t steps)
{
    struct argus_summarizer *sm = make(k, 4096, 16);
    for (uint64_t st = 1; st <= steps; st++)
        step_of(sm, st, before, nb, (uint32_t)st);
    step_of(sm, steps + 1, after, na, 999);
    argus_summarizer_free(sm);
    return modes_of(k);
}

/* The modes a fresh summariser finds in `after` (step steps + 1, as after_change). */
static unsigned fresh_modes(struct sink *k, const struct comp *after, int na, uint64_t steps)
{
    struct argus_summarizer *f = make(k, 4096, 16);
    step_of(f, steps + 1, after, na, 999);
    argus_summarizer_free(f);
    return modes_of(k);
}

/* A new mode far from the old ones (a new code path) shows at once: a big one, and one of
 * 3 % of the kernels (too few for the empty-run rule; the KDE keeps it). */
static void test_new_mode_at_once(void **state)
{
    const struct comp one[1] = {{100, 200, 0.03}};
    const struct comp two[2] = {{100, 200, 0.03}, {400, 50, 0.03}};
    const struct comp few[2] = {{100, 200, 0.03}, {400, 6, 0.03}};
    static struct sink k, fresh;
    (void)state;

    assert_int_equal(fresh_modes(&fresh, few, 2, 5), 2);
    for (uint64_t steps = 5; steps < 5 + REFRESH; steps++) {
        assert_int_equal(after_change(&k, one, 1, two, 2, steps), 2);
        assert_int_equal(find(&k.last, "k", 1)->count, 50);
        assert_int_equal(after_change(&k, one, 1, few, 2, steps), 2);
        assert_int_equal(find(&k.last, "k", 1)->count, 6);
    }
}

/* One wide mode (log-uniform 100..200 us) becomes two tight ones at its ends: the empty
 * run inside the old mode shows at once. */
static void test_split_inside_mode_at_once(void **state)
{
    const struct comp wide[1] = {{100, 300, -2.0}};
    const struct comp ends[2] = {{102, 150, 0.01}, {195, 150, 0.01}};
    static struct sink k;
    (void)state;

    for (uint64_t steps = 5; steps < 5 + REFRESH; steps++) {
        assert_int_equal(after_change(&k, wide, 1, wide, 1, steps), 1);
        assert_int_equal(after_change(&k, wide, 1, ends, 2, steps), 2);
        assert_int_equal(find(&k.last, "k", 0)->count, 150);
    }
}

/* Modes that vanish are not kept empty. */
static void test_vanished_mode(void **state)
{
    const struct comp three[3] = {{50, 400, 0.05}, {200, 200, 0.05}, {800, 100, 0.05}};
    const struct comp first[1] = {{50, 400, 0.05}};
    const struct comp outer[2] = {{50, 400, 0.05}, {800, 100, 0.05}};
    static struct sink k;
    (void)state;

    for (uint64_t steps = 5; steps < 5 + REFRESH; steps += 3) {
        assert_int_equal(after_change(&k, three, 3, first, 1, steps), 1);
        assert_int_equal(find(&k.last, "k", 0)->count, 400);
        assert_int_equal(after_change(&k, three, 3, outer, 2, steps), 2);
        assert_int_equal(find(&k.last, "k", 1)->count, 100);
    }
}

/* The valley between two close modes (their reuse margins meet) fills in: the kept
 * split is dropped and the answer is the one a fresh KDE gives for that step. */
static void test_valley_fills(void **state)
{
    const struct comp two[2] = {{100, 300, 0.01}, {115, 300, 0.01}};
    const struct comp fill[3] = {{100, 300, 0.01}, {115, 300, 0.01}, {100, 3000, -1.15}};
    static struct sink k, fresh;
    (void)state;

    for (uint64_t steps = 5; steps < 5 + REFRESH; steps += 2) {
        assert_int_equal(after_change(&k, two, 2, two, 2, steps), 2);
        unsigned m = after_change(&k, two, 2, fill, 3, steps);
        assert_int_equal(m, fresh_modes(&fresh, fill, 3, steps));
        assert_memory_equal(k.last.kmodes, fresh.last.kmodes,
                            k.last.n_kmodes * sizeof k.last.kmodes[0]);
    }
}

/* Steady data: every step's summary (reused split or not) equals the one of a fresh
 * summariser on the same step; and two summarisers fed the same steps agree byte for
 * byte at every step, through refreshes. */
static void test_reuse_matches_fresh_and_is_deterministic(void **state)
{
    const struct comp c[3] = {{30, 500, 0.04}, {90, 120, 0.04}, {700, 60, 0.04}};
    static struct sink a, b, fresh;
    struct argus_summarizer *sa = make(&a, 4096, 16), *sb = make(&b, 4096, 16);
    (void)state;

    for (uint64_t st = 1; st <= 3 * REFRESH; st++) {
        step_of(sa, st, c, 3, (uint32_t)st);
        step_of(sb, st, c, 3, (uint32_t)st);
        struct argus_summarizer *f = make(&fresh, 4096, 16);
        step_of(f, st, c, 3, (uint32_t)st);
        argus_summarizer_free(f);
        assert_int_equal(a.last.n_kmodes, 3);
        assert_int_equal(a.last.n_kmodes, b.last.n_kmodes);
        assert_memory_equal(&a.last, &b.last, sizeof a.last);
        assert_int_equal(a.last.n_kmodes, fresh.last.n_kmodes);
        assert_memory_equal(a.last.kmodes, fresh.last.kmodes,
                            a.last.n_kmodes * sizeof a.last.kmodes[0]);
    }
    argus_summarizer_free(sa);
    argus_summarizer_free(sb);
}

/* Sketches from the fine-bin histogram equal adding every duration one by one, over
 * the whole range: 0, 1, small integers (bins holding no integer), bucket edges, and
 * durations above 2^53 (where the conversion to double rounds). Count, sum, min and max
 * are exact too. */
/* Sketch bucket of d > 0 (a fresh sketch's base). */
static int32_t bucket(uint64_t d)
{
    struct argus_qsketch q;
    argus_qsketch_init(&q);
    argus_qsketch_add(&q, d);
    return q.base;
}

static void test_sketch_exact_whole_range(void **state)
{
    enum { R = 32, PER = 120, N = R * PER };
    static uint64_t d[N];
    static int who[N];
    static struct sink k;
    struct argus_summarizer *sm = make(&k, N, 64);
    uint32_t s = 12345;
    int n = 0;
    (void)state;

    /* Kernel r lives in [base, 4 base), base = 2^(1.5 r) (the last ones above 2^53, where
     * the conversion to double rounds), so no sketch collapses and every bucket counts. */
    for (int r = 0; r < R; r++) {
        uint64_t base = r < 30 ? (uint64_t)exp2(1.5 * r) : (UINT64_C(1) << (r == 30 ? 53 : 58));
        int e = 64 - __builtin_clzll(base), start = n;
        if (r < 2) /* 0, 1 and small integers (one per fine bin) in two ranges < 6x */
            for (uint64_t i = r ? 7 : 0; i < (r ? 40 : 7); i++)
                d[n++] = i;
        if (r < 2)
            base = r ? 7 : 1;
        for (uint64_t j = 0; e >= 7 && j < 128; j += 41) /* fine-bin edges, +-1 */
            for (int o = -1; o <= 1; o++)
                d[n++] = ((128 + j) << (e - 7)) + (uint64_t)o;
        for (int b = 0; b < 10 && r >= 2; b++) { /* sketch bucket edges, +-1 */
            uint64_t lo = base + (rnd(&s) % base), hi = 2 * lo;
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (bucket(mid) == bucket(lo))
                    lo = mid;
                else
                    hi = mid;
            }
            d[n++] = hi - 1;
            d[n++] = hi;
            d[n++] = hi + 1;
        }
        while (n < start + PER) /* and durations in [base, 3 base) */
            d[n++] = base + (uint64_t)((double)base * 2.0 * (double)(rnd(&s) >> 8) / 16777216.0);
        for (int i = start; i < n; i++)
            who[i] = r;
    }
    argus_summarizer_step_begin(sm, 1, B);
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "kr%d", who[i]);
        argus_summarizer_kernel(sm, name, B + 10, B + 10 + d[i], 0, 0, ARGUS_KC_COMPUTE);
    }
    argus_summarizer_step_end(sm, 1, B + 100);
    uint32_t total = 0;
    for (uint32_t m = 0; m < k.last.n_kmodes; m++) {
        const struct argus_kmode_stats *km = &k.last.kmodes[m];
        struct argus_qsketch want;
        uint64_t sum = 0, mn = UINT64_MAX, mx = 0;
        uint32_t cnt = 0;
        argus_qsketch_init(&want);
        for (int i = 0; i < N; i++) {
            char name[16];
            snprintf(name, sizeof name, "kr%d", who[i]);
            if (argus_name_hash(name) != km->name_hash || d[i] < km->min_ns || d[i] > km->max_ns)
                continue;
            argus_qsketch_add(&want, d[i]);
            sum += d[i];
            cnt++;
            mn = d[i] < mn ? d[i] : mn;
            mx = d[i] > mx ? d[i] : mx;
        }
        assert_int_equal(km->count, cnt);
        assert_int_equal(km->sum_ns, sum);
        assert_int_equal(km->min_ns, mn);
        assert_int_equal(km->max_ns, mx);
        assert_false(want.flags & ARGUS_QS_COLLAPSED);
        assert_memory_equal(&want, &km->sketch, sizeof want);
        total += cnt;
    }
    assert_int_equal(total, N);
    argus_summarizer_free(sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixture_every_step),
        cmocka_unit_test(test_shift_detected),
        cmocka_unit_test(test_new_mode_at_once),
        cmocka_unit_test(test_split_inside_mode_at_once),
        cmocka_unit_test(test_vanished_mode),
        cmocka_unit_test(test_valley_fills),
        cmocka_unit_test(test_reuse_matches_fresh_and_is_deterministic),
        cmocka_unit_test(test_sketch_exact_whole_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
