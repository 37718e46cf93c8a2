/* stepsplit.c — the step end's per-kernel half: each kernel's stored durations (its pool
 * blocks) split into (kernel, mode) candidates with their count, sum, min, max, phase
 * time and quantile sketch. Each kernel's durations go once through mode_pass: a fine-bin
 * histogram and per-mode count, sum, min, max, phase time and sketch-bucket counts
 * together, with the mode split kept from the kernel's last full KDE; the KDE (on the
 * histogram, modes.c) runs again every ARGUS_MODES_REFRESH steps (staggered by name) or
 * as soon as the histogram no longer fits the kept split (argus_memo_fits), and then the
 * pass is redone only if the split changed. Nothing is sorted but kernels with fewer
 * than ARGUS_MODES_KDE_MIN durations (ratio-gap rule). Each mode of a collective kernel
 * gets the end of the kernel's last instance in the step (its name_step's last_end).
 * Works only in the arrays preallocated by argus_summarizer_create; must not allocate,
 * block or log. Rules: summarizer.c's header.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "tracer/sm_internal.h"

uint8_t argus_sm_phase_argmax(const uint64_t w[ARGUS_PH_COUNT])
{
    uint8_t best = 0;

    for (uint8_t p = 1; p < ARGUS_PH_COUNT; p++)
        if (w[p] > w[best])
            best = p;
    return best;
}

/* Bucket index of a duration > 0 in a qsketch: the base of a fresh sketch holding only it
 * (so the index is the sketch's own arithmetic, not a copy of it). */
static int32_t bucket_of(uint64_t d)
{
    struct argus_qsketch t;

    argus_qsketch_init(&t);
    argus_qsketch_add(&t, d);
    return t.base;
}

/* Smallest duration in fine bin f or above. */
static uint64_t bin_first(uint32_t f)
{
    uint32_t e = f >> ARGUS_FBIN_SUB, j = f & ((1u << ARGUS_FBIN_SUB) - 1);
    uint64_t m = (1u << ARGUS_FBIN_SUB) + j, x;

    /* the smallest x = d + 1 with that exponent and those mantissa bits */
    if (e >= ARGUS_FBIN_SUB)
        x = m << (e - ARGUS_FBIN_SUB);
    else
        x = (m + (UINT64_C(1) << (ARGUS_FBIN_SUB - e)) - 1) >> (ARGUS_FBIN_SUB - e);
    uint64_t d = x - 1;
    /* above 2^53 the conversion to double rounds: settle on argus_fbin's own answer */
    while (argus_fbin(d) < f)
        d++;
    while (d > 0 && argus_fbin(d - 1) >= f)
        d--;
    return d;
}

/* Fill qlo/qthr of fine bin f (see sm_internal.h). */
static void bin_fill(struct argus_summarizer *sm, uint32_t f)
{
    if (sm->qthr[f])
        return;
    if (f == 0) { /* duration 0 only: the sketch's zero count */
        sm->qlo[0] = -1;
        sm->qthr[0] = UINT64_MAX;
        return;
    }
    uint64_t lo = bin_first(f), hi = bin_first(f + 1) - 1;
    int32_t qa = bucket_of(lo);
    sm->qlo[f] = qa;
    if (hi <= lo || bucket_of(hi) == qa) {
        sm->qthr[f] = UINT64_MAX;
        return;
    }
    while (hi - lo > 1) { /* bucket_of(lo) == qa < bucket_of(hi) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (bucket_of(mid) == qa)
            lo = mid;
        else
            hi = mid;
    }
    assert(bucket_of(hi) == qa + 1);
    sm->qthr[f] = hi;
}

/* Add sorted duration keys to a sketch; optionally accumulate per-phase time. A sketch
 * keeps bucket counts only, so each run of durations in one bucket goes in at once
 * (found by galloping over the sorted keys: a few bucket lookups per run instead of one
 * per distinct duration); the result is the sketch of adding them one by one. */
static void sketch_keys(struct argus_qsketch *sk, const struct argus_sort_pair *v, size_t n,
                        uint64_t *w)
{
    size_t i = 0;

    if (w)
        for (size_t k = 0; k < n; k++)
            w[argus_dkey_phase(v[k].key)] += argus_dkey_dur(v[k].key) + 1;
    while (i < n && argus_dkey_dur(v[i].key) == 0)
        i++;
    if (i)
        argus_qsketch_add_n(sk, 0, (uint32_t)i);
    while (i < n) {
        int32_t b = bucket_of(argus_dkey_dur(v[i].key));
        size_t lo = i, hi = n, step = 1; /* v[lo] is in b; v[hi] (if < n) is not */
        while (lo + step < n) {
            if (bucket_of(argus_dkey_dur(v[lo + step].key)) != b) {
                hi = lo + step;
                break;
            }
            lo += step;
            step *= 2;
        }
        if (hi == n && lo + 1 < n && bucket_of(argus_dkey_dur(v[n - 1].key)) == b)
            lo = n - 1;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (bucket_of(argus_dkey_dur(v[mid].key)) == b)
                lo = mid;
            else
                hi = mid;
        }
        argus_qsketch_add_n(sk, argus_dkey_dur(v[i].key), (uint32_t)(hi - i));
        i = hi;
    }
}

static struct cand *cand_new(struct argus_summarizer *sm, size_t *nc, uint32_t idx, unsigned k)
{
    struct cand *c = &sm->cands[(*nc)++];

    c->hash = sm->name_hash[idx];
    c->mode = (uint8_t)k;
    c->kclass = sm->name_class[idx];
    c->last_end = c->kclass == ARGUS_KC_COLLECTIVE ? sm->nst[idx].last_end : 0;
    c->count = 0;
    c->sum = 0;
    c->min = UINT64_MAX;
    c->max = 0;
    memset(c->w, 0, sizeof c->w);
    argus_qsketch_init(&c->sketch);
    return c;
}

/* Fewer than ARGUS_MODES_KDE_MIN kernels: sort them and split by the ratio-gap rule. */
static void split_small(struct argus_summarizer *sm, uint32_t idx, struct argus_sort_pair *v,
                        size_t n, size_t *nc)
{
    size_t bounds[ARGUS_MODES_MAX + 1];

    argus_sort_pairs(v, sm->pa, n); /* insertion sort: n is small */
    unsigned nm = argus_modes_split(v, n, bounds, NULL);
    for (unsigned k = 0; k < nm; k++) {
        struct cand *c = cand_new(sm, nc, idx, k);
        const struct argus_sort_pair *p = &v[bounds[k]];
        c->count = (uint32_t)(bounds[k + 1] - bounds[k]);
        c->min = argus_dkey_dur(p[0].key);
        c->max = argus_dkey_dur(p[c->count - 1].key);
        for (uint32_t j = 0; j < c->count; j++)
            c->sum += argus_dkey_dur(p[j].key);
        sketch_keys(&c->sketch, p, c->count, c->w);
        c->phase = argus_sm_phase_argmax(c->w);
    }
}

/* Sketch of fine bins [a, b] of the current histogram: each bin's points split between
 * its two buckets, runs of one bucket added at once, buckets ascending. sk is empty. When
 * the buckets of [a, b] fit one sketch span (the usual case: a mode spans a few), the
 * counts go straight into it, as ascending adds would leave them (qsketch.h: base, the
 * lowest bucket; the span up to the highest; duration 0 in zeros), without the bucket
 * arithmetic per run. */
static void sketch_bins(struct argus_summarizer *sm, struct argus_qsketch *sk, uint32_t a,
                        uint32_t b)
{
    while (a <= b && !sm->hist[a])
        a++;
    while (b > a && !sm->hist[b])
        b--;
    if (a > b)
        return;
    int32_t q0 = sm->qlo[a], q1 = sm->qlo[b] + (sm->hicnt[b] != 0);
    if (q0 < 0 && a == 0) { /* duration 0 (bin 0 holds it only) */
        sk->zeros += sm->hist[0];
        if (a == b)
            return;
        for (a = 1; !sm->hist[a]; a++)
            ;
        q0 = sm->qlo[a];
    }
    q0 += sm->hist[a] == sm->hicnt[a]; /* all of bin a in its upper bucket */
    if (q0 >= 0 && q1 - q0 < ARGUS_QSKETCH_BUCKETS) {
        sk->base = q0;
        sk->nbuckets = (uint16_t)(q1 - q0 + 1);
        for (uint32_t f = a; f <= b; f++) {
            uint32_t all = sm->hist[f], hi = sm->hicnt[f];
            if (!all)
                continue;
            int32_t o = sm->qlo[f] - q0;
            /* the lower part's bucket is below q0 only when it is empty (bin a) */
            if (all - hi)
                sk->counts[o] += all - hi;
            if (hi)
                sk->counts[o + 1] += hi;
        }
        return;
    }
    int32_t qb = 0;
    uint64_t rep = 0;
    uint32_t run = 0;

    for (uint32_t f = a; f <= b; f++) {
        uint32_t all = sm->hist[f];
        if (!all)
            continue;
        uint32_t part[2] = {all - sm->hicnt[f], sm->hicnt[f]};
        for (int h = 0; h < 2; h++) {
            if (!part[h])
                continue;
            int32_t q = sm->qlo[f] + h;
            if (run && q != qb) {
                argus_qsketch_add_n(sk, rep, run);
                run = 0;
            }
            if (!run) {
                qb = q;
                rep = h ? sm->qthr[f] : q < 0 ? 0 : bin_first(f);
            }
            run += part[h];
        }
    }
    if (run)
        argus_qsketch_add_n(sk, rep, run);
}

/* Per-mode accumulators of one kernel. */
struct macc {
    uint64_t count, sum, min, max;
    uint64_t w[ARGUS_PH_COUNT];
};

/* One pass over a kernel's n stored durations (its pool blocks) with the split memo
 * (m modes, cuts in fine bins): per-mode statistics into acc; with hist, also the
 * fine-bin histogram and the points in each bin's upper sketch bucket. mm (1: one mode,
 * 2: two, else up to ARGUS_MODES_MAX), hist and one_ph are constants at each call, so
 * each use gets its own loop. one_ph: every key of the step has phase ph1 (sm->ph_mask),
 * so a mode's phase time, the sum of its durations + 1, is its sum + count, and the
 * keys' phase bits are not read (ph1: that phase). */
static inline __attribute__((always_inline)) void
mode_pass(struct argus_summarizer *sm, uint32_t idx, size_t n,
          const struct argus_mode_memo *memo, struct macc acc[ARGUS_MODES_MAX], const int mm,
          const int hist, const int one_ph, unsigned ph1)
{
    uint32_t *hs = sm->hist, *hc = sm->hicnt;
    uint64_t *qthr = sm->qthr;
    unsigned m = memo->m;
    uint32_t c1 = m > 1 ? memo->cut[0] : UINT32_MAX, c2 = m > 2 ? memo->cut[1] : UINT32_MAX;
    uint32_t c3 = m > 3 ? memo->cut[2] : UINT32_MAX;
    uint64_t sum = 0, mn = UINT64_MAX, mx = 0; /* mode 0 when mm == 1: in registers */
    /* mm == 1: the phase time of the run of durations in one phase (a kernel's launches
     * come in time order, so phases change seldom), in a register: an add to w[] per
     * duration would wait on the previous one through memory */
    uint64_t wrun = 0;
    unsigned wph = 0;

    memset(acc, 0, ARGUS_MODES_MAX * sizeof acc[0]);
    for (unsigned k = 0; k < ARGUS_MODES_MAX; k++)
        acc[k].min = UINT64_MAX;
    for (uint32_t b = sm->name_first[idx], left = (uint32_t)n; left; b = sm->blk_next[b]) {
        const uint64_t *v = &sm->pool[(size_t)b * SM_BLK];
        uint32_t nb = left < SM_BLK ? left : SM_BLK;
        left -= nb;
        if (left > SM_BLK) { /* the chain defeats the hardware prefetcher: fetch the
                              * block after the next (the next one was, one block ago) */
            const uint64_t *nx = &sm->pool[(size_t)sm->blk_next[sm->blk_next[b]] * SM_BLK];
            for (unsigned o = 0; o < SM_BLK; o += 64 / sizeof *nx)
                __builtin_prefetch(nx + o);
        }
        /* unrolled: the loop's own count and test are a tenth of the per-duration work */
#pragma GCC unroll 4
        for (uint32_t i = 0; i < nb; i++) {
            uint64_t d = argus_dkey_dur(v[i]);
            uint32_t f = argus_fbin(d);
            if (mm != 1) {
                struct macc *a = &acc[mm == 2 ? (f >= c1) : (f >= c1) + (f >= c2) + (f >= c3)];
                a->count++;
                a->sum += d;
                a->min = d < a->min ? d : a->min;
                a->max = d > a->max ? d : a->max;
                if (!one_ph)
                    a->w[argus_dkey_phase(v[i])] += d + 1;
            } else if (one_ph) {
                sum += d;
                mn = d < mn ? d : mn;
                mx = d > mx ? d : mx;
            } else {
                unsigned ph = (unsigned)argus_dkey_phase(v[i]);
                sum += d;
                mn = d < mn ? d : mn;
                mx = d > mx ? d : mx;
                if (__builtin_expect(ph != wph, 0)) {
                    acc[0].w[wph] += wrun;
                    wrun = 0;
                    wph = ph;
                }
                wrun += d + 1;
            }
            if (hist) { /* a bin not filled yet (qthr 0) counts all; hicnt_fix redoes it */
                hs[f]++;
                hc[f] += d >= qthr[f];
            }
        }
    }
    if (mm == 1) {
        acc[0].w[wph] += wrun;
        acc[0].count = n;
        acc[0].sum = sum;
        acc[0].min = mn;
        acc[0].max = mx;
    }
    if (one_ph)
        for (unsigned k = 0; k < ARGUS_MODES_MAX; k++)
            acc[k].w[ph1] = acc[k].sum + acc[k].count;
}

/* After a histogram pass: fill the sketch tables of the occupied bins not filled yet
 * (a kernel's first steps, or durations never seen before), whose upper counts the pass
 * took as all of the bin's points (qthr 0), and then count the upper points again (one
 * more pass over the kernel's durations, only then), so that the pass itself needs no
 * test per duration. sp: the spans of the pass's m modes. */
static void hicnt_fix(struct argus_summarizer *sm, uint32_t idx, size_t n,
                      const struct argus_mode_span *sp, unsigned m)
{
    int redo = 0;

    for (unsigned k = 0; k < m; k++)
        for (uint32_t f = sp[k].lo; f <= sp[k].hi; f++)
            if (sm->hist[f] && !sm->qthr[f]) {
                bin_fill(sm, f);
                redo = 1;
            }
    if (!redo)
        return;
    for (unsigned k = 0; k < m; k++)
        for (uint32_t f = sp[k].lo; f <= sp[k].hi; f++)
            sm->hicnt[f] = 0;
    for (uint32_t b = sm->name_first[idx], left = (uint32_t)n; left; b = sm->blk_next[b]) {
        const uint64_t *v = &sm->pool[(size_t)b * SM_BLK];
        uint32_t nb = left < SM_BLK ? left : SM_BLK;
        left -= nb;
        for (uint32_t i = 0; i < nb; i++) {
            uint64_t d = argus_dkey_dur(v[i]);
            uint32_t f = argus_fbin(d);
            sm->hicnt[f] += d >= sm->qthr[f];
        }
    }
}

/* mode_pass with the loop for memo's mode count (and the step's phases, one or more). */
static void mode_pass_any(struct argus_summarizer *sm, uint32_t idx, size_t n,
                          const struct argus_mode_memo *memo, struct macc acc[ARGUS_MODES_MAX],
                          int hist)
{
    const unsigned pm = sm->ph_mask;
    const unsigned ph = pm ? (unsigned)__builtin_ctz(pm) : 0;

    if (pm && !(pm & (pm - 1))) {
        if (hist) {
            if (memo->m == 1)
                mode_pass(sm, idx, n, memo, acc, 1, 1, 1, ph);
            else if (memo->m == 2)
                mode_pass(sm, idx, n, memo, acc, 2, 1, 1, ph);
            else
                mode_pass(sm, idx, n, memo, acc, 4, 1, 1, ph);
        } else {
            if (memo->m == 1)
                mode_pass(sm, idx, n, memo, acc, 1, 0, 1, ph);
            else if (memo->m == 2)
                mode_pass(sm, idx, n, memo, acc, 2, 0, 1, ph);
            else
                mode_pass(sm, idx, n, memo, acc, 4, 0, 1, ph);
        }
    } else if (hist) {
        if (memo->m == 1)
            mode_pass(sm, idx, n, memo, acc, 1, 1, 0, 0);
        else if (memo->m == 2)
            mode_pass(sm, idx, n, memo, acc, 2, 1, 0, 0);
        else
            mode_pass(sm, idx, n, memo, acc, 4, 1, 0, 0);
    } else {
        if (memo->m == 1)
            mode_pass(sm, idx, n, memo, acc, 1, 0, 0, 0);
        else if (memo->m == 2)
            mode_pass(sm, idx, n, memo, acc, 2, 0, 0, 0);
        else
            mode_pass(sm, idx, n, memo, acc, 4, 0, 0, 0);
    }
}

/* The spans of m modes from their statistics. */
static void spans_of(const struct macc acc[ARGUS_MODES_MAX], unsigned m,
                     struct argus_mode_span sp[ARGUS_MODES_MAX])
{
    for (unsigned k = 0; k < m; k++)
        sp[k] = acc[k].count ? (struct argus_mode_span){argus_fbin(acc[k].min),
                                                        argus_fbin(acc[k].max), acc[k].count}
                             : (struct argus_mode_span){1, 0, 0};
}

/* One kernel's n >= ARGUS_MODES_KDE_MIN durations: one pass with the kept split (fine-bin
 * histogram and per-mode statistics together); when a full KDE is due (every
 * ARGUS_MODES_REFRESH steps, staggered by name) or the histogram no longer fits the kept
 * split, the KDE runs on the histogram, and the statistics are taken again if the split
 * changed. */
static void split_kernel(struct argus_summarizer *sm, uint64_t step, uint32_t idx, size_t n,
                         size_t *nc)
{
    static const struct argus_mode_memo one = {.m = 1};
    struct argus_mode_memo *memo = &sm->memo[idx];
    int due = (step + sm->name_hash[idx]) % ARGUS_MODES_REFRESH == 0 || memo->m == 0;
    const struct argus_mode_memo *use = due ? &one : memo;
    struct macc acc[ARGUS_MODES_MAX];
    struct argus_mode_span sp[ARGUS_MODES_MAX];
    uint64_t dmin = UINT64_MAX, dmax = 0;

    mode_pass_any(sm, idx, n, use, acc, 1);
    for (unsigned k = 0; k < use->m; k++) {
        dmin = acc[k].min < dmin ? acc[k].min : dmin;
        dmax = acc[k].max > dmax ? acc[k].max : dmax;
    }
    uint32_t flo = argus_fbin(dmin), fhi = argus_fbin(dmax); /* the bins are monotone */
    spans_of(acc, use->m, sp);
    hicnt_fix(sm, idx, n, sp, use->m);
    if (due || !argus_memo_fits(memo, sm->hist, flo, fhi, n, sp)) {
        unsigned was = use->m;
        argus_modes_kde_bins(sm->hist, flo, fhi, n, &sm->bsc, memo);
        if (memo->m > 1 || was > 1) {
            mode_pass_any(sm, idx, n, memo, acc, 0);
            spans_of(acc, memo->m, sp);
        }
    }
    /* Only each mode's span holds points: its sketch and the histogram's reset read no
     * other bin (the runs between modes are empty). */
    for (unsigned k = 0; k < memo->m; k++) {
        struct cand *c = cand_new(sm, nc, idx, k);
        assert(acc[k].count > 0);
        c->count = (uint32_t)acc[k].count;
        c->sum = acc[k].sum;
        c->min = acc[k].min;
        c->max = acc[k].max;
        memcpy(c->w, acc[k].w, sizeof c->w);
        sketch_bins(sm, &c->sketch, sp[k].lo, sp[k].hi);
        c->phase = argus_sm_phase_argmax(c->w);
        for (uint32_t f = sp[k].lo; f <= sp[k].hi; f++)
            sm->hist[f] = sm->hicnt[f] = 0;
    }
}

_Static_assert(ARGUS_MODES_KDE_MIN <= SM_BLK, "a small group must fit one pool block");

size_t argus_sm_build_cands(struct argus_summarizer *sm, uint64_t step)
{
    size_t nc = 0;

    for (size_t t = 0; t < sm->n_touched; t++) {
        uint32_t idx = sm->touched[t], n = sm->nst[idx].count;
        if (t + 1 < sm->n_touched) { /* the next kernel's first two blocks */
            uint32_t nx = sm->touched[t + 1], b0 = sm->name_first[nx];
            const uint64_t *p0 = &sm->pool[(size_t)b0 * SM_BLK];
            for (unsigned o = 0; o < SM_BLK; o += 64 / sizeof *p0)
                __builtin_prefetch(p0 + o);
            if (sm->nst[nx].count > SM_BLK) {
                const uint64_t *p1 = &sm->pool[(size_t)sm->blk_next[b0] * SM_BLK];
                for (unsigned o = 0; o < SM_BLK; o += 64 / sizeof *p1)
                    __builtin_prefetch(p1 + o);
            }
        }
        if (n < ARGUS_MODES_KDE_MIN) {
            const uint64_t *v = &sm->pool[(size_t)sm->name_first[idx] * SM_BLK];
            for (uint32_t i = 0; i < n; i++) /* n < SM_BLK: one block */
                sm->pb[i] = (struct argus_sort_pair){v[i], 0};
            split_small(sm, idx, sm->pb, n, &nc);
        } else {
            split_kernel(sm, step, idx, n, &nc);
        }
    }
    return nc;
}
