/* modes.c — stable radix sort of (key, value) pairs and the mode split of one kernel's
 * durations: log-duration binned KDE with Scott's bandwidth on a robust sigma and a
 * prominence gate (docs/ALGORITHMS.md, "Kernel modes"), the 1.5x ratio-gap rule below
 * ARGUS_MODES_KDE_MIN points (see modes.h). The same KDE runs on a fine-bin histogram for
 * the summariser (argus_modes_kde_bins: each bin's points at its centre) and fills the
 * kernel's kept split, which argus_memo_fits checks against later steps (sm_internal.h). No
 * allocation, no state: the summariser passes its preallocated arrays; the KDE grid lives
 * on the stack (1 KB). */
#include "tracer/modes.h"

#include "tracer/sm_internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)
#define RADIX_SMALL_BITS 8
#define SMALL_SORT 48

static void insertion_sort(struct argus_sort_pair *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct argus_sort_pair x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1].key > x.key) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

void argus_sort_pairs(struct argus_sort_pair *a, struct argus_sort_pair *tmp, size_t n)
{
    uint32_t count[RADIX_SIZE];
    struct argus_sort_pair *src = a, *dst = tmp;
    uint64_t diff = 0;

    if (n < SMALL_SORT) {
        insertion_sort(a, n);
        return;
    }
    assert(n <= UINT32_MAX);
    /* Only the digits in which some keys differ need a pass; below RADIX_SIZE keys,
     * digits of RADIX_SMALL_BITS, so that the count table's prefix sums (one per digit
     * value and pass) do not outweigh the keys (the step end's candidates). */
    const unsigned bits = n < RADIX_SIZE ? RADIX_SMALL_BITS : RADIX_BITS;
    const uint64_t mask = (UINT64_C(1) << bits) - 1;
    for (size_t i = 1; i < n; i++)
        diff |= a[i].key ^ a[0].key;
    for (unsigned shift = 0; shift < 64; shift += bits) {
        if (((diff >> shift) & mask) == 0)
            continue;
        memset(count, 0, ((size_t)mask + 1) * sizeof count[0]);
        for (size_t i = 0; i < n; i++)
            count[(src[i].key >> shift) & mask]++;
        uint32_t sum = 0;
        for (unsigned d = 0; d <= mask; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].key >> shift) & mask]++] = src[i];
        struct argus_sort_pair *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* dur[i+1] >= 1.5 x dur[i] (integer test; durations < 2^61 so nothing overflows). */
static int is_gap(uint64_t lo, uint64_t hi)
{
    return hi * ARGUS_MODES_RATIO_DEN >= lo * ARGUS_MODES_RATIO_NUM && hi > lo;
}

static unsigned gap_split(const struct argus_sort_pair *v, size_t n,
                          size_t bounds[ARGUS_MODES_MAX + 1])
{
    enum { KEEP = ARGUS_MODES_MAX - 1 };
    size_t pos[KEEP];
    double ratio[KEEP];
    unsigned nkeep = 0;

    if (n == 0)
        return 0;
    for (size_t i = 0; i + 1 < n; i++) {
        uint64_t lo = argus_dkey_dur(v[i].key), hi = argus_dkey_dur(v[i + 1].key);
        if (!is_gap(lo, hi))
            continue;
        double r = lo ? (double)hi / (double)lo : INFINITY;
        /* Keep the KEEP largest ratios, sorted descending; ties keep the earlier gap. */
        unsigned at = nkeep;
        while (at > 0 && r > ratio[at - 1])
            at--;
        if (at >= KEEP)
            continue;
        unsigned last = nkeep < KEEP ? nkeep : KEEP - 1;
        for (unsigned k = last; k > at; k--) {
            pos[k] = pos[k - 1];
            ratio[k] = ratio[k - 1];
        }
        pos[at] = i + 1;
        ratio[at] = r;
        if (nkeep < KEEP)
            nkeep++;
    }
    /* Split positions in ascending order. */
    for (unsigned i = 1; i < nkeep; i++) {
        size_t p = pos[i];
        unsigned j = i;
        while (j > 0 && pos[j - 1] > p) {
            pos[j] = pos[j - 1];
            j--;
        }
        pos[j] = p;
    }
    bounds[0] = 0;
    for (unsigned i = 0; i < nkeep; i++)
        bounds[i + 1] = pos[i];
    bounds[nkeep + 1] = n;
    return nkeep + 1;
}

/* ---- KDE ---------------------------------------------------------------------------- */

/* log2(x) for x >= 1 to ~1e-4: exponent from the bits, mantissa by a cubic. */
static double fast_log2(uint64_t x)
{
    union { double d; uint64_t u; } b;
    b.d = (double)(x ? x : 1);
    int e = (int)((b.u >> 52) & 0x7ff) - 1023;
    b.u = (b.u & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1023) << 52); /* m in [1, 2) */
    double m = b.d - 1.0;
    return e + m * (1.4425449 + m * (-0.7181452 + m * 0.2755997));
}

/* Points in the first idx elements: idx itself, or the cumulative count of the idx
 * lowest bins (cum[k] = points in bins 0..k) when the input is a weighted histogram. */
static inline size_t pts(const uint32_t *cum, size_t idx)
{
    return cum ? (idx ? cum[idx - 1] : 0) : idx;
}

/* First element of y[0, n) (ascending) above cut. */
static size_t upper(const double *y, size_t n, double cut)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (y[mid] <= cut)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Points of y within [a, b]. */
static size_t count_in(const double *y, const uint32_t *cum, size_t n, double a, double b)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first index with y >= a */
        size_t mid = lo + (hi - lo) / 2;
        if (y[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return pts(cum, upper(y, n, b)) - pts(cum, lo);
}

typedef double v2d __attribute__((vector_size(16)));

static inline v2d tap2(const double *p)
{
    v2d k;
    memcpy(&k, p, sizeof k);
    return k;
}

/* f[g] = sum over j of c[j] * kern[|j - g|] (|j - g| <= hw), each sum taken in ascending j
 * exactly as a plain double loop would, so f is bit-identical to it: the bins with c = 0
 * (most of the grid: skipped, only the occupied ones are visited) and the taps beyond hw
 * (zero in the reflected kernel r) only add +0.0, which changes no sum of non-negative
 * terms. 16 grid points at a time in 8 two-lane accumulators, so the additions of
 * neighbouring points overlap instead of waiting on one another. */
static void kde_convolve(const double c[ARGUS_KDE_GRID], const double *kern, int hw,
                         double f[ARGUS_KDE_GRID])
{
    enum { G = ARGUS_KDE_GRID, L = 16, R = G + L };
    double r[2 * R + 1];
    int nz[G], nnz = 0, lo = 0;

    _Static_assert(G % L == 0, "grid must be a multiple of the lane block");
    memset(r, 0, sizeof r);
    for (int k = 0; k <= hw; k++)
        r[R + k] = r[R - k] = kern[k];
    for (int j = 0; j < G; j++) /* the occupied grid points, ascending */
        if (c[j] != 0)
            nz[nnz++] = j;
    for (int g0 = 0; g0 < G; g0 += L) {
        v2d a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        int a = g0 - hw, b = g0 + L - 1 + hw;
        while (lo < nnz && nz[lo] < a) /* a only grows from block to block */
            lo++;
        /* Lane l is grid point g0 + l: tap r[R + g0 + l - j]. */
        for (int x = lo; x < nnz && nz[x] <= b; x++) {
            const int j = nz[x];
            const double *rp = &r[R + g0 - j];
            v2d cj = {c[j], c[j]};
            a0 += cj * tap2(rp + 0);
            a1 += cj * tap2(rp + 2);
            a2 += cj * tap2(rp + 4);
            a3 += cj * tap2(rp + 6);
            a4 += cj * tap2(rp + 8);
            a5 += cj * tap2(rp + 10);
            a6 += cj * tap2(rp + 12);
            a7 += cj * tap2(rp + 14);
        }
        memcpy(&f[g0 + 0], &a0, sizeof a0);
        memcpy(&f[g0 + 2], &a1, sizeof a1);
        memcpy(&f[g0 + 4], &a2, sizeof a2);
        memcpy(&f[g0 + 6], &a3, sizeof a3);
        memcpy(&f[g0 + 8], &a4, sizeof a4);
        memcpy(&f[g0 + 10], &a5, sizeof a5);
        memcpy(&f[g0 + 12], &a6, sizeof a6);
        memcpy(&f[g0 + 14], &a7, sizeof a7);
    }
}

/* One KDE pass at bandwidth h. strict > 0 (the narrower passes; strict = Scott's h):
 * each side must hold max(5, n / 20) points and a valley must be significantly empty:
 * its points within +-min(strict, half the way to the lower peak) (when the peaks are
 * that close: at most 2 % of the peak's and the peak window >= 2 x the side minimum),
 * plus 3 Poisson sigmas and 1, below half of those around the lower peak — sampling
 * bumps and tail clumps of one wide mode fail this. */
static unsigned kde_once(const double *y, const uint32_t *cum, size_t ny, double h,
                         double strict, size_t bounds[ARGUS_MODES_MAX + 1],
                         struct argus_kde_info *info)
{
    size_t n = pts(cum, ny);
    enum { G = ARGUS_KDE_GRID };
    double f[G], kern[G];
    unsigned pk[G / 2 + 1], np = 0;

    double lo = y[0] - 3 * h, hi = y[ny - 1] + 3 * h, dx = (hi - lo) / (G - 1);
    if (info) {
        info->h = h;
        info->lo = lo;
        info->dx = dx;
    }
    /* Linear binning. */
    double c[G];
    memset(c, 0, sizeof c);
    for (size_t i = 0; i < ny; i++) {
        double g = (y[i] - lo) / dx, wt = cum ? (double)(pts(cum, i + 1) - pts(cum, i)) : 1;
        int g0 = (int)g;
        if (g0 >= G - 1)
            g0 = G - 2;
        double w = g - g0;
        c[g0] += wt * (1 - w);
        c[g0 + 1] += wt * w;
    }
    /* Gaussian truncated at 4h. */
    int hw = (int)ceil(4 * h / dx);
    if (hw > G - 1)
        hw = G - 1;
    for (int k = 0; k <= hw; k++)
        kern[k] = exp(-0.5 * (k * dx / h) * (k * dx / h));
    kde_convolve(c, kern, hw, f);
    /* Local maxima (plateaus count once, at their left end). */
    for (int g = 0; g < G; g++) {
        double l = g ? f[g - 1] : -1, r = g < G - 1 ? f[g + 1] : -1;
        if (f[g] > l && f[g] >= r && f[g] > 0)
            pk[np++] = (unsigned)g;
    }
    /* Merge neighbouring peaks until every valley passes the gate and <= MAX remain. */
    size_t minside = n / 100 > 2 ? n / 100 : 2;
    size_t minstrict = n / 20 > 5 ? n / 20 : 5;
    while (np > 1) {
        int worst = -1;
        double wr = -1;
        int must = 0;
        size_t prev_cut = 0;
        for (unsigned i = 0; i + 1 < np; i++) {
            unsigned vg = pk[i];
            for (unsigned g = pk[i]; g <= pk[i + 1]; g++)
                if (f[g] < f[vg])
                    vg = g;
            double mp = f[pk[i]] < f[pk[i + 1]] ? f[pk[i]] : f[pk[i + 1]];
            double r = f[vg] / mp;
            size_t cut = pts(cum, upper(y, ny, lo + vg * dx));
            /* points on this peak's side since the previous cut, and beyond */
            int fail = r > ARGUS_KDE_PROMINENCE || cut - prev_cut < minside ||
                       n - cut < minside;
            if (!fail && strict)
                fail = cut - prev_cut < minstrict || n - cut < minstrict;
            if (!fail && strict) {
                unsigned lp = f[pk[i]] < f[pk[i + 1]] ? pk[i] : pk[i + 1];
                /* Scott's h (the windows do not shrink with the pass), but at most half
                 * the way from the valley to the lower peak. */
                double w = strict, half = 0.5 * dx * (vg > lp ? vg - lp : lp - vg);
                int narrow = half < w;
                if (narrow)
                    w = half;
                double cv = (double)count_in(y, cum, ny, lo + vg * dx - w, lo + vg * dx + w);
                double cp = (double)count_in(y, cum, ny, lo + lp * dx - w, lo + lp * dx + w);
                fail = !(cv + 3 * sqrt(cv) + 1 < 0.5 * cp);
                if (narrow) /* the peaks are close: the valley must be all but empty */
                    fail = fail || cv > 0.02 * cp || cp < 2.0 * (double)minstrict;
            }
            if (fail)
                r += 10; /* failing pairs merge before merely close ones */
            if (r > wr) {
                wr = r;
                worst = (int)i;
                must = fail;
            }
            prev_cut = cut;
        }
        if (!must && np <= ARGUS_MODES_MAX)
            break;
        /* Drop the lower of the pair. */
        unsigned drop = f[pk[worst]] < f[pk[worst + 1]] ? (unsigned)worst : (unsigned)worst + 1;
        memmove(&pk[drop], &pk[drop + 1], (np - drop - 1) * sizeof pk[0]);
        np--;
    }
    bounds[0] = 0;
    unsigned m = 0;
    for (unsigned i = 0; i + 1 < np; i++) {
        unsigned vg = pk[i];
        for (unsigned g = pk[i]; g <= pk[i + 1]; g++)
            if (f[g] < f[vg])
                vg = g;
        size_t cut = upper(y, ny, lo + vg * dx);
        if (cut > bounds[m] && cut < ny)
            bounds[++m] = cut;
    }
    bounds[++m] = ny;
    return m;
}

/* Element holding the point of rank r (0-based). */
static size_t at_rank(const uint32_t *cum, size_t ny, size_t r)
{
    size_t lo = 0, hi = ny - 1;

    if (!cum)
        return r;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* argus_modes_kde over ny elements, each y[i] weighted by its points (cum: cumulative
 * counts; NULL = one point each). bounds are element indices. */
static unsigned kde_core(const double *y, const uint32_t *cum, size_t ny,
                         size_t bounds[ARGUS_MODES_MAX + 1], struct argus_kde_info *info)
{
    double mean = 0, var = 0;
    size_t tb[ARGUS_MODES_MAX + 1];
    unsigned best;

    if (ny == 0)
        return 0;
    size_t n = pts(cum, ny);
    for (size_t i = 0; i < ny; i++)
        mean += (cum ? (double)(pts(cum, i + 1) - pts(cum, i)) : 1) * y[i];
    mean /= (double)n;
    for (size_t i = 0; i < ny; i++)
        var += (cum ? (double)(pts(cum, i + 1) - pts(cum, i)) : 1) * (y[i] - mean) * (y[i] - mean);
    double sd = n > 1 ? sqrt(var / (double)(n - 1)) : 0;
    double iqr = (y[at_rank(cum, ny, (3 * n) / 4)] - y[at_rank(cum, ny, n / 4)]) / 1.349;
    double sig = iqr > 0 && iqr < sd ? iqr : sd;
    double h = sig * pow((double)n, -0.2);
    if (h < ARGUS_KDE_HMIN)
        h = ARGUS_KDE_HMIN;
    /* Scott over-smooths multimodal data (sigma includes the spread between modes): try
     * h/2 and h/4 too and keep the finest split; the prominence gate and the side-count
     * rule keep sampling bumps out. */
    best = kde_once(y, cum, ny, h, 0, bounds, info);
    for (int k = 1; k <= 2 && best < ARGUS_MODES_MAX; k++) {
        double hk = h / (double)(1 << k);
        if (hk < ARGUS_KDE_HMIN)
            break;
        struct argus_kde_info ti;
        unsigned m = kde_once(y, cum, ny, hk, h, tb, &ti);
        if (m > best) {
            best = m;
            memcpy(bounds, tb, (m + 1) * sizeof tb[0]);
            if (info)
                *info = ti;
        }
    }
    return best;
}

unsigned argus_modes_kde(const double *y, size_t n, size_t bounds[ARGUS_MODES_MAX + 1],
                         struct argus_kde_info *info)
{
    return kde_core(y, NULL, n, bounds, info);
}

unsigned argus_modes_split(const struct argus_sort_pair *v, size_t n,
                           size_t bounds[ARGUS_MODES_MAX + 1], double *scratch)
{
    if (n < ARGUS_MODES_KDE_MIN || !scratch)
        return gap_split(v, n, bounds);
    for (size_t i = 0; i < n; i++) {
        uint64_t d = argus_dkey_dur(v[i].key);
        scratch[i] = (i && argus_dkey_dur(v[i - 1].key) == d) ? scratch[i - 1] : fast_log2(d);
    }
    return argus_modes_kde(scratch, n, bounds, NULL);
}

/* ---- fine-bin histograms (sm_internal.h) --------------------------------------------- */

/* log2 of the middle of fine bin f. */
static double fbin_log2(uint32_t f)
{
    uint32_t j = f & ((1u << ARGUS_FBIN_SUB) - 1);
    return (double)(f >> ARGUS_FBIN_SUB) +
           log2(1.0 + ((double)j + 0.5) / (double)(1u << ARGUS_FBIN_SUB));
}

void argus_modes_kde_bins(const uint32_t *hist, uint32_t flo, uint32_t fhi, size_t n,
                          const struct argus_bin_scratch *sc, struct argus_mode_memo *memo)
{
    size_t ny = 0, bounds[ARGUS_MODES_MAX + 1];
    uint32_t c = 0;
    struct argus_kde_info info;

    for (uint32_t f = flo; f <= fhi; f++) {
        if (!hist[f])
            continue;
        c += hist[f];
        sc->y[ny] = fbin_log2(f);
        sc->cum[ny] = c;
        sc->bin[ny] = f;
        ny++;
    }
    assert(c == n);
    (void)n;
    unsigned m = kde_core(sc->y, sc->cum, ny, bounds, &info);
    memset(memo, 0, sizeof *memo);
    memo->m = (uint8_t)m;
    for (unsigned k = 0; k < m; k++) {
        size_t p0 = pts(sc->cum, bounds[k]), p1 = pts(sc->cum, bounds[k + 1]);
        memo->lo[k] = (uint16_t)sc->bin[bounds[k]];
        memo->hi[k] = (uint16_t)sc->bin[bounds[k + 1] - 1];
        if (k) /* halfway between the modes' points: the bins of this step's split */
            memo->cut[k - 1] = (uint16_t)((memo->hi[k - 1] + memo->lo[k] + 1) / 2);
        memo->pk[k] = (uint16_t)sc->bin[at_rank(sc->cum, ny, (p0 + p1 - 1) / 2)];
    }
    /* bandwidth in bins: 128 bins per octave of mantissa, ~180 per log2 unit at its
     * start, ~90 at its end */
    double w = info.h * 128.0;
    memo->w = (uint16_t)(w < 2 ? 2 : w > 64 ? 64 : w + 0.5);
}

/* Points of hist in bins [a, b] clipped to [flo, fhi]. */
static double bins_sum(const uint32_t *hist, uint32_t flo, uint32_t fhi, long a, long b)
{
    uint64_t s = 0;

    if (a < (long)flo)
        a = flo;
    if (b > (long)fhi)
        b = fhi;
    for (long f = a; f <= b; f++)
        s += hist[f];
    return (double)s;
}

int argus_memo_fits(const struct argus_mode_memo *memo, const uint32_t *hist, uint32_t flo,
                    uint32_t fhi, size_t n, const struct argus_mode_span *sp)
{
    uint64_t cnt[ARGUS_MODES_MAX] = {0};
    uint64_t minside = n / 100 > 2 ? n / 100 : 2, minstrict = n / 20 > 5 ? n / 20 : 5;
    uint32_t gapmax = 2u * memo->w > 8 ? 2u * memo->w : 8;

    if (!memo->m)
        return 0;
    /* Every point within ARGUS_MEMO_MARGIN bins of its mode's old range: its least and
     * greatest bin are (the bins are monotone in the duration). */
    for (unsigned k = 0; k < memo->m; k++) {
        cnt[k] = sp[k].count;
        if (cnt[k] && (sp[k].lo + ARGUS_MEMO_MARGIN < memo->lo[k] ||
                       sp[k].hi > (uint32_t)memo->hi[k] + ARGUS_MEMO_MARGIN))
            return 0; /* new territory: a new mode or a drift */
    }
    for (unsigned k = 0; k < memo->m; k++)
        if (cnt[k] < minside)
            return 0;
    /* A wide empty run inside a mode with enough points on both sides: it split. The
     * occupied bins in ascending order are those of each mode's span, mode by mode. */
    uint64_t left = 0;
    uint32_t last = flo;
    unsigned lk = argus_memo_mode(memo, flo);
    for (unsigned k = 0; k < memo->m; k++) {
        for (uint32_t f = sp[k].lo; f <= sp[k].hi; f++) {
            if (!hist[f])
                continue;
            if (k != lk) {
                lk = k;
                left = 0;
            } else if (f - last > gapmax && left >= minstrict && cnt[k] - left >= minstrict) {
                return 0;
            }
            left += hist[f];
            last = f;
        }
    }
    for (unsigned k = 0; k + 1 < memo->m; k++) {
        long c = memo->cut[k], w = memo->w;
        unsigned small = cnt[k] <= cnt[k + 1] ? k : k + 1;
        double cv = bins_sum(hist, flo, fhi, c - w, c + w - 1);
        double cp = bins_sum(hist, flo, fhi, (long)memo->pk[small] - w, (long)memo->pk[small] + w);
        if (!(cv + 3 * sqrt(cv) + 1 < 0.5 * cp))
            return 0; /* the valley filled in */
    }
    return 1;
}
