/* series_fixture.c — tests/forecast/series_fixture.h: the forecast tests' step series and
 * their judge. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "forecast/forecast.h"
#include "tests/forecast/series_fixture.h"

double sfx_unif(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * 0x1.0p-53;
}

double sfx_gauss(uint64_t *s)
{
    const double u = sfx_unif(s), v = sfx_unif(s);
    return sqrt(-2 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

struct argus_jobstore *sfx_store_series(const double *ms, int n)
{
    return sfx_store_series_at(ms, n, 0);
}

struct argus_jobstore *sfx_store_series_at(const double *ms, int n, uint64_t first)
{
    struct argus_jobstore *js;
    if (argus_jobstore_create(2, &js) != 0)
        return NULL;
    argus_jobstore_set_retention(js, 0, 0);
    uint64_t t0 = 1000000000ull;
    for (int s = 0; s < n; s++) {
        for (int r = 0; r < 2; r++) {
            struct argus_step_summary sm;
            memset(&sm, 0, sizeof sm);
            sm.step = first + (uint64_t)s;
            sm.rank = (uint32_t)r;
            sm.start_ns = t0;
            sm.end_ns = t0 + (uint64_t)llround(ms[s] * (r ? 0.97e6 : 1e6));
            if (argus_jobstore_add_summary(js, &sm) != 0) {
                argus_jobstore_free(js);
                return NULL;
            }
        }
        t0 += (uint64_t)llround(ms[s] * 1e6);
    }
    return js;
}

int sfx_said(const struct argus_forecast *fc, const char *what)
{
    for (size_t i = 0; i < fc->n_assume; i++)
        if (strstr(fc->assume[i], what))
            return 1;
    return 0;
}

int sfx_cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sfx_ks_law(const double *q, const double *x, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && x[j] == x[i])
            j++;
        for (int side = 0; side < 2; side++) { /* F(x) for ties up to j, F(x-) for i */
            const double v = side ? x[i] - 1e-9 * fabs(x[i]) : x[i];
            double F;
            if (v < q[0])
                F = 0.01 * (v > 0 ? v / q[0] : 0);
            else if (v >= q[ARGUS_FC_NSTEPQ - 1])
                F = 0.99 + 0.01 * fmin(1, (v - q[ARGUS_FC_NSTEPQ - 1]) /
                                       fmax(q[ARGUS_FC_NSTEPQ - 1] - q[ARGUS_FC_NSTEPQ - 2],
                                            1e-12));
            else {
                int lo = 0;
                while (lo + 1 < ARGUS_FC_NSTEPQ - 1 && q[lo + 1] <= v)
                    lo++;
                const double w = q[lo + 1] > q[lo] ? (v - q[lo]) / (q[lo + 1] - q[lo]) : 1;
                F = (lo + 1 + w) / 100;
            }
            d = fmax(d, fabs((side ? (double)i : (double)j) / (double)n - F));
        }
        i = j;
    }
    return d;
}
