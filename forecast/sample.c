/* sample.c — the forecast's sampler (forecast/forecast.h, argus_forecast_sample;
 * docs/ALGORITHMS.md, "Forecast (PRISM)"): two stages over one regime's step times: its
 * level drawn with the uncertainty of its mean (batch means, Student t), then the steps
 * left drawn from it in circular blocks (never one by one),
 * periodic event costs drawn from those observed, and future change points at an observed
 * rate. Its own RNG (splitmix64), so the same seed gives the same quantiles. Allocates
 * O(n + n_sims) per call and frees it; no I/O, no globals.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

uint64_t fc_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double fc_rng_unif(uint64_t *s)
{
    return (double)(fc_rng_next(s) >> 11) * 0x1.0p-53;
}

static double fc_rng_normal(uint64_t *s)
{
    double u = fc_rng_unif(s), v = fc_rng_unif(s);
    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static uint32_t fc_rng_poisson(uint64_t *s, double lam, uint32_t cap)
{
    if (lam <= 0)
        return 0;
    if (lam > 30) {
        double x = lam + sqrt(lam) * fc_rng_normal(s);
        return x <= 0 ? 0 : x >= cap ? cap : (uint32_t)x;
    }
    double l = exp(-lam), p = 1.0;
    uint32_t k = 0;
    for (;;) {
        p *= fc_rng_unif(s);
        if (p <= l || k >= cap)
            return k;
        k++;
    }
}

static int fc_cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void fc_sort(double *v, size_t n)
{
    qsort(v, n, sizeof *v, fc_cmp_d);
}

double fc_quantile_sorted(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    double x = p * (double)(n - 1);
    size_t i = (size_t)x;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (x - (double)i) * (v[i + 1] - v[i]);
}

/* Sum of len (<= n) values of the circular series whose prefix sums are pre[0..n]. */
static double fc_circ_sum(const double *pre, size_t n, size_t start, size_t len)
{
    if (start + len <= n)
        return pre[start + len] - pre[start];
    return (pre[n] - pre[start]) + pre[start + len - n];
}

int argus_forecast_sample(const double *base, size_t n, uint32_t b, uint64_t left,
                          const double *ev_ms, size_t n_ev, uint64_t ev_count,
                          double rate, const double *lr, size_t n_lr, uint32_t n_sims,
                          uint64_t seed, struct argus_fc_quant *q)
{
    double *pre = NULL, *tot = NULL;
    int rc = -ENOMEM;
    uint64_t rng = seed ^ 0x5052495350524953ull; /* "PRISPRIS" */
    uint64_t erng = seed ^ 0x4556454e54535353ull; /* events: their own stream, so that
                                                     adding them moves nothing else */

    if (!base || n < 2 || b == 0 || !q || (n_ev && !ev_ms) || (n_lr && !lr))
        return -EINVAL;
    if (n_sims == 0)
        n_sims = 1000;
    if (b > n)
        b = (uint32_t)n;
    pre = malloc((n + 1) * sizeof *pre);
    tot = malloc((size_t)n_sims * sizeof *tot);
    if (!pre || !tot)
        goto out;
    /* stage 1, the regime's level: its mean and the standard error of it from batch
     * means (batches of at least b steps, so that they are nearly independent); with
     * fewer than 3 batches a block-resampled regime instead */
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += base[i] / (double)n;
    size_t bm = (size_t)sqrt((double)n);
    bm = bm < b ? b : bm;
    const size_t nbat = n / bm;
    double se = -1;
    if (nbat >= 3) {
        double m1 = 0, m2 = 0;
        for (size_t k = 0; k < nbat; k++) {
            double m = 0;
            for (size_t i = k * bm; i < (k + 1) * bm; i++)
                m += base[i] / (double)bm;
            m1 += m;
            m2 += m * m;
        }
        m1 /= (double)nbat;
        const double var = (m2 - (double)nbat * m1 * m1) / (double)(nbat - 1);
        se = sqrt((var > 0 ? var : 0) / (double)nbat);
    }
    /* drift: the level (median) moved between the regime's halves by dh; the rest of the run may
     * move as much, more the longer it is (random-walk scaling, at most x3) */
    double m1 = 0, m2 = 0; /* medians: a spike in one half is no drift */
    memcpy(pre, base, n * sizeof *pre);
    fc_sort(pre, n / 2);
    fc_sort(pre + n / 2, n - n / 2);
    m1 = fc_quantile_sorted(pre, n / 2, 0.5);
    m2 = fc_quantile_sorted(pre + n / 2, n - n / 2, 0.5);
    double grow = sqrt((double)left / (double)n);
    grow = grow > 3 ? 3 : grow;
    const double drift = n >= 8 ? fabs(m2 - m1) * grow : 0;
    pre[0] = 0;
    for (size_t i = 0; i < n; i++)
        pre[i + 1] = pre[i] + base[i];
    double bmu = 0, bvar = 0; /* the base's block sums, for the normal law */
    for (size_t i = 0; i < n; i++) {
        const double x = fc_circ_sum(pre, n, i, b);
        bmu += x;
        bvar += x * x;
    }
    bmu /= (double)n;
    bvar = bvar / (double)n - bmu * bmu;
    for (uint32_t sim = 0; sim < n_sims; sim++) {
        double shift = 0; /* the drawn level minus the mean seen, per step */
        if (se >= 0) { /* Student t with nbat - 1 degrees of freedom */
            double chi = 0;
            for (size_t k = 0; k + 1 < nbat && k < 64; k++) {
                const double z = fc_rng_normal(&rng);
                chi += z * z;
            }
            const size_t df = nbat - 1 < 64 ? nbat - 1 : 64;
            shift = se * fc_rng_normal(&rng) / sqrt(chi / (double)df);
        } else {
            double m = 0;
            for (size_t i = 0; i < n;) {
                size_t st = (size_t)(fc_rng_unif(&rng) * (double)n);
                for (uint32_t j = 0; j < b && i < n; j++, i++)
                    m += base[(st + j) % n];
            }
            shift = m / (double)n - mean;
        }
        shift += drift * fc_rng_normal(&rng);
        /* stage 2: the steps left, in blocks of the regime seen, at the drawn level */
        const uint64_t m = left / b, r = left % b;
        double s = 0;
        if (m <= ARGUS_FC_MAX_BLOCKS) {
            for (uint64_t k = 0; k < m; k++)
                s += fc_circ_sum(pre, n, (size_t)(fc_rng_unif(&rng) * (double)n), b);
        } else { /* the sum of m blocks by the normal law of their sums */
            s = (double)m * bmu + sqrt((double)m * (bvar > 0 ? bvar : 0)) * fc_rng_normal(&rng);
        }
        if (r)
            s += fc_circ_sum(pre, n, (size_t)(fc_rng_unif(&rng) * (double)n), (size_t)r);
        s += shift * (double)left;
        if (s < 0)
            s = 0;
        /* change points at their observed rate, either sign, on the rest of the run */
        if (rate > 0 && n_lr && left) {
            uint32_t nc = fc_rng_poisson(&rng, rate * (double)left, 16);
            double u[16], f = 1, prev = 0, mult = 0;
            for (uint32_t k = 0; k < nc; k++)
                u[k] = fc_rng_unif(&rng);
            fc_sort(u, nc);
            for (uint32_t k = 0; k < nc; k++) {
                double l = fabs(lr[(size_t)(fc_rng_unif(&rng) * (double)n_lr)]);
                mult += (u[k] - prev) * f;
                f *= exp(fc_rng_unif(&rng) < 0.5 ? -l : l);
                prev = u[k];
            }
            s *= mult + (1 - prev) * f;
        }
        /* periodic events with their observed costs */
        if (ev_count && n_ev) {
            const uint64_t k = ev_count < 1024 ? ev_count : 1024;
            double e = 0;
            for (uint64_t j = 0; j < k; j++)
                e += ev_ms[(size_t)(fc_rng_unif(&erng) * (double)n_ev)];
            s += e * (double)ev_count / (double)k;
        }
        tot[sim] = s / 1e3;
    }
    fc_sort(tot, n_sims);
    q->p10 = fc_quantile_sorted(tot, n_sims, 0.10);
    q->p50 = fc_quantile_sorted(tot, n_sims, 0.50);
    q->p90 = fc_quantile_sorted(tot, n_sims, 0.90);
    q->p99 = fc_quantile_sorted(tot, n_sims, 0.99);
    rc = 0;
out:
    free(pre);
    free(tot);
    return rc;
}
