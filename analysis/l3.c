/* l3.c — the kernel detector of L3: one compute kernel slower on a rank than on its
 * stage peers while the rest of its compute matches (kernel_degradation; a kernel's
 * value is its typical call, the per-mode median, times its calls, so one heavy-tailed
 * call is no trend; per call when its call count differs from the peers'). Also the
 * per-kernel excess used to name kernels in every verdict. The communication detector
 * is l3comm.c. Only adds candidates to the context.
 */
#include "analysis/internal.h"
#include "common/grow.h"

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

/* What an_detect_kernels works with: per (member of one class, step), MS = the largest
 * class x S, and per step; the kernel runs found and the runs folded from them. */
struct kscratch {
    double *cref;            /* [n_cls * S] materiality yardstick (class_yard) */
    double *ratio, *z, *exc; /* [MS] one kernel: ratio to the peers, z, excess (NAN) */
    double *ref;             /* [MS] the peers' reference of that cell */
    uint8_t *flag;           /* [MS] */
    double *buf, *yard;      /* [S] scratch; yardstick of the class at each step */
    uint32_t *mem;           /* [largest class + 1] the class's members with detail */
    uint32_t *xi;            /* [names + 1] x + 1 for the x-th compute kernel, else 0 */
    size_t ncomp;            /* compute kernels */
    struct kcells kc;
    struct an_span *spans;   /* [S] */
    struct krun *kr;         /* kernel runs, nkr of capkr */
    size_t nkr, capkr;
    struct an_rruns runs;    /* one per rank and overlapping window */
};

static int kscratch_alloc(const struct an_ctx *c, struct kscratch *w)
{
    const size_t S = c->S;
    uint32_t maxm = 0;
    for (uint32_t k = 0; k < c->n_cls; k++)
        if (c->cls_off[k + 1] - c->cls_off[k] > maxm)
            maxm = c->cls_off[k + 1] - c->cls_off[k];
    const size_t MS = (size_t)maxm * S;
    memset(w, 0, sizeof *w);
    w->cref = malloc((size_t)c->n_cls * S * sizeof *w->cref);
    w->ratio = malloc(MS * sizeof *w->ratio);
    w->z = malloc(MS * sizeof *w->z);
    w->exc = malloc(MS * sizeof *w->exc);
    w->ref = malloc(MS * sizeof *w->ref);
    w->buf = malloc(S * sizeof *w->buf);
    w->yard = malloc(S * sizeof *w->yard);
    w->flag = malloc(MS);
    w->mem = malloc((maxm + 1) * sizeof *w->mem);
    w->xi = malloc((c->names.n + 1) * sizeof *w->xi);
    w->kc.off = malloc((S + 1) * sizeof *w->kc.off);
    w->spans = malloc(S * sizeof *w->spans);
    if (!w->cref || !w->ratio || !w->z || !w->exc || !w->ref || !w->buf || !w->yard || !w->flag ||
        !w->mem || !w->xi || !w->kc.off || !w->spans)
        return -ENOMEM;
    return 0;
}

static void kscratch_free(struct kscratch *w)
{
    free(w->cref);
    free(w->ratio);
    free(w->z);
    free(w->exc);
    free(w->ref);
    free(w->buf);
    free(w->yard);
    free(w->xi);
    free(w->kc.off);
    free(w->kc.ci);
    free(w->kc.cs);
    free(w->kc.val);
    free(w->flag);
    free(w->mem);
    free(w->spans);
    free(w->kr);
    free(w->runs.v);
}

/* Compute kernel x's typical call x calls v[] in every cell of the class (m members with
 * detail, w->kc) against the lower-half reference of the cells of the same step: ratio,
 * excess and, for now, the cross-sectional scale in z; NAN excess where not compared
 * (fewer than two cells, no reference). Per-mode median x calls: one heavy-tailed call
 * is no trend. */
static void kernel_vs_peers(struct an_ctx *c, struct kscratch *w, uint32_t k, uint32_t m,
                            const double *v)
{
    const size_t S = c->S;
    memset(w->flag, 0, (size_t)m * S);
    for (size_t q = 0; q < (size_t)m * S; q++) {
        w->exc[q] = NAN;
        w->ratio[q] = 0;
    }
    for (size_t si = 0; si < S; si++) {
        const uint32_t j0 = w->kc.off[si], j1 = w->kc.off[si + 1];
        for (uint32_t j = j0; j < j1; j++)
            c->tmp3[j - j0] = v[j];
        struct argus_robust rb;
        argus_stats_robust_low(c->tmp3, j1 - j0, AN_PEER_FLOOR, c->tmp2, &rb);
        if (j1 - j0 < 2 || !(rb.ref > 0))
            continue;
        w->yard[si] = w->cref[(size_t)k * S + si];
        for (uint32_t j = j0; j < j1; j++) {
            const size_t at = (size_t)w->kc.ci[j] * S + si;
            w->ratio[at] = argus_stats_ratio(v[j], &rb);
            w->z[at] = rb.scale; /* the cross-sectional scale, for now */
            w->exc[at] = v[j] - rb.ref;
            w->ref[at] = rb.ref;
        }
    }
}

/* z against the larger of the peers' spread and the member's own noise, and the flags:
 * ratio, z and the yardstick, judged per call when the member's calls of h differ. */
static void kernel_flags(struct an_ctx *c, struct kscratch *w, uint32_t m, uint64_t h)
{
    const size_t S = c->S;
    for (uint32_t i = 0; i < m; i++) {
        const size_t base = (size_t)i * S;
        /* against its own level too (own.c): a rank whose kernel was always slower than
         * its peers' is a persistent imbalance, not a run of new episodes */
        struct an_own own;
        an_own_level(w->ratio + base, S, w->buf, &own);
        if (own.base > 1.0 && an_own_past(c))
            for (size_t si = 0; si < S; si++) {
                const size_t at = base + si;
                if (isnan(w->exc[at]))
                    continue;
                w->ratio[at] /= own.base;
                w->exc[at] -= (own.base - 1.0) * w->ref[at];
            }
        const double tsig = argus_stats_diff_sigma(w->exc + base, S, c->tmp1, c->tmp2);
        for (size_t si = 0; si < S; si++) {
            const size_t at = base + si;
            if (isnan(w->exc[at]))
                continue;
            const double sc = w->z[at] > tsig ? w->z[at] : tsig;
            w->z[at] = sc > 0 ? w->exc[at] / sc : 0;
            w->flag[at] = w->ratio[at] >= c->o.ratio && w->z[at] >= c->o.z &&
                          w->exc[at] >= w->yard[si];
            double pr, pe; /* other call counts than the peers': judge per call */
            if (w->flag[at] && an_kernel_percall(c, w->mem[i], si, h, &pr, &pe))
                w->flag[at] = pr >= c->o.ratio && pe >= w->yard[si];
        }
    }
}

/* Each member's runs of flagged steps of kernel h, unless its compute is flagged there
 * (then the compute verdict holds it), into w->kr. 0 or -ENOMEM. */
static int kernel_runs(struct an_ctx *c, struct kscratch *w, uint32_t m, uint64_t h)
{
    const size_t S = c->S;
    for (uint32_t i = 0; i < m; i++) {
        const uint32_t r = w->mem[i];
        const size_t base = (size_t)i * S;
        size_t ns = an_runs(w->flag + base, S, c->o.min_steps, w->spans, S);
        for (size_t j = 0; j < ns; j++) {
            if (compute_flagged(c, r, w->spans[j].a, w->spans[j].b))
                continue;
            if (argus_grow(&w->kr, &w->capkr, w->nkr + 1, sizeof *w->kr, 16))
                return -ENOMEM;
            struct krun *u = &w->kr[w->nkr++];
            memset(u, 0, sizeof *u);
            u->run.rank = r;
            u->run.a = w->spans[j].a;
            u->run.b = w->spans[j].b;
            u->hash = h;
            an_run_stats(w->ratio + base, w->z + base, w->exc + base, w->flag + base,
                         u->run.a, u->run.b, w->buf, &u->run, c->o.min_steps);
            for (size_t si = u->run.a; si <= u->run.b; si++)
                if (w->flag[base + si])
                    u->total += w->exc[base + si];
        }
    }
    return 0;
}

/* Every compute kernel of class k over its members with kernel detail somewhere (all of
 * them unless thin cells: a condensing tree leaves most ranks of a large class with rows
 * only). 0 or -ENOMEM. */
static int class_kernels(struct an_ctx *c, struct kscratch *w, uint32_t k)
{
    uint32_t m = 0;
    int rc;
    for (uint32_t i = c->cls_off[k]; i < c->cls_off[k + 1]; i++)
        if (c->kmr[c->cls_mem[i]])
            w->mem[m++] = c->cls_mem[i];
    if (m < 2)
        return 0;
    if ((rc = kcells_fill(c, w->mem, m, w->xi, w->ncomp, &w->kc)))
        return rc;
    for (size_t nk = 0; nk < c->names.n; nk++) {
        if (!w->xi[nk])
            continue;
        kernel_vs_peers(c, w, k, m, w->kc.val + (size_t)(w->xi[nk] - 1) * w->kc.nc);
        kernel_flags(c, w, m, c->names.hash[nk]);
        if ((rc = kernel_runs(c, w, m, c->names.hash[nk])))
            return rc;
    }
    return 0;
}

/* One run per rank and overlapping window, its kernels ordered by excess, into w->runs. */
static int fold_kernel_runs(struct kscratch *w)
{
    struct krun *kr = w->kr;
    const size_t nkr = w->nkr;
    if (nkr)
        qsort(kr, nkr, sizeof *kr, cmp_krun);
    for (size_t i = 0; i < nkr; i++) {
        if (kr[i].run.kind < 0)
            continue;
        struct an_rrun *u = an_rruns_push(&w->runs, 0, 0, 0);
        if (!u)
            return -ENOMEM;
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
    return 0;
}

int an_detect_kernels(struct an_ctx *c)
{
    struct kscratch w;
    int rc = kscratch_alloc(c, &w);

    if (rc)
        goto out;
    for (size_t nk = 0; nk < c->names.n; nk++)
        w.xi[nk] = c->names.kclass[nk] == ARGUS_KC_COMPUTE ? (uint32_t)++w.ncomp : 0;
    if (w.ncomp == 0)
        goto out; /* no compute kernel, no kernel verdict: nothing below to do */
    class_yard(c, w.cref);
    for (uint32_t k = 0; k < c->n_cls; k++)
        if ((rc = class_kernels(c, &w, k)))
            goto out;
    if ((rc = fold_kernel_runs(&w)))
        goto out;
    rc = an_merge_runs(c, w.runs.v, w.runs.n, 3);
out:
    kscratch_free(&w);
    return rc;
}
