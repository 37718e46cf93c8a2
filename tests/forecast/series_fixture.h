/* series_fixture.h — internal to tests/forecast: what the forecast's unit tests
 * (test_forecast.c, test_drift.c) share to make and judge step series: a seeded RNG,
 * a 2-rank job store of given step times, the Kolmogorov-Smirnov distance between
 * held-out steps and a modelled law of one step, and whether a forecast says something. Returns values; asserts nothing (the
 * tests do); no global state (the RNG's state is the caller's).
 */
#ifndef ARGUS_TESTS_FORECAST_SERIES_FIXTURE_H
#define ARGUS_TESTS_FORECAST_SERIES_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "store/jobstore.h"

/* A 64-bit LCG on *s: uniform in [0, 1); a standard normal (Box-Muller, one of the pair). */
double sfx_unif(uint64_t *s);
double sfx_gauss(uint64_t *s);
/* A 2-rank job of steps 0 .. n - 1 lasting ms[s] (rank 0) and 0.97 ms[s] (rank 1), back to
 * back from t = 1 s, the store keeping every step; NULL when the store refused one. */
struct argus_jobstore *sfx_store_series(const double *ms, int n);
/* The same with the steps numbered first .. first + n - 1 (a job whose first marks came
 * before Argus saw any). */
struct argus_jobstore *sfx_store_series_at(const double *ms, int n, uint64_t first);
/* 1 when one of fc's assumptions contains what, else 0. */
struct argus_forecast;
int sfx_said(const struct argus_forecast *fc, const char *what);
/* qsort's comparison of doubles, ascending. */
int sfx_cmp_d(const void *a, const void *b);
/* KS distance (as bench/forecast judges it) between the sorted sample x[0..n) and the law
 * whose P1..P99 are q (ARGUS_FC_NSTEPQ values; linear between them, the ends extended by
 * their last gap): against the law's distribution function and its left limit at every
 * distinct sample value, so that ties (steps logged in whole milliseconds) are judged
 * fairly. O(n x ARGUS_FC_NSTEPQ). */
double sfx_ks_law(const double *q, const double *x, size_t n);

#endif /* ARGUS_TESTS_FORECAST_SERIES_FIXTURE_H */
