/* internal.h — internal to forecast/: what the forecast's files share. The RNG
 * (forecast/sample.c) and order statistics (forecast/order.c): no allocation, no state
 * beyond the caller's seed; the
 * run's working set, struct fc, and its builders: the series (forecast/series.c), the
 * attribution (forecast/attrib.c: sync tax, critical path, contributors) and the
 * what-ifs (forecast/whatif.c). argus_forecast_run (forecast/forecast.c) drives them.
 */
#ifndef ARGUS_FORECAST_INTERNAL_H
#define ARGUS_FORECAST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "forecast/forecast.h"
#include "store/jobstore.h"

/* forecast/sample.c. splitmix64: the next value of the sequence of state *s; uniform in
 * [0, 1). */
uint64_t fc_rng_next(uint64_t *s);
double fc_rng_unif(uint64_t *s);
/* forecast/order.c. Sort ascending (introsort: O(n log n), in place); the p-quantile
 * (0..1) of sorted v[0..n) by linear interpolation, 0 when n is 0. */
void fc_sort(double *v, size_t n);
double fc_quantile_sorted(const double *v, size_t n, double p);
/* The same p-quantile of unsorted v[0..n) by selection (v reordered): O(n) expected. */
double fc_quantile_sel(double *v, size_t n, double p);
/* The mean of the middle half of v[0..n) (the values ranked n/4 .. n - n/4 - 1; v[0] when
 * n < 2, 0 when n is 0), v reordered. O(n) expected, by selection. */
double fc_midmean(double *v, size_t n);


#define FC_MIN_STEPS 8
#define FC_MAX_CHANGES 16
#define FC_MAX_EPISODES 8

/* Slowdown episodes seen (forecast.c, fc_episodes_find): a regime between two own change
 * points past the warm-up that rose by a stair and came back down to within half of it.
 * They recur at their observed rate, each as long and as slow as one of those seen, on
 * top of the level (fc_sample_drift); their change points are not among the recurring
 * regimes. Rate and lengths in the units of the series sampled (steps, or periods). */
struct fc_episodes {
    double rate;                  /* episodes per step (period) */
    size_t n;
    double len[FC_MAX_EPISODES];  /* each one's steps (periods) */
    double lr[FC_MAX_EPISODES];   /* its level's log ratio over the regimes either side */
    double len_mean, lr_max;      /* over them (0 when none) */
};
#define FC_MAX_SERIES 16384u  /* the most recent steps looked at (older: counted, summed) */

/* Everything one run works on; freed by fc_free. */
struct fc {
    const struct argus_jobstore *js;
    uint32_t P;
    /* the job series, every step seen: ids ascending, step times in ms */
    uint64_t *step;
    double *t;
    size_t n;
    size_t h0;           /* index of the first held step (steps before it were evicted) */
    unsigned char *ev;   /* 1: a periodic event's hit, 2: another step of it (fc_periodic) */
    /* held steps x ranks: own work (wall less collective and p2p time) and collective
     * time (what the DP ring term scales), ms; NAN where the rank holds no step */
    double *work, *comm; /* only with what-ifs (NULL otherwise) */
    size_t nh;
    /* per held step, always: the slowest rank's work and its rank (-1: none), the sum and
     * count of the ranks' work (the sync tax): the store's figures, or the walk's */
    double *mxw, *sumw;
    int32_t *argw;
    uint32_t *cntw;
    /* evicted steps older than the series (it keeps the last FC_MAX_SERIES): counted and
     * summed only */
    size_t n_before;
    double ms_before;
    /* own change points (indices into the series), ascending */
    size_t chg[FC_MAX_CHANGES];
    double chg_lr[FC_MAX_CHANGES];
    size_t nchg;
    uint32_t period; /* fc_changes: the steps' short period (1: none), forecast/series.c */
};

/* forecast/series.c. fc_build: the job series of f (f->js, f->P set, the rest zero):
 * the evicted steps' walls (the last max_series steps in all; older ones counted, and
 * summed from the store's running sum), then the held steps' slowest rank and the
 * per-held-step work figures, from the store's per-step figures
 * (argus_jobstore_step_figs): O(max_series) whatever P and the job's length. tables: the
 * held steps x ranks work and collective tables too (what-ifs; the store's scratch),
 * walking every held cell, which gives the same figures. 0 or -ENOMEM.
 * fc_periodic: the analysis' periodic iteration_jitter findings marked in f->ev (1:
 * an occurrence's hit, 2: another of its steps).
 * fc_changes: own change points (binary segmentation of the log step times). 0 or
 * -ENOMEM. fc_free: f's own memory. */
int fc_build(struct fc *f, int tables, size_t max_series);
void fc_periodic(struct fc *f, const struct argus_result *res, struct argus_forecast *o);
/* forecast/series.c: an occurrence's steps are its hit (f->ev 1) and the steps beside it
 * that the pattern raises too (f->ev 2, fc_periodic). fc_event_cost: the excess over med
 * of the occurrence whose hit is at index i, summed over its steps. */
double fc_event_cost(const struct fc *f, size_t i, double med);
int fc_changes(struct fc *f);
void fc_free(struct fc *f);
/* forecast/series.c: a short period. fc_period: k in 2..FC_MAX_PERIOD when v[0..n) (ms,
 * > 0) repeat every k steps — the k-step means (whole periods ending at the last step,
 * at least FC_PERIOD_MIN_BLOCKS of them) scatter, times sqrt(k), less than
 * FC_PERIOD_RATIO of the single steps (medians of first differences, log scale), and the
 * phases' median offsets from their period's mean span FC_PERIOD_AMP robust deviations of
 * the steps about them — the smallest such k, else 1; tmp: 3 n values of scratch. O(n)
 * per k. fc_period_sums: the sums of the whole periods of k steps ending at v[n - 1]
 * (the first n % k steps left out) into out; their number, n / k. With a period,
 * fc_changes segments the period means and then looks for a new regime in the last
 * periods (FC_TAIL_MIN to FC_TAIL_MAX of them, FC_TAIL_T long-run deviations). */
#define FC_MAX_PERIOD 8
#define FC_PERIOD_MIN_BLOCKS 8
#define FC_PERIOD_RATIO 0.35
#define FC_PERIOD_AMP 3.0
#define FC_TAIL_MIN 4
#define FC_TAIL_MAX 64
#define FC_TAIL_T 8.0
uint32_t fc_period(const double *v, size_t n, double *tmp);
size_t fc_period_sums(const double *v, size_t n, uint32_t k, double *out);

/* forecast/regimes.c: the size of own change point k of f (k < f->nchg; f->chg
 * ascending): the log ratio of the levels of the regimes either side of it (from the
 * previous change point, or the series' start, to the next one, or its end), each the
 * mean of its steps (events out) between their 10th and 90th percentiles; f->chg_lr[k]
 * when either has no step. tmp: f->n values of scratch. O(n). */
double fc_regime_step(const struct fc *f, size_t k, double *tmp);
/* forecast/regimes.c: the slowdown episodes among f's change points into ep: stair[k]
 * the size of change k (fc_regime_step; NAN: in the warm-up, not judged), change k rising
 * by at least FC_EPISODE_MIN_LR, change k + 1 falling back to within half of that, and
 * the current regime (after the changes that follow) within half of it of that level;
 * their len and lr (and the mean length, the highest lr), and their rate per step of
 * f's series. Marks both changes of each in in_ep[0..f->nchg) (zeroed by the caller).
 * O(f->nchg). */
#define FC_EPISODE_MIN_LR 0.0953 /* log(1.1): a slowdown of 10 % at least */
#define FC_EPISODE_MAX_SHARE 0.5 /* episodes hold at most half of the steps left */
void fc_episodes_find(const struct fc *f, const double *stair, unsigned char *in_ep,
                      struct fc_episodes *ep);

/* forecast/attrib.c, over the held regime steps [i0, f->nh): the sync tax and the ranks
 * most often slowest; the phase contributors of the steps at or past p90_ms. */
void fc_crit_sync(const struct fc *f, size_t i0, struct argus_forecast *o);
void fc_contrib(const struct fc *f, size_t i0, double p90_ms, struct argus_forecast *o);

/* forecast/whatif.c: the step series (ms, out[0..*nout), at most the held steps) of the
 * held regime steps [i0, f->nh) under what-if w (f's tables built), its note in wo.
 * 0 or -ENOMEM. */
int fc_whatif_series(const struct fc *f, const struct argus_result *res, size_t i0,
                     const struct argus_fc_whatif_spec *w, uint64_t seed, double *out,
                     size_t *nout, struct argus_fc_whatif *wo);

/* forecast/whatif_mb.c: the same for m1 microbatches instead of m (the 1F1B schedule
 * re-run over the layout's pipeline stages): out[0..*nout) and wo's note; *nout 0 and the
 * note saying why when the held steps lack forward/backward phases. 0. */
int fc_whatif_mb(const struct fc *f, const struct argus_result *res, size_t i0,
                 uint32_t m, uint32_t m1, double *out, size_t *nout,
                 struct argus_fc_whatif *wo);

/* forecast/tail.c: a generalised Pareto law of the excesses over u of a regime's step
 * times (shape xi, scale sigma; p_exc of the steps exceed u; emp_mean their mean
 * excess). fc_gpd_fit on v[0..n), reordered so that v[g->e0..n) are the excesses' steps,
 * ascending: 1 and g->ok when fitted (n >= 200, at least 10 excesses), else 0.
 * fc_gpd_draw: an excess at uniform unif. fc_gpd_sf: P(step > x) for
 * x past u (p_exc at or below it). */
struct fc_gpd {
    int ok;
    double u, xi, sigma, p_exc, emp_mean;
    size_t e0;
};
int fc_gpd_fit(double *v, size_t n, struct fc_gpd *g);
double fc_gpd_draw(const struct fc_gpd *g, double unif);
double fc_gpd_sf(const struct fc_gpd *g, double x);

/* forecast/stepdist.c: q[0..ARGUS_FC_NSTEPQ) = P1..P99 of one step drawn at random from
 * the steps left: a kernel estimate of v[0..n) (ms, n >= 1; log scale, Silverman's
 * bandwidth, the log variance kept) and, at share pi of the steps, one of them plus an
 * event cost from evc[0..ne); rounded to the grid the steps were logged on, if any (those
 * of sd->logged[0..n_logged) when given, else v's). With sd->d used (v then at the fit's
 * last level, fc_drift_detrend) and sd->left > 0 steps left (in d's units: periods with
 * a period), the mixture over the steps left of that law moved as fc_sample_drift moves
 * a path: each drawn path's slope error, decay and level error, at a position uniform
 * over the steps left (fc_drift_log). sd NULL: no drift, v's grid. 0, -EINVAL or
 * -ENOMEM. */
struct fc_step_drift {
    const struct fc_drift *d;     /* NULL or unused: no drift */
    uint64_t left;
    const double *logged;         /* NULL: v */
    size_t n_logged;
    const struct fc_episodes *ep; /* NULL or none: no slowdown episodes; else at their
                                     share of the steps (rate x mean length, at most
                                     FC_EPISODE_MAX_SHARE) the law moved by exp(lr) of one
                                     of them */
};
int fc_step_quant(const double *v, size_t n, const double *evc, size_t ne, double pi,
                  const struct fc_step_drift *sd, double *q);

/* forecast/drift.c: the current regime's drift, a damped trend of the log step time
 * (docs/ALGORITHMS.md, "Drift"). fc_drift_fit on the regime's steps v[0..n) (ms), b the
 * bootstrap's block: d->used when significant (t >= 3 against the batch medians' own
 * scatter, inflated by their residuals' autocorrelation) and a trend, not levels
 * (R^2 >= 0.6, a smaller residual sum of squares than two levels split at the best
 * point) or a staircase (d->stairs: those two levels and one slope moving both, the
 * slope and the step of the trend's sign, the slope's t >= 3; its end level, d->lvl
 * off the line's, the last level's), moving the level by >= 1 % over the span. slope
 * (log per step) at the span's centre tc, slope_end at its last step, se and se_end
 * theirs, df their Student degrees of freedom; lam the slope's decay per step (its
 * half-life: at most the span); move the fitted log change over the span; bt_err the
 * model's own extrapolation error. 0 or -ENOMEM. fc_drift_detrend: v brought to the
 * level of its last step (a copy when unused). fc_drift_log: the log level j steps past
 * the last one, for slope_end (a drawn slope at the end) decaying at lam (d->lam: the
 * fit's), relative to it. */
struct fc_drift {
    int used;
    double slope, se, slope_end, se_end, df, t, r2, ac, lam, move, tc, gend, icpt;
    double sse_step; /* the batch medians' residual sum of squares as two levels */
    double arm; /* the end level's lever: its log change per unit of slope error */
    double s1, se1, s2, se2, half, lam_min; /* the halves' slopes, their distance */
    double bt_err, bt_span; /* |log error| of the mean level over the regime's second
                               half (bt_span steps) by the fit on its first half */
    int stairs; /* used as a staircase: two levels and a slope moving both, one sign */
    double lvl; /* the end level's log offset from the trend's (the staircase's last
                   level; 0 for a trend) */
    double st_s, st_se, st_df; /* the staircase's common slope, its standard error and
                                  degrees of freedom (st_df 0: no staircase fitted) */
    int band; /* fc_drift_band: used for the band only (no slope at the centre) */
};
int fc_drift_fit(const double *v, size_t n, uint32_t b, struct fc_drift *d);
void fc_drift_detrend(const struct fc_drift *d, const double *v, size_t n, double *out);
double fc_drift_log(const struct fc_drift *d, double slope_end, double lam, double j);
/* fc_drift_lam: the slope's decay per step from the halves' slopes s1, s2 (same sign,
 * |s2| < |s1|: -log(|s2 / s1|) / half, |s2 / s1| at least 0.05), at least lam_min. */
double fc_drift_lam(const struct fc_drift *d, double s1, double s2);
/* fc_drift_path: one path's drift, the same in the sampler and in the law of one step,
 * from its draws: tq the slope error's Student t, z1 and z2 normals of the halves'
 * slopes' errors, zb a normal of the model error; left the steps left. off: the log level
 * at the cut (the end level moved by arm times the slope error, plus the model error of
 * sd 1.25 bt_err grown as sqrt(left / bt_span), at most x3); slope_end and lam: the
 * path's end slope and decay, for fc_drift_log. No allocation. */
struct fc_drift_path {
    double off, slope_end, lam;
};
void fc_drift_path(const struct fc_drift *d, uint64_t left, double tq, double z1, double z2,
                   double zb, struct fc_drift_path *p);
/* fc_drift_detrend_tail: fc_drift_detrend in place on v[0..n) taken as the steps at the
 * fit's indices last - n + 1 .. last (a what-if's held steps, which end where the fit
 * ends). */
void fc_drift_detrend_tail(const struct fc_drift *d, double *v, size_t n, size_t last);
/* fc_drift_span: the regime's first step: w_end (the warm-up's end) instead of start
 * when the own change points past w_end all have one sign, start is one of them, and a
 * significant drift of that sign fits the series from w_end (the steps drift, they do not
 * change regime), else start. *span: that fit (zero when the changes do not qualify or
 * the series is too short for one). O(n). */
size_t fc_drift_span(const struct fc *f, size_t w_end, size_t start, uint32_t b,
                     struct fc_drift *span);
/* fc_drift_band: a regime of n steps (n >= 2) that starts at a stair along a drift that
 * is not significant (span: fc_drift_span's fit, a staircase fitted, not used) and has no
 * drift of its own (d, its fit, not used) keeps that drift's uncertainty: d becomes a
 * drift for the band only (used and band set; slope, slope_end and lvl 0, so that
 * detrending moves nothing), each path drawing its slope about zero with the
 * staircase's common slope's root mean square under its sampling law, sqrt(st_s^2 +
 * st_se^2), as standard error (se, se_end; df st_df), from the regime's mean (arm
 * (n - 1) / 2), decaying at the span's lam_min, with no model error of its own (bt_err
 * 0). Otherwise d is left as it is. No allocation. */
void fc_drift_band(const struct fc_drift *span, size_t n, struct fc_drift *d);
/* forecast/sample.c: argus_forecast_sample with the drift d (NULL or unused: none): each
 * path draws its end slope (Student t about slope_end; the end level moved by arm times
 * the same slope error) and its decay (fc_drift_lam of
 * the halves' slopes drawn with their standard errors), and scales its steps left by the
 * mean of exp(fc_drift_log) over them, times exp of a normal level error of sd
 * 1.25 bt_err (the mean of |N(0, s)| is 0.8 s) grown with the horizon as
 * sqrt(left / bt_span) (at most x3); base detrended (fc_drift_detrend). */
int fc_sample_drift(const double *base, size_t n, uint32_t b, uint64_t left,
                    const double *ev_ms, size_t n_ev, uint64_t ev_count, double rate,
                    const double *lr, size_t n_lr, uint32_t n_sims, uint64_t seed,
                    const struct fc_drift *d, const struct fc_episodes *ep,
                    struct argus_fc_quant *q);

/* forecast/sample.c: quantiles q raised to lo at least (a path can be no faster than the
 * steps left at the fastest step seen: max(X, lo) has quantiles max(q, lo)). */
void fc_quant_floor(struct argus_fc_quant *q, double lo);

#endif /* ARGUS_FORECAST_INTERNAL_H */
