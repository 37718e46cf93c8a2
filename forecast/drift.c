/* drift.c — the current regime's drift (forecast/internal.h, fc_drift_fit, fc_drift_log;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "Drift"): a damped trend of the log step time
 * against the step index, fitted on batch medians (batches as long as the bootstrap's
 * blocks or sqrt(n), so that a spike moves nothing and the batches are nearly
 * independent), kept only when it is significant against the batches' own scatter
 * about it (t >= FC_DRIFT_T, the standard error inflated by the residuals' lag-1
 * autocorrelation), explains most of their variation (R^2 >= FC_DRIFT_R2) and fits them
 * better than two levels split where they fit best: a series that changes or switches
 * level leaves blocks of same-signed residuals about a trend, and is no trend — unless it
 * is a staircase: two levels whose common slope (the level moving within them too) has
 * the step's sign and is significant, the stairs of one drift, its end level the last
 * stair's. The damping is the data's own: the
 * slopes of the regime's halves give the rate at which the slope decays (its half-life,
 * at most the fitted span); the slope at the regime's end is extrapolated with it. The
 * model's own extrapolation error (fitted on the regime's first half, judged on the
 * second) is kept for the band. A slope that fails the test is still uncertain: a regime
 * that starts at a stair along one (fc_drift_band) keeps the staircase's slope spread in
 * its band, none at its centre.
 * Allocates O(n) and frees it (fc_drift_band: nothing); no I/O, no globals.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/internal.h"

#define FC_DRIFT_MIN_BATCHES 8
#define FC_DRIFT_T 3.0      /* |slope| / its standard error */
#define FC_DRIFT_R2 0.6     /* share of the batch medians' variance the trend explains */
#define FC_DRIFT_MIN_MOVE 0.01 /* the trend moves the level by >= 1 % over the span */

/* Least squares of y on x over k points: slope, intercept, residual sum of squares,
 * total sum of squares about the mean, sum of squares of x about its mean. */
struct fc_ls {
    double slope, icpt, sse, sst, sxx;
};

static void fc_ls_fit(const double *x, const double *y, size_t k, struct fc_ls *l)
{
    double mx = 0, my = 0, sxy = 0;
    memset(l, 0, sizeof *l);
    for (size_t i = 0; i < k; i++) {
        mx += x[i] / (double)k;
        my += y[i] / (double)k;
    }
    for (size_t i = 0; i < k; i++) {
        l->sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        l->sst += (y[i] - my) * (y[i] - my);
    }
    l->slope = l->sxx > 0 ? sxy / l->sxx : 0;
    l->icpt = my - l->slope * mx;
    for (size_t i = 0; i < k; i++) {
        const double e = y[i] - l->icpt - l->slope * x[i];
        l->sse += e * e;
    }
}

/* The damped trend's regressor: g(t) = (1 - phi^(t - tc)) / lam with phi = exp(-lam),
 * so that g(tc) = 0 and g'(t) = phi^(t - tc); t itself when lam is 0 (no damping). */
static double fc_g(double t, double tc, double lam)
{
    return lam > 0 ? -expm1(-lam * (t - tc)) / lam : t - tc;
}

double fc_drift_lam(const struct fc_drift *d, double s1, double s2)
{
    double lam = d->lam_min;
    if (s1 * s2 > 0 && fabs(s2) < fabs(s1) && d->half > 0) {
        double rho = fabs(s2) / fabs(s1);
        rho = rho < 0.05 ? 0.05 : rho;
        const double lr = -log(rho) / d->half;
        lam = lr > lam ? lr : lam;
    }
    return lam;
}

double fc_drift_log(const struct fc_drift *d, double slope_end, double lam, double j)
{
    if (!d->used || j <= 0)
        return 0;
    return lam > 0 ? slope_end * -expm1(-lam * j) / lam : slope_end * j;
}

void fc_drift_path(const struct fc_drift *d, uint64_t left, double tq, double z1, double z2,
                   double zb, struct fc_drift_path *p)
{
    double grow = d->bt_span > 0 ? sqrt((double)left / d->bt_span) : 1;
    grow = grow > 3 ? 3 : grow;
    p->off = d->se * tq * d->arm + 1.25 * d->bt_err * grow * zb;
    p->slope_end = d->slope_end + d->se_end * tq;
    p->lam = fc_drift_lam(d, d->s1 + d->se1 * z1, d->s2 + d->se2 * z2);
}

/* The residual sum of squares of y[0..K) as two levels, split where it fits best (at
 * least 2 points a side): a level change, against which a trend must fit better. O(K). */
static double fc_step_sse(const double *y, size_t K, size_t *split)
{
    double tot = 0, tot2 = 0, best = INFINITY, l = 0, l2 = 0;
    *split = 0;
    for (size_t k = 0; k < K; k++) {
        tot += y[k];
        tot2 += y[k] * y[k];
    }
    for (size_t k = 1; k < K; k++) {
        l += y[k - 1];
        l2 += y[k - 1] * y[k - 1];
        if (k < 2 || K - k < 2)
            continue;
        const double nl = (double)k, nr = (double)(K - k);
        const double sse = (l2 - l * l / nl) + ((tot2 - l2) - (tot - l) * (tot - l) / nr);
        if (sse < best) {
            best = sse;
            *split = k;
        }
    }
    return best;
}

/* The lag-1 autocorrelation of residuals e[0..K), clamped to [0, 0.9], and the factor
 * sqrt((1 + r) / (1 - r)) it inflates a standard error by. */
static double fc_ac_inflate(const double *e, size_t K, double *ac)
{
    double r0 = 0, r1 = 0;
    for (size_t k = 0; k < K; k++) {
        r0 += e[k] * e[k];
        if (k)
            r1 += e[k] * e[k - 1];
    }
    double r = r0 > 0 ? r1 / r0 : 0;
    r = r < 0 ? 0 : r > 0.9 ? 0.9 : r;
    *ac = r;
    return sqrt((1 + r) / (1 - r));
}

/* Two levels split at batch kb and one slope common to both (the level moving within
 * them as well): y[k] = a_L or a_R + s x[k], the two batches beside the split left out
 * (one of them may hold steps of both levels). The slope, its t (the residuals' scatter,
 * inflated by their autocorrelation; K - 5 degrees of freedom), its standard error, the
 * right level's step over the left one at the split (log), and the fitted log level at
 * x_end. O(K). */
struct fc_stairs {
    double s, se, t, step, end;
};

static void fc_stairs_fit(const double *x, const double *y, size_t K, size_t kb, double x_end,
                          double *e, struct fc_stairs *st)
{
    double mx[2] = {0, 0}, my[2] = {0, 0}, sxx = 0, sxy = 0, sse = 0, ac;
    size_t m = 0;
    memset(st, 0, sizeof *st);
    if (kb < 3 || K - kb < 3 || K < 8)
        return;
    const double c[2] = {(double)(kb - 1), (double)(K - kb - 1)};
    for (size_t k = 0; k < K; k++) {
        const int r = k >= kb;
        if (k + 1 == kb || k == kb)
            continue;
        mx[r] += x[k] / c[r];
        my[r] += y[k] / c[r];
    }
    for (size_t k = 0; k < K; k++) {
        const int r = k >= kb;
        if (k + 1 == kb || k == kb)
            continue;
        sxx += (x[k] - mx[r]) * (x[k] - mx[r]);
        sxy += (x[k] - mx[r]) * (y[k] - my[r]);
    }
    if (!(sxx > 0))
        return;
    st->s = sxy / sxx;
    for (size_t k = 0; k < K; k++) {
        const int r = k >= kb;
        if (k + 1 == kb || k == kb)
            continue;
        e[m] = y[k] - my[r] - st->s * (x[k] - mx[r]);
        sse += e[m] * e[m];
        m++;
    }
    const double se = sqrt(sse / (double)(m - 3) / sxx) * fc_ac_inflate(e, m, &ac);
    st->se = se;
    st->t = se > 0 ? fabs(st->s) / se : INFINITY;
    const double xb = (x[kb - 1] + x[kb]) / 2; /* the split */
    st->step = (my[1] + st->s * (xb - mx[1])) - (my[0] + st->s * (xb - mx[0]));
    st->end = my[1] + st->s * (x_end - mx[1]);
}

/* The damped trend on batches (x[k], y[k]), k < K, of a span of n steps: d's fields
 * (used aside); e: K values of scratch. */
static void fc_drift_batches(const double *x, const double *y, size_t K, double n,
                             double *e, struct fc_drift *d)
{
    /* the slope's decay: the halves' slopes (same sign, the later one smaller) */
    struct fc_ls l1, l2, l;
    fc_ls_fit(x, y, K / 2, &l1);
    fc_ls_fit(x + K / 2, y + K / 2, K - K / 2, &l2);
    const double half = (x[K - 1] - x[0]) / 2;
    d->lam_min = log(2.0) / n; /* half-life at most the fitted span */
    d->half = half;
    d->s1 = l1.slope;
    d->s2 = l2.slope;
    d->se1 = K / 2 > 2 && l1.sxx > 0 ? sqrt(l1.sse / (double)(K / 2 - 2) / l1.sxx) : 0;
    d->se2 = K - K / 2 > 2 && l2.sxx > 0 ? sqrt(l2.sse / (double)(K - K / 2 - 2) / l2.sxx)
                                         : 0;
    const double lam = fc_drift_lam(d, l1.slope, l2.slope);
    const double tc = (x[0] + x[K - 1]) / 2;
    for (size_t k = 0; k < K; k++)
        e[k] = fc_g(x[k], tc, lam);
    fc_ls_fit(e, y, K, &l);
    double ac;
    for (size_t k = 0; k < K; k++)
        e[k] = y[k] - l.icpt - l.slope * e[k];
    const double infl = fc_ac_inflate(e, K, &ac);
    d->se = l.sxx > 0 ? sqrt(l.sse / (double)(K - 2) / l.sxx) * infl : INFINITY;
    d->slope = l.slope; /* per step at tc, log scale */
    d->icpt = l.icpt;
    d->t = d->se > 0 ? fabs(d->slope) / d->se : INFINITY;
    d->r2 = l.sst > 0 ? 1 - l.sse / l.sst : 0;
    d->ac = ac;
    d->lam = lam;
    d->df = (double)(K - 2);
    d->tc = tc;
    const double decay = exp(-lam * (n - 1 - tc)); /* tc to the last step */
    d->slope_end = d->slope * decay;
    d->se_end = d->se * decay;
    d->gend = fc_g(n - 1, tc, lam);
    double gbar = 0; /* the regressor's mean: the fit's end level moves with its slope */
    for (size_t k = 0; k < K; k++)
        gbar += fc_g(x[k], tc, lam) / (double)K;
    d->arm = d->gend - gbar;
    d->move = fabs(d->slope * (d->gend - fc_g(0, tc, lam)));
    size_t kb;
    d->sse_step = fc_step_sse(y, K, &kb);
    /* a trend, or a staircase: two levels whose step has the sign of a slope that moves
     * both of them as well (the stairs of one drift, not one change between flat levels) */
    struct fc_stairs st;
    fc_stairs_fit(x, y, K, kb, n - 1, e, &st);
    const int sign = d->slope > 0 ? 1 : -1;
    const int trend = d->t >= FC_DRIFT_T && d->r2 >= FC_DRIFT_R2 && l.sse < d->sse_step;
    d->stairs = !trend && st.t >= FC_DRIFT_T && st.s * sign > 0 && st.step * sign > 0;
    d->st_s = st.s;
    d->st_se = st.se;
    d->st_df = st.se > 0 ? (double)(K - 5) : 0;
    d->lvl = d->stairs ? st.end - (d->icpt + d->slope * d->gend) : 0;
    d->used = (trend || d->stairs) && d->move >= FC_DRIFT_MIN_MOVE;
}

int fc_drift_fit(const double *v, size_t n, uint32_t b, struct fc_drift *d)
{
    memset(d, 0, sizeof *d);
    size_t bm = (size_t)sqrt((double)n);
    bm = bm < b ? b : bm;
    const size_t K = bm ? n / bm : 0;
    if (K < 2 * FC_DRIFT_MIN_BATCHES)
        return 0;
    double *y = malloc((3 * K + bm) * sizeof *y);
    if (!y)
        return -ENOMEM;
    double *x = y + K, *e = x + K, *tmp = e + K;
    const size_t off = n - K * bm; /* the batches end at the regime's last step */
    for (size_t k = 0; k < K; k++) {
        for (size_t i = 0; i < bm; i++) {
            const double t = v[off + k * bm + i];
            tmp[i] = log(t > 1e-9 ? t : 1e-9);
        }
        y[k] = fc_quantile_sel(tmp, bm, 0.5);
        x[k] = (double)off + ((double)k + 0.5) * (double)bm;
    }
    /* the model's own extrapolation error: fitted on the first half (two thirds, three
     * quarters) of the batches, its mean log level over the rest against what they were
     * (flat at the last fitted level when no drift is found there); their RMS */
    double bt2 = 0, btn = 0;
    for (int o = 2; o <= 4; o++) {
        struct fc_drift h;
        const size_t K2 = K * (size_t)(o - 1) / (size_t)o;
        if (K2 < FC_DRIFT_MIN_BATCHES || K - K2 < 2)
            continue;
        fc_drift_batches(x, y, K2, x[K2 - 1] + 0.5 * (double)bm, e, &h);
        double bt = 0;
        for (size_t k = K2; k < K; k++)
            bt += (y[k] - h.icpt - h.slope * fc_g(h.used ? x[k] : x[K2 - 1], h.tc, h.lam) -
                   (h.used ? h.lvl : 0)) / (double)(K - K2);
        bt2 += bt * bt * (double)K / (double)(K - K2); /* per the horizon: /rest */
        btn += 1;
    }
    fc_drift_batches(x, y, K, (double)n, e, d);
    d->bt_err = btn > 0 ? sqrt(bt2 / btn) : 0; /* at a horizon of the whole span */
    d->bt_span = (double)n;
    free(y);
    return 0;
}

void fc_drift_detrend(const struct fc_drift *d, const double *v, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = d->used ? v[i] * exp(d->slope * (d->gend - fc_g((double)i, d->tc, d->lam)) +
                                     d->lvl)
                         : v[i];
}

void fc_drift_detrend_tail(const struct fc_drift *d, double *v, size_t n, size_t last)
{
    for (size_t j = 0; d->used && j < n; j++) {
        const double i = (double)last - (double)(n - 1 - j); /* may be before the fit */
        v[j] *= exp(d->slope * (d->gend - fc_g(i, d->tc, d->lam)) + d->lvl);
    }
}

void fc_drift_band(const struct fc_drift *span, size_t n, struct fc_drift *d)
{
    if (d->used || span->used || !(span->st_df > 0) || n < 2)
        return;
    const double spread = sqrt(span->st_s * span->st_s + span->st_se * span->st_se);
    memset(d, 0, sizeof *d);
    d->used = d->band = 1;
    d->se = d->se_end = spread;
    d->df = span->st_df;
    d->t = spread > 0 ? fabs(span->st_s) / span->st_se : 0;
    d->arm = (double)(n - 1) / 2; /* from the regime's mean to its last step */
    d->lam = d->lam_min = span->lam_min;
    d->bt_span = (double)n;
}

size_t fc_drift_span(const struct fc *f, size_t w_end, size_t start, uint32_t b,
                     struct fc_drift *span)
{
    memset(span, 0, sizeof *span);
    if (start <= w_end || start >= f->n)
        return start;
    int sign = 0, own = 0; /* the changes since the warm-up: one sign, start one of them */
    for (size_t k = 0; k < f->nchg; k++) {
        if (f->chg[k] <= w_end)
            continue;
        const int s = f->chg_lr[k] > 0 ? 1 : -1;
        if (sign && s != sign)
            return start;
        sign = s;
        own |= f->chg[k] == start;
    }
    if (!own)
        return start;
    double *v = malloc((f->n - w_end) * sizeof *v);
    size_t m = 0;
    if (!v)
        return start;
    for (size_t i = w_end; i < f->n; i++)
        if (!f->ev[i])
            v[m++] = f->t[i];
    const size_t v0 = m > ARGUS_FC_MAX_FIT ? m - ARGUS_FC_MAX_FIT : 0;
    const int ok = fc_drift_fit(v + v0, m - v0, b, span) == 0 && span->used &&
                   (span->slope > 0 ? 1 : -1) == sign;
    free(v);
    return ok ? w_end : start;
}
