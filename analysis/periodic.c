/* periodic.c — step-time spikes that recur at a constant period (a checkpoint every 500
 * steps, an evaluation every 100) reported once (docs/ALGORITHMS.md, "Periodic events"):
 * one iteration_jitter with period_steps, the steps it hit, the cost of one occurrence and
 * its share of the job's wall time.
 *
 * The recurrence is itself evidence, so the spikes of a pattern may be weaker one by one
 * than a lone spike must be (robust z >= PERIOD_WEAK_Z instead of opts.z): at 9 % step
 * variability a 1.7x checkpoint step does not always reach z 5. Candidate periods are the
 * gaps between consecutive spikes (and twice them, for a missed occurrence); for each,
 * the spikes whose step id falls on one residue (within one step for periods of 20 and
 * more) are the pattern. It must
 * hit PERIOD_MIN_SPIKES steps or more, at least PERIOD_COVER of the occurrences expected
 * from its first one to the end of the judged run (a pattern that stops is no period), with two strong spikes (z >= opts.z) or five weak ones. At most PERIOD_MAX
 * spikes (the strongest) take part: O(PERIOD_MAX^2 log PERIOD_MAX) whatever the run's
 * length. The pattern's spikes are taken out of fl, so that the per-cluster jitter
 * detector does not report them again.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERIOD_MIN_SPIKES 3
#define PERIOD_WEAK_Z 3.0
#define PERIOD_COVER 0.7
#define PERIOD_MAX 128
#define PERIOD_TOL_FROM 20

struct spike {
    uint64_t id;   /* step id of the spike run's first step */
    size_t i;      /* its index among the valid steps */
    double z;
};

static int cmp_u64(const void *x, const void *y)
{
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static int cmp_z_desc(const void *x, const void *y)
{
    const struct spike *a = x, *b = y;
    return (a->z < b->z) - (a->z > b->z);
}

static int cmp_id(const void *x, const void *y)
{
    const struct spike *a = x, *b = y;
    return (a->id > b->id) - (a->id < b->id);
}

static uint64_t circ(uint64_t a, uint64_t b, uint64_t P)
{
    const uint64_t d = a > b ? a - b : b - a;
    return d < P - d ? d : P - d;
}

/* How far from the pattern's residue a spike may fall: one step for long periods (a
 * checkpoint that lands a step late), none for short ones, where one step either way
 * would cover most residues. */
static uint64_t tol(uint64_t P)
{
    return P >= PERIOD_TOL_FROM ? 1 : 0;
}

/* The residue mod P that the most spikes sit within one step of; *hits their count. */
static uint64_t best_residue(const struct spike *sp, size_t n, uint64_t P, uint64_t *res,
                             size_t *hits)
{
    for (size_t j = 0; j < n; j++)
        res[j] = sp[j].id % P;
    qsort(res, n, sizeof *res, cmp_u64);
    size_t best = 0;
    uint64_t at = res[0];
    for (size_t j = 0; j < n; j++) { /* residues within 1 of res[j], circularly */
        size_t k = 0;
        for (size_t q = 0; q < n; q++)
            k += circ(res[q], res[j], P) <= tol(P);
        if (k > best) {
            best = k;
            at = res[j];
        }
        while (j + 1 < n && res[j + 1] == res[j])
            j++;
    }
    *hits = best;
    return at;
}

int an_periodic(struct an_ctx *c, const size_t *idx, const double *x, size_t m,
                const double *rt, const double *zz, const double *base, uint8_t *fl,
                size_t long_run)
{
    struct spike *sp = malloc((m ? m : 1) * sizeof *sp);
    uint64_t *res = malloc((m ? m : 1) * sizeof *res);
    size_t n = 0;
    int rc = 0;
    if (!sp || !res) {
        rc = -ENOMEM;
        goto out;
    }
    /* weak spikes: runs of weakly flagged steps shorter than a level shift */
    for (size_t i = 1; i < m; i++) {
        if (!(rt[i] >= c->o.ratio && zz[i] >= PERIOD_WEAK_Z) ||
            (rt[i - 1] >= c->o.ratio && zz[i - 1] >= PERIOD_WEAK_Z))
            continue;
        size_t j = i;
        double z = zz[i];
        while (j + 1 < m && rt[j + 1] >= c->o.ratio && zz[j + 1] >= PERIOD_WEAK_Z)
            z = fmax(z, zz[++j]);
        if (j - i + 1 < long_run)
            sp[n++] = (struct spike){ c->step_id[idx[i]], i, z };
    }
    if (n < PERIOD_MIN_SPIKES)
        goto out;
    if (n > PERIOD_MAX) {
        qsort(sp, n, sizeof *sp, cmp_z_desc);
        n = PERIOD_MAX;
    }
    qsort(sp, n, sizeof *sp, cmp_id);
    uint64_t bestP = 0, bestR = 0;
    size_t bestH = 0;
    for (size_t g = 0; g + 1 < n; g++)
        for (uint64_t mult = 1; mult <= 2; mult++) {
            const uint64_t P = (sp[g + 1].id - sp[g].id) * mult;
            if (P < 2)
                continue;
            size_t h;
            const uint64_t r = best_residue(sp, n, P, res, &h);
            if (h > bestH || (h == bestH && P < bestP)) {
                bestH = h;
                bestP = P;
                bestR = r;
            }
        }
    if (bestH < PERIOD_MIN_SPIKES)
        goto out;
    /* the pattern: its spikes, its span, its strength */
    size_t hits = 0, strong = 0, first = 0, last = 0;
    for (size_t j = 0; j < n; j++)
        if (circ(sp[j].id % bestP, bestR, bestP) <= tol(bestP)) {
            if (!hits)
                first = j;
            last = j;
            hits++;
            strong += sp[j].z >= c->o.z;
        }
    /* the occurrences the whole judged run expects from the first hit on: a pattern
     * that stops early is no period (three stalls 4 steps apart in a run of 60) */
    const uint64_t run_last = c->step_id[idx[m - 1]];
    const double expect = floor((double)(run_last - sp[first].id) / (double)bestP) + 1;
    if ((double)hits < PERIOD_COVER * expect || (strong < 2 && hits < 5))
        goto out;
    struct an_cand *cand;
    double *zs = malloc(3 * hits * sizeof *zs), cost = 0, total = 0;
    if (!zs) {
        rc = -ENOMEM;
        goto out;
    }
    double *rs = zs + hits, *es = rs + hits;
    size_t q = 0;
    for (size_t j = first; j <= last; j++) {
        if (circ(sp[j].id % bestP, bestR, bestP) > tol(bestP))
            continue;
        const size_t i = sp[j].i;
        zs[q] = zz[i];
        rs[q] = rt[i];
        es[q++] = x[i] - base[i];
        cost += x[i] - base[i];
    }
    for (size_t i = 0; i < m; i++)
        total += x[i];
    const double zmed = argus_stats_median(zs, q), rmed = argus_stats_median(rs, q);
    const double emed = argus_stats_median(es, q);
    free(zs);
    const size_t a = idx[sp[first].i], b = idx[sp[last].i];
    if ((rc = an_push_cand(c, ARGUS_AK_ITERATION_JITTER, 1, a, b, idx[sp[first].i], rmed,
                           zmed, emed, &cand)))
        goto out;
    /* evident once three occurrences were seen */
    size_t seen = 0;
    for (size_t j = first; j <= last; j++)
        if (circ(sp[j].id % bestP, bestR, bestP) <= tol(bestP)) {
            const size_t i = sp[j].i;
            if (++seen == PERIOD_MIN_SPIKES)
                cand->a.detected_at_step = c->step_id[idx[i]];
            if (cand->a.n_hits < ARGUS_ANOMALY_MAX_HITS)
                cand->a.hits[cand->a.n_hits++] = c->step_id[idx[i]];
            cand->a.n_hits_total++;
            for (size_t k = i; k < m && fl && (k == i || fl[k]); k++)
                fl[k] = 0; /* reported here, not again per cluster */
        }
    cand->a.period_steps = (uint32_t)bestP;
    cand->a.n_occurrences = (uint32_t)hits;
    cand->a.cost_share = total > 0 ? cost / total : 0;
    cand->a.data_level = ARGUS_DL_STEPS;
    cand->a.confidence = strong >= 3 ? 0.9 : strong >= 2 ? 0.75 : 0.6;
    snprintf(cand->a.evidence, sizeof cand->a.evidence,
             "periodic: a step-time spike every %llu steps, %zu times (steps %llu-%llu; "
             "%zu of them alone strong enough), each %.2fx the local median (+%.1f ms, "
             "median z %.1f), %.1f%% of the job's wall time; recurring work such as "
             "checkpointing or evaluation; no rank stands out among its peers",
             (unsigned long long)bestP, hits, (unsigned long long)sp[first].id,
             (unsigned long long)sp[last].id, strong, rmed, emed / 1e6, zmed,
             100.0 * cand->a.cost_share);
    rc = 1;
out:
    free(sp);
    free(res);
    return rc;
}
