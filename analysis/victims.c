/* victims.c — who paid for a source and where its time went, for the explanations
 * (explain.c): the victims (ranks whose collectives/p2p grew while they waited, or below
 * the kernel level whose time outside the source's phase grew), the communication
 * kernels they waited in, the phase that grew (against the rank's own outside or its
 * peers) and the late-arriver share. Reads the context; writes only the candidate's
 * victims and c->tmp1..3 as scratch.
 */
#include "analysis/internal.h"

#include <math.h>
#include <stdlib.h>

static double v_comm(const struct argus_step_summary *s)
{
    return (double)(s->collective_ns + s->p2p_ns);
}

/* Median of fn over rank r in [a,b] (inside=1) or outside [a-2,b+2] (inside=0); NAN
 * when fewer than `need` values. kern: fn reads kernel statistics (thin cells left out). */
static double rank_median(struct an_ctx *c, uint32_t r, size_t a, size_t b, int inside,
                          size_t need, double (*fn)(const struct argus_step_summary *, int),
                          int arg, int kern)
{
    size_t m = 0;
    for (size_t si = 0; si < c->S; si++) {
        const struct argus_step_summary *s = kern ? an_kcell(c, r, si) : an_cell(c, r, si);
        if (!s)
            continue;
        int in = si >= a && si <= b;
        int out = si + 2 < a || si > b + 2;
        if (inside ? in : out)
            c->tmp3[m++] = fn(s, arg);
    }
    return m >= need ? argus_stats_median(c->tmp3, m) : NAN;
}

static double f_comm(const struct argus_step_summary *s, int arg)
{
    (void)arg;
    return v_comm(s);
}

static double f_phase_wall(const struct argus_step_summary *s, int p)
{
    return (double)s->phase_wall_ns[p];
}

static double f_phase_compute(const struct argus_step_summary *s, int p)
{
    return (double)s->phase_compute_ns[p];
}

/* The step's time outside phase p (p < 0: the whole step): where a rank that waited
 * for a slow peer's phase spent that wait, at the phase and step levels. */
static double f_outside(const struct argus_step_summary *s, int p)
{
    const double w = an_wall(s);
    return p >= 0 && (double)s->phase_wall_ns[p] < w ? w - (double)s->phase_wall_ns[p]
                                                     : (p >= 0 ? 0 : w);
}

struct vict {
    uint32_t rank;
    double grow, frac;
};

static int cmp_vict(const void *x, const void *y)
{
    const struct vict *a = x, *b = y;
    if (a->grow != b->grow)
        return a->grow > b->grow ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_u32(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

int an_is_source(const struct an_cand *k, uint32_t r)
{
    for (uint32_t i = 0; i < k->a.n_ranks; i++)
        if (k->a.ranks[i] == r)
            return 1;
    return 0;
}

double an_victims(struct an_ctx *c, struct an_cand *k, uint64_t *names, size_t *n_names)
{
    struct vict *v = malloc(c->n * sizeof *v);
    double *fr = malloc((c->n + 1) * sizeof *fr);
    size_t nv = 0;
    double med = 0;

    *n_names = 0;
    k->a.n_victims = 0;
    if (!v || !fr)
        goto out;
    const double thresh = 0.25 * (k->excess_ns > 0 ? k->excess_ns : 0);
    for (uint32_t r = 0; r < c->n; r++) {
        if (an_is_source(k, r))
            continue;
        double win = rank_median(c, r, k->si_a, k->si_b, 1, 1, f_comm, 0, 0);
        double base = rank_median(c, r, k->si_a, k->si_b, 0, 3, f_comm, 0, 0);
        if (isnan(win) || isnan(base))
            continue;
        double g = win - base;
        if (g > 0 && g >= thresh && g >= 0.05 * base) {
            v[nv].rank = r;
            v[nv].grow = g;
            v[nv].frac = base > 0 ? g / base : 0;
            fr[nv] = v[nv].frac;
            nv++;
        }
    }
    if (nv == 0)
        goto out;
    med = argus_stats_median(fr, nv);
    qsort(v, nv, sizeof *v, cmp_vict);
    for (size_t i = 0; i < nv && i < ARGUS_ANOMALY_MAX_RANKS; i++)
        k->a.victims[k->a.n_victims++] = v[i].rank;
    qsort(k->a.victims, k->a.n_victims, sizeof k->a.victims[0], cmp_u32);
    /* Which communication kernels the victims' time went into. */
    uint64_t h[2][2];
    double e[2][2], tot;
    size_t n0 = an_kernel_excess(c, k->a.victims, k->a.n_victims, k->si_a, k->si_b,
                                 ARGUS_KC_COLLECTIVE, 0, h[0], e[0], 2, &tot);
    size_t n1 = an_kernel_excess(c, k->a.victims, k->a.n_victims, k->si_a, k->si_b,
                                 ARGUS_KC_P2P, 0, h[1], e[1], 2, &tot);
    size_t i0 = 0, i1 = 0;
    while (*n_names < 2 && (i0 < n0 || i1 < n1)) {
        if (i1 >= n1 || (i0 < n0 && e[0][i0] >= e[1][i1]))
            names[(*n_names)++] = h[0][i0++];
        else
            names[(*n_names)++] = h[1][i1++];
    }
out:
    free(v);
    free(fr);
    return med;
}

int an_phase_growth(struct an_ctx *c, const uint32_t *ranks, size_t nr, size_t a, size_t b,
                    int compute)
{
    static const int wall_ph[] = { ARGUS_PH_FORWARD, ARGUS_PH_BACKWARD, ARGUS_PH_OPTIMIZER,
                                   ARGUS_PH_COMM, ARGUS_PH_HOST };
    const size_t np = compute ? 3 : 5;
    double best = 0;
    int bp = -1;
    for (size_t q = 0; q < np; q++) {
        const int p = wall_ph[q];
        double sum = 0;
        for (size_t i = 0; i < (nr ? nr : c->n); i++) {
            uint32_t r = nr ? ranks[i] : (uint32_t)i;
            double (*fn)(const struct argus_step_summary *, int) =
                compute ? f_phase_compute : f_phase_wall;
            double win = rank_median(c, r, a, b, 1, 1, fn, p, compute);
            double base = rank_median(c, r, a, b, 0, 3, fn, p, compute);
            if (!isnan(win) && !isnan(base))
                sum += win - base;
        }
        if (sum > best) {
            best = sum;
            bp = p;
        }
    }
    return bp;
}

int an_phase_vs_peers(struct an_ctx *c, const uint32_t *ranks, size_t nr, size_t a, size_t b)
{
    double best = 0;
    int bp = -1;
    for (int p = ARGUS_PH_FORWARD; p <= ARGUS_PH_OPTIMIZER; p++) {
        double sum = 0;
        for (size_t i = 0; i < nr; i++) {
            const uint32_t r = ranks[i], k = c->cls[r];
            for (size_t si = a; si <= b; si++) {
                const struct argus_step_summary *s = an_kcell(c, r, si);
                if (!s)
                    continue;
                size_t m = 0;
                for (uint32_t j = c->cls_off[k]; j < c->cls_off[k + 1]; j++) {
                    const struct argus_step_summary *t = an_kcell(c, c->cls_mem[j], si);
                    if (t)
                        c->tmp1[m++] = (double)t->phase_compute_ns[p];
                }
                struct argus_robust rb;
                argus_stats_robust_low(c->tmp1, m, AN_PEER_FLOOR, c->tmp2, &rb);
                if (m)
                    sum += (double)s->phase_compute_ns[p] - rb.ref;
            }
        }
        if (sum > best) {
            best = sum;
            bp = p;
        }
    }
    return bp;
}

/* Late-arriver test (MegaScan, ARGUS case 5; docs/ALGORITHMS.md, Source versus victim,
 * the late-arriver clause): the share of (source, step) pairs in the window, at most
 * LATE_STEPS steps, where the source's communication time is >= 10% shorter than the
 * median of the other members of its DP group: it arrives last and waits least, so the
 * long collectives of the others are waiting, not the network. -1 when it cannot be
 * judged (no layout nor communicators, no DP peers). */
#define LATE_STEPS 64
/* q in r's DP group: same stage and TP index, or without a layout the same DP-role
 * communicator (groups.c). */
static int dp_peer(const struct an_ctx *c, uint32_t q, uint32_t r)
{
    if (c->layout_known)
        return c->co[q].pp == c->co[r].pp && c->co[q].tp == c->co[r].tp;
    return c->mgrp[0][q] != UINT32_MAX && c->mgrp[0][q] == c->mgrp[0][r];
}

double an_late_arriver(struct an_ctx *c, const struct an_cand *k)
{
    const struct argus_anomaly *a = &k->a;
    size_t yes = 0, tot = 0;
    if (c->layout_known ? c->lay.dp < 2 : !c->mgrp[0])
        return -1;
    const size_t span = k->si_b - k->si_a + 1;
    const size_t stride = span > LATE_STEPS ? (span + LATE_STEPS - 1) / LATE_STEPS : 1;
    for (uint32_t i = 0; i < a->n_ranks; i++) {
        const uint32_t r = a->ranks[i];
        for (size_t si = k->si_a; si <= k->si_b; si += stride) {
            const struct argus_step_summary *s = an_cell(c, r, si);
            if (!s)
                continue;
            size_t m = 0;
            for (uint32_t q = 0; q < c->n; q++) {
                if (!dp_peer(c, q, r) || an_is_source(k, q))
                    continue;
                const struct argus_step_summary *t = an_cell(c, q, si);
                if (t)
                    c->tmp3[m++] = v_comm(t);
            }
            if (m == 0)
                continue;
            tot++;
            yes += v_comm(s) <= 0.9 * argus_stats_median(c->tmp3, m);
        }
    }
    return tot ? (double)yes / (double)tot : -1;
}

/* Without kernels (docs/ALGORITHMS.md, "Data levels"): the victims are the ranks whose
 * time outside the source's phase (the whole step at the steps level) grew by a quarter
 * of the source's excess over their own median outside the window: they waited. */
void an_level_victims(struct an_ctx *c, struct an_cand *k)
{
    const double thresh = 0.25 * (k->excess_ns > 0 ? k->excess_ns : 0);
    const int p = k->a.data_level == ARGUS_DL_PHASES ? k->a.phase : -1;
    k->a.n_victims = 0;
    for (uint32_t r = 0; r < c->n && k->a.n_victims < ARGUS_ANOMALY_MAX_RANKS; r++) {
        if (an_is_source(k, r))
            continue;
        const double win = rank_median(c, r, k->si_a, k->si_b, 1, 1, f_outside, p, 0);
        const double base = rank_median(c, r, k->si_a, k->si_b, 0, 3, f_outside, p, 0);
        if (!isnan(win) && !isnan(base) && win - base >= thresh && win - base >= 0.05 * base)
            k->a.victims[k->a.n_victims++] = r;
    }
}
