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

static void w1_confirm(struct an_ctx *c, struct an_cand *k);

static int comm_type(struct an_ctx *c, int type)
{
    struct an_groups g;
    const size_t S = c->S;
    int rc = groups_build(c, type, &g);
    const uint32_t size = !c->layout_known ? c->mgrp_max[type == ARGUS_GT_TP]
                          : type == ARGUS_GT_DP ? (uint32_t)c->lay.dp : (uint32_t)c->lay.tp;
    struct gbest *best = calloc((size_t)g.G * S, sizeof *best);
    const size_t GS = (size_t)g.G * S + 1;
    double *E = malloc(GS * sizeof *E), *R = malloc(GS * sizeof *R);
    double *SC = malloc(GS * sizeof *SC), *CL = malloc(GS * sizeof *CL);
    double *gv = malloc((g.G + 1) * sizeof *gv), *gc = malloc((g.G + 1) * sizeof *gc);
    double *buf = malloc((S + g.G) * sizeof *buf);
    double *ratio = malloc(S * sizeof *ratio), *z = malloc(S * sizeof *z);
    double *exc = malloc(S * sizeof *exc), *tmp = malloc((g.G + 1) * sizeof *tmp);
    uint8_t *flag = malloc(S);
    size_t *jstep = malloc(S * sizeof *jstep);
    struct an_span *spans = malloc(S * sizeof *spans);
    uint32_t *koff = malloc((g.G + 1) * sizeof *koff), *kmem = malloc((c->n + 1) * sizeof *kmem);

    if (!rc && (!best || !E || !R || !SC || !CL || !gv || !gc || !buf || !ratio || !z || !exc ||
                !tmp || !flag || !jstep || !spans || !koff || !kmem))
        rc = -ENOMEM;
    if (rc || size < 2 || g.G < 2)
        goto out;
    /* each group's members with kernel detail somewhere (all of them unless thin cells) */
    koff[0] = 0;
    for (uint32_t q = 0; q < g.G; q++) {
        koff[q + 1] = koff[q];
        for (uint32_t i = g.off[q]; i < g.off[q + 1]; i++)
            if (c->kmr[g.mem[i]])
                kmem[koff[q + 1]++] = g.mem[i];
    }
    for (size_t nk = 0; nk < c->names.n; nk++) {
        if (c->names.kclass[nk] != ARGUS_KC_COLLECTIVE)
            continue;
        const uint64_t h = c->names.hash[nk];
        for (size_t q = 0; q < (size_t)g.G * S; q++)
            E[q] = NAN;
        for (size_t si = 0; si < S; si++) {
            for (uint32_t q = 0; q < g.G; q++) {
                double mn = 0, mc = 0;
                int any = 0, full = 0;
                for (uint32_t i = koff[q]; i < koff[q + 1]; i++) {
                    const struct argus_step_summary *s = an_kcell(c, kmem[i], si);
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
                gv[q] = any ? mn : 0;
                /* Condensed data (thin cells): every group is valued on its reference
                 * members alone (reduce/condense.h: dp index 0 and 1, so two in every DP
                 * group), always full, so that every group's minimum is over the same kind
                 * of sample — a group with more members in full (extreme cells) would
                 * otherwise get a smaller minimum and make the others look slow. Judged
                 * with at least two (one alone may be a waiting victim). */
                gc[q] = c->thin_held && full < 2 ? -1 : mc;
                if (gc[q] < 0)
                    gv[q] = 0; /* nor a reference for the others */
                best[(size_t)q * S + si].unknown = gc[q] < 0;
            }
            for (uint32_t q = 0; q < g.G; q++) {
                if (!(gv[q] > 0) || gc[q] < 0)
                    continue;
                size_t m = 0;
                for (int pass = 0; pass < 2 && m == 0; pass++)
                    for (uint32_t o = 0; o < g.G; o++)
                        if (o != q && gv[o] > 0 && (pass || g.stage[o] == g.stage[q]))
                            buf[m++] = gv[o];
                if (m == 0)
                    continue;
                struct argus_robust rb;
                argus_stats_robust(buf, m, AN_PEER_FLOOR, tmp, &rb);
                const size_t at = (size_t)q * S + si;
                E[at] = gv[q] - rb.ref;
                R[at] = argus_stats_ratio(gv[q], &rb);
                SC[at] = rb.scale;
                CL[at] = gc[q];
            }
        }
        /* z against the larger of the other groups' spread and the group's own noise */
        for (uint32_t q = 0; q < g.G; q++) {
            const size_t base = (size_t)q * S;
            const double tsig = argus_stats_diff_sigma(E + base, S, c->tmp1, c->tmp2);
            for (size_t si = 0; si < S; si++) {
                const size_t at = base + si;
                if (isnan(E[at]))
                    continue;
                const double sc = SC[at] > tsig ? SC[at] : tsig;
                const double zz = sc > 0 ? E[at] / sc : 0, e = E[at] * CL[at];
                struct gbest *bq = &best[at];
                if (R[at] >= c->o.ratio && zz >= c->o.z && e >= AN_COMM_MATERIAL * c->med_step &&
                    e > bq->exc) {
                    bq->ratio = R[at];
                    bq->z = zz;
                    bq->exc = e;
                    bq->name = (long)nk + 1;
                }
            }
        }
    }
    for (uint32_t q = 0; q < g.G; q++) {
        /* runs over the steps where the group could be judged (all of them unless thin
         * cells left too few members with detail): jstep[] maps back to step indices */
        size_t nj = 0;
        for (size_t si = 0; si < S; si++) {
            const struct gbest *bq = &best[(size_t)q * S + si];
            if (bq->unknown && !bq->name)
                continue;
            flag[nj] = bq->name > 0;
            ratio[nj] = bq->ratio;
            z[nj] = bq->z;
            exc[nj] = bq->exc;
            jstep[nj++] = si;
        }
        size_t ns = an_runs(flag, nj, c->o.min_steps, spans, S);
        for (size_t j = 0; j < ns; j++) {
            const size_t ja = spans[j].a, jb = spans[j].b, a = jstep[ja], b = jstep[jb];
            int busy = 0;
            for (uint32_t i = g.off[q]; i < g.off[q + 1]; i++) {
                size_t cnt = 0;
                for (size_t si = a; si <= b; si++)
                    cnt += c->cflag[(size_t)g.mem[i] * S + si];
                busy |= 2 * cnt > b - a + 1;
            }
            if (busy)
                continue; /* a member's compute is inflated: waiting, not the network */
            struct an_rrun st;
            struct an_cand *k;
            an_run_stats(ratio, z, exc, flag, ja, jb, buf, &st, c->o.min_steps);
            st.det = jstep[st.det];
            if ((rc = an_push_cand(c, ARGUS_AK_COMM_DEGRADATION, 3, a, b, st.det, st.ratio,
                                   st.z, st.excess, &k)))
                goto out;
            k->a.group_type = type;
            k->a.phase = ARGUS_PH_COMM;
            k->n_peers = g.G - 1;
            for (uint32_t i = g.off[q]; i < g.off[q + 1]; i++) {
                an_cand_add_rank(k, g.mem[i]);
                if (k->a.n_group < ARGUS_ANOMALY_MAX_RANKS)
                    k->a.group[k->a.n_group++] = g.mem[i];
            }
            /* Kernels: the flagged collectives by how often they were the strongest. */
            for (int round = 0; round < ARGUS_ANOMALY_MAX_KERNELS; round++) {
                long pick = 0;
                size_t pc = 0;
                for (size_t si = a; si <= b; si++) {
                    long nm = best[(size_t)q * S + si].name;
                    int taken = nm <= 0;
                    for (uint32_t t = 0; t < k->a.n_kernels && !taken; t++)
                        taken = k->a.kernels[t] == c->names.hash[nm - 1];
                    if (taken)
                        continue;
                    size_t cnt = 0;
                    for (size_t sj = a; sj <= b; sj++)
                        cnt += best[(size_t)q * S + sj].name == nm;
                    if (cnt > pc) {
                        pc = cnt;
                        pick = nm;
                    }
                }
                if (!pick)
                    break;
                k->a.kernels[k->a.n_kernels++] = c->names.hash[pick - 1];
            }
            w1_confirm(c, k);
        }
    }
out:
    groups_free(&g);
    free(best);
    free(E);
    free(R);
    free(SC);
    free(CL);
    free(gv);
    free(gc);
    free(buf);
    free(ratio);
    free(z);
    free(exc);
    free(tmp);
    free(flag);
    free(jstep);
    free(koff);
    free(kmem);
    free(spans);
    return rc;
}

/* Block structure of the W1 matrix of the group and its peer groups over the main
 * collective (ARGUS case 2): small distances inside the group, large ones across. A
 * group whose distances to the others are not clearly larger than inside it is no
 * group-level degradation (the whole job slowed, or one member is late): dropped. */
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
