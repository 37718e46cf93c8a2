/* stalls.c — intermittent host stalls (docs/ALGORITHMS.md, "Intermittent host stalls"):
 * one rank's host stops launching work for a large share of a step at a few steps that
 * need not be consecutive (JIT compilation, garbage collection, a data-loader hiccup).
 * The run detector (l2host.c) needs persistence and misses them; the step-time detectors
 * see the spikes but no rank.
 *
 * Per rank, its host time (GPU idle at the kernel level, the time outside its marked
 * phases at the phase level, its own step time at the steps level, where host and
 * compute cannot be told apart) is judged against its own median: a step where it rose by a
 * material share of the job's median step, with a robust z over its own noise, is a
 * stall of that rank. Ranks that waited for a stalled peer show the same rise in the
 * same step when they wait on the host side (a blocking receive, gloo): the dependency
 * says who waited for whom. The source's longest GPU idle interval ends first: the
 * others' ends when the source's data arrives (summary idle_long_end_ns, clock-aligned);
 * without that timing the largest rise is the source and the verdict is less sure. A rank
 * that is the source at AN_STALL_MIN_HITS steps or more, in at most half of the steps,
 * is one host_stall with the list of its steps; its waiting peers are its victims.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AN_STALL_MATERIAL 0.10  /* a stall: host time up >= 10% of the job's median step */
#define AN_STALL_MIN_HITS 2     /* steps a rank must stall at to be named */
#define AN_STALL_ORDER_NS 2e5   /* idle ends this much apart are ordered (clock error) */
#define AN_STALL_LEAD 0.1      /* waiters' idle ends later by >= 1/10 of the rise */
#define AN_STALL_LIKE 0.25     /* a rank's stalls: each >= 1/4 of its median stall */
#define AN_STALL_WAITED 0.25    /* a victim's step grew >= 1/4 of the stall */

/* One rank's own location and noise of a table's row. */
struct own_ref {
    double ref, scale;
};

static void own_ref_of(struct an_ctx *c, const double *row, struct own_ref *o)
{
    size_t m = 0;
    for (size_t si = 0; si < c->S; si++)
        if (!isnan(row[si]))
            c->tmp1[m++] = row[si];
    o->ref = m ? argus_stats_median(c->tmp1, m) : NAN;
    o->scale = m ? ARGUS_MAD_SIGMA * argus_stats_mad(c->tmp1, m, o->ref, c->tmp2) : NAN;
    const double fl = 0.002 * c->med_step;
    if (!(o->scale >= fl))
        o->scale = fl;
}

/* The clock-aligned end of the cell's longest GPU idle interval; NAN when unknown. */
static double idle_end(const struct an_ctx *c, size_t at)
{
    const struct argus_step_summary *s = c->cell[at];
    if (!s || !s->idle_long_ns || c->lv[at] < ARGUS_DL_KERNELS)
        return NAN;
    return c->vstart[at] + (double)s->idle_long_end_ns;
}

struct stall_scratch {
    struct own_ref *host, *wall; /* [n] own host time and step wall */
    double *ex;                  /* [n * S] stall excess, NAN when not a stall */
    uint8_t *src;                /* [n * S] 1: the source of that step's stall */
    uint32_t *hits;              /* [n] steps where the rank is a source */
    uint8_t *timed;              /* [n * S]: 1 the source was ordered by idle timing, 2 it
                                    was the only rank whose host time rose */
};

/* The sources among the stalls of step si (nf of them). With every stall timed, the
 * first idle to end is the source when the others' ends come clearly later (their median
 * by AN_STALL_LEAD of the median rise, at least 1 ms): they waited for its work, along
 * pipeline, tensor and data-parallel peers alike. Ends within the clock error of the
 * first are sources too (their own stalls at the same time). Stalls that end together
 * are simultaneous: independent stalls when few ranks have them, a job-wide event
 * (checkpointing on every rank) for the step-time detectors when most do. Without the
 * timing the largest rise is the source, unless most ranks rose. */
static void pick_sources(struct an_ctx *c, struct stall_scratch *w, size_t si, uint32_t nf)
{
    const size_t S = c->S;
    uint32_t best = 0, m = 0;
    double be = -1, fe = INFINITY;
    int timed = 1;
    for (uint32_t r = 0; r < c->n; r++) {
        const size_t at = (size_t)r * S + si;
        if (isnan(w->ex[at]))
            continue;
        if (w->ex[at] > be) {
            be = w->ex[at];
            best = r;
        }
        const double t = idle_end(c, at);
        if (isnan(t))
            timed = 0;
        else if (t < fe)
            fe = t;
        c->tmp2[m++] = w->ex[at];
    }
    const int most = 2 * nf > c->n && c->n >= 4;
    if (nf == 1) { /* the only rank whose host time rose: the others waited elsewhere */
        w->src[(size_t)best * S + si] = 1;
        w->timed[(size_t)best * S + si] = 2;
        return;
    }
    if (!timed) {
        if (!most)
            w->src[(size_t)best * S + si] = 1;
        return;
    }
    const double rise = argus_stats_median(c->tmp2, m);
    m = 0;
    for (uint32_t r = 0; r < c->n; r++) {
        const size_t at = (size_t)r * S + si;
        const double t = idle_end(c, at);
        if (!isnan(w->ex[at]) && t > fe + AN_STALL_ORDER_NS)
            c->tmp2[m++] = t - fe;
    }
    const double lead = m ? argus_stats_median(c->tmp2, m) : 0;
    const int ordered = m && lead >= fmax(1e6, AN_STALL_LEAD * rise);
    if (!ordered && most)
        return;
    for (uint32_t r = 0; r < c->n; r++) {
        const size_t at = (size_t)r * S + si;
        if (isnan(w->ex[at]) || (ordered && idle_end(c, at) > fe + AN_STALL_ORDER_NS))
            continue;
        w->src[at] = 1;
        w->timed[at] = (uint8_t)ordered;
    }
}

/* Mark the stalls of every rank (w->ex), then per step the sources among them. */
static void mark_sources(struct an_ctx *c, struct stall_scratch *w)
{
    const size_t S = c->S;
    const double mat = AN_STALL_MATERIAL * c->med_step;
    /* step times only: the rank's own step time stands for its host time (an isolated
     * spike of one rank's own iteration; host and compute cannot be told apart) */
    const double *host = c->level == ARGUS_DL_STEPS ? c->vwall : c->vhost;
    for (uint32_t r = 0; r < c->n; r++) {
        const double *vh = host + (size_t)r * S;
        own_ref_of(c, vh, &w->host[r]);
        own_ref_of(c, c->vwall + (size_t)r * S, &w->wall[r]);
        for (size_t si = 0; si < S; si++) {
            const double e = vh[si] - w->host[r].ref;
            w->ex[(size_t)r * S + si] =
                !isnan(e) && e >= mat && e / w->host[r].scale >= c->o.z ? e : NAN;
        }
    }
    for (size_t si = 0; si < S; si++) {
        uint32_t nf = 0;
        for (uint32_t r = 0; r < c->n; r++)
            nf += !isnan(w->ex[(size_t)r * S + si]);
        if (nf)
            pick_sources(c, w, si, nf);
    }
    for (uint32_t r = 0; r < c->n; r++) {
        w->hits[r] = 0;
        for (size_t si = 0; si < S; si++) {
            w->hits[r] += w->src[(size_t)r * S + si];
        }
    }
}

/* Did q wait for r's stall at si: its step took a quarter of the stall longer than its
 * own median step (the wait may sit anywhere: host time, communication, a phase that
 * holds a blocking collective)? */
static int waited(const struct an_ctx *c, const struct stall_scratch *w, uint32_t q, size_t si,
                  double stall)
{
    return c->vwall[(size_t)q * c->S + si] - w->wall[q].ref >= AN_STALL_WAITED * stall;
}

/* Host-stall runs of the run detector (l2host.c) that this finding explains: their ranks are
 * the source or its victims and their window lies inside the finding's: dropped. */
static void drop_echoes(struct an_ctx *c, const struct an_cand *k, size_t before)
{
    for (size_t i = 0; i < before; i++) {
        struct an_cand *o = &c->cand.v[i];
        if (o->dropped || o->a.kind != ARGUS_AK_HOST_STALL || o->late)
            continue;
        if (o->si_a + 2 < k->si_a || o->si_b > k->si_b + 2)
            continue;
        uint32_t in = 0;
        for (uint32_t j = 0; j < o->a.n_ranks; j++) {
            int hit = o->a.ranks[j] == k->a.ranks[0];
            for (uint32_t v = 0; v < k->a.n_victims && !hit; v++)
                hit = o->a.ranks[j] == k->a.victims[v];
            in += (uint32_t)hit;
        }
        if (in == o->a.n_ranks)
            o->dropped = 1;
    }
}

static int push_stall(struct an_ctx *c, const struct stall_scratch *w, uint32_t r,
                      size_t before)
{
    const size_t S = c->S;
    size_t a = S, b = 0, det = 0, m = 0, ntimed = 0, nalone = 0;
    double *ex = malloc(3 * (w->hits[r] + 1) * sizeof *ex);
    if (!ex)
        return -ENOMEM;
    double *zs = ex + w->hits[r] + 1, *rs = zs + w->hits[r] + 1;
    for (size_t si = 0; si < S; si++) {
        const size_t at = (size_t)r * S + si;
        if (!w->src[at])
            continue;
        if (a == S)
            a = si;
        b = si;
        if (m + 1 == AN_STALL_MIN_HITS)
            det = si;
        ex[m] = w->ex[at];
        zs[m] = w->ex[at] / w->host[r].scale;
        rs[m] = c->med_step > 0 && c->X[si] > 0 ? c->X[si] / c->med_step : 0;
        ntimed += w->timed[at] == 1;
        nalone += w->timed[at] == 2;
        m++;
    }
    const double stall = argus_stats_median(ex, m), z = argus_stats_median(zs, m);
    const double ratio = argus_stats_median(rs, m);
    free(ex);
    struct an_cand *k;
    int rc = an_push_cand(c, ARGUS_AK_HOST_STALL, 2, a, b, det, ratio, z, stall, &k);
    if (rc)
        return rc;
    an_cand_add_rank(k, r);
    k->late = 1; /* evidence and victims are written here, not in explain.c */
    k->a.phase = ARGUS_PH_HOST;
    k->a.data_level = c->level;
    k->n_peers = c->n - 1;
    for (size_t si = a; si <= b; si++)
        if (w->src[(size_t)r * S + si]) {
            if (k->a.n_hits < ARGUS_ANOMALY_MAX_HITS)
                k->a.hits[k->a.n_hits++] = c->step_id[si];
            k->a.n_hits_total++;
        }
    /* victims: the others that waited for it at most of its stalls */
    for (uint32_t q = 0; q < c->n && k->a.n_victims < ARGUS_ANOMALY_MAX_RANKS; q++) {
        uint32_t nw = 0;
        if (q == r)
            continue;
        for (size_t si = a; si <= b; si++) {
            const size_t at = (size_t)r * S + si;
            if (w->src[at] && !w->src[(size_t)q * S + si])
                nw += (uint32_t)waited(c, w, q, si, w->ex[at]);
        }
        if (2 * nw > m)
            k->a.victims[k->a.n_victims++] = q;
    }
    drop_echoes(c, k, before);
    char rk[24], vk[160], st[200];
    an_format_slots(c, k->a.ranks, 1, rk, sizeof rk);
    an_format_slots(c, k->a.victims, k->a.n_victims, vk, sizeof vk);
    size_t used = 0;
    st[0] = 0;
    for (uint32_t i = 0; i < k->a.n_hits && used + 24 < sizeof st; i++)
        used += (size_t)snprintf(st + used, sizeof st - used, "%s%llu", i ? "," : "",
                                 (unsigned long long)k->a.hits[i]);
    snprintf(k->a.evidence, sizeof k->a.evidence,
             "intermittent host stall: rank %s's %s rose %.1f ms over its own median "
             "(median z %.1f) at %zu steps (%s%s) while its work stayed the same; the job's "
             "step was %.2fx its median there; %s%s waited for it (%s)",
             rk, c->level == ARGUS_DL_PHASES  ? "time outside its marked phases"
                 : c->level == ARGUS_DL_STEPS ? "own step time (step times only: host and "
                                                "compute cannot be told apart)"
                                              : "GPU idle time",
             stall / 1e6, z, m, st, k->a.n_hits_total > k->a.n_hits ? ",..." : "", ratio,
             k->a.n_victims ? "ranks " : "", k->a.n_victims ? vk : "no rank",
             nalone == m ? "elsewhere: no other rank's host time rose"
             : ntimed + nalone == m ? "its GPU idle ended first; theirs ended when its work arrived"
                                    : "named by the largest rise: no idle timing orders them");
    k->a.confidence = c->level == ARGUS_DL_STEPS ? 0.5 : ntimed + nalone == m ? 0.9 : 0.6;
    return 0;
}

int an_detect_stalls(struct an_ctx *c)
{
    const size_t S = c->S, N = (size_t)c->n * S;
    struct stall_scratch w = { 0 };
    int rc = 0;

    if (c->level < ARGUS_DL_STEPS || S < 2 * AN_STALL_MIN_HITS || !(c->med_step > 0))
        return 0;
    w.host = malloc(c->n * sizeof *w.host);
    w.wall = malloc(c->n * sizeof *w.wall);
    w.ex = malloc(N * sizeof *w.ex);
    w.src = calloc(N, 1);
    w.timed = calloc(N, 1);
    w.hits = malloc(c->n * sizeof *w.hits);
    if (!w.host || !w.wall || !w.ex || !w.src || !w.timed || !w.hits ||
        (rc = an_tmp_reserve(c, (S > c->n ? S : c->n) + 16)))
        goto out;
    mark_sources(c, &w);
    /* a rank's stalls are one finding of like events: a blip under a quarter of its
     * typical stall is not one of them */
    for (uint32_t r = 0; r < c->n; r++) {
        if (w.hits[r] < AN_STALL_MIN_HITS)
            continue;
        size_t m = 0;
        for (size_t si = 0; si < S; si++)
            if (w.src[(size_t)r * S + si])
                c->tmp1[m++] = w.ex[(size_t)r * S + si];
        const double typ = argus_stats_median(c->tmp1, m);
        for (size_t si = 0; si < S; si++) {
            const size_t at = (size_t)r * S + si;
            if (w.src[at] && w.ex[at] < AN_STALL_LIKE * typ) {
                w.src[at] = 0;
                w.hits[r]--;
            }
        }
    }
    const size_t before = c->cand.n;
    for (uint32_t r = 0; r < c->n && !rc; r++) {
        /* a rank that stalls is the source at most of the steps it idled at; one that
         * idled with everyone and only sometimes ended first (a checkpoint on every rank,
         * whose ends spread) is not */
        size_t idled = 0;
        for (size_t si = 0; si < S; si++)
            idled += !isnan(w.ex[(size_t)r * S + si]);
        if (w.hits[r] >= AN_STALL_MIN_HITS && 2 * w.hits[r] <= S &&
            3 * w.hits[r] >= 2 * idled)
            rc = push_stall(c, &w, r, before);
    }
out:
    if (!rc && (!w.host || !w.wall || !w.ex || !w.src || !w.timed || !w.hits))
        rc = -ENOMEM;
    free(w.host);
    free(w.wall);
    free(w.ex);
    free(w.src);
    free(w.timed);
    free(w.hits);
    return rc;
}
