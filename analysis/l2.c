/* l2.c — rank-level and stage-level detectors (L2): compute time against the peers of
 * the same PP stage (compute_straggler, kernel_degradation when one kernel holds the
 * excess; >= 1% of the step wall, judged per call when the rank ran other work than its
 * peers), the relative load of whole stages over time (pipeline_bubble) and GPU idle
 * time against peers and the rank's own baseline (host_stall). Every flag needs the ratio
 * gate, the robust-z gate and persistence (opts.min_steps). It only adds candidates to
 * the context; explanations (victims, evidence) come later in explain.c.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Reference of one value over the members of a peer class present at one step. */
struct pref {
    double ref, scale, wall;
    uint32_t n;
};

/* Lower-half reference of v (c->vcomp or c->vhost) over the members of each peer class
 * present at each step, and their median step wall; med (when not NULL) gets the median
 * of v over them (NAN when none). */
static void class_refs(struct an_ctx *c, const double *v, struct pref *out, double *med)
{
    const size_t S = c->S;
    for (uint32_t k = 0; k < c->n_cls; k++) {
        for (size_t s0 = 0, ns; s0 < S; s0 += ns) {
            ns = an_class_gather(c, v, k, s0);
            for (size_t j = 0; j < ns; j++) {
                const size_t at = (size_t)k * S + s0 + j, m = c->gat_n[j];
                struct argus_robust r;
                argus_stats_robust_low_med(c->gat + j * c->gat_cap, m, AN_PEER_FLOOR, c->tmp2,
                                           &r, med ? &med[at] : NULL);
                struct pref *p = &out[at];
                p->ref = r.ref;
                p->scale = r.scale;
                p->n = (uint32_t)m;
                p->wall = c->cwall[at];
            }
        }
    }
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

/* Scratch of detect_stages: S steps each; buf holds S + P values, buf2 twice that. */
struct stage_scratch {
    double *rel, *zz, *rr, *ex, *buf, *buf2;
    uint8_t *flag;
    struct an_span *spans;
};

/* rel[si]: stage k's median compute over the median of the other stages' at si (NAN when
 * either is unknown). buf holds P values. */
static void stage_relative(const struct an_ctx *c, uint32_t k, double *rel, double *buf)
{
    const uint32_t P = c->n_cls;
    const size_t S = c->S;
    const double *sp = c->ccomp; /* the stages' median compute (class_refs) */
    for (size_t si = 0; si < S; si++) {
        size_t q = 0;
        for (uint32_t o = 0; o < P; o++)
            if (o != k && !isnan(sp[(size_t)o * S + si]))
                buf[q++] = sp[(size_t)o * S + si];
        double other = q ? argus_stats_median(buf, q) : NAN;
        double own = sp[(size_t)k * S + si];
        rel[si] = (other > 0 && !isnan(own)) ? own / other : NAN;
    }
}

/* Baseline of a stage's series v[0..m) (reordered): the lower half of the whole run, or
 * the first quarter when lower: a slow stage that lasts past half the run would otherwise
 * lift its own baseline. scratch holds 2 m values. */
static void stage_baseline(double *v, size_t m, double *scratch, struct argus_robust *out)
{
    struct argus_robust early;
    const size_t m4 = m / 4;
    if (m4 >= 8) {
        memcpy(scratch, v, m4 * sizeof *v);
        argus_stats_robust(scratch, m4, AN_PEER_FLOOR, scratch + m4, &early);
    }
    argus_stats_robust_low(v, m, AN_PEER_FLOOR, scratch + m, out);
    if (m4 >= 8 && early.ref < out->ref)
        *out = early;
}

/* Did the stage's own compute own[] grow over [a,b] against its median outside (two
 * steps off): by half of the ratio's excess at least? With two stages each one's load
 * relative to the other is the other's inverse: when one stage slows, the other's
 * relative load before the onset looks high against its later level, while its own
 * compute never changed. buf holds S values. */
static double own_growth(const struct an_ctx *c, const double *own, size_t a, size_t b,
                         double *buf)
{
    size_t m = 0;
    for (size_t si = a; si <= b; si++)
        if (!isnan(own[si]))
            buf[m++] = own[si];
    if (!m)
        return 0;
    const double in = argus_stats_median(buf, m);
    m = 0;
    for (size_t si = 0; si < c->S; si++)
        if ((si + 2 < a || si > b + 2) && !isnan(own[si]))
            buf[m++] = own[si];
    if (m < 3)
        return INFINITY; /* the window is the run: nothing to compare with */
    const double out = argus_stats_median(buf, m);
    return out > 0 ? in / out : 0;
}

static int own_grew(const struct an_ctx *c, const double *own, size_t a, size_t b,
                    double *buf)
{
    return own_growth(c, own, a, b, buf) >= 1.0 + 0.5 * (c->o.ratio - 1.0);
}

/* With two stages each one's load relative to the other is the other's inverse, so a
 * bubble of one stage after an onset comes with a bubble of the other before it. Of two
 * bubbles of the two stages in disjoint windows the one whose own compute grew less
 * against its own outside is that echo: dropped. */
static void two_stage_echo(struct an_ctx *c, size_t first, double *buf)
{
    if (c->n_cls != 2)
        return;
    for (size_t i = first; i < c->cand.n; i++)
        for (size_t j = first; j < c->cand.n; j++) {
            struct an_cand *x = &c->cand.v[i], *y = &c->cand.v[j];
            if (x->dropped || y->dropped || x->a.kind != ARGUS_AK_PIPELINE_BUBBLE ||
                y->a.kind != ARGUS_AK_PIPELINE_BUBBLE || !x->a.n_ranks || !y->a.n_ranks ||
                c->cls[x->a.ranks[0]] == c->cls[y->a.ranks[0]] ||
                an_overlap(x->si_a, x->si_b, y->si_a, y->si_b))
                continue;
            const double gx = own_growth(c, c->ccomp + (size_t)c->cls[x->a.ranks[0]] * c->S,
                                         x->si_a, x->si_b, buf);
            const double gy = own_growth(c, c->ccomp + (size_t)c->cls[y->a.ranks[0]] * c->S,
                                         y->si_a, y->si_b, buf);
            if (gx < gy)
                x->dropped = 1;
        }
}

/* Stage k against the other stages over time: flagged where its relative load and its
 * own compute both pass the gates against their baselines; one pipeline_bubble candidate
 * per run of flagged steps. */
static int stage_judge(struct an_ctx *c, uint32_t k, struct stage_scratch *w)
{
    const size_t S = c->S;
    const double *own = c->ccomp + (size_t)k * S;
    struct argus_robust rref, sref;
    size_t m = 0, ms = 0;
    int rc;

    stage_relative(c, k, w->rel, w->buf);
    for (size_t si = 0; si < S; si++) {
        if (!isnan(w->rel[si]))
            w->buf[m++] = w->rel[si];
        if (!isnan(own[si]))
            w->zz[ms++] = own[si];
    }
    stage_baseline(w->buf, m, w->buf2, &rref);
    stage_baseline(w->zz, ms, w->buf2, &sref);
    memset(w->flag, 0, S);
    for (size_t si = 0; si < S; si++) {
        if (isnan(w->rel[si]) || !(rref.ref > 0) || !(sref.ref > 0))
            continue;
        w->rr[si] = w->rel[si] / rref.ref;
        w->zz[si] = argus_stats_z(w->rel[si], &rref);
        w->ex[si] = own[si] - sref.ref;
        w->flag[si] = w->rr[si] >= c->o.ratio && w->zz[si] >= c->o.z &&
                      own[si] / sref.ref >= c->o.ratio;
    }
    size_t ns = an_runs(w->flag, S, c->o.min_steps, w->spans, S);
    for (size_t j = 0; j < ns; j++) {
        struct an_rrun st;
        struct an_cand *cand;
        if (!own_grew(c, own, w->spans[j].a, w->spans[j].b, w->buf))
            continue;
        an_run_stats(w->rr, w->zz, w->ex, w->flag, w->spans[j].a, w->spans[j].b, w->buf, &st,
                     c->o.min_steps);
        if ((rc = an_push_cand(c, ARGUS_AK_PIPELINE_BUBBLE, 2, w->spans[j].a, w->spans[j].b,
                               st.det, st.ratio, st.z, st.excess, &cand)))
            return rc;
        for (uint32_t i = c->cls_off[k]; i < c->cls_off[k + 1]; i++)
            an_cand_add_rank(cand, c->cls_mem[i]);
        cand->n_peers = c->n_cls - 1;
    }
    return 0;
}

/* Stage-level load: the median compute of a stage relative to the other stages, against
 * its own lower-half baseline over time. Adds pipeline_bubble candidates. */
static int detect_stages(struct an_ctx *c)
{
    const uint32_t P = c->n_cls;
    const size_t S = c->S;
    int rc = 0;

    if (P < 2)
        return 0;
    struct stage_scratch w = {
        .rel = malloc(S * sizeof *w.rel),
        .zz = malloc(S * sizeof *w.zz),
        .rr = malloc(S * sizeof *w.rr),
        .ex = malloc(S * sizeof *w.ex),
        .buf = malloc((S + P) * sizeof *w.buf),
        .buf2 = malloc(2 * (S + P) * sizeof *w.buf2),
        .flag = malloc(S),
        .spans = malloc(S * sizeof *w.spans),
    };
    if (!w.rel || !w.zz || !w.rr || !w.ex || !w.buf || !w.buf2 || !w.flag || !w.spans)
        rc = -ENOMEM;
    const size_t first = c->cand.n;
    for (uint32_t k = 0; !rc && k < P; k++)
        rc = stage_judge(c, k, &w);
    if (!rc)
        two_stage_echo(c, first, w.buf);
    free(w.rel);
    free(w.zz);
    free(w.rr);
    free(w.ex);
    free(w.buf);
    free(w.buf2);
    free(w.flag);
    free(w.spans);
    return rc;
}

/* compute_straggler or kernel_degradation for one run, by where its excess lies. */
static void classify(struct an_ctx *c, struct an_rrun *u, const struct pref *ref)
{
    double total = 0, pos = 0, exc[ARGUS_ANOMALY_MAX_KERNELS];
    uint64_t kern[ARGUS_ANOMALY_MAX_KERNELS];
    /* over the steps with kernel detail only, as an_kernel_excess (thin cells have none) */
    for (size_t si = u->a; si <= u->b; si++) {
        const double v = c->vcomp[(size_t)u->rank * c->S + si];
        const struct pref *p = &ref[(size_t)c->cls[u->rank] * c->S + si];
        if (!isnan(v) && p->ref > 0 && an_kcell(c, u->rank, si))
            total += v - p->ref;
    }
    size_t nk = an_kernel_excess(c, &u->rank, 1, u->a, u->b, ARGUS_KC_COMPUTE, 1, kern, exc,
                                 ARGUS_ANOMALY_MAX_KERNELS, &pos);
    double denom = total > pos ? total : pos;
    u->kind = ARGUS_AK_COMPUTE_STRAGGLER;
    u->nk = 0;
    if (nk && denom > 0 && exc[0] >= AN_KERNEL_SHARE * denom) {
        u->kind = ARGUS_AK_KERNEL_DEGRADATION;
        u->kern[0] = kern[0];
        u->nk = 1;
        return;
    }
    for (size_t i = 0; i < nk; i++)
        if (exc[i] > 0.05 * denom)
            u->kern[u->nk++] = kern[i];
}

/* Stragglers covering most of one stage (AN_STAGE_COVER of at least two ranks) are that
 * stage's bubble: the candidate turns into one and takes in the whole stage. */
static void stragglers_to_bubbles(struct an_ctx *c, size_t first)
{
    for (size_t i = first; i < c->cand.n; i++) {
        struct an_cand *k = &c->cand.v[i];
        if (k->a.kind != ARGUS_AK_COMPUTE_STRAGGLER || c->n_cls < 2)
            continue;
        for (uint32_t st = 0; st < c->n_cls; st++) {
            uint32_t size = c->cls_off[st + 1] - c->cls_off[st], in = 0;
            for (uint32_t j = 0; j < k->a.n_ranks; j++)
                in += c->cls[k->a.ranks[j]] == st;
            if (size >= 2 && in >= AN_STAGE_COVER * size) {
                k->a.kind = ARGUS_AK_PIPELINE_BUBBLE;
                for (uint32_t m = c->cls_off[st]; m < c->cls_off[st + 1]; m++)
                    an_cand_add_rank(k, c->cls_mem[m]);
            }
        }
    }
}

/* k is a live rank-level compute verdict (straggler or kernel) overlapping bubble b. */
static int overlaps_bubble(const struct an_cand *k, const struct an_cand *b)
{
    return (k->a.kind == ARGUS_AK_COMPUTE_STRAGGLER ||
            k->a.kind == ARGUS_AK_KERNEL_DEGRADATION) &&
           !k->dropped && an_overlap(k->si_a, k->si_b, b->si_a, b->si_b);
}

/* A stage flagged as a whole while some of its ranks stand out from the others: if
 * those ranks are most of the stage, it is the bubble; else they are the stragglers
 * (a stage median moves when half of it is slow, e.g. two stages pooled into one
 * class when the layout had to be inferred). */
static void bubble_or_stragglers(struct an_ctx *c, size_t first)
{
    for (size_t j = first; j < c->cand.n; j++) {
        struct an_cand *b = &c->cand.v[j];
        if (b->a.kind != ARGUS_AK_PIPELINE_BUBBLE || b->dropped || !b->a.n_ranks)
            continue;
        const uint32_t st = c->cls[b->a.ranks[0]];
        const uint32_t size = c->cls_off[st + 1] - c->cls_off[st];
        uint8_t *in = calloc(c->n, 1);
        uint32_t nin = 0;
        if (!in)
            continue;
        for (size_t i = first; i < c->cand.n; i++) {
            const struct an_cand *k = &c->cand.v[i];
            if (!overlaps_bubble(k, b))
                continue;
            for (uint32_t q = 0; q < k->a.n_ranks; q++)
                if (c->cls[k->a.ranks[q]] == st && !in[k->a.ranks[q]]) {
                    in[k->a.ranks[q]] = 1;
                    nin++;
                }
        }
        const int bubble_wins = nin == 0 || nin >= AN_STAGE_COVER * size;
        for (size_t i = first; i < c->cand.n; i++) {
            struct an_cand *k = &c->cand.v[i];
            if (!overlaps_bubble(k, b))
                continue;
            uint32_t inside = 0;
            for (uint32_t q = 0; q < k->a.n_ranks; q++)
                inside += c->cls[k->a.ranks[q]] == st;
            if (bubble_wins && inside == k->a.n_ranks)
                k->dropped = 1;
        }
        if (!bubble_wins)
            b->dropped = 1;
        free(in);
    }
}

/* One bubble per stage and overlapping window: the later ones fold into the first. */
static void merge_bubbles(struct an_ctx *c, size_t first)
{
    for (size_t j = first; j < c->cand.n; j++) {
        struct an_cand *b = &c->cand.v[j];
        if (b->a.kind != ARGUS_AK_PIPELINE_BUBBLE || b->dropped || !b->a.n_ranks)
            continue;
        for (size_t i = j + 1; i < c->cand.n; i++) {
            struct an_cand *d = &c->cand.v[i];
            if (d->a.kind == ARGUS_AK_PIPELINE_BUBBLE && !d->dropped && d->a.n_ranks &&
                c->cls[d->a.ranks[0]] == c->cls[b->a.ranks[0]] &&
                an_overlap(b->si_a, b->si_b, d->si_a, d->si_b)) {
                d->dropped = 1;
                b->si_a = d->si_a < b->si_a ? d->si_a : b->si_a;
                b->si_b = d->si_b > b->si_b ? d->si_b : b->si_b;
                b->a.step_first = c->step_id[b->si_a];
                b->a.step_last = c->step_id[b->si_b];
            }
        }
    }
}

/* Stragglers and bubbles of the candidates from `first` on made consistent: stragglers
 * covering a stage become its bubble, a bubble gives way to the stragglers that explain
 * it (or drops those inside it), one bubble per stage and window. */
static void reconcile_bubbles(struct an_ctx *c, size_t first)
{
    stragglers_to_bubbles(c, first);
    bubble_or_stragglers(c, first);
    merge_bubbles(c, first);
}

/* Scratch of the rank-level detectors: the class references (n_cls x S) and one rank's
 * per-step series (S each). */
struct rank_scratch {
    struct pref *ref;
    double *ratio, *z, *exc, *buf;
    uint8_t *flag;
    struct an_span *spans;
};

static int rank_scratch_alloc(const struct an_ctx *c, struct rank_scratch *w)
{
    const size_t S = c->S;
    w->ref = malloc((size_t)c->n_cls * S * sizeof *w->ref);
    w->ratio = malloc(S * sizeof *w->ratio);
    w->z = malloc(S * sizeof *w->z);
    w->exc = malloc(S * sizeof *w->exc);
    w->buf = malloc(S * sizeof *w->buf);
    w->flag = malloc(S);
    w->spans = malloc(S * sizeof *w->spans);
    if (!w->ref || !w->ratio || !w->z || !w->exc || !w->buf || !w->flag || !w->spans)
        return -ENOMEM;
    return 0;
}

static void rank_scratch_free(struct rank_scratch *w)
{
    free(w->ref);
    free(w->ratio);
    free(w->z);
    free(w->exc);
    free(w->buf);
    free(w->flag);
    free(w->spans);
}

/* The runs of flagged steps of rank r (flag[0..S)) as runs of that kind, with their
 * medians (w->ratio, z, exc). 0 or -ENOMEM. */
/* How far the log of ratio[] (per step, 0 = not judged) over [a,b] lies above its level
 * outside it (two steps off, before and after), in standard errors: the difference of the medians over
 * 1.2533 x sigma x sqrt(1/n_in + 1/n_out), sigma = 1.4826 x the median absolute
 * deviation of both sides, each about its own median (floored at
 * 1 %). A run of noisy steps (phase marks of a CPU job on shared cores) is judged as a
 * whole, not step by step. 0 when either side is too short. */
static double run_shift_t(struct an_ctx *c, const double *ratio, size_t a, size_t b)
{
    size_t ni = 0, no = 0;
    for (size_t si = a; si <= b; si++)
        if (ratio[si] > 0)
            c->tmp1[ni++] = log(ratio[si]);
    /* its level outside the run: before it and, once it ended, after it (runs of one
     * episode were joined first, so what follows is the rank's level again) */
    for (size_t si = 0; si < c->S; si++)
        if ((si + 2 < a || si > b + 2) && ratio[si] > 0)
            c->tmp2[no++] = log(ratio[si]);
    if (ni < c->o.min_steps || no < AN_REGRESSION_MIN_SEG)
        return 0;
    const double in = argus_stats_median(c->tmp1, ni), out = argus_stats_median(c->tmp2, no);
    /* the spread pooled over both sides, each about its own median */
    for (size_t i = 0; i < ni; i++)
        c->tmp3[i] = fabs(c->tmp1[i] - in);
    for (size_t i = 0; i < no; i++)
        c->tmp3[ni + i] = fabs(c->tmp2[i] - out);
    double sd = ARGUS_MAD_SIGMA * argus_stats_median(c->tmp3, ni + no);
    sd = sd > 0.01 ? sd : 0.01;
    return (in - out) / (1.2533 * sd * sqrt(1.0 / (double)ni + 1.0 / (double)no));
}

/* The edges of an accepted noisy run (ratio[]: per step, 0 = not judged; level: its
 * typical ratio): it grows over the steps next to it whose ratio lies above 1 +
 * AN_LEVEL_EDGE x (level - 1), across single steps below that. Steps at an episode's ends that
 * the step gates missed belong to it. */
static void run_edges(const struct an_ctx *c, const double *ratio, double level,
                      struct an_span *sp)
{
    const double mid = 1.0 + AN_LEVEL_EDGE * (level - 1.0);
    if (!(level > 1.0))
        return;
    /* one step below it may sit inside (noise), two end it */
    for (size_t k = sp->b + 1; k < c->S; k++) {
        if (ratio[k] >= mid)
            sp->b = k;
        else if (!(k + 1 < c->S && ratio[k + 1] >= mid))
            break;
    }
    for (size_t k = sp->a; k-- > 0;) {
        if (ratio[k] >= mid)
            sp->a = k;
        else if (!(k > 0 && ratio[k - 1] >= mid))
            break;
    }
}

static int rank_runs(struct an_ctx *c, uint32_t r, const uint8_t *flag,
                     const struct rank_scratch *w, int kind, double run_z,
                     struct an_rruns *runs)
{
    size_t ns = an_runs(flag, c->S, c->o.min_steps, w->spans, c->S);
    if (run_z > 0 && ns > 1) { /* noisy steps split one episode: join runs a few apart */
        size_t k = 0;
        for (size_t j = 1; j < ns; j++) {
            /* a few steps, or less than the shorter of the two runs */
            const size_t lk = w->spans[k].b - w->spans[k].a + 1;
            const size_t lj = w->spans[j].b - w->spans[j].a + 1;
            const size_t gap = lk < lj ? lk : lj;
            if (w->spans[j].a <= w->spans[k].b + (gap > AN_LEVEL_GAP ? gap : AN_LEVEL_GAP) + 1) {
                w->spans[k].b = w->spans[j].b;
                w->spans[k].nflag += w->spans[j].nflag;
            } else {
                w->spans[++k] = w->spans[j];
            }
        }
        ns = k + 1;
    }
    for (size_t j = 0; j < ns; j++) {
        struct an_rrun st;
        an_run_stats(w->ratio, w->z, w->exc, flag, w->spans[j].a, w->spans[j].b, w->buf, &st,
                     c->o.min_steps);
        /* run_z: the run as a whole must be a shift of the rank's own level, as strong as
         * one step must be at the kernel level */
        if (run_z > 0 && !(run_shift_t(c, w->ratio, w->spans[j].a, w->spans[j].b) >= run_z))
            continue;
        if (run_z > 0) /* noisy steps: the episode's edges by its own level */
            run_edges(c, w->ratio, st.ratio, &w->spans[j]);
        struct an_rrun *u = an_rruns_push(runs, r, w->spans[j].a, w->spans[j].b);
        if (!u)
            return -ENOMEM;
        u->kind = kind;
        u->ratio = st.ratio;
        u->z = st.z;
        u->excess = st.excess;
        u->det = st.det;
    }
    return 0;
}

/* Rank r's values of table v (c->vcomp, a phase's walls, the step walls) against its
 * class's reference, per step, into w->ratio, z, exc and flag (the rank's row of
 * c->cflag, left as it is when nothing can be flagged). Episodes are judged against the
 * rank's own level (base >= 1, own.c): a rank slower than its peers all along is not
 * flagged for that. Returns 1 when some step could be flagged, else 0. */
static int compute_flags(struct an_ctx *c, uint32_t r, struct rank_scratch *w, uint8_t *flag,
                         const double *v, double base, int per_call, double zgate)
{
    const size_t S = c->S;
    const double *vc = v + (size_t)r * S;
    const struct pref *ref = w->ref + (size_t)c->cls[r] * S;
    double *ratio = w->ratio, *z = w->z, *exc = w->exc;
    for (size_t si = 0; si < S; si++) {
        const struct pref *p = &ref[si];
        ratio[si] = 0;
        exc[si] = NAN;
        if (!isnan(vc[si]) && p->n >= 2 && p->ref > 0) {
            ratio[si] = vc[si] / p->ref / base;
            exc[si] = vc[si] - base * p->ref;
        }
    }
    /* a step can be flagged only where the ratio and the materiality pass: a rank with
     * none (most of them) needs neither its noise nor its runs */
    int maybe = 0;
    for (size_t si = 0; si < S && !maybe; si++)
        maybe = !isnan(exc[si]) && ratio[si] >= c->o.ratio &&
                exc[si] >= AN_COMPUTE_MATERIAL * ref[si].wall;
    if (!maybe)
        return 0; /* its flags stay 0 */
    /* the rank's own step-to-step noise bounds the scale from below */
    const double tsig = argus_stats_diff_sigma(exc, S, c->tmp1, c->tmp2);
    for (size_t si = 0; si < S; si++) {
        const struct pref *p = &ref[si];
        const double sc = p->scale > tsig ? p->scale : tsig;
        z[si] = isnan(exc[si]) || !(sc > 0) ? 0 : exc[si] / sc;
        flag[si] = !isnan(exc[si]) && ratio[si] >= c->o.ratio && z[si] >= zgate &&
                   exc[si] >= AN_COMPUTE_MATERIAL * p->wall;
        /* a rank that ran more kernels than its peers is judged per call */
        double wr, we;
        if (per_call && flag[si] && an_work_ratio(c, r, si, &wr, &we))
            flag[si] = wr >= c->o.ratio && we >= AN_COMPUTE_MATERIAL * p->wall;
    }
    return 1;
}

/* Each rank's own level over table v against its class's references (w->ref, filled),
 * into own[], and its cost to the job (median excess over the job step) into cost[]. */
static void own_levels(struct an_ctx *c, struct rank_scratch *w, const double *v,
                       struct an_own *own, double *cost)
{
    const size_t S = c->S;
    const int past = an_own_past(c);
    for (uint32_t r = 0; r < c->n; r++) {
        const double *vc = v + (size_t)r * S;
        const struct pref *ref = w->ref + (size_t)c->cls[r] * S;
        size_t m = 0;
        for (size_t si = 0; si < S; si++) {
            const struct pref *p = &ref[si];
            w->ratio[si] = 0;
            if (!isnan(vc[si]) && p->n >= 2 && p->ref > 0) {
                w->ratio[si] = vc[si] / p->ref;
                if (c->X[si] > 0)
                    w->exc[m++] = (vc[si] - p->ref) / c->X[si];
            }
        }
        an_own_level(w->ratio, S, w->buf, &own[r]);
        cost[r] = m ? argus_stats_median(w->exc, m) : 0;
        if (!past) { /* the job's first steps are gone: no own past to judge by */
            own[r].base = 1.0;
            own[r].level = NAN;
        }
    }
}

/* A phase's walls (c->lv at least ARGUS_DL_PHASES) into t[r * S + si], NAN elsewhere. */
static void phase_table(const struct an_ctx *c, int phase, double *t)
{
    const size_t N = (size_t)c->n * c->S;
    for (size_t at = 0; at < N; at++)
        t[at] = c->cell[at] && c->lv[at] >= ARGUS_DL_PHASES
                    ? (double)c->cell[at]->phase_wall_ns[phase]
                    : NAN;
}

/* A slow rank is slow in all its phases that do not wait: one anomaly per rank and
 * window, in the phase with the largest excess (per-phase candidates from `first` on,
 * same sources, windows overlapping by half of the shorter). */
static void one_phase_each(struct an_ctx *c, size_t first)
{
    for (size_t i = first; i < c->cand.n; i++)
        for (size_t j = first; j < c->cand.n; j++) {
            struct an_cand *x = &c->cand.v[i], *y = &c->cand.v[j];
            if (i == j || x->dropped || y->dropped ||
                x->a.kind != ARGUS_AK_COMPUTE_STRAGGLER ||
                y->a.kind != ARGUS_AK_COMPUTE_STRAGGLER || x->a.n_ranks != y->a.n_ranks ||
                memcmp(x->a.ranks, y->a.ranks, x->a.n_ranks * sizeof x->a.ranks[0]))
                continue;
            const size_t lx = x->si_b - x->si_a + 1, ly = y->si_b - y->si_a + 1;
            if (2 * an_overlap(x->si_a, x->si_b, y->si_a, y->si_b) < (lx < ly ? lx : ly))
                continue;
            struct an_cand *lose = x->excess_ns < y->excess_ns ? x : y;
            struct an_cand *win = lose == x ? y : x;
            win->si_a = x->si_a < y->si_a ? x->si_a : y->si_a;
            win->si_b = x->si_b > y->si_b ? x->si_b : y->si_b;
            win->a.step_first = c->step_id[win->si_a];
            win->a.step_last = c->step_id[win->si_b];
            win->a.detected_at_step = x->a.detected_at_step < y->a.detected_at_step
                                          ? x->a.detected_at_step
                                          : y->a.detected_at_step;
            lose->dropped = 1;
        }
}

/* One table's rank-level verdicts: persistent_imbalance per rank (own.c), then the runs
 * of flagged steps against each rank's own level into runs. med (when not NULL) gets
 * the classes' medians of v (c->ccomp). */
static int judge_table(struct an_ctx *c, struct rank_scratch *w, const double *v, int phase,
                       int level, struct an_own *own, double *cost, double *med,
                       struct an_rruns *runs)
{
    const size_t S = c->S;
    int rc;
    class_refs(c, v, w->ref, med);
    own_levels(c, w, v, own, cost);
    if ((rc = an_tmp_reserve(c, c->n + S + 16)) ||
        (rc = an_persistent(c, own, cost, phase, level)))
        return rc;
    /* Below the kernel level (CPU jobs, phase marks, step logs) one step's value is far
     * noisier than a kernel sum: a step passes a lower z, and the run as a whole must be
     * a shift of the rank's own level by AN_LEVEL_RUN_Z x opts.z standard errors. */
    const int kern = level == ARGUS_DL_KERNELS;
    const double zgate = kern ? c->o.z : AN_LEVEL_STEP_Z;
    const double run_z = kern ? 0 : AN_LEVEL_RUN_Z * c->o.z;
    if (!kern && (rc = an_tmp_reserve(c, S + 16)))
        return rc;
    for (uint32_t r = 0; r < c->n; r++) {
        uint8_t *flag = c->cflag + (size_t)r * S;
        if (compute_flags(c, r, w, flag, v, own[r].base, kern, zgate) &&
            (rc = rank_runs(c, r, flag, w, ARGUS_AK_COMPUTE_STRAGGLER, run_z, runs)))
            return rc;
    }
    return 0;
}

int an_detect_compute(struct an_ctx *c)
{
    const size_t S = c->S, N = (size_t)c->n * S;
    struct rank_scratch w = { 0 };
    struct an_rruns runs = { 0 };
    struct an_own *own = malloc((c->n ? c->n : 1) * sizeof *own);
    double *cost = malloc((c->n ? c->n : 1) * sizeof *cost), *pt = NULL;
    size_t first;
    int rc = rank_scratch_alloc(c, &w);

    if (!rc && (!own || !cost))
        rc = -ENOMEM;
    if (rc)
        goto out;
    memset(c->cflag, 0, N);
    if (c->level == ARGUS_DL_PHASES) {
        /* phases without kernels: a source is long in the phases that do not wait and
         * short in those that do, its peers the opposite; each phase against the peers */
        static const int ph[] = { ARGUS_PH_FORWARD, ARGUS_PH_BACKWARD, ARGUS_PH_OPTIMIZER };
        if (!(pt = malloc((N ? N : 1) * sizeof *pt))) {
            rc = -ENOMEM;
            goto out;
        }
        const size_t first_all = c->cand.n;
        for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++) {
            phase_table(c, ph[i], pt);
            runs.n = 0;
            first = c->cand.n;
            if ((rc = judge_table(c, &w, pt, ph[i], ARGUS_DL_PHASES, own, cost, NULL, &runs)) ||
                (rc = an_merge_runs(c, runs.v, runs.n, 2)))
                goto out;
            for (size_t j = first; j < c->cand.n; j++)
                if (c->cand.v[j].a.kind == ARGUS_AK_COMPUTE_STRAGGLER) {
                    c->cand.v[j].a.phase = ph[i];
                    c->cand.v[j].a.data_level = ARGUS_DL_PHASES;
                }
        }
        one_phase_each(c, first_all);
        /* stages by their work: the marked phases but communication (a phase-level job
         * that marks its waits, gloo ranges, keeps them out of the work) */
        const size_t Nc = (size_t)c->n * S;
        for (size_t at = 0; at < Nc; at++)
            pt[at] = c->cell[at] && c->lv[at] >= ARGUS_DL_PHASES
                         ? (double)(c->cell[at]->phase_wall_ns[ARGUS_PH_FORWARD] +
                                    c->cell[at]->phase_wall_ns[ARGUS_PH_BACKWARD] +
                                    c->cell[at]->phase_wall_ns[ARGUS_PH_OPTIMIZER])
                         : NAN;
        class_refs(c, pt, w.ref, c->ccomp);
        first = c->cand.n;
        if ((rc = detect_stages(c)))
            goto out;
        for (size_t j = first; j < c->cand.n; j++)
            c->cand.v[j].a.data_level = ARGUS_DL_PHASES;
        reconcile_bubbles(c, first_all);
        goto out;
    }
    if (c->level == ARGUS_DL_STEPS) {
        first = c->cand.n;
        if ((rc = judge_table(c, &w, c->vwall, -1, ARGUS_DL_STEPS, own, cost, NULL, &runs)) ||
            (rc = an_merge_runs(c, runs.v, runs.n, 2)))
            goto out;
        for (size_t j = first; j < c->cand.n; j++)
            c->cand.v[j].a.data_level = ARGUS_DL_STEPS;
        goto out;
    }
    if ((rc = judge_table(c, &w, c->vcomp, -1, ARGUS_DL_KERNELS, own, cost, c->ccomp, &runs)))
        goto out;
    c->ccomp_set = 1;
    if ((rc = detect_stages(c)))
        goto out;
    for (size_t i = 0; i < runs.n; i++)
        classify(c, &runs.v[i], w.ref);
    first = c->cand.n;
    if ((rc = an_merge_runs(c, runs.v, runs.n, 2)))
        goto out;
    for (size_t i = first; i < c->cand.n; i++)
        if (c->cand.v[i].a.kind == ARGUS_AK_KERNEL_DEGRADATION)
            c->cand.v[i].a.level = 3;
    reconcile_bubbles(c, 0);
out:
    rank_scratch_free(&w);
    free(runs.v);
    free(own);
    free(cost);
    free(pt);
    return rc;
}

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
static int host_flags(struct an_ctx *c, uint32_t r, struct rank_scratch *w)
{
    const size_t S = c->S;
    const double *vh = c->vhost + (size_t)r * S;
    const struct pref *ref = w->ref + (size_t)c->cls[r] * S;
    double *ratio = w->ratio, *z = w->z, *exc = w->exc;
    struct argus_robust own;
    int maybe = 0;
    for (size_t si = 0; si < S; si++) {
        const struct pref *p = &ref[si];
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
        const struct pref *p = &ref[si];
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
    struct rank_scratch w = { 0 };
    struct an_rruns runs = { 0 };
    size_t first;
    int rc = rank_scratch_alloc(c, &w);

    if (rc)
        goto out;
    class_refs(c, c->vhost, w.ref, NULL);
    for (uint32_t r = 0; r < c->n; r++)
        if (host_flags(c, r, &w) &&
            (rc = rank_runs(c, r, w.flag, &w, ARGUS_AK_HOST_STALL, 0, &runs)))
            goto out;
    first = c->cand.n;
    rc = an_merge_runs(c, runs.v, runs.n, 2);
    for (size_t i = first; i < c->cand.n; i++)
        c->cand.v[i].a.phase = ARGUS_PH_HOST;
out:
    rank_scratch_free(&w);
    free(runs.v);
    return rc;
}
