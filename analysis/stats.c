/* stats.c — robust statistics of stats.h (median, MAD, quantiles, robust z). Pure
 * functions; sorting is deterministic (total order on doubles, no NaN expected). */
#include "analysis/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Sorting doubles is the analysis' hottest loop at scale (medians per peer class and
 * step over thousands of ranks): an introsort with inline comparisons instead of qsort's
 * callback — quicksort (median of three), insertion sort below 24 elements, heapsort when
 * the recursion gets too deep, so n log n in the worst case. */
#define SORT_SMALL 24

static void insertion_sort(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static void sift_down(double *v, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (!(v[c] > v[root]))
            return;
        double t = v[c];
        v[c] = v[root];
        v[root] = t;
        root = c;
    }
}

static void heap_sort(double *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(v, i, n);
    for (size_t end = n; end-- > 1;) {
        double t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
}

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Median-of-three pivot and Hoare partition of v[0..n) (n > 2): returns left such that
 * v[0..left) <= pivot <= v[left..n), with 0 < left < n. */
static size_t partition(double *v, size_t n)
{
    size_t m = n / 2;
    if (v[m] < v[0])
        swap_d(&v[m], &v[0]);
    if (v[n - 1] < v[0])
        swap_d(&v[n - 1], &v[0]);
    if (v[n - 1] < v[m])
        swap_d(&v[n - 1], &v[m]);
    const double p = v[m];
    size_t i = 0, j = n - 1;
    for (;;) {
        while (v[i] < p)
            i++;
        while (p < v[j])
            j--;
        if (i >= j)
            break;
        swap_d(&v[i], &v[j]);
        i++;
        j--;
    }
    return j + 1;
}

static void intro_sort(double *v, size_t n, unsigned depth)
{
    while (n > SORT_SMALL) {
        if (depth-- == 0) {
            heap_sort(v, n);
            return;
        }
        size_t left = partition(v, n);
        if (left < n - left) { /* recurse on the smaller side, loop on the larger */
            intro_sort(v, left, depth);
            v += left;
            n -= left;
        } else {
            intro_sort(v + left, n - left, depth);
            n = left;
        }
    }
    insertion_sort(v, n);
}

void argus_stats_sort(double *v, size_t n)
{
    if (n < 2)
        return;
    unsigned depth = 0;
    for (size_t k = n; k > 1; k >>= 1)
        depth += 2;
    intro_sort(v, n, depth);
}

/* Selection is where the analysis spends most at scale (three medians per peer class and
 * step over thousands of ranks, on values in no useful order). The Hoare partition above
 * mispredicts about once per element on such data, so selection uses its own partition:
 * a branchless Lomuto pass (the comparison only moves an index), around a pivot drawn
 * from a sample at k's expected rank, so that the side kept is small after two passes.
 * Only the value at k matters to the callers (order statistics are unique), so any exact
 * selection gives the same results. */
#define SELECT_SAMPLE 15

/* v[0..n) rearranged so that v[0..j) < p <= v[j..n) (with_p 0), or v[0..j) <= p <
 * v[j..n) (with_p 1); returns j. */
static size_t partition_at(double *v, size_t n, double p, int with_p)
{
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        const double x = v[i];
        v[i] = v[j];
        v[j] = x;
        j += (size_t)((x < p) | (with_p & (x == p)));
    }
    return j;
}

/* A pivot for finding rank k of v[0..n) (n > SORT_SMALL): the value at k's relative rank in
 * a sample, taken one per stratum of v at a position that varies between strata (evenly
 * spaced positions would keep hitting one member of data with a period, such as the TP
 * ranks of a stage). Deterministic: no state. */
static double select_pivot(const double *v, size_t n, size_t k)
{
    double s[SELECT_SAMPLE];
    const size_t m = n >= 8 * SELECT_SAMPLE ? SELECT_SAMPLE : 3, stride = n / m;
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ull + k;
    for (size_t i = 0; i < m; i++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        s[i] = v[i * stride + (size_t)((h >> 33) % stride)];
    }
    insertion_sort(s, m);
    return s[k * m / n];
}

/* Introselect: reorder v so that v[k] is the value a sort would put there, with v[i] <=
 * v[k] for i < k and v[i] >= v[k] for i > k. Follows only the side that holds k: O(n) on
 * average, n log n at worst (heapsort fallback). Ties cannot stall it: once the side kept
 * is known to have least value lo (it holds the last pivot, and nothing below it), a
 * pivot equal to lo splits off every copy of lo instead. */
static void select_k(double *v, size_t n, size_t k)
{
    unsigned depth = 0;
    for (size_t q = n; q > 1; q >>= 1)
        depth += 2;
    int lo_known = 0;
    double lo = 0;
    while (n > SORT_SMALL) {
        if (depth-- == 0) {
            heap_sort(v, n);
            return;
        }
        const double p = select_pivot(v, n, k);
        if (lo_known && !(lo < p)) { /* p is the least value: its copies go first */
            const size_t e = partition_at(v, n, p, 1);
            if (k < e)
                return; /* v[k] == p, the least value; all after it are >= p */
            v += e;
            n -= e;
            k -= e;
            lo_known = 0;
            continue;
        }
        const size_t left = partition_at(v, n, p, 0);
        if (k < left) {
            n = left;
        } else {
            v += left;
            n -= left;
            k -= left;
            lo = p; /* p itself is on this side, and nothing below it */
            lo_known = 1;
        }
    }
    insertion_sort(v, n);
}

/* The median of v[0..n) by selection: the same value as the middle of the sorted v (the
 * mean of the two middle values when n is even). */
static double median_select(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    select_k(v, n, n / 2);
    if (n % 2)
        return v[n / 2];
    double lo = v[0]; /* the largest of v[0..n/2): sorted, it sits at n/2 - 1 */
    for (size_t i = 1; i < n / 2; i++)
        lo = v[i] > lo ? v[i] : lo;
    return 0.5 * (lo + v[n / 2]);
}

double argus_stats_median(double *v, size_t n)
{
    return median_select(v, n);
}

double argus_stats_mad(const double *v, size_t n, double med, double *tmp)
{
    if (n == 0)
        return NAN;
    for (size_t i = 0; i < n; i++)
        tmp[i] = fabs(v[i] - med);
    return argus_stats_median(tmp, n);
}

double argus_stats_quantile_sorted(const double *s, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0)
        return s[0];
    if (q >= 1)
        return s[n - 1];
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    if (i + 1 >= n)
        return s[n - 1];
    return s[i] + f * (s[i + 1] - s[i]);
}

void argus_stats_robust(double *v, size_t n, double floor_frac, double *tmp,
                        struct argus_robust *out)
{
    out->n = n;
    if (n == 0) {
        out->ref = NAN;
        out->scale = NAN;
        return;
    }
    double med = argus_stats_median(v, n);
    double mad = argus_stats_mad(v, n, med, tmp);
    double s = ARGUS_MAD_SIGMA * mad;
    double fl = floor_frac * fabs(med);
    out->ref = med;
    out->scale = s > fl ? s : fl;
}

void argus_stats_robust_low(double *v, size_t n, double floor_frac, double *tmp,
                            struct argus_robust *out)
{
    argus_stats_robust_low_med(v, n, floor_frac, tmp, out, NULL);
}

void argus_stats_robust_low_med(double *v, size_t n, double floor_frac, double *tmp,
                                struct argus_robust *out, double *median)
{
    out->n = n;
    if (n == 0) {
        out->ref = NAN;
        out->scale = NAN;
        if (median)
            *median = NAN;
        return;
    }
    size_t h = (n + 1) / 2;
    if (h < n) /* the h smallest values first, in any order */
        select_k(v, n, h - 1);
    /* v[h - 1] sits where a sort puts it: the middle value (odd n), or the lower of the two
     * middle ones, the upper one being the least of the rest (even n: h = n / 2) */
    if (median && n % 2) {
        *median = v[h - 1];
    } else if (median) {
        double hi = v[h];
        for (size_t i = h + 1; i < n; i++)
            hi = v[i] < hi ? v[i] : hi;
        *median = 0.5 * (v[h - 1] + hi);
    }
    double ref = median_select(v, h);
    double mad = argus_stats_mad(v, h, ref, tmp);
    double s = ARGUS_MADLOW_SIGMA * mad;
    double fl = floor_frac * fabs(ref);
    out->ref = ref;
    out->scale = s > fl ? s : fl;
}

double argus_stats_diff_sigma(const double *v, size_t n, double *tmp, double *tmp2)
{
    size_t m = 0;
    double prev = NAN;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (!isnan(prev))
            tmp[m++] = v[i] - prev;
        prev = v[i];
    }
    if (m < 3)
        return 0;
    double med = argus_stats_median(tmp, m);
    return ARGUS_MAD_SIGMA * argus_stats_mad(tmp, m, med, tmp2) / sqrt(2.0);
}

double argus_stats_z(double x, const struct argus_robust *r)
{
    if (!(r->scale > 0))
        return 0.0;
    return (x - r->ref) / r->scale;
}

double argus_stats_ratio(double x, const struct argus_robust *r)
{
    if (!(r->ref > 0))
        return 0.0;
    return x / r->ref;
}
