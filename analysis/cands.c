/* cands.c — runs of flagged steps and the candidates made of them, shared by every
 * detector: runs of flagged steps with short gaps bridged (an_runs), growing arrays of
 * per-rank runs and of candidates, a candidate's sorted source ranks, the medians of a
 * run and the merge of per-rank runs into one candidate per overlapping set. Writes only
 * the lists it is given (and c->tmp1..3 as scratch in an_merge_runs); no I/O.
 */
#include "analysis/internal.h"
#include "common/grow.h"

#include <errno.h>
#include <string.h>

size_t an_runs(const uint8_t *flag, size_t S, uint32_t min_flags, struct an_span *out,
               size_t cap)
{
    size_t n = 0, i = 0;

    while (i < S && n < cap) {
        if (!flag[i]) {
            i++;
            continue;
        }
        struct an_span sp = { i, i, 1 };
        for (size_t k = i + 1; k < S && k - sp.b - 1 <= AN_MAX_GAP; k++) {
            if (flag[k]) {
                sp.b = k;
                sp.nflag++;
            }
        }
        if (sp.nflag >= min_flags)
            out[n++] = sp;
        i = sp.b + 1;
    }
    return n;
}

int an_list_push(struct an_list *l, struct an_cand **out)
{
    if (argus_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, 16))
        return -ENOMEM;
    *out = &l->v[l->n++];
    memset(*out, 0, sizeof **out);
    (*out)->a.phase = -1;
    return 0;
}

void an_cand_add_rank(struct an_cand *k, uint32_t rank)
{
    uint32_t i = 0;
    while (i < k->a.n_ranks && k->a.ranks[i] < rank)
        i++;
    if (i < k->a.n_ranks && k->a.ranks[i] == rank)
        return;
    if (k->a.n_ranks == ARGUS_ANOMALY_MAX_RANKS)
        return;
    memmove(&k->a.ranks[i + 1], &k->a.ranks[i], (k->a.n_ranks - i) * sizeof k->a.ranks[0]);
    k->a.ranks[i] = rank;
    k->a.n_ranks++;
}

struct an_rrun *an_rruns_push(struct an_rruns *l, uint32_t rank, size_t a, size_t b)
{
    if (argus_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, 16))
        return NULL;
    struct an_rrun *u = &l->v[l->n++];
    memset(u, 0, sizeof *u);
    u->rank = rank;
    u->a = a;
    u->b = b;
    return u;
}

size_t an_overlap(size_t a0, size_t b0, size_t a1, size_t b1)
{
    size_t a = a0 > a1 ? a0 : a1, b = b0 < b1 ? b0 : b1;
    return b >= a ? b - a + 1 : 0;
}

static uint64_t sid(const struct an_ctx *c, size_t si)
{
    return c->step_id[si];
}

/* Medians of per-step ratio, z and excess over the flagged steps of [a,b]. */
void an_run_stats(const double *ratio, const double *z, const double *exc,
                  const uint8_t *flag, size_t a, size_t b, double *buf, struct an_rrun *out,
                  uint32_t min_steps)
{
    size_t m = 0;
    out->det = b;
    for (size_t si = a; si <= b; si++)
        if (flag[si] && ++m == min_steps)
            out->det = si;
    const double *src[3] = { ratio, z, exc };
    double *dst[3] = { &out->ratio, &out->z, &out->excess };
    for (int q = 0; q < 3; q++) {
        m = 0;
        for (size_t si = a; si <= b; si++)
            if (flag[si])
                buf[m++] = src[q][si];
        *dst[q] = argus_stats_median(buf, m);
    }
}

int an_push_cand(struct an_ctx *c, int kind, int level, size_t a, size_t b, size_t det,
                 double ratio, double z, double excess, struct an_cand **out)
{
    struct an_cand *k;
    int rc = an_list_push(&c->cand, &k);
    if (rc)
        return rc;
    k->a.kind = kind;
    k->a.level = level;
    k->si_a = a;
    k->si_b = b;
    k->a.step_first = sid(c, a);
    k->a.step_last = sid(c, b);
    k->a.detected_at_step = sid(c, det);
    k->a.slowdown = ratio;
    k->a.score = z;
    k->excess_ns = excess;
    *out = k;
    return 0;
}

/* Merge per-rank runs of the same kind (and same main kernel for kernel_degradation)
 * whose windows overlap by at least half of the shorter one; emit one candidate each. */
int an_merge_runs(struct an_ctx *c, struct an_rrun *v, size_t n, int level)
{
    int rc = an_tmp_reserve(c, n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        v[i].grp = -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i].grp >= 0 || v[i].kind < 0)
            continue;
        v[i].grp = (int)i;
        size_t a = v[i].a, b = v[i].b;
        for (int grew = 1; grew;) {
            grew = 0;
            for (size_t j = 0; j < n; j++) {
                if (v[j].grp >= 0 || v[j].kind != v[i].kind)
                    continue;
                if (v[i].kind == ARGUS_AK_KERNEL_DEGRADATION &&
                    (!v[j].nk || !v[i].nk || v[j].kern[0] != v[i].kern[0]))
                    continue;
                size_t la = v[j].b - v[j].a + 1, lb = b - a + 1;
                size_t shorter = la < lb ? la : lb;
                if (2 * an_overlap(a, b, v[j].a, v[j].b) < shorter)
                    continue;
                v[j].grp = (int)i;
                a = a < v[j].a ? a : v[j].a;
                b = b > v[j].b ? b : v[j].b;
                grew = 1;
            }
        }
        double *rs = c->tmp1, *zs = c->tmp2, *es = c->tmp3;
        size_t m = 0, det = b;
        for (size_t j = 0; j < n; j++) {
            if (v[j].grp != (int)i)
                continue;
            rs[m] = v[j].ratio;
            zs[m] = v[j].z;
            es[m++] = v[j].excess;
            det = v[j].det < det ? v[j].det : det;
        }
        struct an_cand *k;
        double ratio = argus_stats_median(rs, m), z = argus_stats_median(zs, m);
        double exc = argus_stats_median(es, m);
        if ((rc = an_push_cand(c, v[i].kind, level, a, b, det, ratio, z, exc, &k)))
            return rc;
        for (size_t j = 0; j < n; j++)
            if (v[j].grp == (int)i)
                an_cand_add_rank(k, v[j].rank);
        k->n_peers = c->cls_off[c->cls[v[i].rank] + 1] - c->cls_off[c->cls[v[i].rank]] - 1;
        for (uint32_t q = 0; q < v[i].nk; q++)
            k->a.kernels[q] = v[i].kern[q];
        k->a.n_kernels = v[i].nk;
    }
    return rc;
}
