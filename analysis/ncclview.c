/* ncclview.c — NCCL's in-band view (docs/ALGORITHMS.md, "NCCL in-band view"): what the
 * profiler plugin's block of each summary (struct argus_nccl_sum) says about one
 * communicator over a window of steps. The same collective is aligned across the members
 * by (comm_hash, last_seq), arrivals in rank 0's clock (last_start_ns + clock_offset_ns);
 * per aligned step the member that arrived last and its lateness over the other members'
 * median; over the window who was last most often and the median of its lateness; per
 * member the median split of its collectives into waiting for peers, transfer and GPU
 * wait, and its busiest peer's transfer, from which one pair that stands out against the
 * other members' busiest pairs (median/MAD) and barely waits is named a slow link.
 * Used by l3comm.c (the late arriver or the link becomes the source of a comm_degradation)
 * and by argus_analyze (a view per anomaly and for the whole run, one sentence of
 * evidence). Reads the context and the store's rank infos only; never touches a summary
 * that carries no block, so a job without NCCL data comes out exactly as before. Scratch
 * is allocated per call (not per event), linear in ranks x steps of the window.
 */
#include "analysis/internal.h"
#include "analysis/ncclcomms.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entry of communicator h in s's block; NULL when none. */
static const struct argus_nccl_comm_sum *entry(const struct argus_step_summary *s,
                                               uint64_t h)
{
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < s->nccl.n_comms && i < ARGUS_NCCL_SUM_COMMS; i++)
        if (s->nccl.comm[i].comm_hash == h)
            return &s->nccl.comm[i];
    return NULL;
}

/* Scratch of one view: members (slots), per member its counters, per step buffers. */
struct nv_work {
    uint32_t *mem, *last, *map; /* [n] members; times last; comm rank -> member + 1 */
    double *buf, *tmp;          /* [max(n, W) + 1] */
    double *arr;                /* [n] arrivals of one step */
    uint32_t *who;              /* [n] their members */
    uint64_t *seq;              /* [n] their seqNumbers */
    double *lat;                /* [W] lateness of the last arrival per step */
    uint32_t *lastm;            /* [W] its member, UINT32_MAX when the step is not aligned */
    uint8_t *mark;              /* [n] slots that are members (fit), zero between uses */
};

static void work_free(struct nv_work *w)
{
    free(w->mem);
    free(w->last);
    free(w->map);
    free(w->buf);
    free(w->tmp);
    free(w->arr);
    free(w->who);
    free(w->seq);
    free(w->lat);
    free(w->lastm);
    free(w->mark);
    memset(w, 0, sizeof *w);
}

static int work_alloc(const struct an_ctx *c, size_t W, struct nv_work *w)
{
    const size_t n = c->n + 1, m = (c->n > W ? c->n : W) + 1;
    memset(w, 0, sizeof *w);
    w->mem = malloc(n * sizeof *w->mem);
    w->last = malloc(n * sizeof *w->last);
    w->map = malloc(n * sizeof *w->map);
    w->buf = malloc(m * sizeof *w->buf);
    w->tmp = malloc(m * sizeof *w->tmp);
    w->arr = malloc(n * sizeof *w->arr);
    w->who = malloc(n * sizeof *w->who);
    w->seq = malloc(n * sizeof *w->seq);
    w->lat = malloc((W + 1) * sizeof *w->lat);
    w->lastm = malloc((W + 1) * sizeof *w->lastm);
    w->mark = calloc(n, 1);
    if (!w->mem || !w->last || !w->map || !w->buf || !w->tmp || !w->arr || !w->who ||
        !w->seq || !w->lat || !w->lastm || !w->mark) {
        work_free(w);
        return -ENOMEM;
    }
    return 0;
}

/* Communicator rank -> member: the NCCL memberships of the rank infos (index), else the
 * members in ascending rank order (a split keyed by rank). */
static void comm_ranks(const struct an_ctx *c, uint64_t h, uint32_t m, struct nv_work *w)
{
    int all = 1;
    memset(w->map, 0, (size_t)m * sizeof *w->map);
    for (uint32_t i = 0; i < m && all; i++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(c->js, c->rank_of[w->mem[i]]);
        int found = 0;
        for (uint32_t g = 0; ri && g < ri->n_groups && g < ARGUS_MAX_COMM_GROUPS; g++) {
            const struct argus_comm_group *cg = &ri->groups[g];
            if (cg->kind == ARGUS_COMM_NCCL && cg->id == h && cg->index < m &&
                !w->map[cg->index]) {
                w->map[cg->index] = i + 1;
                found = 1;
                break;
            }
        }
        all = found;
    }
    if (!all)
        for (uint32_t i = 0; i < m; i++)
            w->map[i] = i + 1;
}

/* The seqNumber most of the n arrivals carry (Boyer-Moore); 0 when none has a majority. */
static int majority(const uint64_t *v, size_t n, uint64_t *out)
{
    uint64_t cand = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        if (cnt == 0)
            cand = v[i];
        cnt += v[i] == cand ? 1 : (size_t)-1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i] == cand;
    *out = cand;
    return 2 * k > n;
}

/* Per aligned step its last arrival and lateness (w->lat, w->lastm), times last per
 * member (w->last); returns the aligned steps. */
static uint32_t align(const struct an_ctx *c, uint64_t h, size_t a, size_t b, uint32_t m,
                      struct nv_work *w)
{
    uint32_t aligned = 0;
    memset(w->last, 0, (size_t)m * sizeof *w->last);
    for (size_t si = a; si <= b; si++) {
        size_t k = 0;
        uint64_t base = 0;
        w->lastm[si - a] = UINT32_MAX;
        for (uint32_t i = 0; i < m; i++) {
            const struct argus_step_summary *s = an_cell(c, w->mem[i], si);
            const struct argus_nccl_comm_sum *e = entry(s, h);
            if (!e || !e->last_start_ns)
                continue;
            if (!k)
                base = e->last_start_ns;
            w->arr[k] = (double)(int64_t)(e->last_start_ns - base) + (double)s->clock_offset_ns;
            w->seq[k] = e->last_seq;
            w->who[k++] = i;
        }
        uint64_t seq;
        if (k < 2 || !majority(w->seq, k, &seq))
            continue;
        size_t kk = 0, at = SIZE_MAX;
        for (size_t j = 0; j < k; j++)
            if (w->seq[j] == seq && (at == SIZE_MAX || w->arr[j] > w->arr[at]))
                at = j;
        for (size_t j = 0; j < k; j++)
            if (w->seq[j] == seq && j != at)
                w->buf[kk++] = w->arr[j];
        if (kk == 0)
            continue;
        w->lat[si - a] = w->arr[at] - argus_stats_median(w->buf, kk);
        w->lastm[si - a] = w->who[at];
        w->last[w->who[at]]++;
        aligned++;
    }
    return aligned;
}

/* Which value of an entry a member's median is of. */
enum nv_field { F_WAIT, F_XFER, F_GPU, F_PEER_XFER };

static double field(const struct argus_nccl_comm_sum *e, int f)
{
    return f == F_WAIT ? (double)e->peer_wait_ns
           : f == F_XFER ? (double)e->xfer_ns
           : f == F_GPU  ? (double)e->gpu_wait_ns
                         : (double)e->peer_xfer_ns;
}

/* Median per step of field f of member slot r over [a, b] (for F_PEER_XFER only the steps
 * whose busiest peer is `peer`); *steps the steps counted. NAN when none. */
static double member_median(const struct an_ctx *c, uint32_t r, uint64_t h, size_t a,
                            size_t b, int f, int32_t peer, struct nv_work *w, uint32_t *steps)
{
    size_t k = 0;
    for (size_t si = a; si <= b; si++) {
        const struct argus_nccl_comm_sum *e = entry(an_cell(c, r, si), h);
        if (e && (f != F_PEER_XFER || e->peer == peer))
            w->buf[k++] = field(e, f);
    }
    if (steps)
        *steps = (uint32_t)k;
    return k ? argus_stats_median(w->buf, k) : NAN;
}

/* The busiest peer member slot r names most often over [a, b] (Boyer-Moore), -1 none. */
static int32_t member_peer(const struct an_ctx *c, uint32_t r, uint64_t h, size_t a, size_t b)
{
    int32_t cand = -1;
    size_t cnt = 0, k = 0, n = 0;
    for (size_t si = a; si <= b; si++) {
        const struct argus_nccl_comm_sum *e = entry(an_cell(c, r, si), h);
        if (!e || e->peer < 0)
            continue;
        if (cnt == 0)
            cand = e->peer;
        cnt += e->peer == cand ? 1 : (size_t)-1;
    }
    for (size_t si = a; si <= b && cand >= 0; si++) {
        const struct argus_nccl_comm_sum *e = entry(an_cell(c, r, si), h);
        if (e && e->peer >= 0) {
            n++;
            k += e->peer == cand;
        }
    }
    return cand >= 0 && 2 * k >= n ? cand : -1;
}

static double ms(double ns)
{
    return isfinite(ns) ? ns / 1e6 : 0;
}

/* The slow pair of view v (members' rows filled, in slots' order with comm peers in
 * peer_slot): the busiest pair whose transfer stands out against the other members'
 * busiest pairs by the ratio and z gates, while its rank's wait for peers does not stand
 * out: at most the members' median times the ratio gate (when one member arrives late
 * every other member waits for it, the link's rank too: a plain "no more than the
 * median" refused the slow pair by a hair in t_nccl_arrival.sh under load). */
static void slow_pair(const struct an_ctx *c, const double *pxfer, const double *pwait,
                      const int32_t *peer_slot, uint32_t m, struct nv_work *w,
                      struct argus_nccl_view *v)
{
    uint32_t best = UINT32_MAX, np = 0;
    for (uint32_t i = 0; i < m; i++)
        if (peer_slot[i] >= 0 && pxfer[i] > 0) {
            np++;
            if (best == UINT32_MAX || pxfer[i] > pxfer[best])
                best = i;
        }
    if (np < 3)
        return;
    size_t k = 0, kw = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (i != best && peer_slot[i] >= 0 && pxfer[i] > 0)
            w->buf[k++] = pxfer[i];
    }
    struct argus_robust rb;
    argus_stats_robust(w->buf, k, AN_PEER_FLOOR, w->tmp, &rb);
    const double ratio = argus_stats_ratio(pxfer[best], &rb);
    const double z = argus_stats_z(pxfer[best], &rb);
    for (uint32_t i = 0; i < m; i++)
        if (!isnan(pwait[i]))
            w->buf[kw++] = pwait[i];
    const double wmed = kw ? argus_stats_median(w->buf, kw) : NAN;
    if (!(ratio >= c->o.ratio) || !(z >= c->o.z) ||
        !(pxfer[best] - rb.ref >= AN_COMM_MATERIAL * c->med_step) ||
        !(pwait[best] <= wmed * c->o.ratio))
        return;
    v->pair_rank = (int32_t)c->rank_of[w->mem[best]];
    v->pair_peer = (int32_t)c->rank_of[peer_slot[best]];
    v->pair_xfer_ms = ms(pxfer[best]);
    v->pair_ratio = ratio;
    v->pair_z = z;
}

/* The view of communicator h over step indices [a, b] (m members in w->mem). 0 or
 * -ENOMEM. */
static int view_of(const struct an_ctx *c, uint64_t h, size_t a, size_t b, uint32_t m,
                   struct nv_work *w, struct argus_nccl_view *v)
{
    memset(v, 0, sizeof *v);
    v->comm_hash = h;
    v->step_first = c->step_id[a];
    v->step_last = c->step_id[b];
    v->n_members_total = m;
    v->last_arriver = v->pair_rank = v->pair_peer = -1;
    double *pxfer = malloc((size_t)m * sizeof *pxfer), *pwait = malloc((size_t)m * sizeof *pwait);
    int32_t *peer_slot = malloc((size_t)m * sizeof *peer_slot);
    if (!pxfer || !pwait || !peer_slot) {
        free(pxfer);
        free(pwait);
        free(peer_slot);
        return -ENOMEM;
    }
    comm_ranks(c, h, m, w);
    v->steps_aligned = align(c, h, a, b, m, w);
    uint32_t win = UINT32_MAX;
    for (uint32_t i = 0; i < m; i++)
        if (w->last[i] && (win == UINT32_MAX || w->last[i] > w->last[win]))
            win = i;
    if (win != UINT32_MAX) {
        size_t k = 0;
        for (size_t si = a; si <= b; si++)
            if (w->lastm[si - a] == win)
                w->buf[k++] = w->lat[si - a];
        const double med = argus_stats_median(w->buf, k);
        v->last_arriver = (int32_t)c->rank_of[w->mem[win]];
        v->times_last = w->last[win];
        v->median_lateness_ms = ms(med);
        v->late = 2 * v->times_last > v->steps_aligned &&
                  med >= AN_LATE_MATERIAL * c->med_step && med > 0;
    }
    for (uint32_t i = 0; i < m; i++) {
        const uint32_t r = w->mem[i];
        const int32_t p = member_peer(c, r, h, a, b);
        uint32_t steps = 0;
        pwait[i] = member_median(c, r, h, a, b, F_WAIT, 0, w, &steps);
        const double xf = member_median(c, r, h, a, b, F_XFER, 0, w, NULL);
        const double gw = member_median(c, r, h, a, b, F_GPU, 0, w, NULL);
        pxfer[i] = p >= 0 ? member_median(c, r, h, a, b, F_PEER_XFER, p, w, NULL) : NAN;
        peer_slot[i] = p >= 0 && (uint32_t)p < m && w->map[p] ? (int32_t)w->mem[w->map[p] - 1]
                                                               : -1;
        if (i < ARGUS_NCCL_VIEW_RANKS) {
            struct argus_nccl_member *e = &v->members[v->n_members++];
            e->rank = c->rank_of[r];
            e->steps = steps;
            e->times_last = w->last[i];
            e->peer = peer_slot[i] >= 0 ? (int32_t)c->rank_of[peer_slot[i]] : -1;
            e->peer_wait_ms = ms(pwait[i]);
            e->xfer_ms = ms(xf);
            e->gpu_wait_ms = ms(gw);
            e->peer_xfer_ms = ms(pxfer[i]);
        }
    }
    slow_pair(c, pxfer, pwait, peer_slot, m, w, v);
    free(pxfer);
    free(pwait);
    free(peer_slot);
    return 0;
}

int an_nccl_any(const struct an_ctx *c)
{
    for (uint32_t r = 0; r < c->n; r++)
        for (size_t si = 0; si < c->S; si++) {
            const struct argus_step_summary *s = an_cell(c, r, si);
            if (s && s->nccl.n_comms)
                return 1;
        }
    return 0;
}

/* How well view v fits slots `want` (n of them): members among them, then a late
 * arriver or a slow pair among them, then aligned steps x members. */
static double fit(const struct an_ctx *c, const struct argus_nccl_view *v,
                  struct nv_work *w, uint32_t m, const uint32_t *want, uint32_t n)
{
    double in = 0, hit = 0;
    for (uint32_t j = 0; j < m; j++)
        w->mark[w->mem[j]] = 1;
    for (uint32_t i = 0; i < n; i++) {
        in += w->mark[want[i]];
        w->mark[want[i]] = 0; /* a slot listed twice counts once */
        const int32_t id = (int32_t)c->rank_of[want[i]];
        hit += (v->late && v->last_arriver == id) || v->pair_rank == id || v->pair_peer == id;
    }
    for (uint32_t j = 0; j < m; j++)
        w->mark[w->mem[j]] = 0;
    return in * 1e9 + (hit > 0) * 1e8 + (double)v->steps_aligned * m;
}

int an_nccl_window(const struct an_ctx *c, size_t a, size_t b, const uint32_t *want,
                   uint32_t n_want, struct argus_nccl_view *out)
{
    struct an_nccl_comms q;
    struct nv_work w;
    struct argus_nccl_view *v = NULL;
    int rc = 0, found = 0;
    double best = -1;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    if (a > b || b >= c->S)
        return 0;
    if ((rc = an_nccl_comms_scan(c, a, b, &q)) || !q.n)
        goto out;
    if (!(v = malloc(sizeof *v))) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = work_alloc(c, b - a + 1, &w)))
        goto out;
    for (size_t i = 0; !rc && i < q.n; i++) {
        const size_t k = q.order[i];
        const uint32_t m = an_nccl_comm_members(&q, k, w.mem);
        if (m < 2 || (rc = view_of(c, q.h[k], a, b, m, &w, v)))
            continue;
        const double f = fit(c, v, &w, m, want, n_want);
        if (f > best) {
            best = f;
            *out = *v;
            found = 1;
        }
    }
out:
    work_free(&w);
    an_nccl_comms_free(&q);
    free(v);
    return rc ? rc : found;
}

/* Whether view x goes before y in the whole-run summary: more members, then more aligned
 * steps, then the smaller hash. */
static int run_before(const struct argus_nccl_view *x, const struct argus_nccl_view *y)
{
    if (x->n_members_total != y->n_members_total)
        return x->n_members_total > y->n_members_total;
    if (x->steps_aligned != y->steps_aligned)
        return x->steps_aligned > y->steps_aligned;
    return x->comm_hash < y->comm_hash;
}

/* The whole run: one view per communicator of >= 2 members, in run_before order, at most
 * ARGUS_NCCL_VIEW_COMMS. */
static int run_views(const struct an_ctx *c, struct argus_result *r)
{
    struct an_nccl_comms q;
    struct nv_work w;
    int rc = an_nccl_comms_scan(c, 0, c->S - 1, &q);
    if (rc || !q.n) {
        an_nccl_comms_free(&q);
        return rc;
    }
    struct argus_nccl_view *v = calloc(q.n, sizeof *v);
    rc = v ? work_alloc(c, c->S, &w) : -ENOMEM;
    if (rc) {
        free(v);
        an_nccl_comms_free(&q);
        return rc;
    }
    size_t n = 0;
    for (size_t i = 0; !rc && i < q.n; i++) {
        const size_t k = q.order[i];
        const uint32_t m = an_nccl_comm_members(&q, k, w.mem);
        if (m >= 2 && !(rc = view_of(c, q.h[k], 0, c->S - 1, m, &w, &v[n])))
            n++;
    }
    work_free(&w);
    an_nccl_comms_free(&q);
    for (size_t i = 1; i < n; i++) /* insertion sort: at most AN_NCCL_COMMS_MAX views */
        for (size_t j = i; j > 0 && run_before(&v[j], &v[j - 1]); j--) {
            const struct argus_nccl_view t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    if (rc || !n) {
        free(v);
        return rc;
    }
    r->nccl_comms = v;
    r->n_nccl_comms = (uint32_t)(n < ARGUS_NCCL_VIEW_COMMS ? n : ARGUS_NCCL_VIEW_COMMS);
    return 0;
}

/* The step index of step id `step` among the judged steps (the first at or after it). */
static size_t step_index(const struct an_ctx *c, uint64_t step)
{
    size_t lo = 0, hi = c->S;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (c->step_id[mid] < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One sentence of evidence for view v (a late arriver, then a slow link), appended to a's
 * (cut at its size). */
static void say_view(struct argus_anomaly *a, const struct argus_nccl_view *v)
{
    size_t used = strlen(a->evidence);
    if (v->late && used + 2 < sizeof a->evidence)
        snprintf(a->evidence + used, sizeof a->evidence - used,
                 "; NCCL: rank %d arrived last at the collective in %u of %u steps, "
                 "median %.2f ms after the other members",
                 v->last_arriver, v->times_last, v->steps_aligned, v->median_lateness_ms);
    used = strlen(a->evidence);
    if (v->pair_rank >= 0 && used + 2 < sizeof a->evidence)
        snprintf(a->evidence + used, sizeof a->evidence - used,
                 "; NCCL: link rank %d -> rank %d transfer %.2f ms/step, %.2fx the other "
                 "pairs', rank %d barely waits for peers",
                 v->pair_rank, v->pair_peer, v->pair_xfer_ms, v->pair_ratio, v->pair_rank);
}

int an_nccl_result(const struct an_ctx *c, struct argus_result *r)
{
    if (!c->S || !an_nccl_any(c))
        return 0;
    int rc = run_views(c, r);
    if (rc || !r->n_anomalies)
        return rc;
    r->nccl = calloc(r->n_anomalies, sizeof *r->nccl);
    uint32_t *want = malloc(3 * ARGUS_ANOMALY_MAX_RANKS * sizeof *want);
    if (!r->nccl || !want) {
        free(want);
        return -ENOMEM;
    }
    r->n_nccl = r->n_anomalies;
    for (size_t i = 0; !rc && i < r->n_anomalies; i++) {
        struct argus_anomaly *a = &r->anomalies[i];
        uint32_t n = 0;
        const uint32_t *lists[3] = {a->ranks, a->group, a->victims};
        const uint32_t counts[3] = {a->n_ranks, a->n_group, a->n_victims};
        for (int l = 0; l < 3; l++)
            for (uint32_t j = 0; j < counts[l] && j < ARGUS_ANOMALY_MAX_RANKS; j++) {
                const long s = an_slot_of(c, lists[l][j]);
                if (s >= 0)
                    want[n++] = (uint32_t)s;
            }
        const size_t sa = step_index(c, a->step_first), sb = step_index(c, a->step_last + 1);
        if (sb == 0 || sa >= sb)
            continue;
        rc = an_nccl_window(c, sa, sb - 1, want, n, &r->nccl[i]);
        if (rc > 0) {
            say_view(a, &r->nccl[i]);
            rc = 0;
        }
    }
    free(want);
    return rc;
}

int an_nccl_refine(const struct an_ctx *c, struct an_cand *k)
{
    struct argus_nccl_view *v = malloc(sizeof *v);
    if (!v)
        return -ENOMEM;
    int rc = an_nccl_window(c, k->si_a, k->si_b, k->a.group, k->a.n_group, v);
    if (rc <= 0) {
        free(v);
        return rc;
    }
    const long pr = v->pair_rank >= 0 ? an_slot_of(c, (uint32_t)v->pair_rank) : -1;
    const long pp = v->pair_peer >= 0 ? an_slot_of(c, (uint32_t)v->pair_peer) : -1;
    const long la = v->late ? an_slot_of(c, (uint32_t)v->last_arriver) : -1;
    int in_pr = 0, in_la = 0;
    for (uint32_t i = 0; i < k->a.n_group; i++) {
        in_pr |= pr >= 0 && k->a.group[i] == (uint32_t)pr;
        in_la |= la >= 0 && k->a.group[i] == (uint32_t)la;
    }
    if (in_pr) { /* a slow link: its two ends are the source */
        k->a.n_ranks = 0;
        an_cand_add_rank(k, (uint32_t)pr);
        if (pp >= 0)
            an_cand_add_rank(k, (uint32_t)pp);
    } else if (in_la) { /* waiting on a late member: it is the source */
        k->a.n_ranks = 0;
        an_cand_add_rank(k, (uint32_t)la);
    }
    free(v);
    return 0;
}
