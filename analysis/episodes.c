/* episodes.c — the rank-level machinery of the L2 detectors (l2.c, l2host.c): each
 * peer class's per-step reference of a rank × step table, their scratch, and one rank's
 * runs of flagged steps turned into per-rank runs (noisy runs joined, judged as a whole
 * against the rank's own level and grown to their edges). Reads the context; writes the
 * runs it is given and c->tmp1..3 as scratch; no I/O.
 */
#include "analysis/l2.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Lower-half reference of v (c->vcomp or c->vhost) over the members of each peer class
 * present at each step, and their median step wall; med (when not NULL) gets the median
 * of v over them (NAN when none). */
void an_class_refs(struct an_ctx *c, const double *v, struct an_pref *out, double *med)
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
                struct an_pref *p = &out[at];
                p->ref = r.ref;
                p->scale = r.scale;
                p->n = (uint32_t)m;
                p->wall = c->cwall[at];
            }
        }
    }
}

int an_rank_scratch_alloc(const struct an_ctx *c, struct an_rank_scratch *w)
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

void an_rank_scratch_free(struct an_rank_scratch *w)
{
    free(w->ref);
    free(w->ratio);
    free(w->z);
    free(w->exc);
    free(w->buf);
    free(w->flag);
    free(w->spans);
}

/* How far the log of ratio[] (per step, 0 = not judged) over [a,b] lies above its level
 * outside it (two steps off, before and after), in standard errors: the difference of
 * the medians over 1.2533 x sigma x sqrt(1/n_in + 1/n_out), sigma = 1.4826 x the median
 * absolute deviation of both sides, each about its own median (floored at 1 %). A run
 * of noisy steps (phase marks of a CPU job on shared cores) is judged as a whole, not
 * step by step. 0 when either side is too short. */
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

int an_rank_runs(struct an_ctx *c, uint32_t r, const uint8_t *flag,
                 const struct an_rank_scratch *w, int kind, double run_z,
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
