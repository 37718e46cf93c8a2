/* forecast.c — argus_forecast_run (forecast/forecast.h; docs/ALGORITHMS.md, "Forecast
 * (PRISM)"): it drives the pieces of forecast/internal.h — the series, periodic events and
 * change points (series.c), the attribution (attrib.c), the what-ifs (whatif.c) — picks
 * the current regime, and has forecast/sample.c draw the quantiles. Pure computation over
 * the store and the result: no I/O, no globals; its held steps x ranks tables live in the
 * store's scratch (argus_jobstore_scratch), its other temporaries are freed before it
 * returns.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

#define FC_SHORT_REGIME 30
#define FC_WARM_DEV 10.0 /* a leading step this many robust deviations past the median:
                            warm-up */


static void fc_note(char (*v)[ARGUS_FC_NOTE_LEN], size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fc_note(char (*v)[ARGUS_FC_NOTE_LEN], size_t *n, const char *fmt, ...)
{
    va_list ap;
    if (*n >= ARGUS_FC_MAX_NOTES)
        return;
    va_start(ap, fmt);
    vsnprintf(v[*n], ARGUS_FC_NOTE_LEN, fmt, ap);
    va_end(ap);
    (*n)++;
}

static double fc_median_copy(const double *v, size_t n, double *tmp)
{
    memcpy(tmp, v, n * sizeof *v);
    return fc_quantile_sel(tmp, n, 0.5);
}

/* ---- the forecast ----------------------------------------------------------------------- */

static uint32_t fc_block_len(const double *v, size_t n)
{
    double mu = 0, c0 = 0, c1 = 0;
    for (size_t i = 0; i < n; i++)
        mu += v[i];
    mu /= (double)n;
    for (size_t i = 0; i < n; i++) {
        c0 += (v[i] - mu) * (v[i] - mu);
        if (i)
            c1 += (v[i] - mu) * (v[i - 1] - mu);
    }
    const double rho = c0 > 0 ? c1 / c0 : 0;
    double b = 1.5 * cbrt((double)n);
    if (rho > 0 && rho < 0.99 && (1 + rho) / (1 - rho) > b)
        b = (1 + rho) / (1 - rho);
    if (b > (double)n / 4)
        b = (double)n / 4;
    return b < 1 ? 1 : (uint32_t)lround(b);
}

/* Quantiles of a short regime pulled away from their median (band widened). */
static void fc_widen(struct argus_fc_quant *q, double k)
{
    q->p10 = q->p50 - (q->p50 - q->p10) * k;
    q->p90 = q->p50 + (q->p90 - q->p50) * k;
    q->p99 = q->p50 + (q->p99 - q->p50) * k;
    if (q->p10 < 0)
        q->p10 = 0;
}

static void fc_add(struct argus_fc_quant *t, const struct argus_fc_quant *r, double e)
{
    t->p10 = r->p10 + e;
    t->p50 = r->p50 + e;
    t->p90 = r->p90 + e;
    t->p99 = r->p99 + e;
}

int argus_forecast_run(const struct argus_jobstore *js, const struct argus_result *res,
                       const struct argus_forecast_opts *o, struct argus_forecast *out)
{
    struct fc f;
    double *base = NULL, *evc = NULL, *wbase = NULL, *dtr = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if (!js || !o || o->n_whatif > ARGUS_FC_MAX_WHATIF || o->n_sims > 100000)
        return -EINVAL;
    for (size_t w = 0; w < o->n_whatif; w++)
        if (!(o->whatif[w].kind == ARGUS_FC_WI_DROP_SLOWEST ||
              (o->whatif[w].kind == ARGUS_FC_WI_DP && o->whatif[w].k >= 2 &&
               o->whatif[w].k <= 64) ||
              (o->whatif[w].kind == ARGUS_FC_WI_MB && o->microbatches >= 1 &&
               o->whatif[w].k >= 1 && o->whatif[w].k <= 4096)))
            return -EINVAL;
    memset(&f, 0, sizeof f);
    f.js = js;
    f.P = argus_jobstore_nranks(js);
    if ((rc = fc_build(&f, o->n_whatif > 0,
                       o->max_series && o->max_series < FC_MAX_SERIES ? o->max_series
                                                                      : FC_MAX_SERIES)) != 0)
        goto out;
    out->steps_done = f.n_before + f.n;
    out->elapsed_s = f.ms_before / 1e3;
    if (f.n < FC_MIN_STEPS) {
        fc_note(out->warn, &out->n_warn, "too few steps to forecast: %zu (at least %d)", f.n,
                FC_MIN_STEPS);
        goto out;
    }
    for (size_t i = 0; i < f.n; i++)
        out->elapsed_s += f.t[i] / 1e3;
    out->last_step = f.step[f.n - 1];
    if (out->last_step + 1 > out->steps_done) { /* marks before Argus saw any: the step
                                                   number says how many are done */
        fc_note(out->assume, &out->n_assume, "%llu steps done by the step number, %llu seen",
                (unsigned long long)(out->last_step + 1),
                (unsigned long long)out->steps_done);
        out->steps_done = out->last_step + 1;
    }
    if (o->total_steps == 0) {
        out->per_1000 = 1;
        out->steps_left = 1000;
        out->steps_total = out->steps_done + 1000;
        fc_note(out->assume, &out->n_assume, "planned steps unknown: the next 1,000 steps");
    } else {
        out->steps_total = o->total_steps;
        out->steps_left = o->total_steps > out->steps_done ? o->total_steps - out->steps_done
                                                           : 0;
        if (!out->steps_left)
            fc_note(out->warn, &out->n_warn, "the planned %llu steps are done",
                    (unsigned long long)o->total_steps);
    }

    /* periodic events, then change points on what is left */
    fc_periodic(&f, res, out);
    if ((rc = fc_changes(&f)) != 0)
        goto out;
    size_t start = 0;           /* series index of the regime's first step */
    double lr[FC_MAX_CHANGES + ARGUS_ANOMALY_MAX_HITS];
    size_t n_lr = 0, n_recur = 0;
    const size_t warm = f.n / 10 > 20 ? f.n / 10 : 20;
    double *rtmp = malloc((f.n + 1) * sizeof *rtmp); /* fc_regime_step's scratch */
    if (!rtmp) {
        rc = -ENOMEM;
        goto out;
    }
    double stair[FC_MAX_CHANGES];
    unsigned char in_ep[FC_MAX_CHANGES] = { 0 };
    for (size_t k = 0; k < f.nchg; k++)
        stair[k] = f.chg[k] >= warm ? fc_regime_step(&f, k, rtmp) : NAN;
    struct fc_episodes ep = { 0 };
    fc_episodes_find(&f, stair, in_ep, &ep);
    for (size_t k = 0; k < f.nchg; k++) {
        if (f.chg[k] > start)
            start = f.chg[k];
        if (f.chg[k] >= warm && !in_ep[k]) { /* past the warm-up: such changes may recur,
                                                their size the stair's (forecast/regimes.c) */
            lr[n_lr++] = stair[k];
            n_recur++;
        }
    }
    free(rtmp);
    for (size_t a = 0; res && a < res->n_anomalies; a++) {
        const struct argus_anomaly *an = &res->anomalies[a];
        if (an->kind != ARGUS_AK_STEP_REGRESSION)
            continue;
        size_t i = 0;
        while (i < f.n && f.step[i] < an->step_first)
            i++;
        int near = 0; /* the same change as one of the own ones */
        for (size_t k = 0; k < f.nchg; k++)
            near |= (f.chg[k] > i ? f.chg[k] - i : i - f.chg[k]) <= 5;
        if (i > start && i < f.n)
            start = i;
        if (!near && i >= warm && an->slowdown > 0 && n_lr < sizeof lr / sizeof lr[0]) {
            lr[n_lr++] = log(an->slowdown);
            n_recur++;
        }
        out->n_changes += !near;
    }
    out->n_changes += (uint32_t)f.nchg;
    size_t w_end = 0; /* the warm-up's end: its own, or a change point within it */
    for (size_t k = 0; k < f.nchg; k++)
        if (f.chg[k] < warm && f.chg[k] > w_end)
            w_end = f.chg[k];
    { /* warm-up: early steps (compilation, caches) at more than twice the median */
        double *tmp = malloc((f.n + 1) * sizeof *tmp);
        size_t m = 0, last_slow = 0;
        if (!tmp) {
            rc = -ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < f.n; i++)
            if (!f.ev[i])
                tmp[m++] = f.t[i];
        const double med_all = fc_quantile_sel(tmp, m, 0.5);
        for (size_t i = 0; i < m; i++)
            tmp[i] = fabs(tmp[i] - med_all);
        const double sd_rob = 1.4826 * fc_quantile_sel(tmp, m, 0.5);
        free(tmp);
        for (size_t i = 0; i < warm && i < f.n; i++)
            if (!f.ev[i] && f.t[i] > 2 * med_all)
                last_slow = i + 1;
        /* and the first steps from there on while each is far past the spread (a first
         * step's set-up: 10 robust deviations above the median), the first usual one
         * ending the warm-up */
        while (last_slow < warm && last_slow < f.n && !f.ev[last_slow] && sd_rob > 0 &&
               f.t[last_slow] > med_all + FC_WARM_DEV * sd_rob)
            last_slow++;
        if (last_slow > start && last_slow + FC_MIN_STEPS <= f.n)
            start = last_slow;
        if (last_slow > w_end && last_slow + FC_MIN_STEPS <= f.n)
            w_end = last_slow;
    }
    struct fc_drift span = {0}; /* the fit from the warm-up's end (fc_drift_band) */
    { /* change points along a drift are the drift (forecast/drift.c; not with a period:
       * its test would fit the alternating steps themselves, not their periods) */
        const size_t s2 = f.period > 1 ? start
                                       : fc_drift_span(&f, w_end, start,
                                                       fc_block_len(f.t + w_end, f.n - w_end),
                                                       &span);
        if (s2 != start)
            fc_note(out->assume, &out->n_assume, "change points from step %llu to %llu "
                    "taken as one drift", (unsigned long long)f.step[s2],
                    (unsigned long long)f.step[start]);
        start = s2;
    }
    if (start > 0 && start < warm)
        fc_note(out->assume, &out->n_assume, "steps before %llu taken as warm-up",
                (unsigned long long)f.step[start]);
    out->regime_start = f.step[start];
    out->regime_steps = f.n - start;

    /* the regime's base series (events out, the most recent ARGUS_FC_MAX_FIT) */
    base = malloc((f.n + 1) * sizeof *base);
    evc = malloc(2 * (f.n + 1) * sizeof *evc); /* per occurrence, then per step */
    wbase = malloc(2 * (f.n + 1) * sizeof *wbase);
    if (!base || !evc || !wbase) {
        rc = -ENOMEM;
        goto out;
    }
    size_t nb = 0, ne = 0;
    for (size_t i = start; i < f.n; i++)
        if (!f.ev[i])
            base[nb++] = f.t[i];
    size_t fit0 = 0;
    if (nb > ARGUS_FC_MAX_FIT)
        fit0 = nb - ARGUS_FC_MAX_FIT;
    const double *fit = base + fit0;
    const size_t nfit = nb - fit0;
    if (nfit < 2) {
        fc_note(out->warn, &out->n_warn, "too few steps in the current regime (from step %llu)",
                (unsigned long long)out->regime_start);
        goto out;
    }
    /* steps that repeat every f.period steps (forecast/series.c; no event among them): the
     * block length, the drift and the sampler take the sums of whole periods ending at the
     * last step (in wbase's second half), so that the pattern is not noise; the law of one
     * step keeps the steps */
    const uint32_t per = f.period > 1 && nfit / f.period >= 2 &&
                                 out->steps_left >= f.period ? f.period : 1;
    double *const psum = wbase + f.n + 1;
    const size_t nps = per > 1 ? fc_period_sums(fit, nfit, per, psum) : nfit;
    const double *const sfit = per > 1 ? psum : fit;
    double fastest = INFINITY; /* no path can be faster than this step all along */
    for (size_t i = 0; i < f.n; i++)
        if (f.t[i] > 0 && f.t[i] < fastest)
            fastest = f.t[i];
    if (!isfinite(fastest))
        fastest = 0;
    const double med = fc_median_copy(fit, nfit, wbase);
    out->step_p50_ms = med;
    out->step_p90_ms = fc_quantile_sel(wbase, nfit, 0.9);
    for (size_t i = 0; i < nfit; i++)
        out->step_mean_ms += fit[i] / (double)nfit;
    for (size_t i = 0; i < f.n; i++)
        if (f.ev[i] == 1) /* an occurrence: the excess of its steps (forecast/series.c) */
            evc[ne++] = fc_event_cost(&f, i, med);
    double *const evs = evc + ne; /* the events' steps one by one: the law of one step */
    size_t nes = 0;
    for (size_t i = 0; i < f.n; i++)
        if (f.ev[i])
            evs[nes++] = f.t[i] > med ? f.t[i] - med : 0;
    uint64_t ev_left = 0;
    for (size_t p = 0; p < out->n_periodic; p++) {
        struct argus_fc_periodic *pe = &out->periodic[p];
        size_t k = 0;
        double *tmpc = wbase;
        for (size_t i = 0; i < f.n; i++)
            if (f.ev[i] == 1 && f.step[i] <= pe->last_step &&
                (pe->last_step - f.step[i]) % pe->period_steps == 0)
                tmpc[k++] = fc_event_cost(&f, i, med);
        pe->cost_ms = k ? fc_median_copy(tmpc, k, tmpc + k) : 0;
        const uint64_t a = pe->last_step, end = out->last_step + out->steps_left;
        pe->left = end > a ? (end - a) / pe->period_steps -
                             (out->last_step - a) / pe->period_steps : 0;
        ev_left += pe->left;
        fc_note(out->assume, &out->n_assume, "periodic event every %u steps, %.1f ms each: "
                "%llu seen, %llu expected in the steps left", pe->period_steps, pe->cost_ms,
                (unsigned long long)pe->seen, (unsigned long long)pe->left);
    }
    /* a rate needs two events: the first change seen is the one that started the
     * regime, the ones after it say how often such changes come */
    const double rate = n_recur >= 2 ? (double)(n_recur - 1) / (double)f.n : 0; /* per step
                                                                            of the series */
    out->block_len = fc_block_len(sfit, nps); /* periods, then steps (x per) */
    /* the regime's drift (forecast/drift.c): a significant damped trend is taken out of
     * the steps (brought to the last step's level) and extrapolated, its slope drawn */
    struct fc_drift dr;
    if (!(dtr = malloc(nfit * sizeof *dtr)) || (rc = fc_drift_fit(sfit, nps, out->block_len,
                                                                  &dr)) != 0) {
        rc = -ENOMEM;
        goto out;
    }
    if (per == 1) /* a stair along a drift that is not significant: its spread, in the band */
        fc_drift_band(&span, nps, &dr);
    fc_drift_detrend(&dr, sfit, nps, dtr);
    if (dr.band)
        fc_note(out->assume, &out->n_assume, "a stair along a slope that is not significant "
                "(%+.2f %% per 1,000 steps, t %.1f): none assumed, its spread (+-%.2f %%) in "
                "the band", expm1(1000 * span.st_s) * 100, dr.t, 1000 * dr.se * 100);
    else if (dr.used) {
        out->block_len = fc_block_len(dtr, nps);
        fc_note(out->assume, &out->n_assume, "drift: %+.2f %% per 1,000 steps at step %llu "
                "(+-%.2f, t %.1f, R2 %.2f), damped (half-life %.0f steps); %+.1f %% over the "
                "fit%s", expm1(1000 * dr.slope_end / per) * 100,
                (unsigned long long)out->last_step,
                1000 * dr.se_end / per * 100, dr.t, dr.r2, log(2.0) / dr.lam * per,
                expm1(dr.slope > 0 ? dr.move : -dr.move) * 100,
                dr.stairs ? ", in stairs (two levels, each moving with it)" : "");
    }
    fc_note(out->assume, &out->n_assume, "fitted on %zu steps from step %llu (current "
            "regime), block bootstrap of %u steps", nfit, (unsigned long long)out->regime_start,
            out->block_len * per);
    if (per > 1)
        fc_note(out->assume, &out->n_assume, "steps repeat every %u steps: change points, "
                "drift and bootstrap on the sums of whole periods (%zu fitted)", per, nps);
    if (rate > 0) { /* forecast/sample.c: regimes about the current level, bounded */
        double lmax = 0;
        for (size_t k = 0; k < n_lr; k++)
            lmax = fabs(lr[k]) > lmax ? fabs(lr[k]) : lmax;
        fc_note(out->assume, &out->n_assume, "change points recur at %.2g per step (%zu "
                "seen past the warm-up, the first not counted): each starts a regime about "
                "the current level (its mean), up or down by one of the stairs seen (at most "
                "x%.2f); they do not compound", rate, n_recur, exp(lmax));
    }
    if (ep.n) /* forecast/sample.c: on top of the level, only ever slower */
        fc_note(out->assume, &out->n_assume, "slowdown episodes recur at %.2g per step (%zu "
                "seen, the level back after each; %.0f steps long on average, at most "
                "x%.2f): each as long and as slow as one of those seen", ep.rate, ep.n,
                ep.len_mean, exp(ep.lr_max));
    struct fc_episodes ep_per = ep; /* in periods */
    ep_per.rate *= per;
    ep_per.len_mean /= per;
    for (size_t k = 0; k < ep_per.n; k++)
        ep_per.len[k] /= per;
    const uint64_t seed = o->seed ? o->seed : 1;
    struct argus_fc_quant rq;
    const uint64_t pleft = out->steps_left / per; /* the periods left */
    if ((rc = fc_sample_drift(dtr, nps, out->block_len, pleft, evc, ne, ev_left, rate * per,
                              lr, n_lr, o->n_sims, seed, &dr, &ep_per, &rq)) != 0)
        goto out;
    if (per > 1) { /* the steps past the last whole period, at the paths' own levels */
        const double k = (double)out->steps_left / ((double)pleft * per);
        rq.p10 *= k, rq.p50 *= k, rq.p90 *= k, rq.p99 *= k;
        out->block_len *= per;
    }
    /* a short regime (in whole periods: per steps are one look at the pattern) */
    const double nfit_eff = (double)(nfit / per);
    const double widen = nfit_eff < FC_SHORT_REGIME ? sqrt(FC_SHORT_REGIME / nfit_eff) : 1;
    if (widen > 1) {
        fc_widen(&rq, widen);
        fc_note(out->warn, &out->n_warn, "regime just changed (step %llu): %zu steps fitted, "
                "band widened x%.2f", (unsigned long long)out->regime_start, nfit, widen);
    }
    fc_quant_floor(&rq, (double)out->steps_left * fastest / 1e3);
    if (f.n < FC_SHORT_REGIME)
        fc_note(out->warn, &out->n_warn, "too few steps: %zu", f.n);
    out->remaining_s = rq;
    fc_add(&out->total_s, &rq, out->elapsed_s);
    const double ev_share = out->steps_left ? (double)ev_left * (ne ? (double)nes / (double)ne
                                                                    : 1) /
                                                  (double)out->steps_left
                                            : 0; /* the events' steps among the steps left */
    if (o->step_dist) { /* with a drift: mixed over the paths' levels in the steps left */
        double *sq = dtr;
        size_t nsq = nfit;
        if (per > 1) { /* the steps, each at its period's detrended level (wbase: free) */
            const size_t off = nfit % per;
            for (size_t i = off; i < nfit; i++)
                wbase[i - off] = fit[i] * dtr[(i - off) / per] / psum[(i - off) / per];
            sq = wbase;
            nsq = nfit - off;
        }
        const struct fc_step_drift sdr = {.d = &dr, .left = pleft, .logged = fit,
                                          .n_logged = nfit, .ep = &ep};
        if ((rc = fc_step_quant(sq, nsq, evs, nes, ev_share, &sdr, out->step_q_ms)) != 0)
            goto out;
        out->has_step_q = 1;
    }
    int short_step = 0; /* a walked step some rank lacks: look for a missing mark */
    for (size_t i = 0; i < f.nh; i++)
        short_step |= f.cntw[i] < f.P;
    for (uint32_t r = 0; short_step && r < f.P; r++)
        if (argus_jobstore_missing_since(js, r) != UINT64_MAX) {
            fc_note(out->warn, &out->n_warn, "composition mismatch: rank %u missing from step "
                    "%llu on", r, (unsigned long long)argus_jobstore_missing_since(js, r));
            break;
        }
    if (res && res->data_level == ARGUS_DL_STEPS)
        fc_note(out->assume, &out->n_assume, "step times only: no phase contributors");

    /* held regime steps: sync tax, critical path, contributors */
    const size_t i0 = start > f.h0 ? start - f.h0 : 0;
    fc_crit_sync(&f, i0, out);
    fc_contrib(&f, i0, out->step_p90_ms, out);
    if (ev_left && out->n_contrib < ARGUS_FC_MAX_CONTRIB) {
        struct argus_fc_contrib *c = &out->contrib[out->n_contrib++];
        snprintf(c->name, sizeof c->name, "periodic");
        double m = 0;
        for (size_t i = 0; i < ne; i++)
            m += evc[i] / (double)ne;
        c->ms = out->steps_left ? (double)ev_left * m / (double)out->steps_left : 0;
        c->excess_ms = c->ms;
        c->share = out->step_p90_ms > 0 ? c->ms / out->step_p90_ms : 0;
    }
    for (size_t a = 1; a < out->n_contrib; a++) /* largest first */
        for (size_t b = a; b > 0 && out->contrib[b].ms > out->contrib[b - 1].ms; b--) {
            struct argus_fc_contrib t = out->contrib[b];
            out->contrib[b] = out->contrib[b - 1];
            out->contrib[b - 1] = t;
        }

    /* what-ifs */
    for (size_t w = 0; w < o->n_whatif; w++) {
        struct argus_fc_whatif *wo = &out->whatif[out->n_whatif++];
        size_t nw;
        if (o->whatif[w].kind == ARGUS_FC_WI_DROP_SLOWEST)
            snprintf(wo->name, sizeof wo->name, "drop-slowest");
        else if (o->whatif[w].kind == ARGUS_FC_WI_MB)
            snprintf(wo->name, sizeof wo->name, "mb=%d", o->whatif[w].k);
        else
            snprintf(wo->name, sizeof wo->name, "dp=%d", o->whatif[w].k);
        if (o->whatif[w].kind == ARGUS_FC_WI_MB)
            rc = fc_whatif_mb(&f, res, i0, o->microbatches, (uint32_t)o->whatif[w].k, wbase,
                              &nw, wo);
        else
            rc = fc_whatif_series(&f, res, i0, &o->whatif[w], seed + w, wbase, &nw, wo);
        if (rc != 0)
            goto out;
        if (nw < 2) {
            if (o->whatif[w].kind != ARGUS_FC_WI_MB || !wo->note[0]) /* else: its why */
                snprintf(wo->note, sizeof wo->note, "no held steps in the current regime");
            wo->remaining_s = out->remaining_s;
            wo->total_s = out->total_s;
            continue;
        }
        struct argus_fc_quant wq;
        /* the regime's drift moves the what-if's steps as it moves the job's (held steps
         * end where the fit ends; with a period the drift is of period sums: not applied,
         * said in the what-if's note) */
        const int wdrift = dr.used && per == 1;
        if (wdrift)
            fc_drift_detrend_tail(&dr, wbase, nw, nfit - 1);
        else if (dr.used && !wo->note[0])
            snprintf(wo->note, sizeof wo->note, "the regime's drift is not applied (steps "
                     "repeat every %u steps)", per);
        if ((rc = fc_sample_drift(wbase, nw, out->block_len, out->steps_left, evc, ne,
                                  ev_left, rate, lr, n_lr, o->n_sims, seed,
                                  wdrift ? &dr : NULL, &ep, &wq)) != 0)
            goto out;
        if (widen > 1)
            fc_widen(&wq, widen);
        double wfast = fastest; /* 0: none seen */
        for (size_t i = 0; i < nw; i++)
            wfast = wbase[i] > 0 && (wbase[i] < wfast || wfast == 0) ? wbase[i] : wfast;
        fc_quant_floor(&wq, (double)out->steps_left * wfast / 1e3);
        wo->remaining_s = wq;
        fc_add(&wo->total_s, &wq, out->elapsed_s);
        wo->step_p50_ms = fc_quantile_sel(wbase, nw, 0.5); /* at the fit's last level */
        if (o->step_dist) {
            const struct fc_step_drift wsd = {.d = wdrift ? &dr : NULL,
                                              .left = out->steps_left, .ep = &ep};
            if ((rc = fc_step_quant(wbase, nw, evs, nes, ev_share, &wsd, wo->step_q_ms)) != 0)
                goto out;
            wo->has_step_q = 1;
        }
    }
    out->valid = 1;
    rc = 0;
out:
    fc_free(&f);
    free(base);
    free(evc);
    free(wbase);
    free(dtr);
    return rc;
}