/* explain.c — turns detector candidates into verdicts a person can act on: victims
 * (ranks whose collectives/p2p grew while they waited), the phase that grew, the kernels
 * that carry the excess, and one evidence sentence with numbers. Reads the context;
 * writes only into the candidates.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* snprintf that may cut the sentence short (evidence is bounded on purpose). */
__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t len, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static double v_comm(const struct argus_step_summary *s)
{
    return (double)(s->collective_ns + s->p2p_ns);
}

static double v_host(const struct argus_step_summary *s)
{
    return (double)(s->host_gap_ns ? s->host_gap_ns : s->phase_wall_ns[ARGUS_PH_HOST]);
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

static int is_source(const struct an_cand *k, uint32_t r)
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
        if (is_source(k, r))
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

void an_short_name(const struct argus_jobstore *js, uint64_t hash, char *buf, size_t len)
{
    static const char *const ops[] = { "ReduceScatter", "AllReduce", "AllGather", "AllToAll",
                                       "AlltoAll", "Broadcast", "SendRecv", "Send", "Recv",
                                       "Reduce" };
    const char *name = argus_jobstore_name(js, hash);
    if (!len)
        return;
    if (!name) {
        snprintf(buf, len, "kernel %016llx", (unsigned long long)hash);
        return;
    }
    if (strstr(name, "nccl") || strstr(name, "NCCL"))
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (strstr(name, ops[i])) {
                snprintf(buf, len, "%s", ops[i]);
                return;
            }
    size_t n = strcspn(name, "<(");
    if (n == 0)
        n = strlen(name);
    if (n > 60)
        snprintf(buf, len, "%.57s...", name);
    else
        snprintf(buf, len, "%.*s", (int)n, name);
}

void an_format_ranks(const uint32_t *r, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    if (!len)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at + 1 < len;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1)
            j++;
        int w;
        if (j >= i + 2)
            w = snprintf(buf + at, len - at, "%s%u-%u", i ? "," : "", r[i], r[j]);
        else if (j == i + 1)
            w = snprintf(buf + at, len - at, "%s%u,%u", i ? "," : "", r[i], r[j]);
        else
            w = snprintf(buf + at, len - at, "%s%u", i ? "," : "", r[i]);
        if (w < 0 || (size_t)w >= len - at) {
            buf[at] = '\0';
            break;
        }
        at += (size_t)w;
        i = j + 1;
    }
}

void an_format_slots(const struct an_ctx *c, const uint32_t *v, size_t n, char *buf,
                     size_t len)
{
    uint32_t id[ARGUS_ANOMALY_MAX_RANKS];
    n = n < ARGUS_ANOMALY_MAX_RANKS ? n : ARGUS_ANOMALY_MAX_RANKS;
    memcpy(id, v, n * sizeof *id);
    an_slots_to_ranks(c, id, (uint32_t)n);
    an_format_ranks(id, n, buf, len);
}

/* "; peers wait in AllReduce/ReduceScatter (+38%)" or "" */
static void victims_clause(struct an_ctx *c, struct an_cand *k, const char *who, char *buf,
                           size_t len)
{
    uint64_t names[2];
    size_t nn = 0;
    double med = an_victims(c, k, names, &nn);
    buf[0] = '\0';
    if (k->a.n_victims == 0)
        return;
    char n0[72] = "", n1[72] = "";
    if (nn > 0)
        an_short_name(c->js, names[0], n0, sizeof n0);
    if (nn > 1)
        an_short_name(c->js, names[1], n1, sizeof n1);
    say(buf, len, "; %u %s wait%s in %s%s%s (+%.0f%% communication time)",
             k->a.n_victims, who, k->a.n_victims == 1 ? "s" : "", nn ? n0 : "collectives",
             nn > 1 ? "/" : "", n1, 100.0 * med);
}

static void kernels_clause(struct an_ctx *c, const struct an_cand *k, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < k->a.n_kernels && i < 2; i++) {
        char nm[72];
        an_short_name(c->js, k->a.kernels[i], nm, sizeof nm);
        int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "; top kernels: ", nm);
        if (w < 0 || (size_t)w >= len - at)
            break;
        at += (size_t)w;
    }
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

static double late_arriver(struct an_ctx *c, const struct an_cand *k)
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
                if (!dp_peer(c, q, r) || is_source(k, q))
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

static void late_clause(struct an_ctx *c, struct an_cand *k)
{
    const double late = late_arriver(c, k);
    const size_t used = strlen(k->a.evidence);
    if (late >= 0.6)
        snprintf(k->a.evidence + used, sizeof k->a.evidence - used,
                 "; late-arriver test: the source%s arrived last at DP collectives (>= 10%% "
                 "shorter communication than DP peers) in %.0f%% of steps, so the longer "
                 "collectives elsewhere are waiting, not the network",
                 k->a.n_ranks > 1 ? "s" : "", 100 * late);
}

/* What the sentences of one candidate say the same way. */
struct said {
    char ranks[160];                /* the sources, an_format_ranks */
    char stage[48];                 /* "stage-<n> " when there are several classes, else "" */
    uint32_t stage_no;              /* the first source's peer class */
    size_t nsteps;                  /* steps of the window */
    unsigned long long first, last; /* its first and last step ids */
};

static void said_fill(const struct an_ctx *c, const struct an_cand *k, struct said *w)
{
    const struct argus_anomaly *a = &k->a;
    w->first = (unsigned long long)a->step_first;
    w->last = (unsigned long long)a->step_last;
    w->nsteps = k->si_b - k->si_a + 1;
    w->stage_no = a->n_ranks ? c->cls[a->ranks[0]] : 0;
    an_format_slots(c, a->ranks, a->n_ranks, w->ranks, sizeof w->ranks);
    if (c->n_cls > 1)
        snprintf(w->stage, sizeof w->stage, "%s-%u ",
                 c->speed_classes ? "speed-class" : "stage", w->stage_no);
    else
        w->stage[0] = '\0';
}

/* Without kernels (docs/ALGORITHMS.md, "Data levels"): the victims are the ranks whose
 * time outside the source's phase (the whole step at the steps level) grew by a quarter
 * of the source's excess over their own median outside the window: they waited. */
static void level_victims(struct an_ctx *c, struct an_cand *k)
{
    const double thresh = 0.25 * (k->excess_ns > 0 ? k->excess_ns : 0);
    const int p = k->a.data_level == ARGUS_DL_PHASES ? k->a.phase : -1;
    k->a.n_victims = 0;
    for (uint32_t r = 0; r < c->n && k->a.n_victims < ARGUS_ANOMALY_MAX_RANKS; r++) {
        if (is_source(k, r))
            continue;
        const double win = rank_median(c, r, k->si_a, k->si_b, 1, 1, f_outside, p, 0);
        const double base = rank_median(c, r, k->si_a, k->si_b, 0, 3, f_outside, p, 0);
        if (!isnan(win) && !isnan(base) && win - base >= thresh && win - base >= 0.05 * base)
            k->a.victims[k->a.n_victims++] = r;
    }
}

/* compute_straggler judged on a phase's walls or on step times (l2.c, judge_table). */
static void explain_level_straggler(struct an_ctx *c, struct an_cand *k, const struct said *w)
{
    struct argus_anomaly *a = &k->a;
    char vk[160] = "";
    level_victims(c, k);
    if (a->n_victims)
        an_format_slots(c, a->victims, a->n_victims, vk, sizeof vk);
    if (a->data_level == ARGUS_DL_PHASES)
        say(a->evidence, sizeof a->evidence,
            "rank%s %s %s phase %.2fx %s %u %speers for %zu steps (%llu-%llu), against "
            "%s own level before; no kernel data: judged on the phase marks%s%s%s",
            a->n_ranks > 1 ? "s" : "", w->ranks,
            a->phase >= 0 ? argus_phase_name((enum argus_phase)a->phase) : "?", a->slowdown,
            a->n_ranks > 1 ? "their" : "its", k->n_peers, w->stage, w->nsteps, w->first,
            w->last, a->n_ranks > 1 ? "their" : "its",
            a->n_victims ? "; ranks " : "", vk,
            a->n_victims ? " waited for it in their other phases" : "");
    else
        say(a->evidence, sizeof a->evidence,
            "rank%s %s step time %.2fx %s %u %speers for %zu steps (%llu-%llu), against "
            "%s own level before; step times only: compute and host cannot be told "
            "apart%s%s%s",
            a->n_ranks > 1 ? "s" : "", w->ranks, a->slowdown,
            a->n_ranks > 1 ? "their" : "its", k->n_peers, w->stage, w->nsteps, w->first,
            w->last, a->n_ranks > 1 ? "their" : "its", a->n_victims ? "; ranks " : "", vk,
            a->n_victims ? " waited for it" : "");
}

static void explain_straggler(struct an_ctx *c, struct an_cand *k, const struct said *w)
{
    struct argus_anomaly *a = &k->a;
    char vc[200], kc[200];
    if (a->data_level == ARGUS_DL_PHASES || a->data_level == ARGUS_DL_STEPS) {
        explain_level_straggler(c, k, w);
        return;
    }
    a->phase = an_phase_vs_peers(c, a->ranks, a->n_ranks, k->si_a, k->si_b);
    victims_clause(c, k, "other ranks", vc, sizeof vc);
    kernels_clause(c, k, kc, sizeof kc);
    say(a->evidence, sizeof a->evidence,
        "rank%s %s compute %.2fx %s %u %speers for %zu steps (%llu-%llu), most in %s"
        "%s%s",
        a->n_ranks > 1 ? "s" : "", w->ranks, a->slowdown, a->n_ranks > 1 ? "their" : "its",
        k->n_peers, w->stage, w->nsteps, w->first, w->last,
        a->phase >= 0 ? argus_phase_name((enum argus_phase)a->phase) : "compute",
        kc, vc);
    late_clause(c, k);
}

static void explain_kernel(struct an_ctx *c, struct an_cand *k, const struct said *w)
{
    struct argus_anomaly *a = &k->a;
    char vc[200], nm[72] = "?";
    if (a->n_kernels)
        an_short_name(c->js, a->kernels[0], nm, sizeof nm);
    a->phase = an_phase_vs_peers(c, a->ranks, a->n_ranks, k->si_a, k->si_b);
    victims_clause(c, k, "other ranks", vc, sizeof vc);
    say(a->evidence, sizeof a->evidence,
        "rank%s %s kernel %s %.2fx %s %u %speers for %zu steps (%llu-%llu) while "
        "the other kernels match%s",
        a->n_ranks > 1 ? "s" : "", w->ranks, nm, a->slowdown,
        a->n_ranks > 1 ? "their" : "its", k->n_peers, w->stage, w->nsteps, w->first,
        w->last, vc);
}

static void explain_bubble(struct an_ctx *c, struct an_cand *k, const struct said *w)
{
    struct argus_anomaly *a = &k->a;
    char vc[200];
    uint64_t kern[ARGUS_ANOMALY_MAX_KERNELS];
    double exc[ARGUS_ANOMALY_MAX_KERNELS], tot = 0;
    size_t nk = an_kernel_excess(c, a->ranks, a->n_ranks, k->si_a, k->si_b, ARGUS_KC_COMPUTE,
                                 0, kern, exc, ARGUS_ANOMALY_MAX_KERNELS, &tot);
    a->n_kernels = 0;
    for (size_t i = 0; i < nk; i++)
        if (exc[i] > 0.05 * tot)
            a->kernels[a->n_kernels++] = kern[i];
    a->phase = an_phase_growth(c, a->ranks, a->n_ranks, k->si_a, k->si_b, 1);
    if (a->phase < 0)
        a->phase = an_phase_vs_peers(c, a->ranks, a->n_ranks, k->si_a, k->si_b);
    victims_clause(c, k, "ranks of other stages", vc, sizeof vc);
    say(a->evidence, sizeof a->evidence,
        "stage %u (ranks %s) compute %.2fx its usual share against the other stages "
        "for %zu steps (%llu-%llu)%s%s%s",
        w->stage_no, w->ranks, a->slowdown, w->nsteps, w->first, w->last,
        a->phase >= 0 ? ", most in " : "",
        a->phase >= 0 ? argus_phase_name((enum argus_phase)a->phase) : "", vc);
}

/* Over the window: the median, over steps, of the sources' median host gap (*own) and of
 * the other members of their class (*peer); 0 when none. */
static void host_medians(struct an_ctx *c, const struct an_cand *k, uint32_t stage,
                         double *own, double *peer)
{
    const struct argus_anomaly *a = &k->a;
    size_t m = 0;
    const uint32_t csz = c->cls_off[stage + 1] - c->cls_off[stage];
    double *in = malloc((csz + a->n_ranks + 1) * sizeof *in);
    *own = *peer = 0;
    for (size_t si = k->si_a; in && si <= k->si_b; si++) {
        size_t q = 0, p = 0;
        for (uint32_t i = 0; i < a->n_ranks; i++) {
            const struct argus_step_summary *s = an_cell(c, a->ranks[i], si);
            if (s)
                in[q++] = v_host(s);
        }
        if (!q)
            continue;
        c->tmp1[m] = argus_stats_median(in, q);
        for (uint32_t j = c->cls_off[stage]; j < c->cls_off[stage + 1]; j++) {
            const struct argus_step_summary *s = an_cell(c, c->cls_mem[j], si);
            if (s && !is_source(k, c->cls_mem[j]))
                in[p++] = v_host(s);
        }
        c->tmp2[m++] = p ? argus_stats_median(in, p) : 0;
    }
    free(in);
    if (m) {
        *own = argus_stats_median(c->tmp1, m);
        *peer = argus_stats_median(c->tmp2, m);
    }
}

static void explain_host_stall(struct an_ctx *c, struct an_cand *k, const struct said *w)
{
    struct argus_anomaly *a = &k->a;
    char vc[200];
    double own, peer;
    if (k->late)
        return; /* the late-arriver test wrote its evidence and victims (peers.c) */
    host_medians(c, k, w->stage_no, &own, &peer);
    a->phase = ARGUS_PH_HOST;
    victims_clause(c, k, "other ranks", vc, sizeof vc);
    say(a->evidence, sizeof a->evidence,
        "rank%s %s GPU idle (host gap) %.1f ms per step vs %.1f ms on %s %u %speers "
        "for %zu steps (%llu-%llu) while compute matches; the host is not launching "
        "work%s",
        a->n_ranks > 1 ? "s" : "", w->ranks, own / 1e6, peer / 1e6,
        a->n_ranks > 1 ? "their" : "its", k->n_peers, w->stage, w->nsteps, w->first,
        w->last, vc);
}

/* Where the group of a comm_degradation anomaly sits, for its sentence. */
static void comm_where(const struct an_ctx *c, const struct argus_anomaly *a, char *buf,
                       size_t len)
{
    const struct argus_coords *x = &c->co[a->ranks[0]];
    if (c->layout_known)
        snprintf(buf, len, "pp %u, %s %u", x->pp, a->group_type == ARGUS_GT_DP ? "tp" : "dp",
                 a->group_type == ARGUS_GT_DP ? x->tp : x->dp);
    else if (c->mgrp_inferred && a->group_type == ARGUS_GT_DP) /* groups_infer.c */
        snprintf(buf, len, "inferred: its members end collectives together");
    else /* groups.c: no layout, the program's communicators */
        snprintf(buf, len, "a communicator of the program");
}

static void explain_comm(struct an_ctx *c, struct an_cand *k, const struct said *w)
{
    struct argus_anomaly *a = &k->a;
    char vc[200], n0[72] = "collectives", n1[72] = "", where[64];
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);
    if (a->n_kernels)
        an_short_name(c->js, a->kernels[0], n0, sizeof n0);
    if (a->n_kernels > 1)
        an_short_name(c->js, a->kernels[1], n1, sizeof n1);
    victims_clause(c, k, "ranks outside the group", vc, sizeof vc);
    comm_where(c, a, where, sizeof where);
    say(a->evidence, sizeof a->evidence,
        "%s group %s (%s): %s%s%s %.2fx the other %s groups even for the "
        "member that arrived last, for %zu steps (%llu-%llu); members' compute "
        "matches their peers%s",
        gt ? gt : "?", w->ranks, where, n0, n1[0] ? "/" : "", n1,
        a->slowdown, gt ? gt : "?", w->nsteps, w->first, w->last, vc);
    if (a->w1_inter_ns > 0) {
        const size_t used = strlen(a->evidence);
        snprintf(a->evidence + used, sizeof a->evidence - used,
                 "; W1 of %s inside the group %.1f us vs %.1f us to the other groups "
                 "(block structure)", n0, a->w1_intra_ns / 1e3, a->w1_inter_ns / 1e3);
    }
}

/* Step regression and iteration jitter (l1.c wrote the evidence): the phase that grew. */
static void explain_step_time(struct an_ctx *c, struct an_cand *k)
{
    struct argus_anomaly *a = &k->a;
    a->phase = an_phase_growth(c, NULL, 0, k->si_a, k->si_b, 0);
    size_t used = strlen(a->evidence);
    if (a->phase >= 0 && used + 1 < sizeof a->evidence)
        snprintf(a->evidence + used, sizeof a->evidence - used, "; grew most: %s",
                 argus_phase_name((enum argus_phase)a->phase));
}

static void explain_one(struct an_ctx *c, struct an_cand *k)
{
    struct said w;
    said_fill(c, k, &w);
    switch (k->a.kind) {
    case ARGUS_AK_COMPUTE_STRAGGLER:
        explain_straggler(c, k, &w);
        break;
    case ARGUS_AK_KERNEL_DEGRADATION:
        explain_kernel(c, k, &w);
        break;
    case ARGUS_AK_PIPELINE_BUBBLE:
        explain_bubble(c, k, &w);
        break;
    case ARGUS_AK_HOST_STALL:
        explain_host_stall(c, k, &w);
        break;
    case ARGUS_AK_COMM_DEGRADATION:
        explain_comm(c, k, &w);
        break;
    case ARGUS_AK_STEP_REGRESSION:
    case ARGUS_AK_ITERATION_JITTER:
        explain_step_time(c, k);
        break;
    case ARGUS_AK_PERSISTENT_IMBALANCE: /* own.c wrote the evidence */
        if (k->a.phase < 0 && k->a.data_level == ARGUS_DL_KERNELS)
            k->a.phase = an_phase_vs_peers(c, k->a.ranks, k->a.n_ranks, k->si_a, k->si_b);
        break;
    default:
        break;
    }
}

int an_explain(struct an_ctx *c)
{
    for (size_t i = 0; i < c->cand.n; i++)
        if (!c->cand.v[i].dropped)
            explain_one(c, &c->cand.v[i]);
    return 0;
}
