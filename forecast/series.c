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

#define FC_EV_WIN 32  /* the steps either side of an occurrence its z is judged against */
#define FC_EV_SPAN 3  /* an occurrence's steps reach at most this far from its hit */
#define FC_EV_Z 1.5   /* the median robust z of the steps at an offset that are the event's */
#define FC_EV_OCC 256 /* the occurrences (the last ones) an offset is judged on */

/* The robust z of the log step time at index j over the steps that are not events within
 * FC_EV_WIN of index i (their median, 1.4826 MAD); 0 when fewer than 5 (tmp: 2 FC_EV_WIN
 * + 1 values). */
static double fc_ev_z(const struct fc *f, size_t i, size_t j, double *tmp)
{
    const size_t a = i > FC_EV_WIN ? i - FC_EV_WIN : 0,
                 b = i + FC_EV_WIN < f->n ? i + FC_EV_WIN + 1 : f->n;
    size_t m = 0;
    for (size_t k = a; k < b; k++)
        if (!f->ev[k] && k != j && f->t[k] > 0)
            tmp[m++] = log(f->t[k]);
    if (m < 5 || !(f->t[j] > 0))
        return 0;
    const double med = fc_quantile_sel(tmp, m, 0.5);
    for (size_t k = 0; k < m; k++)
        tmp[k] = fabs(tmp[k] - med);
    const double sd = 1.4826 * fc_quantile_sel(tmp, m, 0.5);
    return sd > 0 ? (log(f->t[j]) - med) / sd : 0;
}

/* The occurrences' other steps: the steps at offset d from each hit (f->ev 1), d = 1, 2 ..
 * and -1, -2 .. out to FC_EV_SPAN (and under half the period), as long as the median over
 * the occurrences (the last FC_EV_OCC) of their robust z (fc_ev_z) is FC_EV_Z or more, the
 * least z of a spike's step in the analysis (a checkpoint written in step K and waited for
 * by the other ranks in K + 1 is two steps); marked 2. An offset is judged on 3
 * occurrences or more. tmp: as fc_ev_z; zs: FC_EV_OCC values. */
static void fc_footprint(struct fc *f, uint32_t period, double *tmp, double *zs)
{
    const long span = (long)((period - 1) / 2 < FC_EV_SPAN ? (period - 1) / 2 : FC_EV_SPAN);
    for (long dir = -1; dir <= 1; dir += 2)
        for (long d = dir; d * dir <= span; d += dir) {
            size_t k = 0;
            for (size_t i = f->n; i-- > 0 && k < FC_EV_OCC;) {
                const long j = (long)i + d;
                if (f->ev[i] == 1 && j >= 0 && (size_t)j < f->n && f->ev[j] != 1)
                    zs[k++] = fc_ev_z(f, i, (size_t)j, tmp);
            }
            if (k < 3 || fc_quantile_sel(zs, k, 0.5) < FC_EV_Z)
                break;
            for (size_t i = 0; i < f->n; i++) {
                const long j = (long)i + d;
                if (f->ev[i] == 1 && j >= 0 && (size_t)j < f->n && !f->ev[j])
                    f->ev[j] = 2;
            }
        }
}

double fc_event_cost(const struct fc *f, size_t i, double med)
{
    /* a run of steps marked 2 between two hits is split between them, the nearer hit
     * taking each (a tie: the earlier) */
    size_t e = i + 1, b = i;
    while (e < f->n && f->ev[e] == 2)
        e++;
    while (b > 0 && f->ev[b - 1] == 2)
        b--;
    const int next = e < f->n && f->ev[e] == 1, prev = b > 0 && f->ev[b - 1] == 1;
    double c = f->t[i] > med ? f->t[i] - med : 0;
    for (size_t j = b; j < e; j++)
        if (j != i && (j > i ? !next || j - i <= e - j : !prev || i - j < j - (b - 1)))
            c += f->t[j] > med ? f->t[j] - med : 0;
    return c;
}

void fc_periodic(struct fc *f, const struct argus_result *res, struct argus_forecast *o)
{
    double tmp[2 * FC_EV_WIN + 1 + FC_EV_OCC];
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
        fc_footprint(f, an->period_steps, tmp, tmp + 2 * FC_EV_WIN + 1);
    }
}

/* ---- a short period: steps that repeat every k steps --------------------------------- */

/* The median of |v[i] - v[i - 1]|, i = 1..n-1 (tmp: n - 1 values of scratch). */
static double fc_med_absdiff(const double *v, size_t n, double *tmp)
{
    for (size_t i = 1; i < n; i++)
        tmp[i - 1] = fabs(v[i] - v[i - 1]);
    return n > 1 ? fc_quantile_sel(tmp, n - 1, 0.5) : 0;
}

uint32_t fc_period(const double *v, size_t n, double *tmp)
{
    double *L = tmp, *w = tmp + n;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] > 0))
            return 1;
        L[i] = log(v[i]);
    }
    const double s1 = fc_med_absdiff(L, n, w);
    if (!(s1 > 0))
        return 1;
    for (uint32_t k = 2; k <= FC_MAX_PERIOD; k++) {
        const size_t nb = n / k, off = n % k; /* blocks end at the last step */
        if (nb < FC_PERIOD_MIN_BLOCKS)
            break;
        double *M = w + n; /* nb block means after n scratch values */
        for (size_t j = 0; j < nb; j++) {
            M[j] = 0;
            for (uint32_t p = 0; p < k; p++)
                M[j] += L[off + j * k + p] / k;
        }
        if (sqrt((double)k) * fc_med_absdiff(M, nb, w) / s1 >= FC_PERIOD_RATIO)
            continue; /* k-step means scatter as single steps would: no pattern of k */
        /* the phase profile (each phase's median offset from its block's mean) must stand
         * out of the scatter about it: a pattern, not steps that only telescope */
        double prof[FC_MAX_PERIOD], lo = INFINITY, hi = -INFINITY;
        for (uint32_t p = 0; p < k; p++) {
            for (size_t j = 0; j < nb; j++)
                w[j] = L[off + j * k + p] - M[j];
            prof[p] = fc_quantile_sel(w, nb, 0.5);
            lo = prof[p] < lo ? prof[p] : lo;
            hi = prof[p] > hi ? prof[p] : hi;
        }
        for (size_t j = 0; j < nb; j++)
            for (uint32_t p = 0; p < k; p++)
                w[j * k + p] = fabs(L[off + j * k + p] - M[j] - prof[p]);
        const double sw = 1.4826 * fc_quantile_sel(w, nb * k, 0.5);
        if (hi - lo >= FC_PERIOD_AMP * sw)
            return k;
    }
    return 1;
}

size_t fc_period_sums(const double *v, size_t n, uint32_t k, double *out)
{
    const size_t nb = n / k, off = n % k;
    for (size_t j = 0; j < nb; j++) {
        out[j] = 0;
        for (uint32_t p = 0; p < k; p++)
            out[j] += v[off + j * k + p];
    }
    return nb;
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

/* A new regime in the last periods, too short for the segmentation's segments (at least
 * max(10, n / 10) points, so that a change near the end is found, if at all, at that
 * distance from it): the last r points (r from FC_TAIL_MIN to FC_TAIL_MAX, under that
 * segment length), every one of them past the 5th-95th percentile range of the
 * max(10, 2 r) points just before them, their mean FC_TAIL_T long-run deviations and 5 %
 * or more away from those's (winsorised at that range); of those, the r of the largest
 * t. Only on period means (f->period > 1), whose scatter is small enough for so few
 * points to tell.
 * The point where it starts, or 0. O(FC_TAIL_MAX^2). */
static size_t fc_tail_change(struct fc_seg *s, size_t n, double *d_out)
{
    const size_t m = n / 10 > 10 ? n / 10 : 10;
    size_t best = 0;
    double best_t = 0;
    for (size_t r = FC_TAIL_MIN; r < m && r <= FC_TAIL_MAX; r++) {
        const size_t w = 2 * r > 10 ? 2 * r : 10;
        if (n < r + w)
            break;
        const double *lw = s->y + n - r - w;
        memcpy(s->tmp, lw, w * sizeof *s->tmp);
        const double q1 = fc_quantile_sel(s->tmp, w, 0.05),
                     q2 = fc_quantile_sel(s->tmp, w, 0.95);
        double left = 0, right = 0;
        for (size_t i = 0; i < w; i++)
            left += (lw[i] < q1 ? q1 : lw[i] > q2 ? q2 : lw[i]) / (double)w;
        for (size_t i = n - r; i < n; i++)
            right += s->y[i] / (double)r;
        const double d = right - left;
        int past = 1; /* every one of the last r points beyond the range, on one side */
        for (size_t i = n - r; i < n && past; i++)
            past = d > 0 ? s->y[i] > q2 : s->y[i] < q1;
        const double t = fabs(d) / (s->sigma * sqrt(1 / (double)r + 1 / (double)w));
        if (past && t >= FC_TAIL_T && fabs(d) >= log(1.05) && t > best_t) {
            best = n - r;
            best_t = t;
            *d_out = d;
        }
    }
    return best;
}

int fc_changes(struct fc *f)
{
    size_t n = 0;
    double *y = malloc((f->n + 1) * sizeof *y), *tmp = malloc(3 * (f->n + 1) * sizeof *tmp);
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
    /* steps that repeat every k steps (no event among them: one taken out would shift the
     * phase): the segmentation runs on the means of whole periods, ending at the last step,
     * so that the pattern is not noise */
    f->period = n == f->n ? fc_period(f->t, f->n, tmp) : 1;
    if (f->period > 1) {
        const size_t off = f->n % f->period;
        n = fc_period_sums(f->t + off, f->n - off, f->period, y);
        for (size_t j = 0; j < n; j++) {
            y[j] = log(y[j] / f->period);
            idx[j] = off + j * f->period;
        }
    }
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
    double tail_d = 0; /* with a period: a new regime in the last periods, then the rest */
    const size_t tail = f->period > 1 ? fc_tail_change(&s, n, &tail_d) : 0;
    fc_segment(&s, 0, tail ? tail : n, 0);
    if (tail && f->nchg < FC_MAX_CHANGES) {
        f->chg[f->nchg] = idx[tail];
        f->chg_lr[f->nchg++] = tail_d;
    }
out:
    free(y);
    free(tmp);
    free(idx);
    return rc;
}