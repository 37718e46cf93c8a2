/* stats.h — robust statistics used by the detectors: median, MAD, quantiles and robust
 * z-scores; public, so that a writer computes its medians the same way (report/svg.c).
 * Pure functions on caller-owned arrays; no allocation; any thread.
 */
#ifndef ARGUS_ANALYSIS_STATS_H
#define ARGUS_ANALYSIS_STATS_H

#include <stddef.h>

/* 1.4826 * MAD estimates sigma for normal data. */
#define ARGUS_MAD_SIGMA 1.4826
/* For the lower half of a normal sample, sigma ~= 2.5 * (median absolute deviation of the
 * lower half from its own median). */
#define ARGUS_MADLOW_SIGMA 2.5

/* Sort v[0..n) ascending in place (NaN-free input). */
void argus_stats_sort(double *v, size_t n);
/* Median of v[0..n), by selection (O(n)): reorders v (not a full sort). NAN when n == 0. */
double argus_stats_median(double *v, size_t n);
/* Median absolute deviation of v from med; tmp holds n doubles (v is left unchanged).
 * NAN when n == 0. */
double argus_stats_mad(const double *v, size_t n, double med, double *tmp);
/* Quantile q in [0,1] of sorted s[0..n), linear interpolation between order statistics.
 * NAN when n == 0. */
double argus_stats_quantile_sorted(const double *s, size_t n, double q);

/* A robust location and scale of a sample. */
struct argus_robust {
    double ref;   /* location */
    double scale; /* spread (sigma-like), floored */
    size_t n;     /* sample size */
};

/* ref = median, scale = max(1.4826 * MAD, floor_frac * |ref|). v is reordered; tmp
 * holds n doubles. */
void argus_stats_robust(double *v, size_t n, double floor_frac, double *tmp,
                        struct argus_robust *out);
/* Lower-half reference: ref = median of the lower ceil(n/2) values, scale =
 * max(2.5 * MAD of that lower half, floor_frac * |ref|). Stays on the normal members
 * even when up to half of the sample is inflated (a whole DP replica of 2 TP ranks among
 * 4, or 4 ranks of a stage of 8). v is reordered (its lower half first); tmp holds n
 * doubles. */
void argus_stats_robust_low(double *v, size_t n, double floor_frac, double *tmp,
                            struct argus_robust *out);
/* The same, and *median (when not NULL) = argus_stats_median of the whole of v, read off
 * the same partition (no second selection). */
void argus_stats_robust_low_med(double *v, size_t n, double floor_frac, double *tmp,
                                struct argus_robust *out, double *median);
/* Noise of a series that may shift level: 1.4826 * MAD(v[i+1] - v[i]) / sqrt(2) over the
 * finite neighbours (NaN entries are skipped); 0 with fewer than 3 differences. tmp
 * holds n doubles. A level shift moves only one difference, so a window of anomalous
 * steps barely raises it. */
double argus_stats_diff_sigma(const double *v, size_t n, double *tmp, double *tmp2);
/* (x - ref) / scale; 0 when scale <= 0. */
double argus_stats_z(double x, const struct argus_robust *r);
/* x / ref; 0 when ref <= 0. */
double argus_stats_ratio(double x, const struct argus_robust *r);

#endif /* ARGUS_ANALYSIS_STATS_H */
