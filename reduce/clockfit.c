/* clockfit.c — the deepest line inside a window of ping bounds (clockfit.h). */
#include "reduce/clockfit.h"

#include <math.h>
#include <string.h>

void argus_clockfit_init(struct argus_clockfit *f, int64_t t0, int64_t offset0)
{
    memset(f, 0, sizeof *f);
    f->base = t0;
    f->a = (double)offset0;
}

void argus_clockfit_add(struct argus_clockfit *f, int64_t t1, int64_t t2, int64_t s,
                        int64_t s_err)
{
    if (t2 < t1 || s_err < 0)
        return; /* a clock that stepped back: no bound */
    f->x1[f->head] = t1;
    f->x2[f->head] = t2;
    f->up[f->head] = s - t1 + s_err;
    f->lo[f->head] = s - t2 - s_err;
    f->head = (f->head + 1) % ARGUS_CLOCKFIT_CAP;
    if (f->n < ARGUS_CLOCKFIT_CAP)
        f->n++;
}

/* The band at slope b: [*lo_a, *up_a] holds the levels a (at f->base) that satisfy every
 * bound; returns its width (negative when none does). Times relative to base, so that
 * the large clock readings cancel before they become doubles. */
static double band(const struct argus_clockfit *f, double b, double *lo_a, double *up_a)
{
    double ua = INFINITY, la = -INFINITY;
    for (int i = 0; i < f->n; i++) {
        double u = (double)f->up[i] - b * (double)(f->x1[i] - f->base);
        double l = (double)f->lo[i] - b * (double)(f->x2[i] - f->base);
        if (u < ua)
            ua = u;
        if (l > la)
            la = l;
    }
    *lo_a = la;
    *up_a = ua;
    return ua - la;
}

/* The band's highest upper edge (upper) or lowest lower edge over b in [lo, hi]: a
 * ternary search, as the upper edge is concave in b and the lower one convex. */
static double edge_extreme(const struct argus_clockfit *f, double lo, double hi, int upper)
{
    double la, ua;
    for (int it = 0; it < 100 && hi - lo > 1e-13; it++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        band(f, m1, &la, &ua);
        const double v1 = upper ? ua : -la;
        band(f, m2, &la, &ua);
        const double v2 = upper ? ua : -la;
        if (v1 < v2)
            lo = m1;
        else
            hi = m2;
    }
    band(f, (lo + hi) / 2, &la, &ua);
    return upper ? ua : la;
}

/* The end of the interval of slopes with a non-empty band, from the inside point `in`
 * towards `out` (bisection: the width is concave, so the set is an interval). */
static double feasible_end(const struct argus_clockfit *f, double in, double out)
{
    double la, ua;
    if (band(f, out, &la, &ua) >= 0)
        return out;
    for (int it = 0; it < 100 && fabs(out - in) > 1e-13; it++) {
        double m = (in + out) / 2;
        if (band(f, m, &la, &ua) >= 0)
            in = m;
        else
            out = m;
    }
    return in;
}

void argus_clockfit_solve(struct argus_clockfit *f)
{
    if (f->n == 0)
        return;
    int64_t tmin = f->x1[0], tmax = f->x2[0];
    for (int i = 1; i < f->n; i++) {
        if (f->x1[i] < tmin)
            tmin = f->x1[i];
        if (f->x2[i] > tmax)
            tmax = f->x2[i];
    }
    f->base = tmax; /* the level where the estimate is used: at the newest ping */
    double b = f->b, la, ua;
    if (tmax - tmin < ARGUS_CLOCKFIT_MIN_SPAN_NS) {
        f->width = band(f, b, &la, &ua);
        f->a = (la + ua) / 2;
        return;
    }
    /* w(b) is concave (a minimum of lines minus a maximum of lines) */
    double lo = -ARGUS_CLOCKFIT_MAX_RATE, hi = ARGUS_CLOCKFIT_MAX_RATE;
    for (int it = 0; it < 100 && hi - lo > 1e-13; it++) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (band(f, m1, &la, &ua) < band(f, m2, &la, &ua))
            lo = m1;
        else
            hi = m2;
    }
    b = (lo + hi) / 2;
    f->rated = 1;
    double w = band(f, b, &la, &ua);
    if (w < 0) { /* contradictory bounds: the line of least violation */
        f->width = w;
        f->b = b;
        f->a = (la + ua) / 2;
        return;
    }
    /* Every line inside all bounds is possible; the estimate is the middle of the
     * levels they allow at base (the smallest worst-case error there), carried on with
     * the middle of the slopes they allow. */
    double b1 = feasible_end(f, b, -ARGUS_CLOCKFIT_MAX_RATE);
    double b2 = feasible_end(f, b, ARGUS_CLOCKFIT_MAX_RATE);
    double top = edge_extreme(f, b1, b2, 1), bottom = edge_extreme(f, b1, b2, 0);
    f->width = top - bottom;
    f->a = (top + bottom) / 2;
    f->b = (b1 + b2) / 2;
}

int64_t argus_clockfit_uncertainty(const struct argus_clockfit *f)
{
    return (int64_t)llround(fabs(f->width) / 2);
}

int64_t argus_clockfit_at(const struct argus_clockfit *f, int64_t t)
{
    return (int64_t)llround(f->a + f->b * (double)(t - f->base));
}
