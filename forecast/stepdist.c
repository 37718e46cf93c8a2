/* stepdist.c — the forecast's per-step distribution (forecast/internal.h, fc_step_quant;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "The law of one step"): the quantiles of one
 * modelled step of the current regime, what argus-predict compares with the held-out
 * steps (the Kolmogorov-Smirnov distance of bench/forecast). The body is a kernel
 * estimate of the regime's steps, not their empirical law: Gaussian kernels on the log
 * step time (variation is multiplicative), Silverman's bandwidth from the robust spread
 * (0.9 min(sd, IQR / 1.349) n^(-1/5)), the points shrunk towards their mean so that the
 * estimate keeps the steps' log variance (Jones' variance correction): the law the
 * sampler's blocks draw from, smoothed between the steps seen. Steps logged on a grid
 * (whole milliseconds, tens of them) keep it: the smoothed law is rounded to the grid.
 * At the periodic events' share of the steps left a step is one of the regime's plus an
 * event's observed cost (each regime step paired with an event cost in turn); past the
 * regime's high percentile the fitted generalised Pareto tail (forecast/tail.c).
 * Quantiles by bisection on the mixture's distribution function, each bracketed by the
 * steps seen. Allocates O(n) and frees it; no I/O, no state. Time O(n log n + 99 x 64
 * x the steps within six bandwidths).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/internal.h"

#define FC_KERN_REACH 6.0 /* kernels cut at 6 bandwidths (Phi(-6) ~ 1e-9) */

/* The body's kernel estimate: sorted centres y[0..n) (log step times, or step times
 * when one is not positive), bandwidth h (0: the empirical law). */
struct fc_kde {
    const double *y;
    size_t n;
    double h;
    int logsc;
};

/* Values of sorted v[0..n) at or below x. */
static size_t fc_rank(const double *v, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t m = lo + (hi - lo) / 2;
        if (v[m] <= x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

static double fc_kde_cdf(const struct fc_kde *k, double x)
{
    if (k->logsc && !(x > 0))
        return 0;
    const double z = k->logsc ? log(x) : x;
    if (!(k->h > 0))
        return (double)fc_rank(k->y, k->n, z) / (double)k->n;
    const size_t a = fc_rank(k->y, k->n, z - FC_KERN_REACH * k->h);
    const size_t b = fc_rank(k->y, k->n, z + FC_KERN_REACH * k->h);
    double s = (double)a;
    for (size_t i = a; i < b; i++)
        s += 0.5 * erfc((k->y[i] - z) / (k->h * 1.4142135623730951));
    return s / (double)k->n;
}

/* The centres and bandwidth of v[0..n): Silverman's rule on the robust spread, the
 * centres shrunk by 1 / sqrt(1 + h^2 / s^2) towards their mean (the log variance kept).
 * y: n values of room, sorted on return. */
static void fc_kde_fit(const double *v, size_t n, double *y, struct fc_kde *k)
{
    k->logsc = 1;
    for (size_t i = 0; i < n; i++)
        k->logsc &= v[i] > 0;
    double mu = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        y[i] = k->logsc ? log(v[i]) : v[i];
        mu += y[i] / (double)n;
    }
    for (size_t i = 0; i < n; i++)
        s2 += (y[i] - mu) * (y[i] - mu);
    fc_sort(y, n);
    k->y = y;
    k->n = n;
    k->h = 0;
    if (n < 2 || !(s2 > 0))
        return;
    const double sd = sqrt(s2 / (double)(n - 1));
    const double iqr = (fc_quantile_sorted(y, n, 0.75) - fc_quantile_sorted(y, n, 0.25)) /
                       1.349;
    const double spread = iqr > 0 && iqr < sd ? iqr : sd;
    k->h = 0.9 * spread * pow((double)n, -0.2);
    const double c = 1 / sqrt(1 + k->h * k->h / (sd * sd));
    for (size_t i = 0; i < n; i++) /* an affine map: the order is kept */
        y[i] = mu + (y[i] - mu) * c;
}

/* The grid the steps were logged on (ms): the coarsest power of ten from 1 us to 1 s
 * that every value is a whole multiple of; 0 when none (a clock's nanoseconds). */
static double fc_grid(const double *v, size_t n)
{
    if (n < FC_MIN_STEPS)
        return 0; /* a few values may share a grid by chance */
    for (double g = 1000; g >= 1e-3 * 0.999; g /= 10) {
        size_t i = 0;
        while (i < n && fabs(v[i] / g - nearbyint(v[i] / g)) <= 1e-6)
            i++;
        if (i == n)
            return g;
    }
    return 0;
}

struct fc_mix {
    struct fc_kde k;
    const double *e;     /* event steps, sorted (n of them) */
    size_t n;
    double pi;           /* their share */
    const struct fc_gpd *g;
    double body_u;       /* the kernel estimate at the tail's threshold */
    double grid;         /* ms; 0: none */
};

/* The mixture's distribution function at x. */
static double fc_mix_cdf(const struct fc_mix *m, double x)
{
    if (m->grid > 0) /* constant between grid points: the smoothed law's mass at each */
        x = floor(x / m->grid + 1e-9) * m->grid + m->grid / 2;
    double Fb;
    if (m->g->ok && x > m->g->u)
        Fb = 1 - fc_gpd_sf(m->g, x);
    else if (m->g->ok) /* the body below the threshold holds 1 - p_exc */
        Fb = m->body_u > 0 ? fmin(1, fc_kde_cdf(&m->k, x) / m->body_u) * (1 - m->g->p_exc)
                           : 0;
    else
        Fb = fc_kde_cdf(&m->k, x);
    return (1 - m->pi) * Fb +
           (m->pi > 0 ? m->pi * (double)fc_rank(m->e, m->n, x) / (double)m->n : 0);
}

int fc_step_quant(const double *v, size_t n, const double *evc, size_t ne, double pi,
                  double *q)
{
    if (!v || n == 0 || !q)
        return -EINVAL;
    if (!(pi > 0) || ne == 0 || !evc)
        pi = 0;
    if (pi > 1)
        pi = 1;
    double *b = malloc(3 * n * sizeof *b);
    if (!b)
        return -ENOMEM;
    double *e = b + n, *y = b + 2 * n;
    memcpy(b, v, n * sizeof *b);
    for (size_t j = 0; j < n; j++)
        e[j] = v[j] + (ne ? evc[j % ne] : 0);
    fc_sort(e, n);
    struct fc_gpd g;
    fc_gpd_fit(b, n, &g); /* it reorders b: sorted again */
    fc_sort(b, n);
    struct fc_mix m = {.e = e, .n = n, .pi = pi, .g = &g, .grid = fc_grid(v, n)};
    fc_kde_fit(b, n, y, &m.k);
    if (g.ok)
        m.body_u = fc_kde_cdf(&m.k, g.u);
    /* brackets: the kernels reach 6 bandwidths past the steps seen; the tail 20 scales */
    const double reach = m.k.logsc ? exp(FC_KERN_REACH * m.k.h) : 1;
    const double pad = m.k.logsc ? 0 : FC_KERN_REACH * m.k.h;
    double lo0 = b[0] / reach - pad - (m.grid > 0 ? m.grid : 0);
    double hi0 = (e[n - 1] > b[n - 1] ? e[n - 1] : b[n - 1]) * reach + pad + m.grid;
    if (m.k.logsc && !(lo0 > 0))
        lo0 = 0;
    hi0 += g.ok ? 20 * g.sigma : 0;
    double prev = lo0;
    for (int k = 0; k < ARGUS_FC_NSTEPQ; k++) {
        const double p = (double)(k + 1) / (ARGUS_FC_NSTEPQ + 1);
        double lo = prev, hi = hi0; /* the quantiles ascend: the last one bounds below */
        for (int it = 0; it < 64 && hi - lo > 1e-9 * fabs(hi); it++) {
            const double x = lo + (hi - lo) / 2;
            if (fc_mix_cdf(&m, x) < p)
                lo = x;
            else
                hi = x;
        }
        if (m.grid > 0) /* the law's atoms are the grid's points */
            hi = floor(hi / m.grid + 1e-6) * m.grid;
        q[k] = hi;
        prev = lo;
    }
    free(b);
    return 0;
}
