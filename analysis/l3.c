/* l3.c — the kernel detector of L3: one compute kernel slower on a rank than on its
 * stage peers while the rest of its compute matches (kernel_degradation; a kernel's
 * value is its typical call, the per-mode median, times its calls, so one heavy-tailed
 * call is no trend; per call when its call count differs from the peers'). Also the
 * per-kernel excess used to name kernels in every verdict. The communication detector
 * is l3comm.c. Only adds candidates to the context.
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
        const struct argus_step_summary *s = an_kcell(c, c->cls_mem[i], si);
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
                const struct argus_step_summary *s = an_kcell(c, r, si);
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
                const struct argus_step_summary *s = an_kcell(c, r, si);
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
            const size_t ks = (size_t)k * c->S + si;
            double cm = c->ccomp_set ? c->ccomp[ks] : NAN; /* an_detect_compute's */
            if (!c->ccomp_set) {
                size_t m = 0;
                for (uint32_t i = c->cls_off[k]; i < c->cls_off[k + 1]; i++) {
                    const size_t at = (size_t)c->cls_mem[i] * c->S + si;
                    if (!isnan(c->vcomp[at]))
                        c->tmp1[m++] = c->vcomp[at];
                }
                cm = m ? argus_stats_median(c->tmp1, m) : NAN;
            }
            const double wm = c->cwall[ks];
            out[ks] = fmax(AN_KERNEL_MATERIAL * (isnan(cm) ? 0 : cm), AN_KERNEL_WALL * wm);
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

/* The kernel cells of one class (members mem[0..m) with kernel detail), by step: cell j
 * of step si (off[si] <= j < off[si + 1]) is member ci[j]; val[x * nc + j] is the typical
 * call x calls of the x-th compute kernel (xi[name index] = x + 1; 0 when not compute) in
 * it, 0 when absent. One walk over each cell's kernel modes (sorted: a name's modes are
 * consecutive) instead of a search per kernel and cell. */
struct kcells {
    size_t nc, cap, xcap; /* cells; capacity of ci (and cs) and of val */
    uint32_t *off, *ci;   /* [S + 1], [cap] */
    const struct argus_step_summary **cs; /* [cap] the cells' summaries */
    double *val;          /* [xcap] */
};

/* The compute kernels' typical call x calls in s into val[x * stride] (see kcells). */
static void cell_vals(const struct an_ctx *c, const struct argus_step_summary *s,
                      const uint32_t *xi, double *val, size_t stride)
{
    double calls, typ;
    if (!c->kmodes_sorted) { /* a name's modes may be anywhere: one search per name */
        for (size_t k = 0; k < c->names.n; k++)
            if (xi[k]) {
                typ = an_name_typical(c, s, c->names.hash[k], &calls);
                val[(xi[k] - 1) * stride] = typ * calls;
            }
        return;
    }
    const uint32_t n = s->n_kmodes < ARGUS_MAX_KMODES ? s->n_kmodes : ARGUS_MAX_KMODES;
    for (uint32_t a = 0, b; a < n; a = b) {
        const uint64_t h = s->kmodes[a].name_hash;
        for (b = a + 1; b < n && s->kmodes[b].name_hash == h;)
            b++;
        const long at = an_name_find(&c->names, h);
        if (at >= 0 && xi[at]) {
            typ = an_modes_typical(s->kmodes + a, b - a, &calls);
            val[(xi[at] - 1) * stride] = typ * calls;
        }
    }
}

static int kcells_fill(struct an_ctx *c, const uint32_t *mem, uint32_t m, const uint32_t *xi,
                       size_t nx, struct kcells *kc)
{
    const size_t S = c->S;
    size_t nc = 0;
    for (uint32_t i = 0; i < m; i++)
        for (size_t si = 0; si < S; si++)
            nc += an_kcell(c, mem[i], si) != NULL;
    if (nc > kc->cap) {
        uint32_t *ci = realloc(kc->ci, nc * sizeof *ci);
        if (ci)
            kc->ci = ci;
        const struct argus_step_summary **cs = realloc(kc->cs, nc * sizeof *cs);
        if (cs)
            kc->cs = cs;
        if (!ci || !cs)
            return -ENOMEM;
        kc->cap = nc;
    }
    if (nc * nx > kc->xcap) {
        double *val = realloc(kc->val, nc * nx * sizeof *val);
        if (!val)
            return -ENOMEM;
        kc->val = val;
        kc->xcap = nc * nx;
    }
    kc->nc = nc;
    if (nc && nx)
        memset(kc->val, 0, nc * nx * sizeof *kc->val);
    size_t j = 0;
    for (size_t si = 0; si < S; si++) {
        kc->off[si] = (uint32_t)j;
        for (uint32_t i = 0; i < m; i++) {
            const struct argus_step_summary *s = an_kcell(c, mem[i], si);
            if (!s)
                continue;
            kc->cs[j] = s;
            kc->ci[j++] = i;
        }
    }
    kc->off[S] = (uint32_t)j;
    /* The summaries fit in no cache and cell_vals walks each one's kernel modes: ask for
     * the next cell's modes (its header asked for one cell earlier) while this one is read,
     * which the hardware cannot guess (cells are scattered). */
    for (j = 0; j < nc; j++) {
        if (j + 2 < nc)
            __builtin_prefetch(&kc->cs[j + 2]->n_kmodes);
        if (j + 1 < nc) {
            const struct argus_step_summary *t = kc->cs[j + 1];
            for (uint32_t k = 0; k < t->n_kmodes && k < ARGUS_MAX_KMODES; k++) {
                __builtin_prefetch(&t->kmodes[k]); /* hash, count, the sketch's start */
                __builtin_prefetch((const char *)&t->kmodes[k] + 64);
            }
        }
        cell_vals(c, kc->cs[j], xi, kc->val + j, nc);
    }
    return 0;
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
    double *yard = malloc(S * sizeof *yard);
    uint8_t *flag = malloc(MS);
    uint32_t *mem = malloc((maxm + 1) * sizeof *mem);
    uint32_t *xi = malloc((c->names.n + 1) * sizeof *xi);
    struct kcells kc = { .off = malloc((S + 1) * sizeof *kc.off) };
    struct an_span *spans = malloc(S * sizeof *spans);
    struct krun *kr = NULL;
    struct an_rrun *runs = NULL;
    size_t nkr = 0, capkr = 0, nrun = 0, caprun = 0;
    int rc = 0;

    if (!cref || !ratio || !z || !exc || !buf || !yard || !flag || !mem || !xi || !kc.off ||
        !spans) {
        rc = -ENOMEM;
        goto out;
    }
    size_t ncomp = 0; /* no compute kernel, no kernel verdict: nothing below to do */
    for (size_t nk = 0; nk < c->names.n; nk++)
        xi[nk] = c->names.kclass[nk] == ARGUS_KC_COMPUTE ? (uint32_t)++ncomp : 0;
    if (ncomp == 0)
        goto out;
    class_yard(c, cref);
    for (uint32_t k = 0; k < c->n_cls; k++) {
        /* the members with kernel detail somewhere (all of them unless thin cells): a
         * condensing tree leaves most ranks of a large class with rows only */
        uint32_t m = 0;
        for (uint32_t i = c->cls_off[k]; i < c->cls_off[k + 1]; i++)
            if (c->kmr[c->cls_mem[i]])
                mem[m++] = c->cls_mem[i];
        if (m < 2)
            continue;
        if ((rc = kcells_fill(c, mem, m, xi, ncomp, &kc)))
            goto out;
        for (size_t nk = 0; nk < c->names.n; nk++) {
            const uint64_t h = c->names.hash[nk];
            if (!xi[nk])
                continue;
            const double *v = kc.val + (size_t)(xi[nk] - 1) * kc.nc;
            memset(flag, 0, (size_t)m * S);
            for (size_t q = 0; q < (size_t)m * S; q++)
                exc[q] = NAN;
            for (size_t si = 0; si < S; si++) {
                const uint32_t j0 = kc.off[si], j1 = kc.off[si + 1];
                for (uint32_t j = j0; j < j1; j++) /* per-mode median x calls: one */
                    c->tmp3[j - j0] = v[j];        /* heavy-tailed call is no trend */
                struct argus_robust rb;
                argus_stats_robust_low(c->tmp3, j1 - j0, AN_PEER_FLOOR, c->tmp2, &rb);
                if (j1 - j0 < 2 || !(rb.ref > 0))
                    continue;
                yard[si] = cref[(size_t)k * S + si];
                for (uint32_t j = j0; j < j1; j++) {
                    const size_t at = (size_t)kc.ci[j] * S + si;
                    ratio[at] = argus_stats_ratio(v[j], &rb);
                    z[at] = rb.scale; /* the cross-sectional scale, for now */
                    exc[at] = v[j] - rb.ref;
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
                    if (flag[at] && an_kernel_percall(c, mem[i], si, h, &pr, &pe))
                        flag[at] = pr >= c->o.ratio && pe >= yard[si];
                }
            }
            for (uint32_t i = 0; i < m; i++) {
                const uint32_t r = mem[i];
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
    free(yard);
    free(xi);
    free(kc.off);
    free(kc.ci);
    free(kc.cs);
    free(kc.val);
    free(flag);
    free(mem);
    free(spans);
    free(kr);
    free(runs);
    return rc;
}
