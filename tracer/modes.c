/* modes.c — stable radix sort of (key, value) pairs and the first-version mode split of
 * one kernel's sorted durations (ratio gaps, see modes.h). No allocation, no state: the
 * summariser passes its preallocated arrays. */
#include "tracer/modes.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)
#define RADIX_MASK (RADIX_SIZE - 1)
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
    /* Only the digits in which some keys differ need a pass. */
    for (size_t i = 1; i < n; i++)
        diff |= a[i].key ^ a[0].key;
    for (unsigned shift = 0; shift < 64; shift += RADIX_BITS) {
        if (((diff >> shift) & RADIX_MASK) == 0)
            continue;
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(src[i].key >> shift) & RADIX_MASK]++;
        uint32_t sum = 0;
        for (unsigned d = 0; d < RADIX_SIZE; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].key >> shift) & RADIX_MASK]++] = src[i];
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

unsigned argus_modes_split(const struct argus_sort_pair *v, size_t n,
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
