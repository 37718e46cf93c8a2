/* stepdist.c — the forecast's per-step distribution (forecast/internal.h, fc_step_quant;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "Validation"): the quantiles of one modelled
 * step of the current regime, what argus-predict compares with the held-out steps (the
 * Kolmogorov-Smirnov distance of bench/forecast). The law the sampler draws steps from:
 * the regime's step times, and at the periodic events' share of the steps left, one of
 * them plus an event's observed cost (each regime step paired with an event cost in
 * turn); past the regime's high percentile, the fitted generalised Pareto tail
 * (forecast/tail.c). Quantiles by bisection on the mixture's distribution function.
 * Allocates O(n) and frees it; no I/O, no state.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/internal.h"

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

/* The mixture's distribution function at x. */
static double fc_mix_cdf(const double *b, const double *e, size_t n, double pi,
                         const struct fc_gpd *g, double x)
{
    const double Fb = g->ok && x > g->u ? 1 - fc_gpd_sf(g, x)
                                        : (double)fc_rank(b, n, x) / (double)n;
    return (1 - pi) * Fb + (pi > 0 ? pi * (double)fc_rank(e, n, x) / (double)n : 0);
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
    double *b = malloc(2 * n * sizeof *b);
    if (!b)
        return -ENOMEM;
    double *e = b + n;
    memcpy(b, v, n * sizeof *b);
    for (size_t j = 0; j < n; j++)
        e[j] = v[j] + (ne ? evc[j % ne] : 0);
    fc_sort(b, n);
    fc_sort(e, n);
    struct fc_gpd g;
    fc_gpd_fit(b, n, &g); /* it reorders b: sorted again */
    fc_sort(b, n);
    for (int k = 0; k < ARGUS_FC_NSTEPQ; k++) {
        const double p = (double)(k + 1) / (ARGUS_FC_NSTEPQ + 1);
        if (pi == 0 && (!g.ok || p <= 1 - g.p_exc)) {
            q[k] = fc_quantile_sorted(b, n, p);
            continue;
        }
        double lo = b[0], hi = e[n - 1] > b[n - 1] ? e[n - 1] : b[n - 1];
        hi += g.ok ? 20 * g.sigma : 0;
        for (int it = 0; it < 60 && hi - lo > 1e-9 * fabs(hi); it++) {
            const double x = lo + (hi - lo) / 2;
            const double F = fc_mix_cdf(b, e, n, pi, &g, x);
            if (F < p)
                lo = x;
            else
                hi = x;
        }
        q[k] = hi;
    }
    free(b);
    return 0;
}
