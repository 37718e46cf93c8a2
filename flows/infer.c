/* infer.c — the first half of the analysis (flows/flows.h): endpoints, pairs, flowlets,
 * jobs, pair kinds and the layout from the stored records (flows/store.c). fl_infer
 * allocates per analysis, never per record.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/grow.h"
#include "common/hash.h"
#include "flows/flows_int.h"

#define DUP_NS 50000   /* a second observation of a record starts and ends this close */
#define DUP_LOOK 64    /* records of the pair and direction looked at past one */

/* the node list holding host, or -1 */
static int nodelist_of(const struct argus_flows *f, const char *host)
{
    size_t hl = strlen(host);
    for (size_t i = 0; i < f->nnodes; i++)
        for (const char *p = f->nodes[i]; *p;) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n == hl && memcmp(p, host, n) == 0)
                return (int)i;
            p += n + (e != NULL);
        }
    return -1;
}

/* ---- hash maps built per analysis --------------------------------------------------- */

struct hmap {
    uint64_t *key;  /* 0: empty (keys are stored +1) */
    uint32_t *val;
    size_t mask;
};

static int hmap_init(struct hmap *h, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap <<= 1;
    h->key = calloc(cap, sizeof *h->key);
    h->val = malloc(cap * sizeof *h->val);
    h->mask = cap - 1;
    return h->key && h->val ? 0 : -ENOMEM;
}

static void hmap_free(struct hmap *h)
{
    free(h->key);
    free(h->val);
}

/* the slot of k; *found says whether it holds k */
static size_t hmap_slot(const struct hmap *h, uint64_t k, int *found)
{
    size_t i = argus_mix64(k) & h->mask;
    while (h->key[i] && h->key[i] != k + 1)
        i = (i + 1) & h->mask;
    *found = h->key[i] != 0;
    return i;
}

static uint64_t addr_key(const struct argus_flow_addr *a)
{
    uint64_t x, y;
    memcpy(&x, a->b, 8);
    memcpy(&y, a->b + 8, 8);
    return argus_mix64(x ^ argus_mix64(y)) >> 1; /* +1 never wraps */
}

/* ---- union-find ----------------------------------------------------------------------- */

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

static void uf_union(uint32_t *p, uint32_t a, uint32_t b)
{
    a = uf_find(p, a), b = uf_find(p, b);
    if (a != b)
        p[a < b ? b : a] = a < b ? a : b;
}

/* ---- sorting -------------------------------------------------------------------------- */

static int cmp_rec(const void *x, const void *y)
{
    const struct fl_rec *a = x, *b = y;
    if (a->pair != b->pair)
        return a->pair < b->pair ? -1 : 1;
    if (a->dir != b->dir)
        return a->dir - b->dir;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* ---- pair kinds ----------------------------------------------------------------------- */

/* one direction is "one size": 90 % of its flowlets within tol of their median size, tol
 * 5 % plus three binomial sigmas of 1-in-sampling packet sampling */
static int one_size(const struct fl_flowlet *fl, size_t n, uint64_t *tmp, uint32_t sampling)
{
    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++)
        tmp[i] = fl[i].packets;
    qsort(tmp, n, sizeof *tmp, cmp_u64);
    double sampled = (double)tmp[n / 2] / (sampling > 1 ? sampling : 1);
    double tol = 0.05 + (sampling > 1 ? 3.0 / sqrt(sampled > 1 ? sampled : 1) : 0);
    for (size_t i = 0; i < n; i++)
        tmp[i] = fl[i].bytes;
    qsort(tmp, n, sizeof *tmp, cmp_u64);
    double med = (double)tmp[n / 2];
    size_t near = 0;
    for (size_t i = 0; i < n; i++)
        near += fabs((double)tmp[i] - med) <= tol * med;
    return near * 10 >= n * 9;
}

static int modal(const int *v, size_t n)
{
    int best = 0;
    size_t bestc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += v[j] == v[i];
        if (c > bestc || (c == bestc && v[i] > best))
            best = v[i], bestc = c;
    }
    return best;
}

/* The pipelines of job j in stage order: pipe_order[p * pp + s]. */
static int order_pipelines(struct argus_flows *f, struct fl_job *jb, uint32_t *pipe_of_root)
{
    (void)pipe_of_root;
    size_t pp = jb->pp > 0 ? (size_t)jb->pp : 1;
    jb->pipe_order = malloc((size_t)jb->npipes * pp * sizeof *jb->pipe_order);
    if (!jb->pipe_order)
        return -ENOMEM;
    for (size_t i = 0; i < (size_t)jb->npipes * pp; i++)
        jb->pipe_order[i] = -1;
    for (int p = 0; p < jb->npipes; p++) {
        /* members and their PP degree */
        int start = -1, deg1 = 0;
        for (size_t k = 0; k < jb->nep; k++) {
            uint32_t e = jb->ep[k];
            if (f->ep[e].pipeline != p)
                continue;
            int deg = 0;
            for (size_t q = 0; q < f->npair; q++)
                if (f->pair[q].kind == FL_PP && (f->pair[q].a == e || f->pair[q].b == e))
                    deg++;
            if (start < 0 || (deg == 1 && !deg1))
                start = (int)e, deg1 = deg == 1;
        }
        if (start < 0)
            continue;
        /* orientation: the pair at the end; its earliest flowlet's sender is stage 0 */
        for (size_t q = 0; q < f->npair; q++) {
            const struct fl_pair *pr = &f->pair[q];
            if (pr->kind != FL_PP || (pr->a != (uint32_t)start && pr->b != (uint32_t)start))
                continue;
            uint64_t first[2] = {UINT64_MAX, UINT64_MAX};
            for (size_t i = 0; i < pr->fl_n; i++) {
                const struct fl_flowlet *x = &f->fl[pr->fl_first + i];
                if (x->ts < first[x->dir])
                    first[x->dir] = x->ts;
            }
            int sender_dir = first[0] <= first[1] ? 0 : 1;
            uint32_t sender = sender_dir == 0 ? pr->a : pr->b;
            if (sender != (uint32_t)start && deg1) {
                /* the far end is stage 0: walk from it instead */
                int prev = -1, cur = start;
                for (;;) {
                    int next = -1;
                    for (size_t r = 0; r < f->npair && next < 0; r++) {
                        const struct fl_pair *x = &f->pair[r];
                        if (x->kind != FL_PP)
                            continue;
                        int o = x->a == (uint32_t)cur ? (int)x->b
                                : x->b == (uint32_t)cur ? (int)x->a : -1;
                        if (o >= 0 && o != prev && f->ep[o].pipeline == p)
                            next = o;
                    }
                    if (next < 0)
                        break;
                    prev = cur, cur = next;
                }
                start = cur;
            }
            break;
        }
        int prev = -1, cur = start;
        for (size_t s = 0; s < pp && cur >= 0; s++) {
            jb->pipe_order[(size_t)p * pp + s] = cur;
            f->ep[cur].stage = (int)s;
            int next = -1;
            for (size_t r = 0; r < f->npair && next < 0; r++) {
                const struct fl_pair *x = &f->pair[r];
                if (x->kind != FL_PP)
                    continue;
                int o = x->a == (uint32_t)cur ? (int)x->b : x->b == (uint32_t)cur ? (int)x->a : -1;
                if (o >= 0 && o != prev && f->ep[o].pipeline == p)
                    next = o;
            }
            prev = cur, cur = next;
        }
    }
    return 0;
}

int fl_infer(struct argus_flows *f, char *errbuf, size_t errlen)
{
    struct hmap em = {0}, pm = {0};
    struct fl_rec *rec = NULL;
    uint32_t *uf = NULL, *root_job = NULL, *grp = NULL;
    uint64_t *tmp = NULL;
    int *sizes = NULL;
    int rc = -ENOMEM;
    size_t n = f->nstore, cap_ep = 0, cap_pair = 0;

    if (n == 0) {
        argus_seterr(errbuf, errlen, "no flow record kept");
        return -ENODATA;
    }
    rec = malloc(n * sizeof *rec);
    if (!rec || hmap_init(&em, 2 * n < 1u << 20 ? 2 * n : 1u << 20) ||
        hmap_init(&pm, n < 1u << 20 ? n : 1u << 20))
        goto out;
    f->t_first = UINT64_MAX;
    /* endpoints and pairs */
    for (size_t i = 0; i < n; i++) {
        const struct argus_flow_rec *r = &f->store[i];
        uint32_t id[2];
        const struct argus_flow_addr *ad[2] = {&r->src, &r->dst};
        for (int s = 0; s < 2; s++) {
            int found;
            uint64_t k = addr_key(ad[s]);
            size_t sl = hmap_slot(&em, k, &found);
            if (!found) {
                if (f->nep * 2 >= em.mask) {
                    argus_seterr(errbuf, errlen, "more than %zu endpoints", em.mask / 2);
                    rc = -E2BIG;
                    goto out;
                }
                if (argus_grow(&f->ep, &cap_ep, f->nep + 1, sizeof *f->ep, 256))
                    goto out;
                struct fl_ep *e = &f->ep[f->nep];
                memset(e, 0, sizeof *e);
                e->ip = *ad[s];
                e->job = e->dp_group = e->pipeline = e->stage = -1;
                e->access_link = e->uplink = -1;
                e->topo = f->topo ? argus_topo_find(f->topo, ad[s]) : NULL;
                e->nodelist = e->topo ? nodelist_of(f, e->topo->host) : -1;
                em.key[sl] = k + 1, em.val[sl] = (uint32_t)f->nep++;
            }
            id[s] = em.val[sl];
        }
        uint32_t lo = id[0] < id[1] ? id[0] : id[1], hi = id[0] ^ id[1] ^ lo;
        uint64_t pk = (uint64_t)lo << 32 | hi; /* hi < 2^32 - 1: pk + 1 never wraps */
        int found;
        size_t sl = hmap_slot(&pm, pk, &found);
        if (!found) {
            if (f->npair * 2 >= pm.mask) {
                argus_seterr(errbuf, errlen, "more than %zu endpoint pairs", pm.mask / 2);
                rc = -E2BIG;
                goto out;
            }
            if (argus_grow(&f->pair, &cap_pair, f->npair + 1, sizeof *f->pair, 256))
                goto out;
            struct fl_pair *p = &f->pair[f->npair];
            memset(p, 0, sizeof *p);
            p->a = lo, p->b = hi, p->job = -1;
            pm.key[sl] = pk + 1, pm.val[sl] = (uint32_t)f->npair++;
        }
        rec[i].ts = r->t_start_ns, rec[i].te = r->t_end_ns, rec[i].bytes = r->bytes;
        rec[i].packets = r->packets;
        rec[i].obs = r->obs_point, rec[i].sport = r->src_port, rec[i].dport = r->dst_port;
        rec[i].dup = 0;
        rec[i].a = id[0], rec[i].b = id[1], rec[i].pair = pm.val[sl];
        rec[i].dir = id[0] != lo;
        if (r->t_start_ns < f->t_first)
            f->t_first = r->t_start_ns;
        if (r->t_end_ns > f->t_last)
            f->t_last = r->t_end_ns;
    }
    /* flowlets: per pair and direction, records merged over gaps <= merge_gap */
    qsort(rec, n, sizeof *rec, cmp_rec);
    /* duplicate observation points: the same 5-tuple's record again, from another
     * observation point, starting and ending within DUP_NS of it */
    for (size_t i = 0; i < n; i++) {
        if (rec[i].dup)
            continue;
        for (size_t k = i + 1; k < n && k <= i + DUP_LOOK; k++) {
            const struct fl_rec *x = &rec[k];
            if (x->pair != rec[i].pair || x->dir != rec[i].dir || x->ts > rec[i].ts + DUP_NS)
                break;
            if (!x->dup && x->obs != rec[i].obs && x->sport == rec[i].sport &&
                x->dport == rec[i].dport && x->te + DUP_NS >= rec[i].te &&
                x->te <= rec[i].te + DUP_NS) {
                rec[k].dup = 1;
                f->duplicates++;
            }
        }
    }
    f->fl = malloc(n * sizeof *f->fl);
    if (!f->fl)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (rec[i].dup)
            continue;
        struct fl_flowlet *cur = f->nfl ? &f->fl[f->nfl - 1] : NULL;
        if (cur && cur->pair == rec[i].pair && cur->dir == rec[i].dir &&
            rec[i].ts <= cur->te + f->o.merge_gap_ns) {
            if (rec[i].te > cur->te)
                cur->te = rec[i].te;
            cur->bytes += rec[i].bytes;
            cur->packets += rec[i].packets;
            continue;
        }
        struct fl_pair *p = &f->pair[rec[i].pair];
        if (p->fl_n == 0)
            p->fl_first = f->nfl;
        p->fl_n++;
        p->flowlets[rec[i].dir]++;
        f->fl[f->nfl++] = (struct fl_flowlet){rec[i].ts, rec[i].te, rec[i].bytes,
                                              rec[i].packets, rec[i].pair, rec[i].dir};
    }
    for (size_t i = 0; i < f->nfl; i++)
        f->pair[f->fl[i].pair].bytes[f->fl[i].dir] += f->fl[i].bytes;
    /* pair kinds */
    tmp = malloc(f->nfl * sizeof *tmp);
    if (!tmp)
        goto out;
    for (size_t q = 0; q < f->npair; q++) {
        struct fl_pair *p = &f->pair[q];
        size_t n0 = p->flowlets[0];
        const struct fl_flowlet *fl = &f->fl[p->fl_first];
        int pp = p->flowlets[0] >= 2 && p->flowlets[1] >= 2 &&
                 one_size(fl, n0, tmp, f->max_sampling) &&
                 one_size(fl + n0, p->fl_n - n0, tmp, f->max_sampling);
        p->kind = pp ? FL_PP : FL_DP;
    }
    /* jobs: components over pairs, merged through shared hosts */
    uf = malloc(f->nep * sizeof *uf);
    root_job = malloc(f->nep * sizeof *root_job);
    grp = malloc(f->nep * sizeof *grp);
    sizes = malloc(f->nep * sizeof *sizes);
    if (!uf || !root_job || !grp || !sizes)
        goto out;
    for (size_t i = 0; i < f->nep; i++)
        uf[i] = (uint32_t)i;
    for (size_t q = 0; q < f->npair; q++) {
        int la = f->ep[f->pair[q].a].nodelist, lb = f->ep[f->pair[q].b].nodelist;
        if (la >= 0 && lb >= 0 && la != lb)
            f->pairs_across_lists++;
        else
            uf_union(uf, f->pair[q].a, f->pair[q].b);
    }
    for (size_t i = 0; i < f->nep; i++)
        for (size_t k = i + 1; f->ep[i].topo && k < f->nep; k++)
            if (f->ep[k].topo && strcmp(f->ep[i].topo->host, f->ep[k].topo->host) == 0)
                uf_union(uf, (uint32_t)i, (uint32_t)k);
    for (size_t i = 0; i < f->nep; i++)
        root_job[i] = UINT32_MAX;
    size_t cap_job = 0;
    for (size_t i = 0; i < f->nep; i++) {
        uint32_t r = uf_find(uf, (uint32_t)i);
        if (root_job[r] == UINT32_MAX) {
            if (argus_grow(&f->job, &cap_job, f->njob + 1, sizeof *f->job, 8))
                goto out;
            memset(&f->job[f->njob], 0, sizeof *f->job);
            root_job[r] = (uint32_t)f->njob++;
        }
        f->ep[i].job = (int)root_job[r];
        f->job[root_job[r]].nep++;
    }
    for (size_t j = 0; j < f->njob; j++) {
        f->job[j].ep = malloc(f->job[j].nep * sizeof *f->job[j].ep);
        if (!f->job[j].ep)
            goto out;
        f->job[j].nep = 0;
    }
    for (size_t i = 0; i < f->nep; i++) {
        struct fl_job *jb = &f->job[f->ep[i].job];
        jb->ep[jb->nep++] = (uint32_t)i;
    }
    for (size_t q = 0; q < f->npair; q++) {
        struct fl_pair *p = &f->pair[q];
        if (f->ep[p->a].job != f->ep[p->b].job) {   /* across node lists: no job's */
            p->job = -1, p->kind = FL_UNKNOWN;
            continue;
        }
        p->job = f->ep[p->a].job;
        if (p->kind == FL_DP)
            f->job[p->job].npairs_dp++;
        else
            f->job[p->job].npairs_pp++;
    }
    /* layout: DP groups and pipelines per job */
    for (int kind = FL_DP; kind <= FL_PP; kind++) {
        for (size_t i = 0; i < f->nep; i++)
            uf[i] = (uint32_t)i, grp[i] = UINT32_MAX;
        for (size_t q = 0; q < f->npair; q++)
            if (f->pair[q].kind == (enum fl_kind)kind)
                uf_union(uf, f->pair[q].a, f->pair[q].b);
        for (size_t j = 0; j < f->njob; j++) {
            struct fl_job *jb = &f->job[j];
            int ng = 0;
            for (size_t k = 0; k < jb->nep; k++) {
                uint32_t r = uf_find(uf, jb->ep[k]);
                if (grp[r] == UINT32_MAX)
                    grp[r] = (uint32_t)ng++;
                if (kind == FL_DP)
                    f->ep[jb->ep[k]].dp_group = (int)grp[r];
                else
                    f->ep[jb->ep[k]].pipeline = (int)grp[r];
            }
            for (int g = 0; g < ng; g++)
                sizes[g] = 0;
            for (size_t k = 0; k < jb->nep; k++)
                sizes[kind == FL_DP ? f->ep[jb->ep[k]].dp_group : f->ep[jb->ep[k]].pipeline]++;
            int m = modal(sizes, (size_t)ng);
            int regular = 1;
            for (int g = 0; g < ng; g++)
                regular &= sizes[g] == m;
            if (kind == FL_DP)
                jb->dp = m, jb->ndp_groups = ng, jb->layout_regular = regular;
            else
                jb->pp = m, jb->npipes = ng, jb->layout_regular &= regular;
        }
    }
    for (size_t j = 0; j < f->njob; j++) {
        struct fl_job *jb = &f->job[j];
        jb->world = (int)jb->nep;   /* one NIC per GPU */
        jb->tp = jb->dp > 0 && jb->pp > 0 && jb->world % (jb->dp * jb->pp) == 0
                     ? jb->world / (jb->dp * jb->pp) : 0;
        if ((rc = order_pipelines(f, jb, NULL)) != 0)
            goto out;
    }
    rc = 0;
out:
    hmap_free(&em);
    hmap_free(&pm);
    free(rec);
    free(uf);
    free(root_job);
    free(grp);
    free(sizes);
    free(tmp);
    return rc;
}
