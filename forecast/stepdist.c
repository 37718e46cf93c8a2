/* stepdist.c — the forecast's per-step distribution (forecast/internal.h, fc_step_quant;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "The law of one step"): the quantiles of one
 * step drawn at random from the steps left, what argus-predict compares with the
 * held-out steps (the Kolmogorov-Smirnov distance of bench/forecast). The body is a kernel
 * estimate of the regime's steps, not their empirical law: Gaussian kernels on the log
 * step time (variation is multiplicative), Silverman's bandwidth from the robust spread
 * (0.9 min(sd, IQR / 1.349) n^(-1/5)), the points shrunk towards their mean so that the
 * estimate keeps the steps' log variance (Jones' variance correction): the law the
 * sampler's blocks draw from, smoothed between the steps seen. Past the regime's high
 * percentile the fitted generalised Pareto tail (forecast/tail.c). With a drift the steps
 * come detrended to the fit's last level and the body is moved as the sampler moves a
 * path (forecast/sample.c, fc_sample_drift): the law is the mixture, over FC_DRIFT_DRAWS
 * quasi-random draws of a path's slope error (Student t, its chi-square by Wilson and
 * Hilferty), decay (fc_drift_lam of the halves' slopes drawn), level error and a
 * position uniform over the steps left, of the body scaled by exp of that path's log
 * level there (fc_drift_log); the body is tabulated on a log grid for it. At the periodic
 * events' share of the steps left a step is one of the regime's (drifted the same way)
 * plus an event's observed cost (each regime step paired with an event cost in turn);
 * at the slowdown episodes' share (their rate x their mean length) a step is one of the
 * regime's exp(lr) slower, lr one episode's height (each at even odds).
 * Steps logged on a grid (whole milliseconds, tens of them) keep it: the law is rounded
 * to the grid of the steps as logged. Quantiles by bisection on the mixture's
 * distribution function, each bracketed by the steps seen. Allocates O(n + FC_TAB_MAX)
 * and frees it; no I/O, no state. Time O(n log n + 99 x 64 x the steps within six
 * bandwidths), with a drift O(n log n + FC_TAB_MAX x those steps + 99 x 64 x
 * FC_DRIFT_DRAWS).
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

/* ---- the drift's mixture ------------------------------------------------------------- */

#define FC_DRIFT_DRAWS 512  /* paths x positions the drifting law mixes */
#define FC_TAB_MIN 4096     /* the body tabulated on at least this many log points, */
#define FC_TAB_MAX 16384    /* at most this many, at most h / 8 apart where they can */
#define FC_QR_DIM 7         /* the quasi-random draws' dimensions */

/* A standard normal pair from two uniforms in (0, 1) (Box-Muller). */
static void fc_qr_normals(double u1, double u2, double *z1, double *z2)
{
    const double r = sqrt(-2 * log(u1 > 1e-300 ? u1 : 1e-300));
    *z1 = r * cos(6.283185307179586 * u2);
    *z2 = r * sin(6.283185307179586 * u2);
}

/* The log levels l[0..M) of M steps drawn from the steps left as the sampler draws a
 * path's drift (fc_sample_drift): the slope error a Student t with d->df (at least 2)
 * degrees of freedom (the chi-square by Wilson and Hilferty's cube), the end level moved
 * by arm times the same error, the decay from the halves' slopes drawn with their
 * standard errors, the level error of sd 1.25 bt_err grown as sqrt(left / bt_span) (at
 * most x3), the step's position uniform over the steps left. Quasi-random points
 * (Roberts' R_7 sequence: x_k,i = frac(1/2 + k / phi^i), phi^8 = phi + 1), so that M
 * draws cover the law evenly. */
static void fc_drift_levels(const struct fc_drift *d, uint64_t left, double *l, size_t M)
{
    double phi = 1.1;
    for (int it = 0; it < 32; it++) /* the root of x^8 = x + 1 past 1 (Newton) */
        phi -= (pow(phi, 8) - phi - 1) / (8 * pow(phi, 7) - 1);
    double alpha[FC_QR_DIM];
    for (int i = 0; i < FC_QR_DIM; i++)
        alpha[i] = fmod(pow(1 / phi, i + 1), 1.0);
    const double df = d->df > 2 ? d->df : 2, c = 2 / (9 * df);
    for (size_t k = 0; k < M; k++) {
        double u[FC_QR_DIM], z[6];
        for (int i = 0; i < FC_QR_DIM; i++)
            u[i] = fmod(0.5 + (double)(k + 1) * alpha[i], 1.0);
        for (int i = 0; i < 3; i++)
            fc_qr_normals(u[2 * i], u[2 * i + 1], &z[2 * i], &z[2 * i + 1]);
        double w = 1 - c + z[1] * sqrt(c); /* (chi2 / df)^(1/3) */
        w = w > 0.1 ? w : 0.1;
        const double tq = z[0] / sqrt(w * w * w);
        struct fc_drift_path p; /* the sampler's own draw of a path (fc_drift_path) */
        fc_drift_path(d, left, tq, z[2], z[3], z[4], &p);
        l[k] = p.off + fc_drift_log(d, p.slope_end, p.lam, u[6] * (double)left);
    }
}

/* The body's distribution function tabulated at log points z0 + g dz, g < ng. */
struct fc_tab {
    double *F;
    size_t ng;
    double z0, dz;
};

static double fc_tab_cdf(const struct fc_tab *t, double z)
{
    const double p = (z - t->z0) / t->dz;
    if (!(p > 0))
        return p == 0 ? t->F[0] : 0;
    if (p >= (double)(t->ng - 1))
        return 1;
    const size_t g = (size_t)p;
    return t->F[g] + (p - (double)g) * (t->F[g + 1] - t->F[g]);
}

struct fc_mix {
    struct fc_kde k;
    const double *e;     /* event steps, sorted (n of them) */
    size_t n;
    double pi;           /* their share */
    const struct fc_gpd *g;
    double body_u;       /* the kernel estimate at the tail's threshold */
    double grid;         /* ms; 0: none */
    const double *l;     /* the drift's log levels (nl of them; 0: no drift) */
    size_t nl;
    struct fc_tab tab;   /* the body, with a drift */
    const double *elr;   /* the slowdown episodes' log heights (nel of them) */
    size_t nel;
    double pe;           /* their share of the regime's steps */
};

/* The body's distribution function at x (the kernel estimate and the tail). */
static double fc_body_cdf(const struct fc_mix *m, double x)
{
    if (m->g->ok && x > m->g->u)
        return 1 - fc_gpd_sf(m->g, x);
    if (m->g->ok) /* the body below the threshold holds 1 - p_exc */
        return m->body_u > 0 ? fmin(1, fc_kde_cdf(&m->k, x) / m->body_u) * (1 - m->g->p_exc)
                             : 0;
    return fc_kde_cdf(&m->k, x);
}

/* The regime's steps' distribution function at x, drifted: the body moved by each drawn
 * level. */
static double fc_level_cdf(const struct fc_mix *m, double x)
{
    double Fb = 0;
    if (m->nl && x > 0) {
        const double z = log(x);
        for (size_t j = 0; j < m->nl; j++)
            Fb += fc_tab_cdf(&m->tab, z - m->l[j]);
        Fb /= (double)m->nl;
    } else if (!m->nl) {
        Fb = fc_body_cdf(m, x);
    }
    return Fb;
}

/* The mixture's distribution function at x. */
static double fc_mix_cdf(const struct fc_mix *m, double x)
{
    if (m->grid > 0) /* constant between grid points: the smoothed law's mass at each */
        x = floor(x / m->grid + 1e-9) * m->grid + m->grid / 2;
    double Fb = fc_level_cdf(m, x);
    if (m->pe > 0) { /* a slowdown episode's step: the regime's, exp(lr) slower */
        double Fe = 0;
        for (size_t j = 0; j < m->nel; j++)
            Fe += fc_level_cdf(m, x * exp(-m->elr[j]));
        Fb = (1 - m->pe) * Fb + m->pe * Fe / (double)m->nel;
    }
    return (1 - m->pi) * Fb +
           (m->pi > 0 ? m->pi * (double)fc_rank(m->e, m->n, x) / (double)m->n : 0);
}

/* Tabulate m's body over [lo, hi] (lo > 0): at least FC_TAB_MIN points, h / 8 apart in
 * log where FC_TAB_MAX allow. F: FC_TAB_MAX values of room. */
static void fc_tab_fill(struct fc_mix *m, double lo, double hi, double *F)
{
    const double z0 = log(lo), span = log(hi) - z0;
    double ng = m->k.h > 0 ? span / (m->k.h / 8) + 1 : FC_TAB_MIN;
    ng = ng < FC_TAB_MIN ? FC_TAB_MIN : ng > FC_TAB_MAX ? FC_TAB_MAX : ng;
    m->tab = (struct fc_tab){.F = F, .ng = (size_t)ng, .z0 = z0,
                             .dz = span / ((double)(size_t)ng - 1)};
    for (size_t g = 0; g < m->tab.ng; g++)
        F[g] = fc_body_cdf(m, exp(z0 + (double)g * m->tab.dz));
}

int fc_step_quant(const double *v, size_t n, const double *evc, size_t ne, double pi,
                  const struct fc_step_drift *sd, double *q)
{
    if (!v || n == 0 || !q)
        return -EINVAL;
    if (!(pi > 0) || ne == 0 || !evc)
        pi = 0;
    if (pi > 1)
        pi = 1;
    int drift = sd && sd->d && sd->d->used && sd->left > 0;
    for (size_t i = 0; drift && i < n; i++)
        drift = v[i] > 0; /* the drift moves log step times */
    const size_t nl = drift ? FC_DRIFT_DRAWS : 0;
    double *b = malloc((3 * n + nl + (drift ? FC_TAB_MAX : 0)) * sizeof *b);
    if (!b)
        return -ENOMEM;
    double *e = b + n, *y = b + 2 * n, *l = b + 3 * n, *tabF = l + nl;
    double lmin = 0, lmax = 0;
    if (drift) {
        fc_drift_levels(sd->d, sd->left, l, nl);
        lmin = INFINITY, lmax = -INFINITY;
        for (size_t j = 0; j < nl; j++) {
            lmin = l[j] < lmin ? l[j] : lmin;
            lmax = l[j] > lmax ? l[j] : lmax;
        }
    }
    memcpy(b, v, n * sizeof *b);
    for (size_t j = 0; j < n; j++) /* an event's step: a regime step, drifted, plus a cost */
        e[j] = v[j] * (drift ? exp(l[j % nl]) : 1) + (ne ? evc[j % ne] : 0);
    fc_sort(e, n);
    struct fc_gpd g;
    fc_gpd_fit(b, n, &g); /* it reorders b: sorted again */
    fc_sort(b, n);
    const int logged = sd && sd->logged && sd->n_logged;
    struct fc_mix m = {.e = e, .n = n, .pi = pi, .g = &g,
                       .grid = logged ? fc_grid(sd->logged, sd->n_logged) : fc_grid(v, n)};
    fc_kde_fit(b, n, y, &m.k);
    if (g.ok)
        m.body_u = fc_kde_cdf(&m.k, g.u);
    /* brackets: the kernels reach 6 bandwidths past the steps seen; the tail 20 scales */
    const double reach = m.k.logsc ? exp(FC_KERN_REACH * m.k.h) : 1;
    const double pad = m.k.logsc ? 0 : FC_KERN_REACH * m.k.h;
    const double tail = g.ok ? 20 * g.sigma : 0;
    double blo = b[0] / reach - pad;
    double top = (e[n - 1] > b[n - 1] ? e[n - 1] : b[n - 1]) * reach + pad + tail;
    if (drift) { /* the body tabulated, then moved by the drawn levels */
        const double bhi = b[n - 1] * reach + pad + tail;
        fc_tab_fill(&m, blo, bhi, tabF);
        m.l = l;
        m.nl = nl;
        blo *= exp(lmin);
        top = e[n - 1] * reach + pad + tail;
        top = bhi * exp(lmax) > top ? bhi * exp(lmax) : top;
    }
    const struct fc_episodes *ep = sd ? sd->ep : NULL;
    if (ep && ep->n && ep->rate > 0) { /* episodes: their share, their heights */
        m.pe = fmin(ep->rate * ep->len_mean, FC_EPISODE_MAX_SHARE);
        m.elr = ep->lr;
        m.nel = ep->n;
        top *= exp(ep->lr_max);
    }
    double lo0 = blo - (m.grid > 0 ? m.grid : 0);
    double hi0 = top + m.grid;
    if (m.k.logsc && !(lo0 > 0))
        lo0 = 0;
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
