/* stats.c — robust statistics of stats.h (median, MAD, quantiles, robust z). Pure
 * functions; sorting is deterministic (total order on doubles, no NaN expected). */
#include "analysis/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void argus_stats_sort(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_double);
}

static double median_sorted(const double *s, size_t n)
{
    if (n == 0)
        return NAN;
    if (n % 2)
        return s[n / 2];
    return 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double argus_stats_median(double *v, size_t n)
{
    argus_stats_sort(v, n);
    return median_sorted(v, n);
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
    out->n = n;
    if (n == 0) {
        out->ref = NAN;
        out->scale = NAN;
        return;
    }
    argus_stats_sort(v, n);
    size_t h = (n + 1) / 2;
    double ref = median_sorted(v, h);
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
