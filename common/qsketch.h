/* qsketch.h — a small mergeable quantile sketch of positive durations (DDSketch-style).
 *
 * Values x > 0 fall in log buckets i = ceil(log_gamma(x)), gamma = (1+a)/(1-a) with
 * a = ARGUS_QSKETCH_ALPHA, so every quantile read back is within a relative error a of
 * a true sample value of that rank — as long as no bucket was collapsed. At most
 * ARGUS_QSKETCH_BUCKETS consecutive buckets are kept; when a value or a merge needs a
 * wider span, the lowest buckets are folded into the lowest kept one (as DDSketch's
 * lowest-collapse) and ARGUS_QS_COLLAPSED is set: then only quantiles above the
 * collapsed mass keep the bound.
 *
 * Merging adds bucket counts: exact, associative and commutative (the same inputs give
 * byte-identical sketches whatever the order, provided no collapse happened).
 * No allocation; the struct is plain data and may be copied. Not thread-safe.
 */
#ifndef ARGUS_COMMON_QSKETCH_H
#define ARGUS_COMMON_QSKETCH_H

#include <stddef.h>
#include <stdint.h>

#define ARGUS_QSKETCH_ALPHA 0.02
#define ARGUS_QSKETCH_BUCKETS 48

enum { ARGUS_QS_COLLAPSED = 1 };

struct argus_qsketch {
    int32_t base;      /* bucket index of counts[0] */
    uint16_t nbuckets; /* valid span in counts, 0 when empty */
    uint16_t flags;    /* ARGUS_QS_COLLAPSED */
    uint32_t zeros;    /* values == 0 (kept apart: log undefined) */
    uint32_t counts[ARGUS_QSKETCH_BUCKETS];
};

void argus_qsketch_init(struct argus_qsketch *s);
/* Add one value (ns). */
void argus_qsketch_add(struct argus_qsketch *s, uint64_t value_ns);
/* Add n copies of a value. */
void argus_qsketch_add_n(struct argus_qsketch *s, uint64_t value_ns, uint32_t n);
/* dst += src. */
void argus_qsketch_merge(struct argus_qsketch *dst, const struct argus_qsketch *src);
/* Total count. */
uint64_t argus_qsketch_count(const struct argus_qsketch *s);
/* q in [0,1]; returns the representative value of the bucket holding rank
 * floor(q*(n-1)) (lower-median convention), 0 for an empty sketch. */
double argus_qsketch_quantile(const struct argus_qsketch *s, double q);

/* Quantile q of the sketch's values together with n exact values v (ascending, >= 0),
 * by the same lower-median convention, without adding them: a value of the sketch counts
 * at its bucket, an exact value before a bucket whose upper bound it does not pass. The
 * answer is an exact value when the rank falls on one, else a bucket's representative
 * (so within ARGUS_QSKETCH_ALPHA, collapse aside); 0 when both are empty. No log per value:
 * for a reader that holds the recent values exactly and the older ones in a sketch. */
double argus_qsketch_quantile_with(const struct argus_qsketch *s, const double *v, size_t n,
                                   double q);

#endif /* ARGUS_COMMON_QSKETCH_H */
