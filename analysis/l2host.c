/* l2host.c — host_stall (L2): a rank's GPU idle time (host gap) against the peers of its
 * class and against its own lower-half baseline; every flag needs the ratio gate, the
 * robust-z gate and materiality against both. It only adds candidates to the context
 * (intermittent stalls are stalls.c, late arrivers peers.c).
 */
#include "analysis/l2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Own baseline of a rank's host gap over all its steps: the lower half, so that a stall
 * lasting up to about half of the run does not lift its own baseline. */
static void own_host_baseline(struct an_ctx *c, uint32_t r, struct argus_robust *out)
{
    size_t m = 0;
    const double *vh = c->vhost + (size_t)r * c->S;
    for (size_t si = 0; si < c->S; si++)
        if (!isnan(vh[si]))
            c->tmp1[m++] = vh[si];
    argus_stats_robust_low(c->tmp1, m, AN_PEER_FLOOR, c->tmp2, out);
}

/* Rank r's host gap against its class's reference and its own baseline, per step, into
 * w->ratio, z, exc and flag. Returns 1 when some step could be flagged (w->flag set),
 * else 0. */
static int host_flags(struct an_ctx *c, uint32_t r, struct an_rank_scratch *w)
{
    const size_t S = c->S;
    const double *vh = c->vhost + (size_t)r * S;
    const struct an_pref *ref = w->ref + (size_t)c->cls[r] * S;
    double *ratio = w->ratio, *z = w->z, *exc = w->exc;
    struct argus_robust own;
    int maybe = 0;
    for (size_t si = 0; si < S; si++) {
        const struct an_pref *p = &ref[si];
        exc[si] = (!isnan(vh[si]) && p->n >= 2 && p->wall > 0) ? vh[si] - p->ref : NAN;
        /* flagged steps need the peer ratio and materiality below: without any, the
         * rank needs neither its baseline nor its noise */
        maybe |= !isnan(exc[si]) && exc[si] >= AN_HOST_MATERIAL * p->wall &&
                 (p->ref > 0 ? vh[si] / p->ref : (vh[si] > 0 ? 1e9 : 0)) >= c->o.ratio;
    }
    if (!maybe)
        return 0;
    own_host_baseline(c, r, &own);
    memset(w->flag, 0, S);
    const double tsig = argus_stats_diff_sigma(exc, S, c->tmp1, c->tmp2);
    for (size_t si = 0; si < S; si++) {
        const struct an_pref *p = &ref[si];
        ratio[si] = z[si] = 0;
        if (isnan(exc[si]))
            continue;
        const double v = vh[si], wfloor = 0.002 * p->wall;
        const double e = exc[si], eo = v - own.ref;
        double sc = p->scale > wfloor ? p->scale : wfloor;
        sc = sc > tsig ? sc : tsig;
        const double so = own.scale > wfloor ? own.scale : wfloor;
        ratio[si] = p->ref > 0 ? v / p->ref : (v > 0 ? 1e9 : 0);
        z[si] = e / sc;
        const double ro = own.ref > 0 ? v / own.ref : (v > 0 ? 1e9 : 0);
        w->flag[si] = ratio[si] >= c->o.ratio && z[si] >= c->o.z &&
                      e >= AN_HOST_MATERIAL * p->wall && ro >= c->o.ratio &&
                      eo / so >= c->o.z && eo >= AN_HOST_MATERIAL * p->wall;
    }
    return 1;
}

int an_detect_host(struct an_ctx *c)
{
    struct an_rank_scratch w = { 0 };
    struct an_rruns runs = { 0 };
    size_t first;
    int rc = an_rank_scratch_alloc(c, &w);

    if (rc)
        goto out;
    an_class_refs(c, c->vhost, w.ref, NULL);
    for (uint32_t r = 0; r < c->n; r++)
        if (host_flags(c, r, &w) &&
            (rc = an_rank_runs(c, r, w.flag, &w, ARGUS_AK_HOST_STALL, 0, &runs)))
            goto out;
    first = c->cand.n;
    rc = an_merge_runs(c, runs.v, runs.n, 2);
    for (size_t i = first; i < c->cand.n; i++)
        c->cand.v[i].a.phase = ARGUS_PH_HOST;
out:
    an_rank_scratch_free(&w);
    free(runs.v);
    return rc;
}
