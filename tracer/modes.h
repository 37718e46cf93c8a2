/* modes.h — internal to tracer/: the sorting and per-kernel mode splitting used by the
 * step summariser. Pure functions over caller-owned arrays; nothing allocates, nothing
 * keeps state, any thread.
 */
#ifndef ARGUS_TRACER_MODES_H
#define ARGUS_TRACER_MODES_H

#include <stddef.h>
#include <stdint.h>

/* Most modes one kernel gets in one step. */
#define ARGUS_MODES_MAX 4

/* Below this many points the ratio-gap rule is used (a KDE needs points). */
#define ARGUS_MODES_KDE_MIN 8
/* KDE grid size, bandwidth floor (log2 units: ~1% of a duration) and prominence gate:
 * two peaks stay apart only when the valley <= gate x the lower peak. */
#define ARGUS_KDE_GRID 128
#define ARGUS_KDE_HMIN 0.0144
#define ARGUS_KDE_PROMINENCE 0.5

/* Split where next >= ARGUS_MODES_RATIO_NUM / ARGUS_MODES_RATIO_DEN x previous (1.5x). */
#define ARGUS_MODES_RATIO_NUM 3
#define ARGUS_MODES_RATIO_DEN 2

/* Duration keys pack a duration and a phase: key = duration << ARGUS_DKEY_SHIFT | phase,
 * so sorting keys sorts by duration. Durations above 2^61 ns are clamped. */
#define ARGUS_DKEY_SHIFT 3
#define ARGUS_DKEY_MAX_NS ((UINT64_C(1) << (64 - ARGUS_DKEY_SHIFT)) - 1)

static inline uint64_t argus_dkey(uint64_t dur_ns, unsigned phase)
{
    if (dur_ns > ARGUS_DKEY_MAX_NS)
        dur_ns = ARGUS_DKEY_MAX_NS;
    return dur_ns << ARGUS_DKEY_SHIFT | (phase & ((1u << ARGUS_DKEY_SHIFT) - 1));
}
static inline uint64_t argus_dkey_dur(uint64_t key) { return key >> ARGUS_DKEY_SHIFT; }
static inline unsigned argus_dkey_phase(uint64_t key)
{
    return (unsigned)(key & ((1u << ARGUS_DKEY_SHIFT) - 1));
}

struct argus_sort_pair {
    uint64_t key;
    uint64_t val;
};

/* Sort a[0..n) by key, ascending and stable (LSD radix over the key bits that differ;
 * insertion sort for small n). tmp must hold n pairs; the result is in a. */
void argus_sort_pairs(struct argus_sort_pair *a, struct argus_sort_pair *tmp, size_t n);

/* Split v[0..n) (sorted by key, durations via argus_dkey_dur) into modes and write
 * bounds[0] = 0 < bounds[1] < ... < bounds[m] = n; returns m (1..ARGUS_MODES_MAX; 0 when
 * n == 0). Mode 0 is the fastest.
 * n >= ARGUS_MODES_KDE_MIN (and scratch given, n doubles): argus_modes_kde on log2 of the
 * durations. Otherwise the ratio-gap rule: a split between i and i+1 when
 * dur[i+1] >= 1.5 x dur[i]; of more than ARGUS_MODES_MAX - 1 such gaps only the largest
 * ratios are kept (on equal ratios the earlier gap wins). */
unsigned argus_modes_split(const struct argus_sort_pair *v, size_t n,
                           size_t bounds[ARGUS_MODES_MAX + 1], double *scratch);

struct argus_kde_info {
    double h, lo, dx; /* bandwidth, grid origin and step (log units of the input) */
};

/* Modes of y[0..n) (ascending, any log scale): binned KDE on ARGUS_KDE_GRID points over
 * [min - 3h, max + 3h], Gaussian truncated at 4h, h = sigma * n^(-1/5) (Scott) with sigma =
 * min(sd, IQR / 1.349), h >= ARGUS_KDE_HMIN. Neighbouring peaks merge unless the valley <=
 * ARGUS_KDE_PROMINENCE x the lower peak and both sides hold >= max(2, n / 100) points;
 * beyond ARGUS_MODES_MAX the closest pair merges first. Cuts fall at the valleys. Scott
 * over-smooths mixtures (sigma includes the spread between modes), so passes at h/2 and h/4
 * are tried too and the finest split that passes the gate wins; in those passes each side
 * needs max(5, n / 20) points and a valley must be significantly empty (its points within
 * +-min(Scott's h, half the way to the lower peak), plus 3 Poisson sigmas and 1, below half
 * of those around the lower peak). Same output contract as argus_modes_split. info (the
 * winning pass's grid) may be NULL. */
unsigned argus_modes_kde(const double *y, size_t n, size_t bounds[ARGUS_MODES_MAX + 1],
                         struct argus_kde_info *info);

#endif /* ARGUS_TRACER_MODES_H */
