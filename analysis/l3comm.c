/* l3comm.c — the communication detector of L3 (comm_degradation): the collectives of one
 * DP or TP group slower than the other groups' even for the member that arrived last and
 * so waited least, confirmed by the W1 block structure of the members' collective times
 * (w1.c). With thin cells (a condensing tree, reduce/condense.h) every group is judged
 * on its reference members when it has at least two, and its runs are found over the
 * steps where it could be judged. Only adds candidates to the context.
 */
#include "analysis/internal.h"
#include "common/condensed.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void groups_free(struct an_groups *g)
{
    free(g->off);
    free(g->mem);
    free(g->stage);
}

static int groups_build(const struct an_ctx *c, int type, struct an_groups *g)
{
    if (!c->layout_known)
        return an_groups_from_membership(c, type, g);
    const uint32_t inner = type == ARGUS_GT_DP ? (uint32_t)c->lay.tp : (uint32_t)c->lay.dp;
    memset(g, 0, sizeof *g);
    g->G = (uint32_t)c->lay.pp * inner;
    g->off = calloc(g->G + 1, sizeof *g->off);
    g->mem = calloc(c->n, sizeof *g->mem);
    g->stage = calloc(g->G, sizeof *g->stage);
    uint32_t *key = calloc(c->n, sizeof *key), *fill = calloc(g->G, sizeof *fill);
    int rc = (!g->off || !g->mem || !g->stage || !key || !fill) ? -ENOMEM : 0;
    for (uint32_t r = 0; !rc && r < c->n; r++) {
        const struct argus_coords *x = &c->co[r];
        uint32_t in = type == ARGUS_GT_DP ? x->tp : x->dp;
        key[r] = (uint32_t)x->pp * inner + in;
        if (key[r] >= g->G)
            key[r] = g->G - 1;
        g->off[key[r] + 1]++;
        g->stage[key[r]] = x->pp;
    }
    for (uint32_t k = 0; !rc && k < g->G; k++)
        g->off[k + 1] += g->off[k];
    for (uint32_t r = 0; !rc && r < c->n; r++)
        g->mem[g->off[key[r]] + fill[key[r]]++] = r;
    free(key);
    free(fill);
    return rc;
}

/* Per (group, step): the strongest flagged collective. A group's value for a collective
 * is the smallest typical call duration (median of the most frequent mode) among its
 * members: the last arriver barely waits, so only a slower transfer raises it for the
 * whole group, and waiting that hits a few calls (the first all-reduce after a late
 * member) lands in another mode and leaves the typical call alone. */
struct gbest {
    double ratio, z, exc;
    long name;
    int unknown; /* too few members with kernel detail to judge the group (thin cells) */
};

/* Block structure of the W1 matrix of the group and its peer groups over the main
 * collective (ARGUS case 2; docs/ALGORITHMS.md, L3: communication degradation): small
 * distances inside the group, large ones across. A group whose distances to the others
 * are not clearly larger than inside it is no group-level degradation (the whole job
 * slowed, or one member is late): dropped. */
static void w1_confirm(struct an_ctx *c, struct an_cand *k)
{
    uint32_t reps[AN_W1_MAX_REPS];
    uint8_t in[AN_W1_MAX_REPS];
    double *M = malloc(AN_W1_MAX_REPS * AN_W1_MAX_REPS * sizeof *M), intra, inter;
    if (!M || k->a.n_kernels == 0) {
        free(M);
        return;
    }
    size_t n = an_w1_matrix(c, &k->a, k->a.kernels[0], k->si_a, k->si_b, reps, in, M);
    if (n >= 2) {
        an_w1_blocks(M, n, in, &intra, &inter);
        if (!isnan(inter)) {
            k->a.w1_inter_ns = inter;
            k->a.w1_intra_ns = isnan(intra) ? 0 : intra;
            if (inter < AN_W1_BLOCK * k->a.w1_intra_ns)
                k->dropped = 1;
        }
    }
    free(M);
}

/* What comm_type works with for one group type. Per (group q, step si) at q * S + si:
 * the strongest flagged collective (best) and, for the collective being judged, the
 * group's value against the other groups'. Per step: each group's value. Per group: its
 * series over the steps where it could be judged. */
struct comm_scratch {
    struct an_groups g;
    struct gbest *best;     /* [G * S] */
    double *grp_excess;     /* [G * S + 1] value minus the other groups' reference; NAN
                               where not compared */
    double *grp_ratio;      /* [G * S + 1] value over that reference */
    double *grp_scale;      /* [G * S + 1] the other groups' spread */
    double *grp_calls;      /* [G * S + 1] the group's calls of the collective */
    double *step_value;     /* [G + 1] each group's value at one step, 0 when none */
    double *step_calls;     /* [G + 1] its calls; -1 when the group cannot be judged */
    double *buf;            /* [S + G] the other groups' values; run medians */
    double *tmp;            /* [G + 1] */
    double *ratio, *z, *exc; /* [S] one group's series over the steps it was judged at */
    uint8_t *flag;          /* [S] */
    size_t *jstep;          /* [S] the step index of each of those steps */
    struct an_span *spans;  /* [S] */
    uint32_t *koff, *kmem;  /* CSR [G + 1], [n + 1]: each group's members with detail */
};

static int comm_alloc(const struct an_ctx *c, int type, struct comm_scratch *w)
{
    const size_t S = c->S;
    memset(w, 0, sizeof *w);
    int rc = groups_build(c, type, &w->g);
    if (rc)
        return rc;
    const uint32_t G = w->g.G;
    const size_t GS = (size_t)G * S + 1;
    w->best = calloc((size_t)G * S, sizeof *w->best);
    w->grp_excess = malloc(GS * sizeof *w->grp_excess);
    w->grp_ratio = malloc(GS * sizeof *w->grp_ratio);
    w->grp_scale = malloc(GS * sizeof *w->grp_scale);
    w->grp_calls = malloc(GS * sizeof *w->grp_calls);
    w->step_value = malloc((G + 1) * sizeof *w->step_value);
    w->step_calls = malloc((G + 1) * sizeof *w->step_calls);
    w->buf = malloc((S + G) * sizeof *w->buf);
    w->tmp = malloc((G + 1) * sizeof *w->tmp);
    w->ratio = malloc(S * sizeof *w->ratio);
    w->z = malloc(S * sizeof *w->z);
    w->exc = malloc(S * sizeof *w->exc);
    w->flag = malloc(S);
    w->jstep = malloc(S * sizeof *w->jstep);
    w->spans = malloc(S * sizeof *w->spans);
    w->koff = malloc((G + 1) * sizeof *w->koff);
    w->kmem = malloc((c->n + 1) * sizeof *w->kmem);
    if (!w->best || !w->grp_excess || !w->grp_ratio || !w->grp_scale || !w->grp_calls ||
        !w->step_value || !w->step_calls || !w->buf || !w->tmp || !w->ratio || !w->z ||
        !w->exc || !w->flag || !w->jstep || !w->spans || !w->koff || !w->kmem)
        return -ENOMEM;
    return 0;
}

static void comm_free(struct comm_scratch *w)
{
    groups_free(&w->g);
    free(w->best);
    free(w->grp_excess);
    free(w->grp_ratio);
    free(w->grp_scale);
    free(w->grp_calls);
    free(w->step_value);
    free(w->step_calls);
    free(w->buf);
    free(w->tmp);
    free(w->ratio);
    free(w->z);
    free(w->exc);
    free(w->flag);
    free(w->jstep);
    free(w->spans);
    free(w->koff);
    free(w->kmem);
}

/* Each group's members with kernel detail somewhere (all of them unless thin cells). */
static void detail_members(const struct an_ctx *c, struct comm_scratch *w)
{
    const struct an_groups *g = &w->g;
    w->koff[0] = 0;
    for (uint32_t q = 0; q < g->G; q++) {
        w->koff[q + 1] = w->koff[q];
        for (uint32_t i = g->off[q]; i < g->off[q + 1]; i++)
            if (c->kmr[g->mem[i]])
                w->kmem[w->koff[q + 1]++] = g->mem[i];
    }
}

/* Each group's value of collective h at step si (step_value, step_calls; see gbest). */
static void step_values(struct an_ctx *c, struct comm_scratch *w, uint64_t h, size_t si)
{
    for (uint32_t q = 0; q < w->g.G; q++) {
        double mn = 0, mc = 0;
        int any = 0, full = 0;
        for (uint32_t i = w->koff[q]; i < w->koff[q + 1]; i++) {
            const struct argus_step_summary *s = an_kcell(c, w->kmem[i], si);
            if (!s || (c->thin_held && !argus_condense_reference(s, c->n)))
                continue;
            full++;
            double calls, v = an_name_typical(c, s, h, &calls);
            if (!any || v < mn) {
                mn = v;
                mc = calls;
            }
            any = 1;
        }
        w->step_value[q] = any ? mn : 0;
        /* Condensed data (thin cells): every group is valued on its reference
         * members alone (reduce/condense.h: dp index 0 and 1, so two in every DP
         * group), always full, so that every group's minimum is over the same kind
         * of sample — a group with more members in full (extreme cells) would
         * otherwise get a smaller minimum and make the others look slow. Judged
         * with at least two (one alone may be a waiting victim). */
        w->step_calls[q] = c->thin_held && full < 2 ? -1 : mc;
        if (w->step_calls[q] < 0)
            w->step_value[q] = 0; /* nor a reference for the others */
        w->best[(size_t)q * c->S + si].unknown = w->step_calls[q] < 0;
    }
}

/* Each group's value at step si against the other groups' (those of its PP stage, else
 * all): grp_excess, grp_ratio, grp_scale, grp_calls. */
static void step_compare(const struct an_ctx *c, struct comm_scratch *w, size_t si)
{
    const struct an_groups *g = &w->g;
    for (uint32_t q = 0; q < g->G; q++) {
        if (!(w->step_value[q] > 0) || w->step_calls[q] < 0)
            continue;
        size_t m = 0;
        for (int pass = 0; pass < 2 && m == 0; pass++)
            for (uint32_t o = 0; o < g->G; o++)
                if (o != q && w->step_value[o] > 0 && (pass || g->stage[o] == g->stage[q]))
                    w->buf[m++] = w->step_value[o];
        if (m == 0)
            continue;
        struct argus_robust rb;
        argus_stats_robust(w->buf, m, AN_PEER_FLOOR, w->tmp, &rb);
        const size_t at = (size_t)q * c->S + si;
        w->grp_excess[at] = w->step_value[q] - rb.ref;
        w->grp_ratio[at] = argus_stats_ratio(w->step_value[q], &rb);
        w->grp_scale[at] = rb.scale;
        w->grp_calls[at] = w->step_calls[q];
    }
}

/* Collective nk where it passes the gates (z against the larger of the other groups'
 * spread and the group's own noise) and carries more excess than the strongest so far
 * becomes the group's strongest at that step. */
static void keep_strongest(struct an_ctx *c, struct comm_scratch *w, size_t nk)
{
    const size_t S = c->S;
    for (uint32_t q = 0; q < w->g.G; q++) {
        const size_t base = (size_t)q * S;
        const double tsig = argus_stats_diff_sigma(w->grp_excess + base, S, c->tmp1, c->tmp2);
        for (size_t si = 0; si < S; si++) {
            const size_t at = base + si;
            if (isnan(w->grp_excess[at]))
                continue;
            const double sc = w->grp_scale[at] > tsig ? w->grp_scale[at] : tsig;
            const double zz = sc > 0 ? w->grp_excess[at] / sc : 0;
            const double e = w->grp_excess[at] * w->grp_calls[at];
            struct gbest *bq = &w->best[at];
            if (w->grp_ratio[at] >= c->o.ratio && zz >= c->o.z &&
                e >= AN_COMM_MATERIAL * c->med_step && e > bq->exc) {
                bq->ratio = w->grp_ratio[at];
                bq->z = zz;
                bq->exc = e;
                bq->name = (long)nk + 1;
            }
        }
    }
}

/* Group q's series over the steps where it could be judged (all of them unless thin
 * cells left too few members with detail): flag, ratio, z, exc; jstep[] maps back to
 * step indices. Returns how many steps. */
static size_t group_series(const struct an_ctx *c, struct comm_scratch *w, uint32_t q)
{
    size_t nj = 0;
    for (size_t si = 0; si < c->S; si++) {
        const struct gbest *bq = &w->best[(size_t)q * c->S + si];
        if (bq->unknown && !bq->name)
            continue;
        w->flag[nj] = bq->name > 0;
        w->ratio[nj] = bq->ratio;
        w->z[nj] = bq->z;
        w->exc[nj] = bq->exc;
        w->jstep[nj++] = si;
    }
    return nj;
}

/* Some member of group q has its compute flagged on most steps of [a, b]. */
static int member_busy(const struct an_ctx *c, const struct an_groups *g, uint32_t q,
                       size_t a, size_t b)
{
    int busy = 0;
    for (uint32_t i = g->off[q]; i < g->off[q + 1]; i++) {
        size_t cnt = 0;
        for (size_t si = a; si <= b; si++)
            cnt += c->cflag[(size_t)g->mem[i] * c->S + si];
        busy |= 2 * cnt > b - a + 1;
    }
    return busy;
}

/* The kernels of k: group q's flagged collectives over [a, b] by how often they were the
 * strongest. */
static void pick_kernels(const struct an_ctx *c, const struct comm_scratch *w, uint32_t q,
                         size_t a, size_t b, struct an_cand *k)
{
    const struct gbest *best = w->best + (size_t)q * c->S;
    for (int round = 0; round < ARGUS_ANOMALY_MAX_KERNELS; round++) {
        long pick = 0;
        size_t pc = 0;
        for (size_t si = a; si <= b; si++) {
            long nm = best[si].name;
            int taken = nm <= 0;
            for (uint32_t t = 0; t < k->a.n_kernels && !taken; t++)
                taken = k->a.kernels[t] == c->names.hash[nm - 1];
            if (taken)
                continue;
            size_t cnt = 0;
            for (size_t sj = a; sj <= b; sj++)
                cnt += best[sj].name == nm;
            if (cnt > pc) {
                pc = cnt;
                pick = nm;
            }
        }
        if (!pick)
            break;
        k->a.kernels[k->a.n_kernels++] = c->names.hash[pick - 1];
    }
}

/* Group q's runs of flagged steps as comm_degradation candidates, unless a member's
 * compute is inflated (waiting, not the network); each confirmed by the W1 block
 * structure (w1_confirm). 0 or -ENOMEM. */
static int group_runs(struct an_ctx *c, struct comm_scratch *w, int type, uint32_t q)
{
    const struct an_groups *g = &w->g;
    const size_t nj = group_series(c, w, q);
    const size_t ns = an_runs(w->flag, nj, c->o.min_steps, w->spans, c->S);
    for (size_t j = 0; j < ns; j++) {
        const size_t ja = w->spans[j].a, jb = w->spans[j].b;
        const size_t a = w->jstep[ja], b = w->jstep[jb];
        if (member_busy(c, g, q, a, b))
            continue;
        struct an_rrun st;
        struct an_cand *k;
        an_run_stats(w->ratio, w->z, w->exc, w->flag, ja, jb, w->buf, &st, c->o.min_steps);
        st.det = w->jstep[st.det];
        int rc = an_push_cand(c, ARGUS_AK_COMM_DEGRADATION, 3, a, b, st.det, st.ratio, st.z,
                              st.excess, &k);
        if (rc)
            return rc;
        k->a.group_type = type;
        k->a.phase = ARGUS_PH_COMM;
        k->n_peers = g->G - 1;
        for (uint32_t i = g->off[q]; i < g->off[q + 1]; i++) {
            an_cand_add_rank(k, g->mem[i]);
            if (k->a.n_group < ARGUS_ANOMALY_MAX_RANKS)
                k->a.group[k->a.n_group++] = g->mem[i];
        }
        pick_kernels(c, w, q, a, b, k);
        w1_confirm(c, k);
        if (!k->dropped && (rc = an_nccl_refine(c, k))) /* NCCL: a link or a late member */
            return rc;
    }
    return 0;
}

/* The groups of one type (ARGUS_GT_DP or ARGUS_GT_TP): every collective compared across
 * the groups step by step, the strongest kept per (group, step), then each group's runs. */
static int comm_type(struct an_ctx *c, int type)
{
    struct comm_scratch w;
    const size_t S = c->S;
    const uint32_t size = !c->layout_known ? c->mgrp_max[type == ARGUS_GT_TP]
                          : type == ARGUS_GT_DP ? (uint32_t)c->lay.dp : (uint32_t)c->lay.tp;
    int rc = comm_alloc(c, type, &w);

    if (rc || size < 2 || w.g.G < 2)
        goto out;
    detail_members(c, &w);
    for (size_t nk = 0; nk < c->names.n; nk++) {
        if (c->names.kclass[nk] != ARGUS_KC_COLLECTIVE)
            continue;
        for (size_t q = 0; q < (size_t)w.g.G * S; q++)
            w.grp_excess[q] = NAN;
        for (size_t si = 0; si < S; si++) {
            step_values(c, &w, c->names.hash[nk], si);
            step_compare(c, &w, si);
        }
        keep_strongest(c, &w, nk);
    }
    for (uint32_t q = 0; !rc && q < w.g.G; q++)
        rc = group_runs(c, &w, type, q);
out:
    comm_free(&w);
    return rc;
}

/* DP groups, then TP groups. On condensed data only DP groups: each has two reference
 * members in full, but only the TP groups at dp index 0 and 1 have any, too few to
 * compare a group with (t_condense_32 saw false TP verdicts before this rule). */
int an_detect_comm(struct an_ctx *c)
{
    int rc;
    const int tp = !c->thin_held;
    if (!c->layout_known) { /* the groups of communicator membership, when known */
        if (c->mgrp[0] && (rc = comm_type(c, ARGUS_GT_DP)))
            return rc;
        return c->mgrp[1] && tp ? comm_type(c, ARGUS_GT_TP) : 0;
    }
    if ((rc = comm_type(c, ARGUS_GT_DP)))
        return rc;
    return tp ? comm_type(c, ARGUS_GT_TP) : 0;
}
