/* regimes.c — the observed regimes' steps (forecast/internal.h, fc_regime_step;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", recurring regimes): the log ratio of the
 * levels of the two regimes either side of an own change point, each level the mean of
 * its steps (periodic events out) between their 10th and 90th percentiles, so that a
 * change's size is that of the stair it is, not the split of a larger segment the
 * segmentation found it in; and the slowdown episodes among them (a rise and a return).
 * No allocation, no I/O, no globals.
 */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

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

void fc_episodes_find(const struct fc *f, const double *stair, unsigned char *in_ep,
                      struct fc_episodes *ep)
{
    memset(ep, 0, sizeof *ep);
    for (size_t k = 0; k + 1 < f->nchg && ep->n < FC_MAX_EPISODES; k++) {
        const double up = stair[k], down = stair[k + 1];
        /* up by a stair, then down to within half of it: the level came back */
        if (in_ep[k] || !(up >= FC_EPISODE_MIN_LR) || !(down < 0) ||
            !(fabs(up + down) <= 0.5 * up))
            continue;
        /* and the current regime is at the level it came back to, not up again (a job
         * that switches between two levels, now on the high one: no episode on top) */
        double rest = up + down;
        for (size_t j = k + 2; j < f->nchg; j++)
            rest += isnan(stair[j]) ? 0 : stair[j];
        if (!(fabs(rest) <= 0.5 * up))
            continue;
        ep->len[ep->n] = (double)(f->chg[k + 1] - f->chg[k]);
        ep->lr[ep->n] = 0.5 * (up - down);
        ep->n++;
        in_ep[k] = in_ep[k + 1] = 1;
    }
    for (size_t k = 0; k < ep->n; k++) {
        ep->len_mean += ep->len[k] / (double)ep->n;
        ep->lr_max = ep->lr[k] > ep->lr_max ? ep->lr[k] : ep->lr_max;
    }
    /* as often as they were seen over the series */
    ep->rate = ep->n && f->n ? (double)ep->n / (double)f->n : 0;
}
