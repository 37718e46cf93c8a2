/* period.h — the step period of a job whose traffic has no clean end-of-step burst (ZeRO-3,
 * FSDP: an all-gather or reduce-scatter per layer, spread over the whole step), from the
 * autocorrelation of its byte rate, and each endpoint's step boundaries tracked with it.
 *
 * fl_acf_period: the series x[n] (bytes per bin) minus its mean; its autocorrelation
 * r(L) = n / (n - L) x sum_i x_i x_(i+L) / sum_i x_i^2 (unbiased: every multiple of the
 * period scores as the period itself) for lags 2 .. n/3 (three periods at least); the
 * period is the first local maximum within FL_ACF_NEAR of the highest one (the fundamental:
 * the layers' shorter period of a ZeRO-3 step scores less, as the layers' pattern is not
 * the step's); then, as a period that falls between bins splits its peaks and a multiple
 * of it can score higher, the smallest L/k (k 2..6) with a local maximum within 1.5 bins
 * scoring FL_ACF_SUB of L's; refined between bins by a parabola through it and its
 * neighbours. The series is smoothed by [1 2 1] / 4 first. None (0) when the highest is
 * below 0.3. O(n^2 / 3) time: the caller bounds n (512 bins).
 *
 * fl_track_steps: an endpoint's bursts iv[n] (sorted, disjoint) and the period T. The
 * first boundary is the middle of the longest gap between bursts within 1.25 T of the
 * first burst; each next one, from the previous b: once three boundaries are known, the
 * first gap in [b + 3T/4, b + 2T] at least 0.8 of their typical gap (the median of the
 * last 16: a slow step's boundary is found where it is); else the longest gap in
 * [b + 3T/4, b + 5T/4]; b + T when there is none. So an error in T does not accumulate.
 * No boundary with less than T/2 of traffic after it (the last step is not cut short).
 * A step ends with the end of the last burst before its boundary, its traffic starts
 * with the first burst after it. Each gap is looked at a bounded number of times: O(n).
 *
 * Neither allocates; any thread.
 */
#ifndef ARGUS_FLOWS_PERIOD_H
#define ARGUS_FLOWS_PERIOD_H

#include <stddef.h>
#include <stdint.h>

struct fl_iv {
    uint64_t ts, te;
};

#define FL_ACF_NEAR 0.9
#define FL_ACF_SUB 0.6

/* The period in bins (0: none) and *peak its autocorrelation; r: room for n / 3 + 2
 * doubles (the autocorrelation). x is modified (its mean removed). */
double fl_acf_period(double *x, size_t n, double *r, double *peak);
/* Step ends and traffic starts into end[] and start[] (room for cap steps); returns the
 * number of steps (at most cap). */
size_t fl_track_steps(const struct fl_iv *iv, size_t n, double period_ns, uint64_t *end,
                      uint64_t *start, size_t cap);

#endif /* ARGUS_FLOWS_PERIOD_H */
