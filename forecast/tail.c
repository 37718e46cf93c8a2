/* tail.c — the forecast's fitted tail (forecast/internal.h: fc_gpd_fit, fc_gpd_draw,
 * fc_gpd_sf; docs/ALGORITHMS.md, "Forecast (PRISM)"): a generalised Pareto law for the
 * excesses of a regime's step times over a high threshold (its 99th percentile from
 * 1,000 steps on, its 95th from 200), fitted by probability-weighted moments (Hosking and
 * Wallis, 1987); a shape outside [-0.5, 0.5] (a cluster far past the threshold, a tail
 * without a finite variance) is no fit, and the tail stays empirical. The sampler draws
 * the excesses of the steps left past the threshold from it, so that the tail reaches
 * beyond the largest step seen; the per-step law takes its top percentiles from it. No
 * allocation, no state.
 */
#include "config.h"

#include <math.h>

#include "forecast/internal.h"

int fc_gpd_fit(double *v, size_t n, struct fc_gpd *g)
{
    g->ok = 0;
    if (n < 200)
        return 0;
    const double p = n >= 1000 ? 0.99 : 0.95;
    const double u = fc_quantile_sel(v, n, p);
    size_t i0 = n; /* the excesses to the end, sorted (O(n) + O(k log k)) */
    for (size_t i = n; i-- > 0;)
        if (v[i] > u) {
            const double t = v[--i0];
            v[i0] = v[i];
            v[i] = t;
        }
    fc_sort(v + i0, n - i0);
    const size_t k = n - i0;
    g->e0 = i0;
    if (k < 10)
        return 0;
    double a0 = 0, a1 = 0;
    for (size_t i = 0; i < k; i++) { /* excesses ascending; plotting positions (i+0.65)/k */
        const double y = v[i0 + i] - u, pi = ((double)i + 0.65) / (double)k;
        a0 += y / (double)k;
        a1 += (1 - pi) * y / (double)k;
    }
    if (!(a0 > 0) || !(a0 - 2 * a1 > 0))
        return 0;
    const double xi = 2 - a0 / (a0 - 2 * a1);
    const double sigma = 2 * a0 * a1 / (a0 - 2 * a1);
    if (!(sigma > 0) || xi < -0.5 || xi > 0.5)
        return 0; /* not a Pareto-like tail (a far cluster, a heavy one): kept empirical */
    g->u = u;
    g->xi = xi;
    g->sigma = sigma;
    g->p_exc = (double)k / (double)n;
    g->emp_mean = a0;
    g->ok = 1;
    return 1;
}

double fc_gpd_draw(const struct fc_gpd *g, double unif)
{
    const double s = 1 - unif > 1e-12 ? 1 - unif : 1e-12;
    if (fabs(g->xi) < 1e-9)
        return -g->sigma * log(s);
    const double y = g->sigma / g->xi * (pow(s, -g->xi) - 1);
    return y > 0 ? y : 0;
}

double fc_gpd_sf(const struct fc_gpd *g, double x)
{
    if (x <= g->u)
        return g->p_exc;
    const double y = x - g->u;
    if (fabs(g->xi) < 1e-9)
        return g->p_exc * exp(-y / g->sigma);
    const double b = 1 + g->xi * y / g->sigma;
    return b <= 0 ? 0 : g->p_exc * pow(b, -1 / g->xi);
}
