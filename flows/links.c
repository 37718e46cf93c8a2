/* links.c — degraded links and switch ports (flows/flows.h, "Links"). Needs the topology;
 * without one there are no links. Allocates per analysis.
 *
 * Flowlets of PP pairs count: one of them is one transfer, so its bandwidth is its path's;
 * a DP flowlet may merge a ring's chunks with the waits for the ring's slowest link, its
 * bandwidth then the ring's, the same on every link of the ring. So DP flowlets count only
 * for a DP-only job (no other view of its links), and a link seen through them alone is
 * blamed only when it stands out of its own DP group (ring_outlier). A link's capacity
 * estimate is the 90th percentile of the bandwidths of its flowlets not yet explained;
 * the tiers' medians are taken once over every link with flowlets. Then, greedily: of the
 * links that are z <= -k_link and drop >= link_drop overall and in at least half of their
 * windows, the one with the most slow flowlets (below the tier median by link_drop) is
 * degraded, its flowlets are explained (they leave every other link's estimate), and the
 * rest is judged again; so a healthy peer whose only traffic crossed the bad link is not
 * blamed for it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "flows/flows_int.h"

#define MIN_FLOWLET_NS 2000   /* shorter flowlets give no bandwidth worth the name */
#define MIN_PER_WINDOW 5

struct lbw {
    double bw;       /* bytes/s */
    uint64_t t;
    uint32_t fl;     /* flowlet index */
    uint8_t active;
};

static int link_of(struct argus_flows *f, const char *leaf, const char *port, int tier)
{
    char name[sizeof f->link[0].name];

    snprintf(name, sizeof name, "%s:%s", leaf, port);
    for (size_t i = 0; i < f->nlink; i++)
        if (f->link[i].tier == tier && strcmp(f->link[i].name, name) == 0)
            return (int)i;
    if (argus_grow(&f->link, &f->link_cap, f->nlink + 1, sizeof *f->link, 64))
        return -ENOMEM;
    struct fl_link *l = &f->link[f->nlink];
    memset(l, 0, sizeof *l);
    memcpy(l->name, name, sizeof name);
    l->tier = tier;
    return (int)f->nlink++;
}

/* capacity estimate of l over its active flowlets in [t0, t1); *nout how many */
static double cap_in(const struct fl_link *l, const struct lbw *b, uint64_t t0, uint64_t t1,
                     double *tmp, size_t *nout)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct lbw *x = &b[l->m[i]];
        if (x->active && x->t >= t0 && x->t < t1)
            tmp[n++] = x->bw;
    }
    *nout = n;
    return n ? fl_quantile(tmp, n, 0.9) : NAN;
}

/* A link seen through a DP-only job's flowlets alone is judged only when it is an
 * endpoint's access link and slower than every other access link of that endpoint's DP
 * group by link_drop: records that merge a ring's rounds carry the ring's slowest link
 * on every link of it, and then no link of the ring stands out (none is blamed). */
static int ring_outlier(const struct argus_flows *f, size_t li, const double *caps,
                        unsigned W)
{
    const struct fl_ep *own = NULL;
    for (size_t e = 0; e < f->nep && !own; e++)
        if (f->ep[e].access_link == (int)li)
            own = &f->ep[e];
    if (!own || own->dp_group < 0)
        return 0;
    double x = caps[li * (W + 1)];
    size_t peers = 0;
    for (size_t e = 0; e < f->nep; e++) {
        const struct fl_ep *p = &f->ep[e];
        if (p == own || p->job != own->job || p->dp_group != own->dp_group ||
            p->access_link < 0 || isnan(caps[(size_t)p->access_link * (W + 1)]))
            continue;
        peers++;
        if (x > caps[(size_t)p->access_link * (W + 1)] * (1 - f->o.link_drop))
            return 0;
    }
    return peers > 0;
}

int fl_links(struct argus_flows *f)
{
    struct lbw *b = NULL;
    double *tmp = NULL, *vals = NULL, *caps = NULL, *tmed = NULL, *tscale = NULL;
    size_t nb = 0, capb = 0;
    int rc = -ENOMEM;

    if (!f->topo)
        return 0;
    for (size_t e = 0; e < f->nep; e++) {
        const struct argus_topo_entry *t = f->ep[e].topo;
        if (!t)
            continue;
        int a = link_of(f, t->leaf, t->port, 0), u = link_of(f, t->leaf, "uplink", 1);
        if (a < 0 || u < 0)
            return -ENOMEM;
        f->ep[e].access_link = a, f->ep[e].uplink = u;
    }
    for (size_t i = 0; i < f->nfl; i++) {
        const struct fl_flowlet *x = &f->fl[i];
        const struct fl_pair *p = &f->pair[x->pair];
        /* PP flowlets; a DP-only job's DP flowlets too (its only view; right when records
         * end within a ring round, the idle timeout below the waits for its slowest link) */
        int dp_only = p->kind == FL_DP && p->job >= 0 && f->job[p->job].npairs_pp == 0;
        if (x->te - x->ts < MIN_FLOWLET_NS || (p->kind != FL_PP && !dp_only))
            continue;
        const struct fl_ep *s = &f->ep[x->dir ? p->b : p->a], *d = &f->ep[x->dir ? p->a : p->b];
        if (!s->topo || !d->topo)
            continue;
        if (argus_grow(&b, &capb, nb + 1, sizeof *b, 1024))
            goto out;
        b[nb] = (struct lbw){(double)x->bytes * 1e9 / (double)(x->te - x->ts), x->ts,
                             (uint32_t)i, 1};
        int path[4] = {s->access_link, d->access_link, -1, -1};
        if (strcmp(s->topo->leaf, d->topo->leaf) != 0)
            path[2] = s->uplink, path[3] = d->uplink;
        for (int k = 0; k < 4; k++) {
            if (path[k] < 0)
                continue;
            struct fl_link *l = &f->link[path[k]];
            if (argus_grow(&l->m, &l->cap, l->n + 1, sizeof *l->m, 64))
                goto out;
            l->m[l->n++] = (uint32_t)nb;
            l->n_dp += (size_t)dp_only;
        }
        nb++;
    }
    size_t maxn = 0;
    for (size_t i = 0; i < f->nlink; i++)
        if (f->link[i].n > maxn)
            maxn = f->link[i].n;
    unsigned W = f->o.link_windows;
    tmp = malloc((maxn + 1) * sizeof *tmp);
    vals = malloc((f->nlink + 1) * sizeof *vals);
    caps = malloc((f->nlink + 1) * (W + 1) * sizeof *caps);
    tmed = malloc(2 * (W + 1) * sizeof *tmed);
    tscale = malloc(2 * (W + 1) * sizeof *tscale);
    if (!tmp || !vals || !caps || !tmed || !tscale)
        goto out;
    uint64_t span = f->t_last > f->t_first ? f->t_last - f->t_first : 1;
    for (size_t round = 0; round <= f->nlink; round++) {
        /* caps[i * (W + 1)]: overall; [i * (W + 1) + 1 + w]: window w (NaN: too few) */
        for (size_t i = 0; i < f->nlink; i++) {
            size_t nn;
            caps[i * (W + 1)] = cap_in(&f->link[i], b, 0, UINT64_MAX, tmp, &nn);
            for (unsigned w = 0; w < W; w++) {
                uint64_t t0 = f->t_first + span * w / W;
                uint64_t t1 = w + 1 == W ? UINT64_MAX : f->t_first + span * (w + 1) / W;
                double c = cap_in(&f->link[i], b, t0, t1, tmp, &nn);
                caps[i * (W + 1) + 1 + w] = nn >= MIN_PER_WINDOW ? c : NAN;
            }
        }
        if (round == 0)   /* the tiers' medians and scales, once */
            for (int tier = 0; tier < 2; tier++)
                for (unsigned w = 0; w <= W; w++) {
                    size_t nv = 0;
                    for (size_t k = 0; k < f->nlink; k++)
                        if (f->link[k].tier == tier && !isnan(caps[k * (W + 1) + w]))
                            vals[nv++] = caps[k * (W + 1) + w];
                    double med = nv >= 3 ? fl_median(vals, nv) : NAN;
                    double sc = nv >= 3 ? 1.4826 * fl_mad(vals, nv, med) : NAN;
                    if (sc < 0.01 * med)
                        sc = 0.01 * med;
                    tmed[tier * (W + 1) + w] = med, tscale[tier * (W + 1) + w] = sc;
                }
        int best = -1;
        for (size_t i = 0; i < f->nlink; i++) {
            struct fl_link *l = &f->link[i];
            if (l->degraded)
                continue;
            l->win_used = l->win_flagged = 0;
            l->z = l->drop = 0;
            l->p90 = caps[i * (W + 1)];
            int flag0 = 0;
            for (unsigned w = 0; w <= W; w++) {
                double x = caps[i * (W + 1) + w], med = tmed[l->tier * (W + 1) + w];
                double sc = tscale[l->tier * (W + 1) + w];
                if (isnan(x) || isnan(med) || !(sc > 0))
                    continue;
                double z = (x - med) / sc, drop = 1 - x / med;
                int flag = z <= -f->o.k_link && drop >= f->o.link_drop;
                if (w == 0)
                    l->z = z, l->drop = drop, flag0 = flag;
                else
                    l->win_used++, l->win_flagged += flag;
            }
            l->slow = 0;
            double med = tmed[l->tier * (W + 1)];
            for (size_t k = 0; k < l->n; k++)
                l->slow += b[l->m[k]].active && b[l->m[k]].bw < med * (1 - f->o.link_drop);
            if (flag0 && 2 * l->win_flagged >= l->win_used &&
                (l->n_dp < l->n || ring_outlier(f, i, caps, W)) &&
                (best < 0 || l->slow > f->link[best].slow))
                best = (int)i;
        }
        if (best < 0)
            break;
        struct fl_link *l = &f->link[best];
        l->degraded = 1;
        for (size_t k = 0; k < l->n; k++)
            b[l->m[k]].active = 0;
    }
    rc = 0;
out:
    free(b);
    free(tmp);
    free(vals);
    free(caps);
    free(tmed);
    free(tscale);
    return rc;
}
