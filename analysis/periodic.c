/* periodic.c — step-time spikes that recur at a constant period (a checkpoint every 500
 * steps, an evaluation every 100) reported once (docs/ALGORITHMS.md, "Periodic events"):
 * one iteration_jitter with period_steps, the steps it hit, the cost of one occurrence and
 * its share of the job's wall time.
 *
 * The recurrence is itself evidence, so the spikes of a pattern may be weaker one by one
 * than a lone spike must be. A weak spike is a run of consecutive steps each at robust z
 * >= PERIOD_LOW_Z, shorter than a level shift, whose strength (its largest z, or the
 * Stouffer z of all its steps, sum / sqrt(len), for a checkpoint that spans two steps)
 * is >= PERIOD_WEAK_Z; its step is its strongest one. Candidate periods are the gaps
 * from each spike to the next and the one after (and twice them, for a missed
 * occurrence; and one step either side for periods of 20 and more, where a checkpoint's
 * strongest step is K or K + 1); for each, a residue and one spike per occurrence within
 * tol(P) of it are a pattern. A pattern must hit PERIOD_MIN_SPIKES occurrences or more,
 * at least PERIOD_COVER of those expected from its first hit to the end of the judged run
 * (a pattern that stops is no period), and have two spikes strong alone (a step at z >=
 * opts.z) or be unlikely by chance: with q the density of the other spikes, an
 * occurrence's window of w steps holds one by chance with p0 = 1 - (1 - q)^w; the
 * binomial tail (hits - 1 of occurrences - 1, the first hit given) times the P / w
 * residues the period offers must be <= PERIOD_ALPHA. The least likely pattern wins; its
 * period is refitted to the slope of its hits. At most PERIOD_MAX spikes (the strongest)
 * take part: O(PERIOD_MAX^3) whatever the run's length. The pattern's spikes are taken
 * out of fl, so that the per-cluster jitter detector does not report them again.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERIOD_MIN_SPIKES 3
#define PERIOD_LOW_Z 1.5
#define PERIOD_WEAK_Z 3.0
#define PERIOD_ALPHA 2e-3
#define PERIOD_COVER 0.6
#define PERIOD_MAX 128
#define PERIOD_TOL_FROM 20

struct spike {
    uint64_t id;   /* step id of the spike run's strongest step */
    size_t i;      /* its run's first step's index among the valid steps */
    size_t len;    /* its run's steps */
    double z;      /* its strength: max z or Stouffer z of the run */
    double zmax;   /* its strongest step's z */
    int hit;       /* one of the reported pattern's occurrences */
};

/* A pattern: period, residue, hits, strong hits, the chance of it, how exact. */
struct pattern {
    uint64_t P, r;
    size_t hits, strong;
    double chance;
    uint64_t dev; /* the hits' summed distance to the residue */
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

/* The occurrence of residue r that step id falls near (within tol(P)). */
static uint64_t occ(uint64_t id, uint64_t r, uint64_t P)
{
    return (id + P + tol(P) - r) / P;
}

/* P(Bin(N, p) >= k), summed from k up (N is at most PERIOD_MAX / PERIOD_COVER here). */
static double binom_tail(size_t k, size_t N, double p)
{
    if (k == 0)
        return 1;
    if (k > N || p <= 0)
        return 0;
    if (p >= 1)
        return 1;
    const double lp = log(p), lq = log1p(-p);
    double sum = 0;
    for (size_t i = k; i <= N; i++)
        sum += exp(lgamma((double)N + 1) - lgamma((double)i + 1) -
                   lgamma((double)(N - i) + 1) + (double)i * lp + (double)(N - i) * lq);
    return fmin(sum, 1);
}

/* The period that the pattern's hits keep: the least-squares slope of their step ids
 * over their occurrence numbers, rounded; b->P when under two hits. */
static uint64_t refit(const struct spike *sp, size_t n, const struct pattern *b)
{
    double sk = 0, si = 0, skk = 0, ski = 0, h = 0;
    uint64_t last = UINT64_MAX;
    for (size_t j = 0; j < n; j++) {
        const uint64_t k = occ(sp[j].id, b->r, b->P);
        if (circ(sp[j].id % b->P, b->r, b->P) > tol(b->P) || k == last)
            continue;
        last = k;
        sk += (double)k;
        si += (double)sp[j].id;
        skk += (double)k * (double)k;
        ski += (double)k * (double)sp[j].id;
        h++;
    }
    const double den = h * skk - sk * sk;
    if (h < 2 || den <= 0)
        return b->P;
    const double slope = (h * ski - sk * si) / den;
    return slope >= 2 ? (uint64_t)llround(slope) : b->P;
}

/* The less likely by chance, then more hits, then closer to its residue, then shorter. */
static int better(double chance, size_t h, uint64_t dev, uint64_t P, const struct pattern *b)
{
    if (chance != b->chance)
        return chance < b->chance;
    if (h != b->hits)
        return h > b->hits;
    if (dev != b->dev)
        return dev < b->dev;
    return P < b->P;
}

/* The most significant pattern of period P among the n spikes (by id): for each residue a
 * spike sits on, its hits, strong hits, the occurrences expected from its first hit to
 * run_last, the coverage gate and the chance bound. judged: the steps judged; strong_z:
 * opts.z. Returns 1 and *best when one passes the gates and beats best->chance. */
static int best_pattern(const struct spike *sp, size_t n, uint64_t P, uint64_t run_last,
                        size_t judged, double strong_z, struct pattern *best)
{
    const uint64_t t = tol(P), w = 2 * t + 1;
    int found = 0;
    for (size_t j = 0; j < n; j++) {
        const uint64_t r = sp[j].id % P;
        size_t h = 0, strong = 0, first = n, again = 0;
        uint64_t occ_last = UINT64_MAX, dev = 0;
        for (size_t q = 0; q < n; q++)
            if (circ(sp[q].id % P, r, P) <= t && occ(sp[q].id, r, P) != occ_last) {
                occ_last = occ(sp[q].id, r, P); /* one hit per occurrence */
                dev += circ(sp[q].id % P, r, P);
                again += q < j && sp[q].id % P == r;
                if (first == n)
                    first = q;
                h++;
                strong += sp[q].zmax >= strong_z;
            }
        if (again || h < PERIOD_MIN_SPIKES) /* each residue once */
            continue;
        /* the occurrences whose window starts in [first hit, run_last] */
        const double expect =
            (double)(occ(run_last, r, P) - occ(sp[first].id, r, P) + 1);
        if ((double)h < PERIOD_COVER * expect)
            continue;
        const double off = (double)judged - expect * (double)w;
        /* the other spikes' density, one more than seen (none seen is not none) */
        const double q = off > 0 ? (double)(n - h + 1) / off : 1;
        const double p0 = 1 - pow(1 - fmin(q, 1), (double)w);
        const double chance = binom_tail(h - 1, (size_t)expect - 1, p0) *
                              fmax(1, (double)P / (double)w);
        if (chance > PERIOD_ALPHA && strong < 2) /* or two spikes strong alone */
            continue;
        if (best->P && !better(chance, h, dev, P, best))
            continue;
        *best = (struct pattern){ P, r, h, strong, chance, dev };
        found = 1;
    }
    return found;
}

int an_periodic(struct an_ctx *c, const size_t *idx, const double *x, size_t m,
                const double *rt, const double *zz, const double *base, uint8_t *fl,
                size_t long_run)
{
    struct spike *sp = malloc((m ? m : 1) * sizeof *sp);
    /* candidate periods: 2 gaps x 2 multiples x 3 per spike */
    uint64_t *cp = malloc(12 * (m < PERIOD_MAX ? m + 1 : PERIOD_MAX) * sizeof *cp);
    size_t n = 0;
    int rc = 0;
    if (!sp || !cp) {
        rc = -ENOMEM;
        goto out;
    }
    /* weak spikes: runs of weakly raised steps shorter than a level shift, strong enough
     * at their largest step or all together */
    size_t judged = 0;
    for (size_t i = 1; i < m; i++) {
        judged += base[i] > 0;
        if (!(rt[i] >= c->o.ratio && zz[i] >= PERIOD_LOW_Z) ||
            (rt[i - 1] >= c->o.ratio && zz[i - 1] >= PERIOD_LOW_Z))
            continue;
        size_t j = i, top = i;
        double sum = zz[i];
        while (j + 1 < m && rt[j + 1] >= c->o.ratio && zz[j + 1] >= PERIOD_LOW_Z) {
            sum += zz[++j];
            top = zz[j] > zz[top] ? j : top;
        }
        const size_t len = j - i + 1;
        const double z = fmax(zz[top], sum / sqrt((double)len));
        if (len < long_run && z >= PERIOD_WEAK_Z)
            sp[n++] = (struct spike){ c->step_id[idx[top]], i, len, z, zz[top], 0 };
    }
    if (n < PERIOD_MIN_SPIKES)
        goto out;
    if (n > PERIOD_MAX) {
        qsort(sp, n, sizeof *sp, cmp_z_desc);
        n = PERIOD_MAX;
    }
    qsort(sp, n, sizeof *sp, cmp_id);
    /* candidate periods: gaps to the next spike and the one after, twice them, and one
     * step either side where the residue tolerance is a step; each distinct one once */
    size_t np = 0;
    for (size_t g = 0; g + 1 < n; g++)
        for (size_t d = 1; d <= 2 && g + d < n; d++)
            for (uint64_t mult = 1; mult <= 2; mult++) {
                const uint64_t P = (sp[g + d].id - sp[g].id) * mult;
                if (P < 2)
                    continue;
                cp[np++] = P;
                if (P >= PERIOD_TOL_FROM + 1) {
                    cp[np++] = P - 1;
                    cp[np++] = P + 1;
                }
            }
    qsort(cp, np, sizeof *cp, cmp_u64);
    const uint64_t run_last = c->step_id[idx[m - 1]];
    struct pattern best = { 0 };
    for (size_t k = 0; k < np; k++)
        if (!k || cp[k] != cp[k - 1])
            best_pattern(sp, n, cp[k], run_last, judged, c->o.z, &best);
    if (best.P >= 2) { /* the period the hits themselves keep (least squares), when
                        * the tolerance let a neighbouring one fit */
        const uint64_t P2 = refit(sp, n, &best);
        struct pattern alt = { 0 };
        if (P2 != best.P && P2 >= 2 &&
            best_pattern(sp, n, P2, run_last, judged, c->o.z, &alt))
            best = alt;
    }
    if (!best.P)
        goto out;
    const uint64_t bestP = best.P, bestR = best.r;
    /* the pattern: its spikes, its span, its strength */
    size_t hits = 0, strong = 0, first = 0, last = 0;
    uint64_t occ_last = UINT64_MAX;
    for (size_t j = 0; j < n; j++)
        if (circ(sp[j].id % bestP, bestR, bestP) <= tol(bestP) &&
            occ(sp[j].id, bestR, bestP) != occ_last) {
            occ_last = occ(sp[j].id, bestR, bestP);
            sp[j].hit = 1; /* one hit per occurrence: the first spike near it */
            if (!hits)
                first = j;
            last = j;
            hits++;
            strong += sp[j].zmax >= c->o.z;
        }
    struct an_cand *cand;
    double *zs = malloc(3 * hits * sizeof *zs), cost = 0, total = 0;
    if (!zs) {
        rc = -ENOMEM;
        goto out;
    }
    double *rs = zs + hits, *es = rs + hits;
    size_t q = 0;
    for (size_t j = first; j <= last; j++) { /* an occurrence: all of its run's steps */
        if (!sp[j].hit)
            continue;
        double r = 0, e = 0;
        for (size_t i = sp[j].i; i < sp[j].i + sp[j].len; i++) {
            r = fmax(r, rt[i]);
            e += x[i] - base[i];
        }
        zs[q] = sp[j].z;
        rs[q] = r;
        es[q++] = e;
        cost += e;
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
        if (sp[j].hit) {
            const size_t i = sp[j].i;
            if (++seen == PERIOD_MIN_SPIKES)
                cand->a.detected_at_step = sp[j].id;
            if (cand->a.n_hits < ARGUS_ANOMALY_MAX_HITS)
                cand->a.hits[cand->a.n_hits++] = sp[j].id;
            cand->a.n_hits_total++;
            for (size_t k = i; k < m && fl && (k < i + sp[j].len || fl[k]); k++)
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
    free(cp);
    return rc;
}
