/* order.c — the forecast's order statistics (forecast/internal.h: fc_sort,
 * fc_quantile_sorted, fc_quantile_sel, fc_midmean): an introsort of doubles (median-of-three
 * quicksort, insertion sort under 16 values, heapsort past 2 log2 n levels: O(n log n)
 * whatever the input, O(log n) stack), in place and without a comparison callback, and a
 * quantile by selection (the same partition, one side only: O(n) expected, the sort past
 * the same depth), because the forecast takes a few quantiles of series of up to 16,384
 * values on every window at rank 0. No allocation, no state.
 */
#include "config.h"

#include <stddef.h>

#include "forecast/internal.h"

static void fc_swap(double *a, double *b)
{
    const double t = *a;
    *a = *b;
    *b = t;
}

static void fc_insertion(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const double x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

static void fc_sift(double *v, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (!(v[c] > v[i]))
            return;
        fc_swap(&v[c], &v[i]);
        i = c;
    }
}

static void fc_heapsort(double *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        fc_sift(v, i, n);
    for (size_t e = n; e-- > 1;) {
        fc_swap(&v[0], &v[e]);
        fc_sift(v, 0, e);
    }
}

/* Median of three to v[0], then Hoare's partition around it: v[0..j) <= v[j] <= v(j..n).
 * n > 2. */
static size_t fc_partition(double *v, size_t n)
{
    const size_t m = n / 2;
    if (v[m] < v[0])
        fc_swap(&v[m], &v[0]);
    if (v[n - 1] < v[0])
        fc_swap(&v[n - 1], &v[0]);
    if (v[n - 1] < v[m])
        fc_swap(&v[n - 1], &v[m]);
    fc_swap(&v[0], &v[m]);
    const double pv = v[0];
    size_t i = 0, j = n;
    for (;;) {
        do
            i++;
        while (i < n && v[i] < pv);
        do
            j--;
        while (v[j] > pv);
        if (i >= j)
            break;
        fc_swap(&v[i], &v[j]);
    }
    fc_swap(&v[0], &v[j]);
    return j;
}

static void fc_intro(double *v, size_t n, unsigned depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            fc_heapsort(v, n);
            return;
        }
        const size_t j = fc_partition(v, n);
        /* the smaller side recursively, the larger one by the loop: O(log n) stack */
        if (j < n - j - 1) {
            fc_intro(v, j, depth);
            v += j + 1;
            n -= j + 1;
        } else {
            fc_intro(v + j + 1, n - j - 1, depth);
            n = j;
        }
    }
    fc_insertion(v, n);
}

static unsigned fc_depth(size_t n)
{
    unsigned depth = 0;
    for (size_t k = n; k > 1; k >>= 1)
        depth += 2;
    return depth;
}

void fc_sort(double *v, size_t n)
{
    fc_intro(v, n, fc_depth(n));
}

/* v[k] becomes the k-th smallest (k < n), smaller ones before it, larger after. */
static void fc_select(double *v, size_t n, size_t k)
{
    unsigned depth = fc_depth(n);
    while (n > 16) {
        if (depth-- == 0) {
            fc_heapsort(v, n);
            return;
        }
        const size_t j = fc_partition(v, n);
        if (k == j)
            return;
        if (k < j) {
            n = j;
        } else {
            v += j + 1;
            n -= j + 1;
            k -= j + 1;
        }
    }
    fc_insertion(v, n);
}

double fc_quantile_sel(double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    const double x = p * (double)(n - 1);
    const size_t i = (size_t)x;
    if (i + 1 >= n) {
        fc_select(v, n, n - 1);
        return v[n - 1];
    }
    fc_select(v, n, i);
    double next = v[i + 1];
    for (size_t k = i + 2; k < n; k++)
        next = v[k] < next ? v[k] : next;
    return v[i] + (x - (double)i) * (next - v[i]);
}

double fc_midmean(double *v, size_t n)
{
    const size_t a = n / 4, z = n - n / 4;
    if (z <= a)
        return n ? v[0] : 0;
    fc_select(v, n, a); /* ranks a.., then a + 1..z - 1 within the rest: v[a..z) */
    if (z - 1 > a)
        fc_select(v + a + 1, n - a - 1, z - 2 - a);
    double m = 0;
    for (size_t i = a; i < z; i++)
        m += v[i];
    return m / (double)(z - a);
}

double fc_quantile_sorted(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    double x = p * (double)(n - 1);
    size_t i = (size_t)x;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (x - (double)i) * (v[i + 1] - v[i]);
}
