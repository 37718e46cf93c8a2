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

/* The log of ratio[] (per step, 0 = not judged) over [a,b] into c->tmp1[0..*ni) and its
 * level outside the run into c->tmp2[0..*no): before it and, once it ended, after it,
 * two steps off either way (runs of one episode were joined first, so what follows is
 * the rank's level again). 0 when either side is too short to judge, else 1. */
static int run_sides(struct an_ctx *c, const double *ratio, size_t a, size_t b, size_t *ni,
                     size_t *no)
{
    *ni = *no = 0;
    for (size_t si = a; si <= b; si++)
        if (ratio[si] > 0)
            c->tmp1[(*ni)++] = log(ratio[si]);
    for (size_t si = 0; si < c->S; si++)
        if ((si + 2 < a || si > b + 2) && ratio[si] > 0)
            c->tmp2[(*no)++] = log(ratio[si]);
    return *ni >= c->o.min_steps && *no >= AN_REGRESSION_MIN_SEG;
}

/* How far the log of ratio[] (per step, 0 = not judged) over [a,b] lies above its level
 * outside it (two steps off, before and after), in standard errors: the difference of
 * the medians over 1.2533 x sigma x sqrt(1/n_in + 1/n_out), sigma = 1.4826 x the median
 * absolute deviation of both sides, each about its own median (floored at 1 %). A run
 * of noisy steps (phase marks of a CPU job on shared cores) is judged as a whole, not
 * step by step. 0 when either side is too short. */
static double run_shift_t(struct an_ctx *c, const double *ratio, size_t a, size_t b)
{
    size_t ni, no;
    if (!run_sides(c, ratio, a, b, &ni, &no))
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

/* The Wilcoxon rank-sum (Mann-Whitney) z of the log of ratio[] over [a,b] against the
 * steps outside it (as run_shift_t: two steps off on either side), without tie
 * correction: how often a step inside is above one outside, in standard deviations of
 * that count under no shift. Unlike the difference of medians it uses every step, so a
 * noise that jumps between two levels (4 CPU ranks on 2 shared cores) moves it little.
 * 0 when either side is too short. Sorts c->tmp1 and c->tmp2. */
static double run_rank_z(struct an_ctx *c, const double *ratio, size_t a, size_t b)
{
    size_t ni, no;
    if (!run_sides(c, ratio, a, b, &ni, &no))
        return 0;
    argus_stats_sort(c->tmp1, ni);
    argus_stats_sort(c->tmp2, no);
    double u = 0; /* pairs (inside, outside) with the inside step above, ties a half */
    for (size_t i = 0, lo = 0, hi = 0; i < ni; i++) {
        while (lo < no && c->tmp2[lo] < c->tmp1[i])
            lo++;
        if (hi < lo)
            hi = lo;
        while (hi < no && c->tmp2[hi] <= c->tmp1[i])
            hi++;
        u += (double)lo + 0.5 * (double)(hi - lo);
    }
    const double n1 = (double)ni, n2 = (double)no;
    return (u - 0.5 * n1 * n2) / sqrt(n1 * n2 * (n1 + n2 + 1.0) / 12.0);
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

/* Whether spans[i..j] (sub-runs of one noisy cluster) hold enough flagged steps to be an
 * episode: a sub-run of opts.min_steps, or twice that over sparser sub-runs. */
static int spans_enough(const struct an_ctx *c, const struct an_span *sp, size_t i, size_t j)
{
    uint32_t n = 0, most = 0;
    for (size_t k = i; k <= j; k++) {
        n += sp[k].nflag;
        most = sp[k].nflag > most ? sp[k].nflag : most;
    }
    return most >= c->o.min_steps || n >= 2 * c->o.min_steps;
}

/* Push the run of rank r over the steps [a, b] with its medians. */
static int push_run(struct an_ctx *c, uint32_t r, const uint8_t *flag,
                    const struct an_rank_scratch *w, int kind, size_t a, size_t b,
                    struct an_rruns *runs)
{
    struct an_rrun st;
    an_run_stats(w->ratio, w->z, w->exc, flag, a, b, w->buf, &st, c->o.min_steps);
    struct an_rrun *u = an_rruns_push(runs, r, a, b);
    if (!u)
        return -ENOMEM;
    u->kind = kind;
    u->ratio = st.ratio;
    u->z = st.z;
    u->excess = st.excess;
    u->det = st.det;
    return 0;
}

/* The episodes of one cluster of noisy flagged sub-runs, spans[i0..j0] (each a few steps
 * from the next). Where the noise is large a slow rank's steps pass the step gate only
 * here and there, and the noise flags a few of its steps outside the episode too: the
 * episode is the sub-range whose shift of the rank's own level (run_shift_t) is largest,
 * found by peeling the outer sub-run with the smaller loss, one at a time (the t of each
 * range tried; the best kept, it need not be the first or the last). Accepted when it
 * holds opts.min_steps flags and a shift of run_z; then it grows to its edges, and what
 * lies on either side of it is judged the same way (depth at most AN_LEVEL_SPLITS). */
static int noisy_cluster(struct an_ctx *c, uint32_t r, const uint8_t *flag,
                         const struct an_rank_scratch *w, int kind, double run_z, size_t i0,
                         size_t j0, int depth, struct an_rruns *runs)
{
    struct an_span *sp = w->spans;
    if (depth > AN_LEVEL_SPLITS || !spans_enough(c, sp, i0, j0))
        return 0;
    size_t i = i0, j = j0, bi = i0, bj = j0;
    double best = run_shift_t(c, w->ratio, sp[i].a, sp[j].b);
    /* a cluster of very many sub-runs is judged whole: the peel costs S per range */
    for (size_t peels = 0; j > i && peels < AN_LEVEL_PEELS; peels++) {
        const double tl = run_shift_t(c, w->ratio, sp[i + 1].a, sp[j].b);
        const double tr = run_shift_t(c, w->ratio, sp[i].a, sp[j - 1].b);
        double t;
        if (tl >= tr)
            t = tl, i++;
        else
            t = tr, j--;
        if (!spans_enough(c, sp, i, j))
            continue;
        if (t > best)
            best = t, bi = i, bj = j;
    }
    /* the median shift chooses the range; its steps as a whole must rank above the rest
     * too (a few noise steps far out make a median jump, not a rank sum) */
    if (!(best >= AN_LEVEL_RANK_SHARE * run_z) ||
        !(run_rank_z(c, w->ratio, sp[bi].a, sp[bj].b) >= AN_LEVEL_RANK_Z))
        return 0;
    struct an_rrun st;
    an_run_stats(w->ratio, w->z, w->exc, flag, sp[bi].a, sp[bj].b, w->buf, &st,
                 c->o.min_steps);
    struct an_span e = { sp[bi].a, sp[bj].b, 0 };
    run_edges(c, w->ratio, st.ratio, &e); /* the episode's edges by its own level */
    int rc = push_run(c, r, flag, w, kind, e.a, e.b, runs);
    /* the sub-runs the grown episode left on either side */
    size_t li = bi, rj = bj;
    while (li > i0 && sp[li - 1].b >= e.a)
        li--;
    while (rj < j0 && sp[rj + 1].a <= e.b)
        rj++;
    if (!rc && li > i0)
        rc = noisy_cluster(c, r, flag, w, kind, run_z, i0, li - 1, depth + 1, runs);
    if (!rc && rj < j0)
        rc = noisy_cluster(c, r, flag, w, kind, run_z, rj + 1, j0, depth + 1, runs);
    return rc;
}

int an_rank_runs(struct an_ctx *c, uint32_t r, const uint8_t *flag,
                 const struct an_rank_scratch *w, int kind, double run_z,
                 struct an_rruns *runs)
{
    if (!(run_z > 0)) { /* kernel level: each run of flagged steps as it is */
        const size_t ns = an_runs(flag, c->S, c->o.min_steps, w->spans, c->S);
        for (size_t j = 0; j < ns; j++) {
            int rc = push_run(c, r, flag, w, kind, w->spans[j].a, w->spans[j].b, runs);
            if (rc)
                return rc;
        }
        return 0;
    }
    /* noisy steps split one episode: every flagged sub-run, clusters of them a few steps
     * apart (or closer than the shorter of two), each judged as a whole */
    const size_t ns = an_runs(flag, c->S, 1, w->spans, c->S);
    for (size_t k = 0, j; k < ns; k = j + 1) {
        for (j = k; j + 1 < ns; j++) {
            const size_t lk = w->spans[j].b - w->spans[k].a + 1;
            const size_t lj = w->spans[j + 1].b - w->spans[j + 1].a + 1;
            const size_t gap = lk < lj ? lk : lj;
            if (w->spans[j + 1].a > w->spans[j].b + (gap > AN_LEVEL_GAP ? gap : AN_LEVEL_GAP) + 1)
                break;
        }
        int rc = noisy_cluster(c, r, flag, w, kind, run_z, k, j, 0, runs);
        if (rc)
            return rc;
    }
    return 0;
}
