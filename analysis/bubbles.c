/* bubbles.c — pipeline_bubble (L2): the relative load of whole stages over time against
 * each stage's own baseline (with the two-stage echo dropped), and the reconciliation of
 * stragglers with bubbles (stragglers covering a stage become its bubble, a bubble gives
 * way to the stragglers that explain it, one bubble per stage and window). Reads
 * c->ccomp (the stages' median compute); only adds, changes or drops candidates.
 */
#include "analysis/l2.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scratch of an_detect_stages: S steps each; buf holds S + P values, buf2 twice that. */
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
    const double *sp = c->ccomp; /* the stages' median compute (an_class_refs) */
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
int an_detect_stages(struct an_ctx *c)
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
void an_reconcile_bubbles(struct an_ctx *c, size_t first)
{
    stragglers_to_bubbles(c, first);
    bubble_or_stragglers(c, first);
    merge_bubbles(c, first);
}
