/* bocpd.c — Bayesian online change-point detection with a bounded run length, and the step
 * boundaries read from its segments (flows/bocpd.h).
 */
#include "flows/bocpd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

struct fl_bocpd {
    double sigma2, lh, l1h;     /* sigma^2, log h, log (1 - h) */
    size_t rmax;
    double *lp, *n, *s;         /* per run length 1..rmax (index r - 1): log posterior,
                                   observations (may exceed rmax at the cap), their sum */
    double *lp2, *n2, *s2;      /* the next step's */
    double *lv;                 /* [k]: log of the predictive variance after k (1..rmax) */
};

int fl_bocpd_create(double sigma, double hazard, size_t rmax, struct fl_bocpd **out)
{
    if (!(sigma > 0) || !(hazard > 0 && hazard < 1) || rmax < 2 || rmax > ((size_t)1 << 20))
        return -EINVAL;
    struct fl_bocpd *b = calloc(1, sizeof *b);
    if (!b)
        return -ENOMEM;
    b->sigma2 = sigma * sigma, b->lh = log(hazard), b->l1h = log1p(-hazard), b->rmax = rmax;
    double **a[7] = {&b->lp, &b->n, &b->s, &b->lp2, &b->n2, &b->s2, &b->lv};
    for (int i = 0; i < 7; i++)
        if (!(*a[i] = malloc((rmax + 1) * sizeof **a[i]))) {
            fl_bocpd_free(b);
            return -ENOMEM;
        }
    *out = b;
    return 0;
}

void fl_bocpd_free(struct fl_bocpd *b)
{
    if (!b)
        return;
    free(b->lp), free(b->n), free(b->s), free(b->lp2), free(b->n2), free(b->s2), free(b->lv);
    free(b);
}

static double lse(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

void fl_bocpd_run(struct fl_bocpd *b, const double *x, size_t n, double mu0,
                  unsigned char *chg)
{
    if (n == 0)
        return;
    double lo = x[0], hi = x[0];
    for (size_t t = 1; t < n; t++) {
        if (x[t] < lo)
            lo = x[t];
        if (x[t] > hi)
            hi = x[t];
    }
    double tau0 = 0.5 * (hi - lo) + sqrt(b->sigma2), p0 = 1 / (tau0 * tau0);
    /* every term leaves out the same -log(2 pi) / 2: it cancels in the normalisation */
    double v0 = tau0 * tau0 + b->sigma2, lc0 = b->lh - 0.5 * log(v0);
    for (size_t k = 1; k <= b->rmax; k++)   /* log of the predictive variance after k */
        b->lv[k] = log(b->sigma2 + 1 / (p0 + (double)k / b->sigma2));
    size_t live = 1;   /* run lengths 1..live are hypotheses */
    b->lp[0] = 0, b->n[0] = 1, b->s[0] = x[0];
    chg[0] = 1;
    for (size_t t = 1; t < n; t++) {
        /* a new run: x_t scored by the prior predictive */
        double lnew = lc0 - 0.5 * (x[t] - mu0) * (x[t] - mu0) / v0, top = lnew;
        size_t nl = live < b->rmax ? live + 1 : b->rmax;
        for (size_t r = 1; r < nl; r++)
            b->lp2[r] = -INFINITY;
        b->lp2[0] = lnew, b->n2[0] = 1, b->s2[0] = x[t];
        for (size_t r = 0; r < live; r++) {
            if (b->lp[r] == -INFINITY)   /* pruned: no mass left */
                continue;
            double l = p0 + b->n[r] / b->sigma2;
            double m = (mu0 * p0 + b->s[r] / b->sigma2) / l, v = b->sigma2 + 1 / l;
            double lv = b->n[r] <= (double)b->rmax ? b->lv[(size_t)b->n[r]] : log(v);
            double g = b->lp[r] + b->l1h - 0.5 * (lv + (x[t] - m) * (x[t] - m) / v);
            size_t k = r + 1 < b->rmax ? r + 1 : b->rmax - 1;   /* the cap absorbs */
            if (b->lp2[k] == -INFINITY || g > b->lp2[k])
                b->n2[k] = b->n[r] + 1, b->s2[k] = b->s[r] + x[t];
            b->lp2[k] = lse(b->lp2[k], g);
            if (b->lp2[k] > top)
                top = b->lp2[k];
        }
        double z = 0;
        for (size_t r = 0; r < nl; r++)
            if (b->lp2[r] - top > -60)
                z += exp(b->lp2[r] - top);
        z = top + log(z);
        for (size_t r = 0; r < nl; r++)
            b->lp2[r] = b->lp2[r] - z > -60 ? b->lp2[r] - z : -INFINITY;
        chg[t] = b->lp2[0] > -M_LN2;
        double *sw;
        sw = b->lp, b->lp = b->lp2, b->lp2 = sw;
        sw = b->n, b->n = b->n2, b->n2 = sw;
        sw = b->s, b->s = b->s2, b->s2 = sw;
        live = nl;
    }
}

/* mean of g over [i, j) */
static double mean(const double *g, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = i; k < j; k++)
        s += g[k];
    return s / (double)(j - i);
}

/* end of the level starting at i (out[] marks level starts) */
static size_t level_end(const unsigned char *start, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && !start[j])
        j++;
    return j;
}

void fl_bocpd_boundaries(const double *g, size_t n, const unsigned char *chg, double jump,
                         double ref, unsigned char *out)
{
    if (n == 0)
        return;
    /* levels: segments merged while their mean is within jump of the level's; out[] marks
     * each level's first gap for now */
    size_t lv = 0, levels = 1;
    double lsum = 0, lcnt = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && !chg[j])
            j++;
        double m = mean(g, i, j);
        if (lcnt > 0 && fabs(m - lsum / lcnt) >= jump) {
            lv = i, levels++;
            lsum = 0, lcnt = 0;
        }
        for (size_t k = i; k < j; k++)
            out[k] = k == lv;
        lsum += m * (double)(j - i), lcnt += (double)(j - i);
        i = j;
    }
    if (levels == 1) {
        double least = g[0];
        for (size_t i = 1; i < n; i++)
            if (g[i] < least)
                least = g[i];
        for (size_t i = 0; i < n; i++)
            out[i] = least > ref;
        return;
    }
    /* a level above each of its neighbours holds boundaries */
    double prev = NAN;
    size_t i = 0, j = level_end(out, n, 0);
    double cur = mean(g, i, j);
    while (i < n) {
        size_t k = j < n ? level_end(out, n, j) : n;
        double next = j < n ? mean(g, j, k) : NAN;
        int up = (isnan(prev) || cur > prev) && (isnan(next) || cur > next);
        for (size_t q = i; q < j; q++)
            out[q] = (unsigned char)up;
        prev = cur, cur = next, i = j, j = k;
    }
}
