/* peers.c — peer comparisons that must hold when peers did not do the same thing: ranks
 * that ran different work in a step (more kernel calls: another share of the embedding
 * tables, extra optimizer tensors) are judged per call on per-mode medians, not on totals;
 * and the late-arriver test on collectives (MegaScan, ARGUS case 5; docs/ALGORITHMS.md,
 * Source versus victim): the member of a communication group that starts its step last and
 * waits least in collectives while its compute matches is the source (host-side lateness),
 * and the members that waited for it are victims. Reads the context; only adds candidates.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Median over the members of r's peer class other than r of fn at step si; NAN when none.
 * Uses c->tmp3. */
static double class_median(struct an_ctx *c, uint32_t r, size_t si, uint64_t h, int calls)
{
    const uint32_t k = c->cls[r];
    size_t m = 0;
    for (uint32_t i = c->cls_off[k]; i < c->cls_off[k + 1]; i++) {
        const uint32_t q = c->cls_mem[i];
        const struct argus_step_summary *t = q == r ? NULL : an_kcell(c, q, si);
        if (!t)
            continue;
        if (h == 0) {
            c->tmp3[m++] = (double)t->kernel_count;
            continue;
        }
        double n, typ = an_name_typical(c, t, h, &n);
        if (n > 0)
            c->tmp3[m++] = calls ? n : typ;
    }
    return m ? argus_stats_median(c->tmp3, m) : NAN;
}

static int differs(double a, double b)
{
    return fabs(a - b) > AN_SAME_WORK * (b > 0 ? b : 1);
}

int an_work_ratio(struct an_ctx *c, uint32_t r, size_t si, double *ratio, double *excess)
{
    const struct argus_step_summary *s = an_kcell(c, r, si); /* thin: cannot judge */
    if (!s)
        return 0;
    const double kc = class_median(c, r, si, 0, 0);
    if (isnan(kc) || !differs((double)s->kernel_count, kc))
        return 0;
    const uint32_t n = s->n_kmodes < ARGUS_MAX_KMODES ? s->n_kmodes : ARGUS_MAX_KMODES;
    uint64_t seen[ARGUS_MAX_KMODES];
    const uint64_t other = argus_name_hash(ARGUS_OTHER_KERNEL);
    uint32_t ns = 0;
    double own = 0, expect = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        int dup = 0;
        for (uint32_t j = 0; j < ns && !dup; j++)
            dup = seen[j] == k->name_hash;
        if (k->kclass != ARGUS_KC_COMPUTE || dup || k->name_hash == other)
            continue; /* one pass per name; folded modes are no kernel */
        seen[ns++] = k->name_hash;
        const double sum = an_name_sum(c, s, k->name_hash);
        double calls, typ = an_name_typical(c, s, k->name_hash, &calls);
        const double peer = class_median(c, r, si, k->name_hash, 0);
        own += sum;
        /* the rank's own calls of this kernel at the peers' typical call duration */
        expect += (typ > 0 && !isnan(peer) && peer > 0) ? sum * peer / typ : sum;
    }
    *ratio = expect > 0 ? own / expect : 1.0;
    *excess = own - expect;
    return 1;
}

int an_kernel_percall(struct an_ctx *c, uint32_t r, size_t si, uint64_t h, double *ratio,
                      double *excess)
{
    const struct argus_step_summary *s = an_kcell(c, r, si);
    if (!s)
        return 0;
    double calls, typ = an_name_typical(c, s, h, &calls);
    const double pc = class_median(c, r, si, h, 1);
    if (isnan(pc) || !differs(calls, pc))
        return 0;
    const double pt = class_median(c, r, si, h, 0);
    *ratio = pt > 0 ? typ / pt : 1.0;
    *excess = pt > 0 ? (typ - pt) * calls : 0;
    return 1;
}

/* ---- late arriver ---- */

/* Groups of the late-arriver test: each rank's DP group (same PP stage and TP index) when
 * the layout is known; else its DP-role communicator (groups.c) when the program made one
 * (ranks in none are a group of their own); its peer class when classes stand for inferred
 * pipeline stages; otherwise the whole job (collectives over every rank, as DLRM's
 * all-to-all). As CSR over ranks (members ascending) with each rank's group, built once
 * so that no step walks every rank for every group. */
struct late_groups {
    uint32_t G;
    uint32_t *off, *mem, *gid; /* [G + 1], [n], [n] */
};

struct rank_key {
    uint64_t key;
    uint32_t r;
};

static int cmp_rank_key(const void *x, const void *y)
{
    const struct rank_key *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->r > b->r) - (a->r < b->r);
}

static uint64_t late_key(const struct an_ctx *c, uint32_t r)
{
    if (c->layout_known)
        return (uint64_t)c->co[r].pp << 16 | c->co[r].tp;
    if (c->mgrp[0])
        return c->mgrp[0][r] != UINT32_MAX ? c->mgrp[0][r] : ((uint64_t)1 << 32) + r;
    if (c->lay.pp > 1)
        return c->cls[r];
    return 0;
}

static int late_groups_build(const struct an_ctx *c, struct late_groups *g)
{
    struct rank_key *k = malloc((c->n ? c->n : 1) * sizeof *k);
    g->off = malloc(((size_t)c->n + 1) * sizeof *g->off);
    g->mem = malloc((c->n ? c->n : 1) * sizeof *g->mem);
    g->gid = malloc((c->n ? c->n : 1) * sizeof *g->gid);
    if (!k || !g->off || !g->mem || !g->gid) {
        free(k);
        return -ENOMEM;
    }
    for (uint32_t r = 0; r < c->n; r++)
        k[r] = (struct rank_key){ late_key(c, r), r };
    qsort(k, c->n, sizeof *k, cmp_rank_key);
    g->G = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        if (i == 0 || k[i].key != k[i - 1].key)
            g->off[g->G++] = i;
        g->mem[i] = k[i].r;
        g->gid[k[i].r] = g->G - 1;
    }
    g->off[g->G] = c->n;
    free(k);
    return 0;
}

static void late_groups_free(struct late_groups *g)
{
    free(g->off);
    free(g->mem);
    free(g->gid);
}

/* Per (rank, step): lateness, and the source's and the others' communication time. */
struct late_cell {
    double late, spread, own_comm, peer_comm, wall;
};

/* Per group and step ([g * S + si]): the member that waited least in collectives (src,
 * its time mc), the one that started last (last, at ms), the earliest start and the
 * members held; ties go to the lowest rank. */
struct late_acc {
    uint32_t *src, *last, *nm;
    double *mc, *ms, *first;
};

/* A step's start on rank 0's clock is c->vstart: the rank's own time plus the offset the
 * reduction (clock sync) or the importer (collective end times) estimated for it; its
 * communication time (collective + p2p) is c->vcomm (NAN where the cell is not held). */

/* The accumulators of every group and step, in one pass over the ranks in order (each
 * rank's steps contiguous), so each group sees its members in ascending order. */
static void late_accumulate(const struct an_ctx *c, const struct late_groups *g,
                            const struct late_acc *x)
{
    const size_t S = c->S;
    memset(x->nm, 0, (size_t)g->G * S * sizeof *x->nm);
    for (uint32_t q = 0; q < c->n; q++) {
        const double *vc = c->vcomm + (size_t)q * S, *vs = c->vstart + (size_t)q * S;
        const size_t gs = (size_t)g->gid[q] * S;
        for (size_t si = 0; si < S; si++) {
            const double cm = vc[si], st = vs[si];
            const size_t at = gs + si;
            if (isnan(cm)) /* not held */
                continue;
            const int first = x->nm[at]++ == 0;
            if (first || cm < x->mc[at]) {
                x->mc[at] = cm;
                x->src[at] = q;
            }
            if (first || st > x->ms[at]) {
                x->ms[at] = st;
                x->last[at] = q;
            }
            if (first || st < x->first[at])
                x->first[at] = st;
        }
    }
}

/* Judge step si for group k (its accumulators at [k * S + si]); sets flag/cell of the
 * source when it passes. */
static void judge(struct an_ctx *c, const struct late_groups *g, uint32_t k, size_t si,
                  const struct late_acc *x, uint8_t *flag, struct late_cell *lc)
{
    const size_t ks = (size_t)k * c->S + si;
    const uint32_t src = x->src[ks];
    const double mc = x->mc[ks], ms = x->ms[ks];
    if (x->nm[ks] < 3 || src != x->last[ks] || c->cflag[(size_t)src * c->S + si])
        return;
    size_t m = 0;
    for (uint32_t i = g->off[k]; i < g->off[k + 1]; i++) {
        const uint32_t q = g->mem[i];
        const size_t at = (size_t)q * c->S + si;
        if (q == src || !c->cell[at])
            continue;
        c->tmp1[m] = c->vstart[at];
        c->tmp2[m] = c->vcomm[at];
        c->tmp3[m++] = c->vwall[at];
    }
    const double st0 = argus_stats_median(c->tmp1, m), pc = argus_stats_median(c->tmp2, m);
    const double wall = argus_stats_median(c->tmp3, m);
    const double late = ms - st0;
    /* late by a material share of the step; waits >= 10% less than the others, who
     * waited for at least half of the lateness longer */
    if (!(late >= AN_LATE_MATERIAL * wall) || !(mc <= 0.9 * pc) || !(pc - mc >= 0.5 * late))
        return;
    flag[(size_t)src * c->S + si] = 1;
    lc[(size_t)src * c->S + si] = (struct late_cell){ late, ms - x->first[ks], mc, pc, wall };
}

/* snprintf that may cut the sentence short (evidence is bounded on purpose). */
__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t len, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static int cmp_u32(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Already a source of an overlapping compute or host verdict? */
static int covered(const struct an_ctx *c, uint32_t r, size_t a, size_t b)
{
    for (size_t i = 0; i < c->cand.n; i++) {
        const struct an_cand *k = &c->cand.v[i];
        const int src = k->a.kind == ARGUS_AK_COMPUTE_STRAGGLER ||
                        k->a.kind == ARGUS_AK_HOST_STALL ||
                        k->a.kind == ARGUS_AK_KERNEL_DEGRADATION ||
                        k->a.kind == ARGUS_AK_PIPELINE_BUBBLE;
        if (k->dropped || !src || !an_overlap(k->si_a, k->si_b, a, b))
            continue;
        for (uint32_t j = 0; j < k->a.n_ranks; j++)
            if (k->a.ranks[j] == r)
                return 1;
    }
    return 0;
}

static int push_late(struct an_ctx *c, uint32_t r, const struct an_span *sp,
                     const uint8_t *flag, const struct late_cell *lc,
                     const struct late_groups *g)
{
    const size_t S = c->S;
    double *l = malloc(5 * S * sizeof *l);
    size_t m = 0, det = sp->b;
    if (!l)
        return -ENOMEM;
    for (size_t si = sp->a; si <= sp->b; si++) {
        if (!flag[(size_t)r * S + si])
            continue;
        const struct late_cell *x = &lc[(size_t)r * S + si];
        l[m] = x->late;
        l[S + m] = x->spread;
        l[2 * S + m] = x->own_comm;
        l[3 * S + m] = x->peer_comm;
        l[4 * S + m++] = x->wall;
        if (m == c->o.min_steps)
            det = si;
    }
    const double late = argus_stats_median(l, m), spread = argus_stats_median(l + S, m);
    const double own = argus_stats_median(l + 2 * S, m), peer = argus_stats_median(l + 3 * S, m);
    const double wall = argus_stats_median(l + 4 * S, m);
    free(l);
    struct an_cand *k;
    /* slowdown: the peers' step against the same step without the wait; score: the
     * lateness in units of the materiality yardstick */
    int rc = an_push_cand(c, ARGUS_AK_HOST_STALL, 3, sp->a, sp->b, det,
                          wall > late ? wall / (wall - late) : 0,
                          wall > 0 ? late / (AN_LATE_MATERIAL * wall) : 0, late, &k);
    if (rc)
        return rc;
    an_cand_add_rank(k, r);
    k->a.phase = ARGUS_PH_HOST;
    k->late = 1;
    /* Victims: the group members that waited for it, by at least a quarter of its
     * lateness more than it did, in the median flagged step. */
    const uint32_t *mem = g->mem + g->off[g->gid[r]];
    const uint32_t nmem = g->off[g->gid[r] + 1] - g->off[g->gid[r]];
    for (uint32_t i = 0; i < nmem && k->a.n_victims < ARGUS_ANOMALY_MAX_RANKS; i++) {
        const uint32_t q = mem[i];
        if (q == r)
            continue;
        size_t n = 0;
        for (size_t si = sp->a; si <= sp->b; si++) {
            if (flag[(size_t)r * S + si] && an_cell(c, q, si))
                c->tmp1[n++] = c->vcomm[(size_t)q * S + si] - lc[(size_t)r * S + si].own_comm;
        }
        k->n_peers++;
        if (n && argus_stats_median(c->tmp1, n) >= 0.25 * late)
            k->a.victims[k->a.n_victims++] = q;
    }
    qsort(k->a.victims, k->a.n_victims, sizeof *k->a.victims, cmp_u32);
    char rk[24], vk[160];
    an_format_slots(c, k->a.ranks, k->a.n_ranks, rk, sizeof rk);
    an_format_slots(c, k->a.victims, k->a.n_victims, vk, sizeof vk);
    say(k->a.evidence, sizeof k->a.evidence,
             "late arriver: rank %s started its step %.2f ms after the median of its %u "
             "group peers (%.2f ms after the earliest) in %zu step%s (%llu-%llu) and waited "
             "least in collectives (%.2f ms vs %.2f ms median) while its compute matches; "
             "ranks %s waited for it (late-arriver test). Host-side lateness before the "
             "step's work: data loading, CPU contention, a slow host phase between steps",
             rk, late / 1e6, k->n_peers, spread / 1e6, m, m == 1 ? "" : "s",
             (unsigned long long)k->a.step_first, (unsigned long long)k->a.step_last,
             own / 1e6, peer / 1e6, k->a.n_victims ? vk : "none");
    return 0;
}

int an_detect_late(struct an_ctx *c)
{
    const size_t S = c->S, N = (size_t)c->n * S;
    uint8_t *flag = calloc(N ? N : 1, 1);
    struct late_cell *lc = malloc((N ? N : 1) * sizeof *lc);
    struct an_span *spans = malloc((S ? S : 1) * sizeof *spans);
    uint32_t *ax = NULL;
    double *ad = NULL;
    struct late_groups g = { 0 };
    int rc = 0;

    if (!flag || !lc || !spans || late_groups_build(c, &g)) {
        rc = -ENOMEM;
        goto out;
    }
    const size_t GS = (size_t)g.G * S; /* <= N */
    ax = malloc(3 * (GS ? GS : 1) * sizeof *ax);
    ad = malloc(3 * (GS ? GS : 1) * sizeof *ad);
    if (!ax || !ad) {
        rc = -ENOMEM;
        goto out;
    }
    const struct late_acc x = { ax, ax + GS, ax + 2 * GS, ad, ad + GS, ad + 2 * GS };
    late_accumulate(c, &g, &x);
    for (uint32_t k = 0; k < g.G; k++)
        for (size_t si = 0; si < S; si++)
            judge(c, &g, k, si, &x, flag, lc);
    for (uint32_t r = 0; r < c->n; r++) {
        size_t ns = an_runs(flag + (size_t)r * S, S, c->o.min_steps, spans, S);
        for (size_t j = 0; j < ns && !rc; j++)
            if (!covered(c, r, spans[j].a, spans[j].b))
                rc = push_late(c, r, &spans[j], flag, lc, &g);
    }
out:
    late_groups_free(&g);
    free(flag);
    free(lc);
    free(spans);
    free(ax);
    free(ad);
    return rc;
}
