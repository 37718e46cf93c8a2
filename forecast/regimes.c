/* regimes.c — the observed regimes' steps (forecast/internal.h, fc_regime_step;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", recurring regimes): the log ratio of the
 * levels of the two regimes either side of an own change point, each level the mean of
 * its steps (periodic events out) between their 10th and 90th percentiles, so that a
 * change's size is that of the stair it is, not the split of a larger segment the
 * segmentation found it in. No allocation, no I/O, no globals.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>

#include "forecast/internal.h"

/* The level of the steps [a, b) of f's series, events out (NAN when none). tmp: b - a
 * values of scratch. O(b - a). */
static double fc_seg_level(const struct fc *f, size_t a, size_t b, double *tmp)
{
    size_t m = 0;
    for (size_t i = a; i < b; i++)
        if (!f->ev[i] && f->t[i] > 0)
            tmp[m++] = f->t[i];
    if (m == 0)
        return NAN;
    const double lo = fc_quantile_sel(tmp, m, 0.10), hi = fc_quantile_sel(tmp, m, 0.90);
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (tmp[i] >= lo && tmp[i] <= hi) {
            s += tmp[i];
            k++;
        }
    return k ? s / (double)k : NAN;
}

double fc_regime_step(const struct fc *f, size_t k, double *tmp)
{
    const size_t a = k > 0 ? f->chg[k - 1] : 0, c = f->chg[k];
    const size_t b = k + 1 < f->nchg ? f->chg[k + 1] : f->n;
    const double l0 = fc_seg_level(f, a, c, tmp), l1 = fc_seg_level(f, c, b, tmp);
    return l0 > 0 && l1 > 0 ? log(l1 / l0) : f->chg_lr[k];
}
