/* groups_infer.c — the DP-role communication groups inferred from collective end times,
 * for jobs that declared no layout and whose communicator memberships gave no DP-role
 * family (docs/ALGORITHMS.md, Layout, peer classes and groups). The members of one
 * communicator end each collective together (a collective ends when its last member
 * arrived, plus a transfer all of them share), while other groups end it at other times,
 * by the run's jitter.
 *
 * Per collective kernel name (the heaviest AN_INFER_NAMES, each held by at least half of
 * the ranks) over the latest AN_INFER_STEPS steps: each rank's step series of the name's
 * last end (argus_kmode_stats.last_end_ns, which the tracer sets) on rank 0's clock
 * (+ clock_offset_ns). Two ranks agree when, on at least AN_INFER_AGREE of the steps both
 * hold (>= AN_INFER_MIN_STEPS), the difference of their ends stays within tau of its
 * median: the median takes out a constant error of either clock, so offsets wrong by
 * hundreds of microseconds do not matter. tau = max(20 us, AN_INFER_TAU_FRAC x the median
 * over steps of the spread of the class's (per-rank median-centred) ends). Inside each
 * peer class, ranks join the first group whose first member they agree with; the partition
 * is refused when a rank agrees with two groups, when two members of a group disagree,
 * when fewer than AN_INFER_COVER of the ranks holding the name are in a group of >= 2,
 * when it has fewer than 2 such groups, or when every group is a whole peer class (the
 * classes say that already). Of the partitions of several names, the one with the largest
 * groups (then the most groups) plays the DP role, as groups.c chooses among families.
 *
 * Bounded: only for at most AN_INFER_MAX_RANKS ranks, and a partition is refused once its
 * pair comparisons pass AN_INFER_MAX_WORK step comparisons. Reads the context (cells,
 * classes, names); writes c->mgrp[0], mgrp_n[0], mgrp_max[0] and c->mgrp_inferred only,
 * exactly as groups.c does for a membership family, so nothing downstream changes.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AN_INFER_MAX_RANKS 4096
#define AN_INFER_STEPS 64        /* the latest steps held */
#define AN_INFER_MIN_STEPS 8     /* steps two ranks must share to be compared */
#define AN_INFER_NAMES 8         /* collective names tried, heaviest first */
#define AN_INFER_AGREE 0.9       /* share of shared steps within tau */
#define AN_INFER_TAU_NS 20000.0  /* tau floor */
#define AN_INFER_TAU_FRAC 0.1    /* tau: share of the typical spread of ends in a step */
#define AN_INFER_COVER 0.9       /* ranks holding the name that must be in a group */
#define AN_INFER_MAX_WORK ((size_t)1 << 25) /* step comparisons per name */

struct infer {
    struct an_ctx *c;
    size_t s0, T;     /* step indices [s0, s0 + T) */
    double *E;        /* [n * T] the name's end, rank 0's clock, NAN when not held */
    uint32_t *held;   /* [n] steps held */
    double *buf;      /* [n + T] scratch */
    uint32_t *g;      /* [n] the partition being built */
    uint32_t *rep;    /* [n] first member of each group */
    uint32_t *size;   /* [n] members of each group */
    uint32_t *goff;   /* [n + 1] CSR of the groups' members */
    uint32_t *gmem;   /* [n] */
    uint32_t *coff;   /* [n_cls + 1] CSR of the peer classes' members (the context's is */
    uint32_t *cmem;   /* [n]          not built yet), ascending ranks */
    size_t work;
    double tau;
};

/* The latest end of kernel h's collective modes in s; 0 when none knows it. */
static uint64_t last_end_of(const struct argus_step_summary *s, uint64_t h)
{
    uint64_t e = 0;
    for (uint32_t k = 0; k < s->n_kmodes && k < ARGUS_MAX_KMODES; k++) {
        const struct argus_kmode_stats *m = &s->kmodes[k];
        if (m->name_hash == h && m->kclass == ARGUS_KC_COLLECTIVE && m->last_end_ns > e)
            e = m->last_end_ns;
    }
    return e;
}

/* Fill E, held for name h; returns the ranks holding it on >= AN_INFER_MIN_STEPS steps. */
static uint32_t fill_ends(struct infer *f, uint64_t h)
{
    struct an_ctx *c = f->c;
    uint64_t base = 0;
    uint32_t ranks = 0;
    for (uint32_t r = 0; r < c->n; r++) {
        f->held[r] = 0;
        for (size_t t = 0; t < f->T; t++) {
            const struct argus_step_summary *s = an_kcell(c, r, f->s0 + t);
            const uint64_t e = s ? last_end_of(s, h) : 0;
            double *x = &f->E[(size_t)r * f->T + t];
            *x = NAN;
            if (!e)
                continue;
            const uint64_t v = e + (uint64_t)s->clock_offset_ns;
            if (!base)
                base = v;
            *x = (double)(int64_t)(v - base);
            f->held[r]++;
        }
        ranks += f->held[r] >= AN_INFER_MIN_STEPS;
    }
    return ranks;
}

/* tau of class k: the floor, or a share of the median over steps of the spread of its
 * ranks' ends (each rank's series centred on its median). */
static double class_tau(struct infer *f, uint32_t k)
{
    struct an_ctx *c = f->c;
    double *med = c->tmp1, *lo = c->tmp2, *hi = c->tmp3; /* [n], [T], [T] */
    for (size_t t = 0; t < f->T; t++) {
        lo[t] = INFINITY;
        hi[t] = -INFINITY;
    }
    for (uint32_t i = f->coff[k]; i < f->coff[k + 1]; i++) {
        const uint32_t r = f->cmem[i];
        if (f->held[r] < AN_INFER_MIN_STEPS)
            continue;
        size_t m = 0;
        for (size_t t = 0; t < f->T; t++)
            if (!isnan(f->E[(size_t)r * f->T + t]))
                f->buf[m++] = f->E[(size_t)r * f->T + t];
        med[r] = argus_stats_median(f->buf, m);
        for (size_t t = 0; t < f->T; t++) {
            const double x = f->E[(size_t)r * f->T + t] - med[r];
            if (isnan(x))
                continue;
            lo[t] = x < lo[t] ? x : lo[t];
            hi[t] = x > hi[t] ? x : hi[t];
        }
    }
    size_t m = 0;
    for (size_t t = 0; t < f->T; t++)
        if (hi[t] >= lo[t])
            f->buf[m++] = hi[t] - lo[t];
    const double sp = m ? argus_stats_median(f->buf, m) : 0;
    return AN_INFER_TAU_FRAC * sp > AN_INFER_TAU_NS ? AN_INFER_TAU_FRAC * sp : AN_INFER_TAU_NS;
}

/* Do ranks a and b end the name together? -1 when they share too few steps. */
static int agree(struct infer *f, uint32_t a, uint32_t b)
{
    const double *x = &f->E[(size_t)a * f->T], *y = &f->E[(size_t)b * f->T];
    double *d = f->buf;
    size_t m = 0;
    for (size_t t = 0; t < f->T; t++)
        if (!isnan(x[t]) && !isnan(y[t]))
            d[m++] = x[t] - y[t];
    f->work += f->T;
    if (m < AN_INFER_MIN_STEPS)
        return -1;
    double *e = f->buf + f->T;
    memcpy(e, d, m * sizeof *d);
    const double med = argus_stats_median(e, m);
    size_t in = 0;
    for (size_t i = 0; i < m; i++)
        in += fabs(d[i] - med) <= f->tau;
    return (double)in >= AN_INFER_AGREE * (double)m;
}

/* Partition of the ranks holding the name into groups of ranks that end it together,
 * inside each peer class, into f->g (dense group numbers, UINT32_MAX: none). Returns
 * the number of groups of >= 2 ranks (0 when refused); *covered = their ranks, *maxsize
 * the largest. */
static uint32_t partition(struct infer *f, uint32_t holders, uint32_t *covered,
                          uint32_t *maxsize)
{
    struct an_ctx *c = f->c;
    uint32_t G = 0;
    for (uint32_t r = 0; r < c->n; r++)
        f->g[r] = UINT32_MAX;
    for (uint32_t k = 0; k < c->n_cls; k++) {
        f->tau = class_tau(f, k);
        const uint32_t g0 = G;
        for (uint32_t i = f->coff[k]; i < f->coff[k + 1]; i++) {
            const uint32_t r = f->cmem[i];
            if (f->held[r] < AN_INFER_MIN_STEPS)
                continue;
            uint32_t join = UINT32_MAX;
            for (uint32_t q = g0; q < G; q++) {
                if (agree(f, r, f->rep[q]) != 1)
                    continue;
                if (join != UINT32_MAX)
                    return 0; /* ends with two groups: no partition */
                join = q;
            }
            if (f->work > AN_INFER_MAX_WORK)
                return 0;
            if (join == UINT32_MAX) {
                join = G++;
                f->rep[join] = r;
                f->size[join] = 0;
            }
            f->g[r] = join;
            f->size[join]++;
        }
    }
    /* every pair of a group agrees (joining checked the first member only): the groups'
     * members in CSR (goff, gmem), pairs inside each */
    memset(f->goff, 0, (G + 1) * sizeof *f->goff);
    for (uint32_t r = 0; r < c->n; r++)
        if (f->g[r] != UINT32_MAX)
            f->goff[f->g[r] + 1]++;
    for (uint32_t q = 0; q < G; q++)
        f->goff[q + 1] += f->goff[q];
    for (uint32_t r = c->n; r-- > 0;) /* ascending in each group: its first member first */
        if (f->g[r] != UINT32_MAX)
            f->gmem[f->goff[f->g[r]] + --f->size[f->g[r]]] = r; /* size back to 0 */
    for (uint32_t q = 0; q < G; q++) {
        f->size[q] = f->goff[q + 1] - f->goff[q];
        for (uint32_t i = f->goff[q] + 1; i < f->goff[q + 1]; i++)
            for (uint32_t j = i + 1; j < f->goff[q + 1]; j++) /* i, j > the first */
                if (agree(f, f->gmem[i], f->gmem[j]) == 0 || f->work > AN_INFER_MAX_WORK)
                    return 0;
    }
    /* groups of one rank say nothing: renumber the others densely */
    uint32_t n2 = 0, *map = f->rep; /* rep is no longer needed */
    int whole = 1;
    *covered = *maxsize = 0;
    for (uint32_t q = 0; q < G; q++) {
        map[q] = f->size[q] >= 2 ? n2++ : UINT32_MAX;
        if (f->size[q] >= 2) {
            *covered += f->size[q];
            *maxsize = f->size[q] > *maxsize ? f->size[q] : *maxsize;
        }
    }
    for (uint32_t r = 0; r < c->n; r++) {
        if (f->g[r] == UINT32_MAX)
            continue;
        const uint32_t q = f->g[r];
        whole &= f->size[q] == f->coff[c->cls[r] + 1] - f->coff[c->cls[r]];
        f->g[r] = map[q];
    }
    if (n2 < 2 || whole || (double)*covered < AN_INFER_COVER * holders)
        return 0;
    return n2;
}

/* Collective names by total time, heaviest first: up to AN_INFER_NAMES indices of
 * c->names into out. */
static size_t pick_names(const struct an_ctx *c, size_t *out)
{
    const uint64_t other = argus_name_hash(ARGUS_OTHER_KERNEL);
    size_t m = 0;
    for (size_t i = 0; i < c->names.n; i++) {
        if (c->names.kclass[i] != ARGUS_KC_COLLECTIVE || c->names.hash[i] == other)
            continue;
        size_t j = m < AN_INFER_NAMES ? m++ : AN_INFER_NAMES;
        if (j == AN_INFER_NAMES) { /* full: replace the lightest when heavier */
            size_t w = 0;
            for (size_t k = 1; k < m; k++)
                if (c->names.total_ns[out[k]] < c->names.total_ns[out[w]])
                    w = k;
            if (c->names.total_ns[i] <= c->names.total_ns[out[w]])
                continue;
            j = w;
        }
        out[j] = i;
    }
    for (size_t a = 1; a < m; a++) /* insertion sort, heaviest first, ties by index */
        for (size_t b = a; b > 0; b--) {
            const double x = c->names.total_ns[out[b - 1]], y = c->names.total_ns[out[b]];
            if (x > y || (x == y && out[b - 1] < out[b]))
                break;
            const size_t t = out[b];
            out[b] = out[b - 1];
            out[b - 1] = t;
        }
    return m;
}

static void infer_free(struct infer *f)
{
    free(f->E);
    free(f->held);
    free(f->buf);
    free(f->g);
    free(f->rep);
    free(f->size);
    free(f->goff);
    free(f->gmem);
    free(f->coff);
    free(f->cmem);
}

/* f's arrays for T steps, and the peer classes' members in CSR (coff, cmem). 0 or
 * -ENOMEM. */
static int infer_alloc(struct infer *f)
{
    const struct an_ctx *c = f->c;
    f->E = malloc((size_t)c->n * f->T * sizeof *f->E);
    f->held = malloc(c->n * sizeof *f->held);
    f->buf = malloc((c->n + 2 * f->T) * sizeof *f->buf);
    f->g = malloc(c->n * sizeof *f->g);
    f->rep = malloc(c->n * sizeof *f->rep);
    f->size = malloc(c->n * sizeof *f->size);
    f->goff = malloc((c->n + 1) * sizeof *f->goff);
    f->gmem = malloc(c->n * sizeof *f->gmem);
    f->coff = calloc(c->n_cls + 1, sizeof *f->coff);
    f->cmem = malloc(c->n * sizeof *f->cmem);
    if (!f->E || !f->held || !f->buf || !f->g || !f->rep || !f->size || !f->goff ||
        !f->gmem || !f->coff || !f->cmem)
        return -ENOMEM;
    for (uint32_t r = 0; r < c->n; r++)
        f->coff[c->cls[r] + 1]++;
    for (uint32_t k = 0; k < c->n_cls; k++)
        f->coff[k + 1] += f->coff[k];
    for (uint32_t r = 0; r < c->n; r++) /* coff[k] counts up to its end, then back */
        f->cmem[f->coff[c->cls[r]]++] = r;
    for (uint32_t k = c->n_cls; k > 0; k--)
        f->coff[k] = f->coff[k - 1];
    f->coff[0] = 0;
    return 0;
}

int an_groups_infer(struct an_ctx *c)
{
    struct infer f = {.c = c};
    size_t names[AN_INFER_NAMES];
    uint32_t *best = NULL, bestG = 0, bestCov = 0, bestMax = 0;
    int rc = 0;

    if (c->layout_known || c->mgrp[0] || c->n < 4 || c->n > AN_INFER_MAX_RANKS)
        return 0;
    const size_t nn = pick_names(c, names);
    if (nn == 0)
        return 0;
    f.T = c->S < AN_INFER_STEPS ? c->S : AN_INFER_STEPS;
    f.s0 = c->S - f.T;
    if (f.T < AN_INFER_MIN_STEPS)
        return 0;
    best = malloc(c->n * sizeof *best);
    if ((rc = infer_alloc(&f)) || !best ||
        (rc = an_tmp_reserve(c, (c->n > f.T ? c->n : f.T) + 16))) {
        rc = rc ? rc : -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < nn; i++) {
        const uint32_t holders = fill_ends(&f, c->names.hash[names[i]]);
        if (2 * holders < c->n)
            continue; /* not on most ranks */
        f.work = 0;
        uint32_t cov = 0, mx = 0;
        const uint32_t G = partition(&f, holders, &cov, &mx);
        if (G == 0)
            continue;
        /* larger groups, then more groups (groups.c's order of families) */
        const double sz = (double)cov / G, bsz = bestG ? (double)bestCov / bestG : 0;
        if (bestG && (sz < bsz || (sz == bsz && G <= bestG)))
            continue;
        memcpy(best, f.g, c->n * sizeof *best);
        bestG = G;
        bestCov = cov;
        bestMax = mx;
    }
    if (bestG) {
        c->mgrp[0] = best;
        c->mgrp_n[0] = bestG;
        c->mgrp_max[0] = bestMax;
        c->mgrp_inferred = 1;
        best = NULL;
    }
out:
    infer_free(&f);
    free(best);
    return rc;
}
