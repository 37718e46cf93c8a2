/* explain.c — turns detector candidates into verdicts a person can act on: the phase
 * that grew, the kernels that carry the excess, and one evidence sentence with numbers,
 * with the victims and the late-arriver test of victims.c; the words are labels.c's.
 * Reads the context; writes only into the candidates.
 */
#include "analysis/internal.h"

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

static double v_host(const struct argus_step_summary *s)
{
    return (double)(s->host_gap_ns ? s->host_gap_ns : s->phase_wall_ns[ARGUS_PH_HOST]);
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

static void late_clause(struct an_ctx *c, struct an_cand *k)
{
    const double late = an_late_arriver(c, k);
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

/* compute_straggler judged on a phase's walls or on step times (l2.c, judge_table). */
static void explain_level_straggler(struct an_ctx *c, struct an_cand *k, const struct said *w)
{
    struct argus_anomaly *a = &k->a;
    char vk[160] = "";
    an_level_victims(c, k);
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
            if (s && !an_is_source(k, c->cls_mem[j]))
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
    char vc[200], n0[72] = "collectives", n1[72] = "", where[64], grp[160];
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);
    /* the group's members (the sources too, unless NCCL named a link or a late member
     * inside it: analysis/ncclview.c) */
    if (a->n_group)
        an_format_slots(c, a->group, a->n_group, grp, sizeof grp);
    else
        snprintf(grp, sizeof grp, "%s", w->ranks);
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
        gt ? gt : "?", grp, where, n0, n1[0] ? "/" : "", n1,
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
