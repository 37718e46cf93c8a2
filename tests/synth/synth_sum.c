/* synth_sum.c — the synthetic job's step summaries (tests/synth/synth_int.h): a rank's accumulated
 * kernel calls split into modes at log-gaps (as the summariser's KDE would), kmodes
 * sorted by name hash, phase and class totals, into the job store. Test-only.
 */
#include "tests/synth/synth_int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t khash[K_N];
static int korder[K_N]; /* kernel ids ascending by name hash */
static int khash_ready;

void synth_khash_init(void)
{
    if (khash_ready)
        return;
    khash_ready = 1;
    for (int k = 0; k < K_N; k++) {
        khash[k] = argus_name_hash(kdefs[k].name);
        korder[k] = k;
    }
    for (int a = 1; a < K_N; a++)
        for (int b = a; b > 0 && khash[korder[b - 1]] > khash[korder[b]]; b--) {
            int t = korder[b];
            korder[b] = korder[b - 1];
            korder[b - 1] = t;
        }
}

/* Insertion sort: a kernel has a few dozen calls per step. */
static void sort_u64(uint64_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint64_t x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Split a kernel's calls into at most MAX_MODES modes at the widest log-gaps above
 * MODE_GAP (as the summariser's KDE modes would); write them ascending into out. */
static int split_modes(struct acc *a, int kid, struct argus_kmode_stats *out)
{
    uint32_t cut[MAX_CALLS], nc = 0;
    sort_u64(a->d, a->count);
    for (uint32_t i = 0; i + 1 < a->count; i++)
        if ((double)a->d[i + 1] > MODE_GAP * (double)a->d[i])
            cut[nc++] = i + 1;
    while (nc > MAX_MODES - 1) { /* drop the narrowest gap */
        uint32_t w = 0;
        for (uint32_t k = 1; k < nc; k++)
            if ((double)a->d[cut[k]] / a->d[cut[k] - 1] < (double)a->d[cut[w]] / a->d[cut[w] - 1])
                w = k;
        memmove(&cut[w], &cut[w + 1], (nc - w - 1) * sizeof cut[0]);
        nc--;
    }
    int m = 0;
    for (uint32_t lo = 0, k = 0; lo < a->count; k++) {
        uint32_t hi = k < nc ? cut[k] : a->count;
        struct argus_kmode_stats *o = &out[m];
        memset(o, 0, sizeof *o);
        o->name_hash = khash[kid];
        o->mode = (uint8_t)m;
        o->kclass = (uint8_t)kdefs[kid].kclass;
        o->phase = (uint8_t)a->phase;
        o->count = hi - lo;
        o->min_ns = a->d[lo];
        o->max_ns = a->d[hi - 1];
        argus_qsketch_init(&o->sketch);
        for (uint32_t i = lo; i < hi; i++) {
            o->sum_ns += a->d[i];
            argus_qsketch_add(&o->sketch, a->d[i]);
        }
        m++;
        lo = hi;
    }
    return m;
}

int synth_emit_summary(struct job *j, struct rk *r, struct argus_step_summary *s,
                       struct argus_jobstore *js)
{
    const struct synth_opts *o = j->o;
    memset(s, 0, offsetof(struct argus_step_summary, kmodes));
    s->step = (uint64_t)j->step;
    s->rank = (uint32_t)r->rank;
    /* clock_err_us: a constant error of this rank's clock, the same on all its times, in
     * [-clock_err_us, clock_err_us] (a fixed scramble of the rank) */
    const double u = (double)(((uint64_t)r->rank * 7919u + 13u) % 2001u) / 1000.0 - 1.0;
    const uint64_t err = (uint64_t)(int64_t)(u * o->clock_err_us * 1e3);
    s->start_ns = r->start + err;
    s->end_ns = r->t + err;
    if (!o->no_coords) {
        s->coords.tp_size = (uint16_t)o->tp;
        s->coords.pp_size = (uint16_t)o->pp;
        s->coords.dp_size = (uint16_t)o->dp;
        s->coords.ep_size = 1;
        s->coords.tp = (uint16_t)r->tp;
        s->coords.pp = (uint16_t)r->pp;
        s->coords.dp = (uint16_t)r->dp;
    }
    for (int p = 0; p < ARGUS_PH_COUNT; p++) {
        s->phase_wall_ns[p] = r->ph_wall[p];
        s->phase_compute_ns[p] = r->ph_comp[p];
    }
    s->phase_wall_ns[ARGUS_PH_COMM] = r->coll + r->p2p;
    s->compute_ns = r->comp;
    s->collective_ns = r->coll;
    s->p2p_ns = r->p2p;
    s->busy_ns = r->busy;
    s->host_gap_ns = (r->t - r->start) - r->busy;
    s->phase_wall_ns[ARGUS_PH_HOST] = s->host_gap_ns;
    s->kernel_count = r->nk;
    /* kmodes sorted by name hash, one mode per kernel */
    int order[K_N], n = 0;
    for (int i = 0; i < K_N; i++)
        if (r->acc[korder[i]].count)
            order[n++] = korder[i];
    int nm = 0;
    for (int i = 0; i < n; i++) {
        const int m0 = nm;
        nm += split_modes(&r->acc[order[i]], order[i], &s->kmodes[nm]);
        for (int k = m0; o->last_ends && k < nm; k++)
            if (s->kmodes[k].kclass == ARGUS_KC_COLLECTIVE)
                s->kmodes[k].last_end_ns = r->acc[order[i]].last_end + err;
    }
    s->n_kmodes = (uint32_t)nm;
    if (o->nccl && r->nc_colls) {
        struct argus_nccl_comm_sum *c = &s->nccl.comm[0];
        s->nccl.n_comms = 1;
        c->comm_hash = r->nc_hash;
        c->colls = r->nc_colls;
        c->peer = (r->dp + 1) % o->dp;
        c->peer_wait_ns = r->nc_wait;
        c->xfer_ns = r->nc_xfer;
        c->gpu_wait_ns = r->nc_gpu;
        c->peer_xfer_ns = r->nc_pxfer;
        c->last_seq = r->nc_seq;
        c->last_start_ns = r->nc_arr + err;
    }
    return argus_jobstore_add_summary(js, s);
}

void synth_reset_step(struct rk *r)
{
    for (int k = 0; k < K_N; k++)
        r->acc[k].count = r->acc[k].last_end = 0; /* the call arrays are rewritten first */
    memset(r->ph_wall, 0, sizeof r->ph_wall);
    memset(r->ph_comp, 0, sizeof r->ph_comp);
    r->comp = r->coll = r->p2p = r->busy = r->nk = 0;
    r->nc_wait = r->nc_xfer = r->nc_gpu = r->nc_pxfer = r->nc_seq = r->nc_arr = 0;
    r->nc_colls = 0;
}
