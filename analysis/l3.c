/* l3.c — kernel-statistics detectors (L3): one compute kernel slower on a rank than on
 * its stage peers while the rest of its compute matches (kernel_degradation; a kernel's
 * value is its typical call, the per-mode median, times its calls, so one heavy-tailed
 * call is no trend; per call when its call count differs from the peers'), and the
 * collectives of one DP or TP group slower than the other groups' even for the member
 * that arrived last and so waited least (comm_degradation). Also the per-kernel excess
 * used to name kernels in every verdict. Only adds candidates to the context.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Distinct kernel hashes of class kclass in s, in kmodes order; returns the count. */
static size_t summary_names(const struct argus_step_summary *s, int kclass, uint64_t *out)
{
    const uint64_t other = argus_name_hash(ARGUS_OTHER_KERNEL); /* folded modes */
    size_t n = 0;
    uint32_t m = s->n_kmodes < ARGUS_MAX_KMODES ? s->n_kmodes : ARGUS_MAX_KMODES;
    for (uint32_t i = 0; i < m; i++) {
        const struct argus_kmode_stats *k = &s->kmodes[i];
        if (k->kclass != kclass || k->name_hash == other)
            continue;
        int seen = 0;
        for (size_t j = n; j-- > 0 && !seen;)
            seen = out[j] == k->name_hash;
        if (!seen)
            out[n++] = k->name_hash;
    }
    return n;
}

/* Lower-half reference of kernel h over the peer class of rank r at step si. */
static double peer_name_ref(struct an_ctx *c, uint32_t r, size_t si, uint64_t h)
{
    const uint32_t k = c->cls[r];
    size_t m = 0;
    for (uint32_t i = c->cls_off[k]; i < c->cls_off[k + 1]; i++) {
        const struct argus_step_summary *s = an_cell(c, c->cls_mem[i], si);
        if (s)
            c->tmp1[m++] = an_name_sum(c, s, h);
    }
    struct argus_robust rb;
    argus_stats_robust_low(c->tmp1, m, AN_PEER_FLOOR, c->tmp2, &rb);
    return m ? rb.ref : 0;
}

size_t an_kernel_excess(struct an_ctx *c, const uint32_t *ranks, size_t nr, size_t a,
                        size_t b, int kclass, int peer, uint64_t *out, double *exc,
                        size_t max, double *total)
{
    const size_t K = c->names.n;
    double *acc = calloc(K ? K : 1, sizeof *acc);
    uint64_t hs[ARGUS_MAX_KMODES];
    size_t n = 0;

    *total = 0;
    if (!acc)
        return 0;
    for (size_t q = 0; q < nr; q++) {
        const uint32_t r = ranks[q];
        if (peer) {
            for (size_t si = a; si <= b; si++) {
                const struct argus_step_summary *s = an_cell(c, r, si);
                if (!s)
                    continue;
                size_t nh = summary_names(s, kclass, hs);
                for (size_t j = 0; j < nh; j++) {
                    long at = an_name_find(&c->names, hs[j]);
                    if (at >= 0)
                        acc[at] += an_name_sum(c, s, hs[j]) - peer_name_ref(c, r, si, hs[j]);
                }
            }
            continue;
        }
        for (size_t k = 0; k < K; k++) {
            if (c->names.kclass[k] != kclass)
                continue;
            size_t m = 0, in = 0;
            double sum_in = 0;
            for (size_t si = 0; si < c->S; si++) {
                const struct argus_step_summary *s = an_cell(c, r, si);
                if (!s)
                    continue;
                double v = an_name_sum(c, s, c->names.hash[k]);
                if (si >= a && si <= b) {
                    sum_in += v;
                    in++;
                } else if (si + 2 < a || si > b + 2) {
                    c->tmp1[m++] = v;
                }
            }
            if (m >= 3 && in)
                acc[k] += sum_in - (double)in * argus_stats_median(c->tmp1, m);
        }
    }
    for (size_t k = 0; k < K; k++) {
        if (!(acc[k] > 0))
            continue;
        *total += acc[k];
        size_t at = n < max ? n++ : max;
        if (at == max && !(acc[k] > exc[max - 1]))
            continue;
        if (at == max)
            at = max - 1;
        while (at > 0 && (exc[at - 1] < acc[k] ||
                          (exc[at - 1] == acc[k] && out[at - 1] > c->names.hash[k]))) {
            exc[at] = exc[at - 1];
            out[at] = out[at - 1];
            at--;
        }
        exc[at] = acc[k];
        out[at] = c->names.hash[k];
    }
    free(acc);
    return n;
}

/* The materiality yardstick of kernel flags per (class, step): the larger of a share of
 * the class's median compute and a share of its median step wall. */
static int class_yard(struct an_ctx *c, double *out)
{
    for (uint32_t k = 0; k < c->n_cls; k++)
        for (size_t si = 0; si < c->S; si++) {
            size_t m = 0;
            for (uint32_t i = c->cls_off[k]; i < c->cls_off[k + 1]; i++) {
                const size_t at = (size_t)c->cls_mem[i] * c->S + si;
                if (!isnan(c->vcomp[at]))
                    c->tmp1[m++] = c->vcomp[at];
            }
            const double cm = m ? argus_stats_median(c->tmp1, m) : 0;
            const double wm = c->cwall[(size_t)k * c->S + si];
            out[(size_t)k * c->S + si] = fmax(AN_KERNEL_MATERIAL * cm, AN_KERNEL_WALL * wm);
        }
    return 0;
}

static int compute_flagged(const struct an_ctx *c, uint32_t r, size_t a, size_t b)
{
    for (size_t si = a; si <= b; si++)
        if (c->cflag[(size_t)r * c->S + si])
            return 1;
    return 0;
}

static int runs_push(struct an_rrun **v, size_t *n, size_t *cap, struct an_rrun **out)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        struct an_rrun *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        *v = nv;
        *cap = nc;
    }
    *out = &(*v)[(*n)++];
    memset(*out, 0, sizeof **out);
    return 0;
}

/* Per-rank kernel runs, collected before folding several kernels of one rank together. */
struct krun {
    struct an_rrun run;
    uint64_t hash;
    double total;   /* summed excess over the flagged steps */
};

static int cmp_krun(const void *x, const void *y)
{
    const struct krun *a = x, *b = y;
    if (a->run.rank != b->run.rank)
        return a->run.rank < b->run.rank ? -1 : 1;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return (a->hash > b->hash) - (a->hash < b->hash);
}

int an_detect_kernels(struct an_ctx *c)
{
    const size_t S = c->S;
    uint32_t maxm = 0;
    for (uint32_t k = 0; k < c->n_cls; k++)
        if (c->cls_off[k + 1] - c->cls_off[k] > maxm)
            maxm = c->cls_off[k + 1] - c->cls_off[k];
    const size_t MS = (size_t)maxm * S;
    double *cref = malloc((size_t)c->n_cls * S * sizeof *cref);
    double *ratio = malloc(MS * sizeof *ratio), *z = malloc(MS * sizeof *z);
    double *exc = malloc(MS * sizeof *exc), *buf = malloc(S * sizeof *buf);
    double *vals = malloc((maxm + 1) * sizeof *vals), *yard = malloc(S * sizeof *yard);
    uint8_t *flag = malloc(MS);
    struct an_span *spans = malloc(S * sizeof *spans);
    struct krun *kr = NULL;
    struct an_rrun *runs = NULL;
    size_t nkr = 0, capkr = 0, nrun = 0, caprun = 0;
    int rc = 0;

    if (!cref || !ratio || !z || !exc || !buf || !vals || !yard || !flag || !spans) {
        rc = -ENOMEM;
        goto out;
    }
    size_t ncomp = 0; /* no compute kernel, no kernel verdict: nothing below to do */
    for (size_t nk = 0; nk < c->names.n; nk++)
        ncomp += c->names.kclass[nk] == ARGUS_KC_COMPUTE;
    if (ncomp == 0)
        goto out;
    class_yard(c, cref);
    for (uint32_t k = 0; k < c->n_cls; k++) {
        const uint32_t off = c->cls_off[k], m = c->cls_off[k + 1] - off;
        if (m < 2)
            continue;
        for (size_t nk = 0; nk < c->names.n; nk++) {
            const uint64_t h = c->names.hash[nk];
            if (c->names.kclass[nk] != ARGUS_KC_COMPUTE)
                continue;
            memset(flag, 0, (size_t)m * S);
            for (size_t q = 0; q < (size_t)m * S; q++)
                exc[q] = NAN;
            for (size_t si = 0; si < S; si++) {
                size_t q = 0;
                for (uint32_t i = 0; i < m; i++) {
                    const struct argus_step_summary *s = an_cell(c, c->cls_mem[off + i], si);
                    if (s) { /* per-mode median x calls: one heavy-tailed call is no trend */
                        double calls, typ = an_name_typical(c, s, h, &calls);
                        c->tmp3[q++] = vals[i] = typ * calls;
                    }
                }
                struct argus_robust rb;
                argus_stats_robust_low(c->tmp3, q, AN_PEER_FLOOR, c->tmp2, &rb);
                if (q < 2 || !(rb.ref > 0))
                    continue;
                yard[si] = cref[(size_t)k * S + si];
                for (uint32_t i = 0; i < m; i++) {
                    if (!an_cell(c, c->cls_mem[off + i], si))
                        continue;
                    const size_t at = (size_t)i * S + si;
                    ratio[at] = argus_stats_ratio(vals[i], &rb);
                    z[at] = rb.scale; /* the cross-sectional scale, for now */
                    exc[at] = vals[i] - rb.ref;
                }
            }
            /* z against the larger of the peers' spread and the rank's own noise */
            for (uint32_t i = 0; i < m; i++) {
                const size_t base = (size_t)i * S;
                const double tsig = argus_stats_diff_sigma(exc + base, S, c->tmp1, c->tmp2);
                for (size_t si = 0; si < S; si++) {
                    const size_t at = base + si;
                    if (isnan(exc[at]))
                        continue;
                    const double sc = z[at] > tsig ? z[at] : tsig;
                    z[at] = sc > 0 ? exc[at] / sc : 0;
                    flag[at] = ratio[at] >= c->o.ratio && z[at] >= c->o.z && exc[at] >= yard[si];
                    double pr, pe; /* other call counts than the peers': judge per call */
                    if (flag[at] && an_kernel_percall(c, c->cls_mem[off + i], si, h, &pr, &pe))
                        flag[at] = pr >= c->o.ratio && pe >= yard[si];
                }
            }
            for (uint32_t i = 0; i < m; i++) {
                const uint32_t r = c->cls_mem[off + i];
                const size_t base = (size_t)i * S;
                size_t ns = an_runs(flag + base, S, c->o.min_steps, spans, S);
                for (size_t j = 0; j < ns; j++) {
                    if (compute_flagged(c, r, spans[j].a, spans[j].b))
                        continue;
                    if (nkr == capkr) {
                        capkr = capkr ? 2 * capkr : 16;
                        struct krun *nv = realloc(kr, capkr * sizeof *nv);
                        if (!nv) {
                            rc = -ENOMEM;
                            goto out;
                        }
                        kr = nv;
                    }
                    struct krun *u = &kr[nkr++];
                    memset(u, 0, sizeof *u);
                    u->run.rank = r;
                    u->run.a = spans[j].a;
                    u->run.b = spans[j].b;
                    u->hash = h;
                    an_run_stats(ratio + base, z + base, exc + base, flag + base, u->run.a,
                                 u->run.b, buf, &u->run, c->o.min_steps);
                    for (size_t si = u->run.a; si <= u->run.b; si++)
                        if (flag[base + si])
                            u->total += exc[base + si];
                }
            }
        }
    }
    /* One run per rank and overlapping window, its kernels ordered by excess. */
    if (nkr)
        qsort(kr, nkr, sizeof *kr, cmp_krun);
    for (size_t i = 0; i < nkr; i++) {
        if (kr[i].run.kind < 0)
            continue;
        struct an_rrun *u;
        if ((rc = runs_push(&runs, &nrun, &caprun, &u)))
            goto out;
        *u = kr[i].run;
        u->kind = ARGUS_AK_KERNEL_DEGRADATION;
        u->kern[0] = kr[i].hash;
        u->nk = 1;
        for (size_t j = i + 1; j < nkr && kr[j].run.rank == u->rank; j++) {
            if (kr[j].run.kind < 0 || !an_overlap(u->a, u->b, kr[j].run.a, kr[j].run.b))
                continue;
            if (u->nk < ARGUS_ANOMALY_MAX_KERNELS)
                u->kern[u->nk++] = kr[j].hash;
            u->a = u->a < kr[j].run.a ? u->a : kr[j].run.a;
            u->b = u->b > kr[j].run.b ? u->b : kr[j].run.b;
            u->det = u->det < kr[j].run.det ? u->det : kr[j].run.det;
            kr[j].run.kind = -1;
        }
    }
    rc = an_merge_runs(c, runs, nrun, 3);
out:
    free(cref);
    free(ratio);
    free(z);
    free(exc);
    free(buf);
    free(vals);
    free(yard);
    free(flag);
    free(spans);
    free(kr);
    free(runs);
    return rc;
}

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
    struct an_span *spans = malloc(S * sizeof *spans);

    if (!rc && (!best || !E || !R || !SC || !CL || !gv || !gc || !buf || !ratio || !z || !exc ||
                !tmp || !flag || !spans))
        rc = -ENOMEM;
    if (rc || size < 2 || g.G < 2)
        goto out;
    for (size_t nk = 0; nk < c->names.n; nk++) {
        if (c->names.kclass[nk] != ARGUS_KC_COLLECTIVE)
            continue;
        const uint64_t h = c->names.hash[nk];
        for (size_t q = 0; q < (size_t)g.G * S; q++)
            E[q] = NAN;
        for (size_t si = 0; si < S; si++) {
            for (uint32_t q = 0; q < g.G; q++) {
                double mn = 0, mc = 0;
                int any = 0;
                for (uint32_t i = g.off[q]; i < g.off[q + 1]; i++) {
                    const struct argus_step_summary *s = an_cell(c, g.mem[i], si);
                    if (!s)
                        continue;
                    double calls, v = an_name_typical(c, s, h, &calls);
                    if (!any || v < mn) {
                        mn = v;
                        mc = calls;
                    }
                    any = 1;
                }
                gv[q] = any ? mn : 0;
                gc[q] = mc;
            }
            for (uint32_t q = 0; q < g.G; q++) {
                if (!(gv[q] > 0))
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
        for (size_t si = 0; si < S; si++) {
            const struct gbest *bq = &best[(size_t)q * S + si];
            flag[si] = bq->name > 0;
            ratio[si] = bq->ratio;
            z[si] = bq->z;
            exc[si] = bq->exc;
        }
        size_t ns = an_runs(flag, S, c->o.min_steps, spans, S);
        for (size_t j = 0; j < ns; j++) {
            const size_t a = spans[j].a, b = spans[j].b;
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
            an_run_stats(ratio, z, exc, flag, a, b, buf, &st, c->o.min_steps);
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

int an_detect_comm(struct an_ctx *c)
{
    int rc;
    if (!c->layout_known) { /* the groups of communicator membership, when known */
        if (c->mgrp[0] && (rc = comm_type(c, ARGUS_GT_DP)))
            return rc;
        return c->mgrp[1] ? comm_type(c, ARGUS_GT_TP) : 0;
    }
    if ((rc = comm_type(c, ARGUS_GT_DP)))
        return rc;
    return comm_type(c, ARGUS_GT_TP);
}
