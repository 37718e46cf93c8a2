/* l2.c — rank-level compute detectors (L2): compute time against the peers of the same
 * PP stage (compute_straggler, kernel_degradation when one kernel holds the excess; >= 1%
 * of the step wall, judged per call when the rank ran other work than its peers), on
 * kernel compute, on each phase's walls or on step times, whichever the job's data
 * level allows; the stage-level pass (bubbles.c) runs on the same class references.
 * Every flag needs the ratio gate, the robust-z gate and persistence (opts.min_steps). It
 * only adds candidates to the context; explanations (victims, evidence) come later in
 * explain.c. The shared machinery is episodes.c (analysis/l2.h), host_stall l2host.c.
 */
#include "analysis/l2.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* compute_straggler or kernel_degradation for one run, by where its excess lies. */
static void classify(struct an_ctx *c, struct an_rrun *u, const struct an_pref *ref)
{
    double total = 0, pos = 0, exc[ARGUS_ANOMALY_MAX_KERNELS];
    uint64_t kern[ARGUS_ANOMALY_MAX_KERNELS];
    /* over the steps with kernel detail only, as an_kernel_excess (thin cells have none) */
    for (size_t si = u->a; si <= u->b; si++) {
        const double v = c->vcomp[(size_t)u->rank * c->S + si];
        const struct an_pref *p = &ref[(size_t)c->cls[u->rank] * c->S + si];
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

/* Rank r's values of table v (c->vcomp, a phase's walls, the step walls) against its
 * class's reference, per step, into w->ratio, z, exc and flag (the rank's row of
 * c->cflag, left as it is when nothing can be flagged). Episodes are judged against the
 * rank's own level (base >= 1, own.c): a rank slower than its peers all along is not
 * flagged for that. Returns 1 when some step could be flagged, else 0. */
static int compute_flags(struct an_ctx *c, uint32_t r, struct an_rank_scratch *w,
                         uint8_t *flag, const double *v, double base, int per_call,
                         double zgate)
{
    const size_t S = c->S;
    const double *vc = v + (size_t)r * S;
    const struct an_pref *ref = w->ref + (size_t)c->cls[r] * S;
    double *ratio = w->ratio, *z = w->z, *exc = w->exc;
    for (size_t si = 0; si < S; si++) {
        const struct an_pref *p = &ref[si];
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
        const struct an_pref *p = &ref[si];
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
static void own_levels(struct an_ctx *c, struct an_rank_scratch *w, const double *v,
                       struct an_own *own, double *cost)
{
    const size_t S = c->S;
    const int past = an_own_past(c);
    for (uint32_t r = 0; r < c->n; r++) {
        const double *vc = v + (size_t)r * S;
        const struct an_pref *ref = w->ref + (size_t)c->cls[r] * S;
        size_t m = 0;
        for (size_t si = 0; si < S; si++) {
            const struct an_pref *p = &ref[si];
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
static int judge_table(struct an_ctx *c, struct an_rank_scratch *w, const double *v,
                       int phase, int level, struct an_own *own, double *cost, double *med,
                       struct an_rruns *runs)
{
    const size_t S = c->S;
    int rc;
    an_class_refs(c, v, w->ref, med);
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
            (rc = an_rank_runs(c, r, flag, w, ARGUS_AK_COMPUTE_STRAGGLER, run_z, runs)))
            return rc;
    }
    return 0;
}

int an_detect_compute(struct an_ctx *c)
{
    const size_t S = c->S, N = (size_t)c->n * S;
    struct an_rank_scratch w = { 0 };
    struct an_rruns runs = { 0 };
    struct an_own *own = malloc((c->n ? c->n : 1) * sizeof *own);
    double *cost = malloc((c->n ? c->n : 1) * sizeof *cost), *pt = NULL;
    size_t first;
    int rc = an_rank_scratch_alloc(c, &w);

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
        an_class_refs(c, pt, w.ref, c->ccomp);
        first = c->cand.n;
        if ((rc = an_detect_stages(c)))
            goto out;
        for (size_t j = first; j < c->cand.n; j++)
            c->cand.v[j].a.data_level = ARGUS_DL_PHASES;
        an_reconcile_bubbles(c, first_all);
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
    if ((rc = an_detect_stages(c)))
        goto out;
    for (size_t i = 0; i < runs.n; i++)
        classify(c, &runs.v[i], w.ref);
    first = c->cand.n;
    if ((rc = an_merge_runs(c, runs.v, runs.n, 2)))
        goto out;
    for (size_t i = first; i < c->cand.n; i++)
        if (c->cand.v[i].a.kind == ARGUS_AK_KERNEL_DEGRADATION)
            c->cand.v[i].a.level = 3;
    an_reconcile_bubbles(c, 0);
out:
    an_rank_scratch_free(&w);
    free(runs.v);
    free(own);
    free(cost);
    free(pt);
    return rc;
}
