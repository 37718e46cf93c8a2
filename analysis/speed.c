/* speed.c — peer classes by speed when nothing else says who is whose peer (docs/
 * ALGORITHMS.md, "Layout, peer classes and groups"): no layout, and one class left after
 * grouping ranks by the kernels they launch (or no kernels: phase marks or step times
 * only). A job that mixes GPU generations or node types, or pipeline stages of unequal
 * work logged without a layout, has ranks of clearly different speeds, and judging a slow
 * class against the fast one turns every member into a "straggler" and hides a real
 * event inside the class. The speed is compute time with kernels, the marked phases' work
 * (forward, backward, optimizer) with phases, else the step time. Ranks are sorted by their usual step time (the lower of their
 * lower quartile and the median of their first quarter, so that a rank's own event does
 * not move it to another class); a gap of at least
 * AN_SPEED_GAP between neighbours splits them, each side keeping at least a quarter of
 * the ranks (and two); at most AN_SPEED_MAX classes. O(n log n).
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define AN_SPEED_GAP 1.10 /* neighbours' usual times this far apart: two classes ... */
#define AN_SPEED_SHARE 4  /* ... each of at least 1/4 of the ranks (and 2): a few slow
                             ranks are persistent imbalances, not a class */
#define AN_SPEED_MAX 8
#define AN_SPEED_MIN_RANKS 8 /* fewer: classes of two or three judge nothing reliably */

struct rank_speed {
    double med;
    uint32_t r;
};

static int cmp_speed(const void *x, const void *y)
{
    const struct rank_speed *a = x, *b = y;
    if (a->med != b->med)
        return a->med < b->med ? -1 : 1;
    return (a->r > b->r) - (a->r < b->r);
}

int an_speed_classes(struct an_ctx *c)
{
    if (c->layout_known || c->n_cls != 1 || c->n < AN_SPEED_MIN_RANKS)
        return 0;
    /* compute time with kernels (a synchronous job's step walls are all alike), the work
     * of the marked phases with phases (forward, backward, optimizer), else the step time */
    const double *tab = c->level >= ARGUS_DL_KERNELS ? c->vcomp : c->vwall;
    double *work = NULL;
    if (c->level == ARGUS_DL_PHASES) {
        const size_t N = (size_t)c->n * c->S;
        if (!(work = malloc((N ? N : 1) * sizeof *work)))
            return -ENOMEM;
        for (size_t at = 0; at < N; at++)
            work[at] = c->cell[at] ? (double)(c->cell[at]->phase_wall_ns[ARGUS_PH_FORWARD] +
                                              c->cell[at]->phase_wall_ns[ARGUS_PH_BACKWARD] +
                                              c->cell[at]->phase_wall_ns[ARGUS_PH_OPTIMIZER])
                                   : NAN;
        tab = work;
    }
    const uint32_t min_side = c->n / AN_SPEED_SHARE > 2 ? c->n / AN_SPEED_SHARE : 2;
    struct rank_speed *v = malloc(c->n * sizeof *v);
    double *col = malloc((c->S ? c->S : 1) * sizeof *col), *all = malloc(c->n * sizeof *all);
    if (!v || !col || !all) {
        free(work);
        free(v);
        free(col);
        free(all);
        return -ENOMEM;
    }
    /* each step's median over the ranks: the batch moves every rank alike, and a rank's
     * speed is its time over that */
    for (size_t si = 0; si < c->S; si++) {
        size_t q = 0;
        for (uint32_t r = 0; r < c->n; r++)
            if (tab[(size_t)r * c->S + si] > 0)
                all[q++] = tab[(size_t)r * c->S + si];
        col[si] = q ? argus_stats_median(all, q) : NAN;
    }
    uint32_t m = 0;
    for (uint32_t r = 0; r < c->n; r++) {
        size_t q = 0;
        const double *w = tab + (size_t)r * c->S;
        for (size_t si = 0; si < c->S; si++)
            if (w[si] > 0 && col[si] > 0)
                c->tmp1[q++] = w[si] / col[si];
        if (!q)
            continue;
        /* a rank's usual speed, not lifted by an event of its own: the lower of its
         * lower quartile and the median of its first quarter */
        const size_t q4 = q / 4;
        const double early = q4 >= 8 ? argus_stats_median(c->tmp1, q4) : INFINITY;
        q = 0;
        for (size_t si = 0; si < c->S; si++)
            if (w[si] > 0 && col[si] > 0)
                c->tmp1[q++] = w[si] / col[si];
        argus_stats_sort(c->tmp1, q);
        const double low = argus_stats_quantile_sorted(c->tmp1, q, 0.25);
        v[m++] = (struct rank_speed){ early < low ? early : low, r };
    }
    qsort(v, m, sizeof *v, cmp_speed);
    uint32_t k = 0, since = 0;
    for (uint32_t i = 0; i < m; i++) {
        /* a cut before i: a wide gap, two ranks on each side, classes left */
        if (i > 0 && since >= min_side && m - i >= min_side && k + 1 < AN_SPEED_MAX &&
            v[i - 1].med > 0 && v[i].med / v[i - 1].med >= AN_SPEED_GAP) {
            k++;
            since = 0;
        }
        c->cls[v[i].r] = k;
        since++;
    }
    free(v);
    free(col);
    free(all);
    free(work);
    c->n_cls = k + 1;
    c->speed_classes = k > 0;
    return 0;
}
