/* series.c — the forecast's series (forecast/internal.h: fc_build, fc_periodic,
 * fc_changes, fc_free; docs/ALGORITHMS.md, "Forecast (PRISM)"): the job step-time series
 * from the store (evicted steps' walls, then the held steps' slowest rank from the store's
 * per-step figures, or walked rank by rank for the what-ifs' tables), the analysis'
 * periodic events, and own change points. Pure computation; temporaries freed before return.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

void fc_free(struct fc *f)
{
    free(f->step);
    free(f->t);
    free(f->ev); /* work and comm are the store's scratch */
    free(f->mxw);
    free(f->sumw);
    free(f->argw);
    free(f->cntw);
}

/* ---- the series ---------------------------------------------------------------------- */

int fc_build(struct fc *f, int tables, size_t max_series)
{
    const struct argus_jobstore_gone *gone;
    const struct argus_jobstore_stepfig *fig;
    const uint64_t *ids;
    size_t ng = argus_jobstore_evicted(f->js, &gone);
    size_t nh = argus_jobstore_steps(f->js, &ids);
    const uint32_t P = f->P;

    size_t ncoarse = ng; /* the store's merged entries (n > 1) are before its single steps */
    while (ncoarse > 0 && gone[ncoarse - 1].n == 1)
        ncoarse--;
    if (ng + nh > max_series || ncoarse) { /* bounded time: the oldest only counted, summed */
        size_t drop = ng + nh > max_series ? ng + nh - max_series : 0;
        drop = drop < ncoarse ? ncoarse : drop < ng ? drop : ng;
        uint64_t kept = 0, cnt = 0; /* the running sum less the walls kept: O(entries) */
        for (size_t i = drop; i < ng; i++)
            kept += gone[i].wall_ns;
        for (size_t i = 0; i < drop; i++)
            cnt += gone[i].n;
        f->ms_before = (double)(argus_jobstore_evicted_wall_sum(f->js) - kept) / 1e6;
        f->n_before = cnt;
        gone += drop;
        ng -= drop;
    }
    f->n = ng + nh;
    f->nh = nh;
    f->h0 = ng;
    f->step = malloc((f->n ? f->n : 1) * sizeof *f->step);
    f->t = malloc((f->n ? f->n : 1) * sizeof *f->t);
    f->ev = calloc(f->n ? f->n : 1, 1);
    if (nh && (size_t)P > SIZE_MAX / sizeof(double) / nh)
        return -ENOMEM;
    /* the store's work memory (store/jobstore.h: pages rank 0 already has, reused after
     * every window's analysis, which is done with it by now) */
    if (tables) {
        f->work = argus_jobstore_scratch(f->js, 2 * (nh ? nh : 1) * P * sizeof *f->work);
        f->comm = f->work ? f->work + (nh ? nh : 1) * P : NULL;
        if (!f->work)
            return -ENOMEM;
    }
    f->mxw = calloc(nh + 1, sizeof *f->mxw);
    f->sumw = calloc(nh + 1, sizeof *f->sumw);
    f->argw = malloc((nh + 1) * sizeof *f->argw);
    f->cntw = calloc(nh + 1, sizeof *f->cntw);
    if (!f->step || !f->t || !f->ev || !f->mxw || !f->sumw || !f->argw || !f->cntw)
        return -ENOMEM;
    for (size_t i = 0; i < nh; i++)
        f->argw[i] = -1;
    for (size_t i = 0; i < ng; i++) {
        f->step[i] = gone[i].step;
        f->t[i] = (double)gone[i].wall_ns / 1e6;
    }
    for (size_t i = 0; tables && i < nh * P; i++)
        f->work[i] = f->comm[i] = NAN;
    for (size_t i = 0; i < nh; i++) {
        f->step[ng + i] = ids[i];
        f->t[ng + i] = 0;
    }
    if (!tables) { /* the store's per-step figures: O(held steps), no cell read */
        argus_jobstore_step_figs(f->js, &fig);
        for (size_t i = 0; i < nh; i++) {
            f->t[ng + i] = fig[i].wall_max_ns / 1e6;
            f->mxw[i] = fig[i].work_max_ns / 1e6;
            f->sumw[i] = fig[i].work_sum_ns / 1e6;
            f->argw[i] = (int32_t)fig[i].work_arg;
            f->cntw[i] = fig[i].n;
        }
        return 0;
    }
    /* what-ifs: every held cell walked, rank by rank (the same figures, and the tables) */
    for (uint32_t r = 0; nh && r < P; r++) {
        const uint64_t *rid;
        const struct argus_jobstore_row *rows;
        const struct argus_step_summary *const *sv = NULL;
        const size_t m = argus_jobstore_rank_step_ids(f->js, r, &rid);
        argus_jobstore_rank_rows(f->js, r, &rows);
        argus_jobstore_rank_steps(f->js, r, &sv); /* a summary per cell: what-ifs only */
        size_t k = m, i = 0;
        while (k > 0 && rid[k - 1] >= ids[0]) /* the walked steps are the newest ones */
            k--;
        for (; k < m; k++) {
            while (i < nh && ids[i] < rid[k])
                i++;
            if (i == nh)
                break;
            if (ids[i] != rid[k])
                continue;
            const double w = rows[k].wall_ns / 1e6, c = rows[k].comm_ns / 1e6;
            const double wk = c > 0 && c < w ? w - c : w;
            if (f->argw[i] < 0 || wk > f->mxw[i]) {
                f->mxw[i] = wk;
                f->argw[i] = (int32_t)r;
            }
            f->sumw[i] += wk;
            f->cntw[i]++;
            const double coll = (double)sv[k]->collective_ns / 1e6;
            f->work[i * P + r] = wk;
            f->comm[i * P + r] = coll > 0 && coll < w ? coll : 0;
            if (w > f->t[ng + i])
                f->t[ng + i] = w;
        }
    }
    return 0;
}

/* ---- periodic events (the analysis' periodic iteration_jitter findings) ---------------- */

void fc_periodic(struct fc *f, const struct argus_result *res, struct argus_forecast *o)
{
    for (size_t a = 0; res && a < res->n_anomalies; a++) {
        const struct argus_anomaly *an = &res->anomalies[a];
        if (an->kind != ARGUS_AK_ITERATION_JITTER || an->period_steps < 2 || an->n_hits == 0 ||
            o->n_periodic >= ARGUS_FC_MAX_PERIODIC)
            continue;
        struct argus_fc_periodic *p = &o->periodic[o->n_periodic++];
        const uint64_t anchor = an->hits[0];
        p->period_steps = an->period_steps;
        for (size_t i = 0; i < f->n; i++) {
            if (f->step[i] < anchor || (f->step[i] - anchor) % an->period_steps)
                continue;
            f->ev[i] = 1;
            p->seen++;
            p->last_step = f->step[i];
        }
    }
}

/* ---- change points: binary segmentation of the log step times (events left out) ------ */

struct fc_seg {
    const double *y;      /* log step times, events left out */
    const size_t *idx;    /* their series indices */
    double sigma;         /* robust noise of y (from first differences) */
    double *tmp;
    struct fc *f;
};

static void fc_segment(struct fc_seg *s, size_t lo, size_t hi, int depth)
{
    const size_t len = hi - lo, m = len / 10 > 10 ? len / 10 : 10;
    if (depth > 6 || len < 2 * m || s->f->nchg >= FC_MAX_CHANGES)
        return;
    memcpy(s->tmp, s->y + lo, len * sizeof *s->tmp);
    const double q1 = fc_quantile_sel(s->tmp, len, 0.05),
                 q2 = fc_quantile_sel(s->tmp, len, 0.95);
    double tot = 0, best_t = 0;
    size_t best = 0;
    for (size_t i = lo; i < hi; i++) {
        double v = s->y[i] < q1 ? q1 : s->y[i] > q2 ? q2 : s->y[i];
        s->tmp[i - lo] = v;
        tot += v;
    }
    double left = 0, best_d = 0;
    for (size_t k = 1; k < len; k++) {
        left += s->tmp[k - 1];
        if (k < m || len - k < m)
            continue;
        const double nl = (double)k, nr = (double)(len - k);
        const double d = (tot - left) / nr - left / nl;
        const double t = fabs(d) / (s->sigma * sqrt(1 / nl + 1 / nr));
        if (t > best_t) {
            best_t = t;
            best = lo + k;
            best_d = d;
        }
    }
    if (best_t < 5 || fabs(best_d) < log(1.015))
        return;
    fc_segment(s, lo, best, depth + 1);
    if (s->f->nchg < FC_MAX_CHANGES) {
        s->f->chg[s->f->nchg] = s->idx[best];
        s->f->chg_lr[s->f->nchg++] = best_d;
    }
    fc_segment(s, best, hi, depth + 1);
}

int fc_changes(struct fc *f)
{
    size_t n = 0;
    double *y = malloc((f->n + 1) * sizeof *y), *tmp = malloc((f->n + 1) * sizeof *tmp);
    size_t *idx = malloc((f->n + 1) * sizeof *idx);
    int rc = -ENOMEM;

    if (!y || !tmp || !idx)
        goto out;
    for (size_t i = 0; i < f->n; i++)
        if (!f->ev[i] && f->t[i] > 0) {
            y[n] = log(f->t[i]);
            idx[n++] = i;
        }
    rc = 0;
    if (n < 20)
        goto out;
    for (size_t i = 1; i < n; i++)
        tmp[i - 1] = fabs(y[i] - y[i - 1]);
    double sigma = 1.4826 * fc_quantile_sel(tmp, n - 1, 0.5) / sqrt(2.0);
    if (sigma < 1e-4)
        sigma = 1e-4;
    /* autocorrelation: the long-run sigma from differences of adjacent batch means
     * (batches of B steps; a level shift moves one difference only), never below the
     * step-to-step one */
    const size_t B = n / 20 > 5 ? n / 20 : 5, nbm = n / B;
    if (nbm >= 4) {
        double mprev = 0;
        for (size_t k = 0; k < nbm; k++) {
            double m = 0;
            for (size_t i = k * B; i < (k + 1) * B; i++)
                m += y[i] / (double)B;
            if (k)
                tmp[k - 1] = fabs(m - mprev);
            mprev = m;
        }
        const double lr = sqrt((double)B) * 1.4826 * fc_quantile_sel(tmp, nbm - 1, 0.5) /
                          sqrt(2.0);
        if (lr > sigma)
            sigma = lr;
    }
    struct fc_seg s = {.y = y, .idx = idx, .sigma = sigma, .tmp = tmp, .f = f};
    fc_segment(&s, 0, n, 0);
out:
    free(y);
    free(tmp);
    free(idx);
    return rc;
}