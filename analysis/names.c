/* names.c — the analysis' job-wide kernel-name table (hash index over the name hashes seen
 * in the summaries) and the per-summary kernel lookups the detectors use: a kernel's
 * total time and its typical call in one summary. Pure functions over the context.
 */
#include "analysis/internal.h"
#include "common/grow.h"

#include <errno.h>
#include <stdlib.h>

long an_name_find(const struct an_names *nm, uint64_t hash)
{
    if (nm->cap == 0)
        return -1;
    size_t mask = nm->cap - 1;
    for (size_t i = (size_t)(hash ^ (hash >> 29)) & mask;; i = (i + 1) & mask) {
        uint32_t e = nm->slot[i];
        if (!e)
            return -1;
        if (nm->hash[e - 1] == hash)
            return (long)e - 1;
    }
}

int an_names_add(struct an_names *nm, uint64_t hash, uint8_t kclass, double ns)
{
    long at = an_name_find(nm, hash);
    if (at >= 0) {
        nm->total_ns[at] += ns;
        return 0;
    }
    if (2 * (nm->n + 1) > nm->cap) {
        /* the index doubles; the entry arrays, cap entries each like it, with it */
        const size_t cap = nm->cap ? nm->cap * 2 : 64;
        size_t hcap = nm->cap, kcap = nm->cap, tcap = nm->cap;
        uint32_t *slot = calloc(cap, sizeof *slot);
        const int h = argus_grow(&nm->hash, &hcap, cap, sizeof *nm->hash, cap);
        const int k = argus_grow(&nm->kclass, &kcap, cap, sizeof *nm->kclass, cap);
        const int t = argus_grow(&nm->total_ns, &tcap, cap, sizeof *nm->total_ns, cap);
        if (!slot || h || k || t) {
            free(slot);
            return -ENOMEM;
        }
        free(nm->slot);
        nm->slot = slot;
        nm->cap = cap;
        for (size_t e = 0; e < nm->n; e++) {
            size_t i = (size_t)(nm->hash[e] ^ (nm->hash[e] >> 29)) & (cap - 1);
            while (slot[i])
                i = (i + 1) & (cap - 1);
            slot[i] = (uint32_t)e + 1;
        }
    }
    size_t i = (size_t)(hash ^ (hash >> 29)) & (nm->cap - 1);
    while (nm->slot[i])
        i = (i + 1) & (nm->cap - 1);
    nm->hash[nm->n] = hash;
    nm->kclass[nm->n] = kclass;
    nm->total_ns[nm->n] = ns;
    nm->slot[i] = (uint32_t)++nm->n;
    return 0;
}

/* The first kmode of hash in s (or where it would be) when kmodes are sorted by hash. */
static uint32_t first_of(const struct argus_step_summary *s, uint32_t n, uint64_t hash)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->kmodes[mid].name_hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* argus_qsketch_count(s) == 0, stopping at the first value: a mode's sketch is seldom
 * empty, and the count would walk every bucket once more than the quantile does. */
static int sketch_empty(const struct argus_qsketch *s)
{
    if (s->zeros)
        return 0;
    for (int i = 0; i < s->nbuckets; i++)
        if (s->counts[i])
            return 0;
    return 1;
}

/* The typical call of one mode: the median of its sketch (the mean when the sketch is
 * empty, the shortest call when it had to collapse); 0 without a mode. */
static double mode_typical(const struct argus_kmode_stats *best)
{
    if (!best)
        return 0;
    if (best->count == 1)
        return (double)best->sum_ns;
    if (sketch_empty(&best->sketch))
        return (double)best->sum_ns / best->count;
    if (best->sketch.flags & ARGUS_QS_COLLAPSED)
        return (double)best->min_ns;
    return argus_qsketch_quantile(&best->sketch, 0.5);
}

double an_name_sum(const struct an_ctx *c, const struct argus_step_summary *s, uint64_t hash)
{
    uint32_t n = s->n_kmodes < ARGUS_MAX_KMODES ? s->n_kmodes : ARGUS_MAX_KMODES;
    double sum = 0;
    uint32_t i = 0;

    if (c->kmodes_sorted) {
        for (i = first_of(s, n, hash); i < n && s->kmodes[i].name_hash == hash; i++)
            sum += (double)s->kmodes[i].sum_ns;
        return sum;
    }
    for (i = 0; i < n; i++)
        if (s->kmodes[i].name_hash == hash)
            sum += (double)s->kmodes[i].sum_ns;
    return sum;
}

/* The typical call of the modes k[0..n) of one kernel (see an_name_typical). */
double an_modes_typical(const struct argus_kmode_stats *k, uint32_t n, double *calls)
{
    const struct argus_kmode_stats *best = NULL;
    double cnt = 0;

    for (uint32_t i = 0; i < n; i++) {
        cnt += k[i].count;
        if (k[i].count && (!best || k[i].count > best->count))
            best = &k[i];
    }
    *calls = cnt;
    return mode_typical(best);
}

double an_name_typical(const struct an_ctx *c, const struct argus_step_summary *s,
                       uint64_t hash, double *calls)
{
    uint32_t n = s->n_kmodes < ARGUS_MAX_KMODES ? s->n_kmodes : ARGUS_MAX_KMODES;
    const struct argus_kmode_stats *best = NULL;
    double cnt = 0;

    if (c->kmodes_sorted) {
        const uint32_t i = first_of(s, n, hash);
        uint32_t e = i;
        while (e < n && s->kmodes[e].name_hash == hash)
            e++;
        return an_modes_typical(s->kmodes + i, e - i, calls);
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        if (k->name_hash != hash)
            continue;
        cnt += k->count;
        if (k->count && (!best || k->count > best->count))
            best = k;
    }
    *calls = cnt;
    return mode_typical(best);
}
