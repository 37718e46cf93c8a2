/* forecast.c — argus_forecast_run (forecast/forecast.h; docs/ALGORITHMS.md, "Forecast
 * (PRISM)"): the job step-time series from the store (evicted steps' walls, then the held
 * steps' slowest rank), periodic events and change points (the analysis' and its own),
 * the current regime, the sync tax, critical-path ranks and phase contributors, what-ifs,
 * and the quantiles by forecast/sample.c. Pure computation over the store and the result:
 * no I/O, no globals; its held steps x ranks tables live in the store's scratch
 * (argus_jobstore_scratch), its other temporaries are freed before it returns.
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

#define FC_MIN_STEPS 8
#define FC_SHORT_REGIME 30
#define FC_MAX_CHANGES 16
#define FC_MAX_SERIES 16384u /* the most recent steps looked at (older: counted, summed) */

/* Everything one run works on; freed by fc_free. */
struct fc {
    const struct argus_jobstore *js;
    uint32_t P;
    /* the job series, every step seen: ids ascending, step times in ms */
    uint64_t *step;
    double *t;
    size_t n;
    size_t h0;           /* index of the first held step (steps before it were evicted) */
    unsigned char *ev;   /* 1: a periodic event's step */
    /* held steps x ranks: own work (wall less collective and p2p time) and collective
     * time (what the DP ring term scales), ms; NAN where the rank holds no step */
    double *work, *comm; /* only with what-ifs (NULL otherwise) */
    size_t nh;
    /* per held step, always: the slowest rank's work and its rank (-1: none), the sum and
     * count of the ranks' work (the sync tax), built walking rank by rank */
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
};

static void fc_free(struct fc *f)
{
    free(f->step);
    free(f->t);
    free(f->ev); /* work and comm are the store's scratch */
    free(f->mxw);
    free(f->sumw);
    free(f->argw);
    free(f->cntw);
}

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
    fc_sort(tmp, n);
    return fc_quantile_sorted(tmp, n, 0.5);
}

/* ---- the series ---------------------------------------------------------------------- */

static int fc_build(struct fc *f, int tables, size_t max_series)
{
    const struct argus_jobstore_gone *gone;
    const uint64_t *ids;
    size_t ng = argus_jobstore_evicted(f->js, &gone);
    const size_t nh = argus_jobstore_steps(f->js, &ids);
    const uint32_t P = f->P;

    if (ng + nh > max_series) { /* bounded time: the oldest only counted and summed */
        const size_t drop = ng + nh - max_series < ng ? ng + nh - max_series : ng;
        for (size_t i = 0; i < drop; i++)
            f->ms_before += (double)gone[i].wall_ns / 1e6;
        f->n_before = drop;
        gone += drop;
        ng -= drop;
    }
    f->n = ng + nh;
    f->nh = nh;
    f->h0 = ng;
    f->step = malloc((f->n ? f->n : 1) * sizeof *f->step);
    f->t = malloc((f->n ? f->n : 1) * sizeof *f->t);
    f->ev = calloc(f->n ? f->n : 1, 1);
    if (nh && (size_t)P > SIZE_MAX / sizeof(double) / nh)
        return -ENOMEM;
    /* the store's work memory (store/jobstore.h: pages rank 0 already has, reused after
     * every window's analysis, which is done with it by now) */
    if (tables) {
        f->work = argus_jobstore_scratch(f->js, 2 * (nh ? nh : 1) * P * sizeof *f->work);
        f->comm = f->work ? f->work + (nh ? nh : 1) * P : NULL;
        if (!f->work)
            return -ENOMEM;
    }
    f->mxw = calloc(nh + 1, sizeof *f->mxw);
    f->sumw = calloc(nh + 1, sizeof *f->sumw);
    f->argw = malloc((nh + 1) * sizeof *f->argw);
    f->cntw = calloc(nh + 1, sizeof *f->cntw);
    if (!f->step || !f->t || !f->ev || !f->mxw || !f->sumw || !f->argw || !f->cntw)
        return -ENOMEM;
    for (size_t i = 0; i < nh; i++)
        f->argw[i] = -1;
    for (size_t i = 0; i < ng; i++) {
        f->step[i] = gone[i].step;
        f->t[i] = (double)gone[i].wall_ns / 1e6;
    }
    for (size_t i = 0; tables && i < nh * P; i++)
        f->work[i] = f->comm[i] = NAN;
    for (size_t i = 0; i < nh; i++) {
        f->step[ng + i] = ids[i];
        f->t[ng + i] = 0;
    }
    for (uint32_t r = 0; r < P; r++) {
        const uint64_t *rid;
        const struct argus_jobstore_row *rows;
        const struct argus_step_summary *const *sv = NULL;
        const size_t m = argus_jobstore_rank_step_ids(f->js, r, &rid);
        argus_jobstore_rank_rows(f->js, r, &rows);
        if (tables)
            argus_jobstore_rank_steps(f->js, r, &sv); /* a summary per cell: what-ifs only */
        size_t i = 0;
        for (size_t k = 0; k < m; k++) {
            while (i < nh && ids[i] < rid[k])
                i++;
            if (i == nh)
                break;
            if (ids[i] != rid[k])
                continue;
            const double w = rows[k].wall_ns / 1e6, c = rows[k].comm_ns / 1e6;
            const double wk = c > 0 && c < w ? w - c : w;
            if (f->argw[i] < 0 || wk > f->mxw[i]) {
                f->mxw[i] = wk;
                f->argw[i] = (int32_t)r;
            }
            f->sumw[i] += wk;
            f->cntw[i]++;
            if (tables) {
                const double coll = (double)sv[k]->collective_ns / 1e6;
                f->work[i * P + r] = wk;
                f->comm[i * P + r] = coll > 0 && coll < w ? coll : 0;
            }
            if (w > f->t[ng + i])
                f->t[ng + i] = w;
        }
    }
    return 0;
}

/* ---- periodic events (the analysis' periodic iteration_jitter findings) ---------------- */

static void fc_periodic(struct fc *f, const struct argus_result *res, struct argus_forecast *o)
{
    for (size_t a = 0; res && a < res->n_anomalies; a++) {
        const struct argus_anomaly *an = &res->anomalies[a];
        if (an->kind != ARGUS_AK_ITERATION_JITTER || an->period_steps < 2 || an->n_hits == 0 ||
            o->n_periodic >= ARGUS_FC_MAX_PERIODIC)
            continue;
        struct argus_fc_periodic *p = &o->periodic[o->n_periodic++];
        const uint64_t anchor = an->hits[0];
        p->period_steps = an->period_steps;
        for (size_t i = 0; i < f->n; i++) {
            if (f->step[i] < anchor || (f->step[i] - anchor) % an->period_steps)
                continue;
            f->ev[i] = 1;
            p->seen++;
            p->last_step = f->step[i];
        }
    }
}

/* ---- change points: binary segmentation of the log step times (events left out) ------ */

struct fc_seg {
    const double *y;      /* log step times, events left out */
    const size_t *idx;    /* their series indices */
    double sigma;         /* robust noise of y (from first differences) */
    double *tmp;
    struct fc *f;
};

static void fc_segment(struct fc_seg *s, size_t lo, size_t hi, int depth)
{
    const size_t len = hi - lo, m = len / 10 > 10 ? len / 10 : 10;
    if (depth > 6 || len < 2 * m || s->f->nchg >= FC_MAX_CHANGES)
        return;
    memcpy(s->tmp, s->y + lo, len * sizeof *s->tmp);
    fc_sort(s->tmp, len);
    const double q1 = fc_quantile_sorted(s->tmp, len, 0.05),
                 q2 = fc_quantile_sorted(s->tmp, len, 0.95);
    double tot = 0, best_t = 0;
    size_t best = 0;
    for (size_t i = lo; i < hi; i++) {
        double v = s->y[i] < q1 ? q1 : s->y[i] > q2 ? q2 : s->y[i];
        s->tmp[i - lo] = v;
        tot += v;
    }
    double left = 0, best_d = 0;
    for (size_t k = 1; k < len; k++) {
        left += s->tmp[k - 1];
        if (k < m || len - k < m)
            continue;
        const double nl = (double)k, nr = (double)(len - k);
        const double d = (tot - left) / nr - left / nl;
        const double t = fabs(d) / (s->sigma * sqrt(1 / nl + 1 / nr));
        if (t > best_t) {
            best_t = t;
            best = lo + k;
            best_d = d;
        }
    }
    if (best_t < 5 || fabs(best_d) < log(1.03))
        return;
    fc_segment(s, lo, best, depth + 1);
    if (s->f->nchg < FC_MAX_CHANGES) {
        s->f->chg[s->f->nchg] = s->idx[best];
        s->f->chg_lr[s->f->nchg++] = best_d;
    }
    fc_segment(s, best, hi, depth + 1);
}

static int fc_changes(struct fc *f)
{
    size_t n = 0;
    double *y = malloc((f->n + 1) * sizeof *y), *tmp = malloc((f->n + 1) * sizeof *tmp);
    size_t *idx = malloc((f->n + 1) * sizeof *idx);
    int rc = -ENOMEM;

    if (!y || !tmp || !idx)
        goto out;
    for (size_t i = 0; i < f->n; i++)
        if (!f->ev[i] && f->t[i] > 0) {
            y[n] = log(f->t[i]);
            idx[n++] = i;
        }
    rc = 0;
    if (n < 20)
        goto out;
    for (size_t i = 1; i < n; i++)
        tmp[i - 1] = fabs(y[i] - y[i - 1]);
    fc_sort(tmp, n - 1);
    double sigma = 1.4826 * fc_quantile_sorted(tmp, n - 1, 0.5) / sqrt(2.0);
    if (sigma < 1e-4)
        sigma = 1e-4;
    /* autocorrelation: the long-run sigma from differences of adjacent batch means
     * (batches of B steps; a level shift moves one difference only), never below the
     * step-to-step one */
    const size_t B = n / 20 > 5 ? n / 20 : 5, nbm = n / B;
    if (nbm >= 4) {
        double mprev = 0;
        for (size_t k = 0; k < nbm; k++) {
            double m = 0;
            for (size_t i = k * B; i < (k + 1) * B; i++)
                m += y[i] / (double)B;
            if (k)
                tmp[k - 1] = fabs(m - mprev);
            mprev = m;
        }
        fc_sort(tmp, nbm - 1);
        const double lr = sqrt((double)B) * 1.4826 * fc_quantile_sorted(tmp, nbm - 1, 0.5) /
                          sqrt(2.0);
        if (lr > sigma)
            sigma = lr;
    }
    struct fc_seg s = {.y = y, .idx = idx, .sigma = sigma, .tmp = tmp, .f = f};
    fc_segment(&s, 0, n, 0);
out:
    free(y);
    free(tmp);
    free(idx);
    return rc;
}

/* ---- per-rank offsets, critical path, sync tax, contributors --------------------------- */

/* The held steps' index range [i0, nh) of the regime; c[i]: the median rank's work. */
static void fc_common(const struct fc *f, size_t i0, double *c, double *tmp)
{
    for (size_t i = i0; i < f->nh; i++) {
        size_t m = 0;
        for (uint32_t r = 0; r < f->P; r++)
            if (!isnan(f->work[i * f->P + r]))
                tmp[m++] = f->work[i * f->P + r];
        fc_sort(tmp, m);
        c[i] = m ? fc_quantile_sorted(tmp, m, 0.5) : 0;
    }
}

static int fc_argmax(const struct fc *f, size_t i, const double *scale, double *mx)
{
    int best = -1;
    *mx = 0;
    for (uint32_t r = 0; r < f->P; r++) {
        double w = f->work[i * f->P + r];
        if (isnan(w))
            continue;
        if (scale)
            w *= scale[r];
        if (best < 0 || w > *mx) {
            *mx = w;
            best = (int)r;
        }
    }
    return best;
}

static void fc_crit_sync(const struct fc *f, size_t i0, struct argus_forecast *o)
{
    uint32_t cnt[ARGUS_FC_MAX_CRIT] = {0}, who[ARGUS_FC_MAX_CRIT] = {0};
    double smax = 0, smean = 0;
    size_t used = 0;
    uint32_t *hits = calloc(f->P, sizeof *hits);

    for (size_t i = i0; i < f->nh; i++) {
        const int r = f->argw[i];
        if (r < 0)
            continue;
        smax += f->mxw[i];
        smean += f->sumw[i] / (double)f->cntw[i];
        used++;
        if (hits)
            hits[r]++;
    }
    o->sync_tax = smean > 0 ? smax / smean : 1;
    for (uint32_t r = 0; hits && r < f->P; r++) {
        size_t j = ARGUS_FC_MAX_CRIT;
        while (j > 0 && hits[r] > cnt[j - 1])
            j--;
        if (j >= ARGUS_FC_MAX_CRIT || hits[r] == 0)
            continue;
        memmove(cnt + j + 1, cnt + j, (ARGUS_FC_MAX_CRIT - 1 - j) * sizeof *cnt);
        memmove(who + j + 1, who + j, (ARGUS_FC_MAX_CRIT - 1 - j) * sizeof *who);
        cnt[j] = hits[r];
        who[j] = r;
    }
    for (size_t j = 0; j < ARGUS_FC_MAX_CRIT && cnt[j]; j++) {
        o->crit[o->n_crit].rank = who[j];
        o->crit[o->n_crit++].share = (double)cnt[j] / (double)used;
    }
    free(hits);
}

static const char *const fc_comp_name[] = {"forward", "backward", "optimizer", "comm",
                                           "host_gap", "other", "unattributed"};
#define FC_NCOMP 7

static void fc_contrib(const struct fc *f, size_t i0, double p90_ms, struct argus_forecast *o)
{
    double slow[FC_NCOMP] = {0}, rest[FC_NCOMP] = {0}, wall_slow = 0;
    size_t ns = 0, nr = 0;

    for (size_t i = i0; i < f->nh; i++) {
        const int r = f->argw[i];
        const struct argus_step_summary *s;
        if (r < 0 || f->ev[f->h0 + i] ||
            !(s = argus_jobstore_get(f->js, (uint32_t)r, f->step[f->h0 + i])))
            continue;
        const double wall = s->end_ns > s->start_ns ? (double)(s->end_ns - s->start_ns) : 0;
        double v[FC_NCOMP], sum = 0;
        v[0] = (double)s->phase_wall_ns[ARGUS_PH_FORWARD];
        v[1] = (double)s->phase_wall_ns[ARGUS_PH_BACKWARD];
        v[2] = (double)s->phase_wall_ns[ARGUS_PH_OPTIMIZER];
        v[3] = (double)s->phase_wall_ns[ARGUS_PH_COMM];
        v[4] = s->host_gap_ns ? (double)s->host_gap_ns : (double)s->phase_wall_ns[ARGUS_PH_HOST];
        v[5] = (double)s->phase_wall_ns[ARGUS_PH_OTHER];
        for (int k = 0; k < 6; k++)
            sum += v[k];
        v[6] = wall > sum ? wall - sum : 0;
        const int is_slow = f->t[f->h0 + i] >= p90_ms;
        for (int k = 0; k < FC_NCOMP; k++) {
            if (is_slow)
                slow[k] += v[k] / 1e6;
            else
                rest[k] += v[k] / 1e6;
        }
        if (is_slow) {
            ns++;
            wall_slow += wall / 1e6;
        }
        else
            nr++;
    }
    if (ns)
        wall_slow /= (double)ns;
    for (int k = 0; ns && k < FC_NCOMP; k++) {
        const double ms = slow[k] / (double)ns;
        if (ms <= 0)
            continue;
        struct argus_fc_contrib *c = &o->contrib[o->n_contrib++];
        snprintf(c->name, sizeof c->name, "%s", fc_comp_name[k]);
        c->ms = ms;
        c->excess_ms = ms - (nr ? rest[k] / (double)nr : 0);
        c->share = wall_slow > 0 ? ms / wall_slow : 0;
    }
}

/* ---- what-ifs: the held regime steps (events left out) under another shape ------------ */

/* A rank's node: the first rank with the same host name; each rank its own without one. */
static uint32_t fc_node(const struct argus_jobstore *js, uint32_t r)
{
    const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, r), *rj;
    if (!ri || !ri->host[0] || strcmp(ri->host, "unknown") == 0)
        return r;
    for (uint32_t k = 0; k < r; k++)
        if ((rj = argus_jobstore_rankinfo(js, k)) && strcmp(rj->host, ri->host) == 0)
            return k;
    return r;
}

/* Per-rank offsets: the median over the regime of work / the step's median rank work. */
static void fc_offsets(const struct fc *f, size_t i0, const double *c, double *off,
                       double *tmp)
{
    for (uint32_t r = 0; r < f->P; r++) {
        size_t m = 0;
        for (size_t i = i0; i < f->nh; i++)
            if (!isnan(f->work[i * f->P + r]) && c[i] > 0)
                tmp[m++] = f->work[i * f->P + r] / c[i];
        fc_sort(tmp, m);
        off[r] = m ? fc_quantile_sorted(tmp, m, 0.5) : 1;
    }
}

static int fc_whatif_series(const struct fc *f, const struct argus_result *res, size_t i0,
                            const struct argus_fc_whatif_spec *w, uint64_t seed, double *out,
                            size_t *nout, struct argus_fc_whatif *wo)
{
    const uint32_t P = f->P;
    const size_t nh = f->nh;
    double *c = calloc(nh + 1, sizeof *c), *tmp = malloc((nh + P + 1) * sizeof *tmp);
    double *off = malloc((size_t)P * sizeof *off), *scale = malloc((size_t)P * sizeof *scale);
    double *pool = NULL;
    uint32_t *rep = malloc((size_t)P * sizeof *rep);
    int rc = -ENOMEM;
    uint64_t rng = seed ^ 0x57484154ull;

    *nout = 0;
    if (!c || !tmp || !off || !scale || !rep)
        goto out;
    fc_common(f, i0, c, tmp);
    fc_offsets(f, i0, c, off, tmp);
    for (uint32_t r = 0; r < P; r++)
        scale[r] = 1;
    if (w->kind == ARGUS_FC_WI_DROP_SLOWEST) {
        uint32_t worst = 0, nodes = 0;
        double worst_off = -1;
        for (uint32_t r = 0; r < P; r++) {
            const uint32_t nd = fc_node(f->js, r);
            nodes += nd == r;
            if (off[r] > worst_off) {
                worst_off = off[r];
                worst = nd;
            }
        }
        memcpy(tmp, off, P * sizeof *off);
        fc_sort(tmp, P);
        const double med = fc_quantile_sorted(tmp, P, 0.5);
        if (nodes < 2) {
            snprintf(wo->note, sizeof wo->note, "one node (or one rank): nothing to drop");
        } else {
            uint32_t moved = 0;
            for (uint32_t r = 0; r < P; r++)
                if (fc_node(f->js, r) == worst && off[r] > med) {
                    scale[r] = med / off[r];
                    moved++;
                }
            snprintf(wo->note, sizeof wo->note, "node of rank %u (offset %.3f): %u ranks at "
                     "the median offset %.3f", worst, worst_off, moved, med);
        }
        for (size_t i = i0; i < nh; i++) {
            double mx0, mx1;
            if (f->ev[f->h0 + i] || fc_argmax(f, i, NULL, &mx0) < 0 || mx0 <= 0)
                continue;
            fc_argmax(f, i, scale, &mx1);
            out[(*nout)++] = f->t[f->h0 + i] * mx1 / mx0;
        }
        rc = 0;
        goto out;
    }
    /* ARGUS_FC_WI_DP: replicas from the layout (Megatron order), else one per rank */
    uint32_t D = P, tp = 1;
    const struct argus_layout *L = res ? &res->layout : NULL;
    if (L && L->dp >= 1 && L->tp >= 1 && L->pp >= 1 &&
        (uint64_t)L->tp * (uint64_t)L->pp * (uint64_t)L->dp == P) {
        D = (uint32_t)L->dp;
        tp = (uint32_t)L->tp;
    }
    for (uint32_t r = 0; r < P; r++)
        rep[r] = D == P ? r : (r / tp) % D;
    /* pool: every replica's work over its step's common factor, sorted */
    const size_t np = (nh - i0) * D;
    if (!(pool = malloc((np + 1) * sizeof *pool)))
        goto out;
    size_t m = 0;
    double *R = tmp; /* per replica, one step at a time (D <= P entries) */
    for (size_t i = i0; i < nh; i++) {
        if (c[i] <= 0)
            continue;
        for (uint32_t d = 0; d < D; d++)
            R[d] = -1;
        for (uint32_t r = 0; r < P; r++) {
            const double v = f->work[i * P + r];
            if (!isnan(v) && v > R[rep[r]])
                R[rep[r]] = v;
        }
        for (uint32_t d = 0; d < D; d++)
            if (R[d] >= 0)
                pool[m++] = R[d] / c[i];
    }
    fc_sort(pool, m);
    const double extra = (double)(w->k - 1) * D;
    const double ring = D > 1 ? ((double)(w->k * D - 1) / (w->k * D)) / ((double)(D - 1) / D)
                              : 1;
    double comm_seen = 0;
    for (size_t i = i0; i < nh && m; i++) {
        double mx0;
        if (f->ev[f->h0 + i] || fc_argmax(f, i, NULL, &mx0) < 0 || mx0 <= 0 || c[i] <= 0)
            continue;
        /* the max of `extra` new replicas drawn from the pool: F^-1(u^(1/extra)) */
        const double u = pow(fc_rng_unif(&rng), 1.0 / extra);
        const double nx = c[i] * fc_quantile_sorted(pool, m, u);
        const double mx1 = nx > mx0 ? nx : mx0;
        size_t mc = 0;
        for (uint32_t r = 0; r < P; r++)
            if (!isnan(f->comm[i * P + r]))
                tmp[mc++] = f->comm[i * P + r];
        fc_sort(tmp, mc);
        double cm = mc ? fc_quantile_sorted(tmp, mc, 0.5) : 0;
        if (cm > f->t[f->h0 + i])
            cm = 0;
        comm_seen += cm;
        out[(*nout)++] = (f->t[f->h0 + i] - cm) * mx1 / mx0 + cm * ring;
    }
    snprintf(wo->note, sizeof wo->note, "%u replica%s x %d drawn from the observed ones%s; %s; "
             "latency term not modelled; same planned steps", D, D > 1 ? "s" : "", w->k,
             D > 1 ? "" : " (one replica: its variation is all common, none its own)",
             comm_seen > 0 ? "collective time scaled by the ring term"
                           : "no communication measured: not scaled");
    rc = 0;
out:
    free(c);
    free(tmp);
    free(off);
    free(scale);
    free(pool);
    free(rep);
    return rc;
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
    double *base = NULL, *evc = NULL, *wbase = NULL;
    int rc;

    memset(out, 0, sizeof *out);
    if (!js || !o || o->n_whatif > ARGUS_FC_MAX_WHATIF || o->n_sims > 100000)
        return -EINVAL;
    for (size_t w = 0; w < o->n_whatif; w++)
        if (!(o->whatif[w].kind == ARGUS_FC_WI_DROP_SLOWEST ||
              (o->whatif[w].kind == ARGUS_FC_WI_DP && o->whatif[w].k >= 2 &&
               o->whatif[w].k <= 64)))
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
    for (size_t k = 0; k < f.nchg; k++) {
        if (f.chg[k] > start)
            start = f.chg[k];
        if (f.chg[k] >= warm) { /* past the warm-up: such changes may recur */
            lr[n_lr++] = f.chg_lr[k];
            n_recur++;
        }
    }
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
        fc_sort(tmp, m);
        const double med_all = fc_quantile_sorted(tmp, m, 0.5);
        free(tmp);
        for (size_t i = 0; i < warm && i < f.n; i++)
            if (!f.ev[i] && f.t[i] > 2 * med_all)
                last_slow = i + 1;
        if (last_slow > start && last_slow + FC_MIN_STEPS <= f.n)
            start = last_slow;
    }
    if (start > 0 && start < warm)
        fc_note(out->assume, &out->n_assume, "steps before %llu taken as warm-up",
                (unsigned long long)f.step[start]);
    out->regime_start = f.step[start];
    out->regime_steps = f.n - start;

    /* the regime's base series (events out, the most recent ARGUS_FC_MAX_FIT) */
    base = malloc((f.n + 1) * sizeof *base);
    evc = malloc((f.n + 1) * sizeof *evc);
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
    const double med = fc_median_copy(fit, nfit, wbase);
    memcpy(wbase, fit, nfit * sizeof *wbase);
    fc_sort(wbase, nfit);
    out->step_p50_ms = med;
    out->step_p90_ms = fc_quantile_sorted(wbase, nfit, 0.9);
    for (size_t i = 0; i < nfit; i++)
        out->step_mean_ms += fit[i] / (double)nfit;
    for (size_t i = 0; i < f.n; i++)
        if (f.ev[i])
            evc[ne++] = f.t[i] > med ? f.t[i] - med : 0;
    uint64_t ev_left = 0;
    for (size_t p = 0; p < out->n_periodic; p++) {
        struct argus_fc_periodic *pe = &out->periodic[p];
        size_t k = 0;
        double *tmpc = wbase;
        for (size_t i = 0; i < f.n; i++)
            if (f.ev[i] && f.step[i] <= pe->last_step &&
                (pe->last_step - f.step[i]) % pe->period_steps == 0)
                tmpc[k++] = f.t[i] > med ? f.t[i] - med : 0;
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
    out->block_len = fc_block_len(fit, nfit);
    fc_note(out->assume, &out->n_assume, "fitted on %zu steps from step %llu (current "
            "regime), block bootstrap of %u steps", nfit, (unsigned long long)out->regime_start,
            out->block_len);
    if (rate > 0)
        fc_note(out->assume, &out->n_assume, "change points recur at %.2g per step (%zu "
                "seen past the warm-up, the first not counted), either sign", rate, n_recur);
    const uint64_t seed = o->seed ? o->seed : 1;
    struct argus_fc_quant rq;
    if ((rc = argus_forecast_sample(fit, nfit, out->block_len, out->steps_left, evc, ne,
                                    ev_left, rate, lr, n_lr, o->n_sims, seed, &rq)) != 0)
        goto out;
    const double widen = nfit < FC_SHORT_REGIME ? sqrt((double)FC_SHORT_REGIME / nfit) : 1;
    if (widen > 1) {
        fc_widen(&rq, widen);
        fc_note(out->warn, &out->n_warn, "regime just changed (step %llu): %zu steps fitted, "
                "band widened x%.2f", (unsigned long long)out->regime_start, nfit, widen);
    }
    if (f.n < FC_SHORT_REGIME)
        fc_note(out->warn, &out->n_warn, "too few steps: %zu", f.n);
    out->remaining_s = rq;
    fc_add(&out->total_s, &rq, out->elapsed_s);
    for (uint32_t r = 0; r < f.P; r++)
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
        else
            snprintf(wo->name, sizeof wo->name, "dp=%d", o->whatif[w].k);
        if ((rc = fc_whatif_series(&f, res, i0, &o->whatif[w], seed + w, wbase, &nw, wo)) != 0)
            goto out;
        if (nw < 2) {
            snprintf(wo->note, sizeof wo->note, "no held steps in the current regime");
            wo->remaining_s = out->remaining_s;
            wo->total_s = out->total_s;
            continue;
        }
        struct argus_fc_quant wq;
        if ((rc = argus_forecast_sample(wbase, nw, out->block_len, out->steps_left, evc, ne,
                                        ev_left, rate, lr, n_lr, o->n_sims, seed, &wq)) != 0)
            goto out;
        if (widen > 1)
            fc_widen(&wq, widen);
        wo->remaining_s = wq;
        fc_add(&wo->total_s, &wq, out->elapsed_s);
        fc_sort(wbase, nw);
        wo->step_p50_ms = fc_quantile_sorted(wbase, nw, 0.5);
    }
    out->valid = 1;
    rc = 0;
out:
    fc_free(&f);
    free(base);
    free(evc);
    free(wbase);
    return rc;
}
