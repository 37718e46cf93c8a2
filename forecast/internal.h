/* internal.h — internal to forecast/: the RNG and order statistics the forecast's files
 * share (forecast/sample.c holds them). No allocation, no state beyond the caller's seed.
 */
#ifndef ARGUS_FORECAST_INTERNAL_H
#define ARGUS_FORECAST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64: the next value of the sequence of state *s; uniform in [0, 1). */
uint64_t fc_rng_next(uint64_t *s);
double fc_rng_unif(uint64_t *s);
/* Sort ascending; the p-quantile (0..1) of sorted v[0..n) by linear interpolation, 0 when
 * n is 0. */
void fc_sort(double *v, size_t n);
double fc_quantile_sorted(const double *v, size_t n, double p);

#endif /* ARGUS_FORECAST_INTERNAL_H */
