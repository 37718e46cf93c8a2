/* sample.c — the forecast's sampler (forecast/forecast.h, argus_forecast_sample;
 * docs/ALGORITHMS.md, "Forecast (PRISM)"): two stages over one regime's step times: its
 * level drawn with the uncertainty of its mean (batch means, Student t), then the steps
 * left drawn from it in circular blocks (never one by one),
 * periodic event costs drawn from those observed, and future change points at an observed
 * rate, each starting a regime about the current level (not compounding: no random walk
 * of the level); the excesses past a high percentile from a fitted generalised Pareto law
 * (forecast/tail.c), and the regime's drift (forecast/drift.c: a damped trend, its slope
 * drawn per path) when there is one. Its own RNG (splitmix64), so the same seed gives the same
 * quantiles. Allocates O(n + n_sims) per call and frees it; no I/O, no globals.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

#define FC_TAIL_DRAWS 64 /* tail excesses drawn one by one; more: their sum's normal law */

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

/* Chi-square with df (>= 2) degrees of freedom: twice a Gamma(df / 2) by Marsaglia and
 * Tsang's method (one normal and one uniform per try, ~1.03 tries). */
static double fc_rng_chi2(uint64_t *s, double df)
{
    const double d = df / 2 - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        const double x = fc_rng_normal(s), v0 = 1 + c * x;
        if (v0 <= 0)
            continue;
        const double v = v0 * v0 * v0, u = fc_rng_unif(s);
        if (u > 0 && log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return 2 * d * v;
    }
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

#define FC_RECUR_MAX 16 /* the most change points drawn on one path */

/* Recurring regimes: the mean over the steps left of a path's level factor, relative to
 * the current regime's level, when change points come as a Poisson process of mean lam
 * over them (at most FC_RECUR_MAX) at uniform positions, each starting a regime whose
 * level is the current one's times exp(+-l) / cosh(l), l the size of a change drawn from
 * lr[0..n_lr) (|log ratio|), either sign at even odds: regimes like those seen, about
 * the current level (their mean, so that recurring changes widen the band without moving
 * its centre), not a random walk of it (the factor lies within exp(+-max l)). */
static double fc_recur_mult(uint64_t *rng, double lam, const double *lr, size_t n_lr)
{
    const uint32_t nc = fc_rng_poisson(rng, lam, FC_RECUR_MAX);
    double u[FC_RECUR_MAX], f = 1, prev = 0, mult = 0;
    for (uint32_t k = 0; k < nc; k++)
        u[k] = fc_rng_unif(rng);
    fc_sort(u, nc);
    for (uint32_t k = 0; k < nc; k++) {
        const double l = fabs(lr[(size_t)(fc_rng_unif(rng) * (double)n_lr)]);
        mult += (u[k] - prev) * f;
        f = exp(fc_rng_unif(rng) < 0.5 ? -l : l) / cosh(l); /* mean 1 */
        prev = u[k];
    }
    return mult + (1 - prev) * f;
}

/* Slowdown episodes: the factor on a path's steps left (left of them) when episodes come
 * as a Poisson process of mean ep->rate x left (at most FC_RECUR_MAX), each one of those
 * seen, drawn at even odds: its steps at exp(lr) times the level, together no more than
 * the steps left. At least 1: an episode only slows. */
static double fc_episode_mult(uint64_t *rng, const struct fc_episodes *ep, uint64_t left)
{
    const uint32_t k = fc_rng_poisson(rng, ep->rate * (double)left, FC_RECUR_MAX);
    double used = 0, extra = 0;
    for (uint32_t j = 0; j < k && used < (double)left; j++) {
        const size_t e = (size_t)(fc_rng_unif(rng) * (double)ep->n);
        double len = ep->len[e];
        if (used + len > (double)left)
            len = (double)left - used;
        used += len;
        extra += len * expm1(ep->lr[e]);
    }
    return 1 + extra / (double)left;
}

/* Sum of len (<= n) values of the circular series whose prefix sums are pre[0..n]. */
static double fc_circ_sum(const double *pre, size_t n, size_t start, size_t len)
{
    if (start + len <= n)
        return pre[start + len] - pre[start];
    return (pre[n] - pre[start]) + pre[start + len - n];
}

/* Stage 1's law, the regime's level: its mean and the standard error of it from batch
 * means (batches of at least b steps, so that they are nearly independent; se -1 with
 * fewer than 3 batches: a block-resampled regime instead), and the drift: the level
 * (midmean) moved between the regime's halves; the rest of the run may move as much, more
 * the longer it is (random-walk scaling, at most x3). tmp: n values of scratch. */
static void fc_level(const double *base, size_t n, uint32_t b, uint64_t left, double *tmp,
                     double *mean, double *se, size_t *nbat, double *drift)
{
    *mean = 0;
    for (size_t i = 0; i < n; i++)
        *mean += base[i] / (double)n;
    size_t bm = (size_t)sqrt((double)n);
    bm = bm < b ? b : bm;
    *nbat = n / bm;
    *se = -1;
    if (*nbat >= 3) {
        double m1 = 0, m2 = 0;
        for (size_t k = 0; k < *nbat; k++) {
            double m = 0;
            for (size_t i = k * bm; i < (k + 1) * bm; i++)
                m += base[i] / (double)bm;
            m1 += m;
            m2 += m * m;
        }
        m1 /= (double)*nbat;
        const double var = (m2 - (double)*nbat * m1 * m1) / (double)(*nbat - 1);
        *se = sqrt((var > 0 ? var : 0) / (double)*nbat);
    }
    /* midmeans: a spike in one half is no drift, and on steps logged on a grid (whole
     * milliseconds) the level moves with the data, where a median jumps a whole cell */
    memcpy(tmp, base, n * sizeof *tmp);
    const double h1 = fc_midmean(tmp, n / 2);
    const double h2 = fc_midmean(tmp + n / 2, n - n / 2);
    double grow = sqrt((double)left / (double)n);
    grow = grow > 3 ? 3 : grow;
    *drift = n >= 8 ? fabs(h2 - h1) * grow : 0;
}

void fc_quant_floor(struct argus_fc_quant *q, double lo)
{
    q->p10 = q->p10 < lo ? lo : q->p10;
    q->p50 = q->p50 < lo ? lo : q->p50;
    q->p90 = q->p90 < lo ? lo : q->p90;
    q->p99 = q->p99 < lo ? lo : q->p99;
}

int argus_forecast_sample(const double *base, size_t n, uint32_t b, uint64_t left,
                          const double *ev_ms, size_t n_ev, uint64_t ev_count,
                          double rate, const double *lr, size_t n_lr, uint32_t n_sims,
                          uint64_t seed, struct argus_fc_quant *q)
{
    return fc_sample_drift(base, n, b, left, ev_ms, n_ev, ev_count, rate, lr, n_lr, n_sims,
                           seed, NULL, NULL, q);
}

#define FC_DRIFT_NODES 16 /* midpoints over the steps left for a path's mean drift factor */

/* The mean over the steps left of a path's drift factor exp(fc_drift_log(slope_end, j)),
 * decaying at lam, j = 1..left, by the midpoint rule (the factor is smooth in j). */
static double fc_drift_mult(const struct fc_drift *d, double slope_end, double lam,
                            uint64_t left)
{
    double m = 0;
    for (int k = 0; k < FC_DRIFT_NODES; k++) {
        const double j = ((double)k + 0.5) / FC_DRIFT_NODES * (double)left;
        m += exp(fc_drift_log(d, slope_end, lam, j)) / FC_DRIFT_NODES;
    }
    return m;
}

int fc_sample_drift(const double *base, size_t n, uint32_t b, uint64_t left,
                    const double *ev_ms, size_t n_ev, uint64_t ev_count, double rate,
                    const double *lr, size_t n_lr, uint32_t n_sims, uint64_t seed,
                    const struct fc_drift *dr, const struct fc_episodes *ep,
                    struct argus_fc_quant *q)
{
    uint64_t prng = seed ^ 0x455049534f444553ull; /* "EPISODES": their own stream too */
    uint64_t drng = seed ^ 0x4452494654445246ull; /* the drift's slopes: their own stream */
    double *pre = NULL, *tot = NULL, *srt = NULL;
    int rc = -ENOMEM;
    uint64_t rng = seed ^ 0x5052495350524953ull; /* "PRISPRIS" */
    uint64_t erng = seed ^ 0x4556454e54535353ull; /* events: their own stream, so that
                                                     adding them moves nothing else */
    uint64_t trng = seed ^ 0x5441494c5441494cull; /* the fitted tail: its own too */

    if (!base || n < 2 || b == 0 || !q || (n_ev && !ev_ms) || (n_lr && !lr))
        return -EINVAL;
    if (n_sims == 0)
        n_sims = 1000;
    if (b > n)
        b = (uint32_t)n;
    pre = malloc((n + 1) * sizeof *pre);
    tot = malloc((size_t)n_sims * sizeof *tot);
    srt = malloc(n * sizeof *srt);
    if (!pre || !tot || !srt)
        goto out;
    /* the tail: a generalised Pareto law past the regime's high percentile; the steps
     * drawn past it have their empirical excess replaced by one drawn from the law */
    struct fc_gpd g;
    memcpy(srt, base, n * sizeof *srt);
    fc_gpd_fit(srt, n, &g);
    const size_t e0 = g.ok ? g.e0 : n;
    double tail_mu = 0, tail_var = 0; /* of (law's excess - an empirical one) */
    if (g.ok) {
        double em = 0, ev = 0;
        for (size_t i = e0; i < n; i++)
            em += (srt[i] - g.u) / (double)(n - e0);
        for (size_t i = e0; i < n; i++)
            ev += (srt[i] - g.u - em) * (srt[i] - g.u - em) / (double)(n - e0);
        const double gm = g.sigma / (1 - g.xi);
        const double gv = g.xi < 0.5 ? g.sigma * g.sigma / ((1 - g.xi) * (1 - g.xi) *
                                                           (1 - 2 * g.xi)) : 0;
        tail_mu = gm - em;
        tail_var = gv + ev;
    }
    double ev_mu = 0, ev_var = 0; /* the events' costs */
    for (size_t i = 0; i < n_ev; i++)
        ev_mu += ev_ms[i] / (double)n_ev;
    for (size_t i = 0; i < n_ev; i++)
        ev_var += (ev_ms[i] - ev_mu) * (ev_ms[i] - ev_mu) / (double)n_ev;
    double mean, se, drift; /* stage 1's law: the level */
    size_t nbat;
    fc_level(base, n, b, left, pre, &mean, &se, &nbat, &drift);
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
            const double df = (double)(nbat - 1);
            shift = se * fc_rng_normal(&rng) / sqrt(fc_rng_chi2(&rng, df) / df);
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
        if (g.ok && left) { /* steps past the threshold: their excess from the fitted law */
            const uint32_t K = fc_rng_poisson(&trng, g.p_exc * (double)left, UINT32_MAX / 2);
            if (K <= FC_TAIL_DRAWS) {
                for (uint32_t j = 0; j < K; j++)
                    s += fc_gpd_draw(&g, fc_rng_unif(&trng)) -
                         (srt[e0 + (size_t)(fc_rng_unif(&trng) * (double)(n - e0))] - g.u);
            } else { /* the sum of K differences by its normal law */
                s += (double)K * tail_mu + sqrt((double)K * tail_var) * fc_rng_normal(&trng);
            }
        }
        if (s < 0)
            s = 0;
        if (dr && dr->used && left) { /* the drift: this path's slope at the end */
            const double df = dr->df > 2 ? dr->df : 2;
            const double tq = fc_rng_normal(&drng) / sqrt(fc_rng_chi2(&drng, df) / df);
            const double z1 = fc_rng_normal(&drng), z2 = fc_rng_normal(&drng);
            struct fc_drift_path p;
            fc_drift_path(dr, left, tq, z1, z2, fc_rng_normal(&drng), &p);
            s *= exp(p.off) * fc_drift_mult(dr, p.slope_end, p.lam, left);
        }
        /* change points at their observed rate on the rest of the run, each starting a
         * regime about the current level (docs/ALGORITHMS.md, "Forecast (PRISM)") */
        if (rate > 0 && n_lr && left)
            s *= fc_recur_mult(&rng, rate * (double)left, lr, n_lr);
        /* slowdown episodes at their observed rate, length and height */
        if (ep && ep->n && ep->rate > 0 && left)
            s *= fc_episode_mult(&prng, ep, left);
        /* periodic events with their observed costs */
        if (ev_count && n_ev) {
            if (ev_count <= 1024) {
                for (uint64_t j = 0; j < ev_count; j++)
                    s += ev_ms[(size_t)(fc_rng_unif(&erng) * (double)n_ev)];
            } else { /* the sum of ev_count costs by its normal law (not k scaled up) */
                s += (double)ev_count * ev_mu +
                     sqrt((double)ev_count * ev_var) * fc_rng_normal(&erng);
            }
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
    free(srt);
    return rc;
}
