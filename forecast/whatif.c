/* whatif.c — the forecast's what-ifs (forecast/internal.h: fc_whatif_series;
 * docs/ALGORITHMS.md, "Forecast (PRISM)", "What-ifs"): per-rank offsets on a common
 * per-step factor, then the held regime steps under another shape: the slowest node's
 * ranks at the median offset; data-parallel x k with new replicas drawn from the observed
 * ones, the transfer (the critical rank's DP group's least collective time) scaled by the
 * ring term. Reads the held steps x ranks tables and, for the critical rank, the held
 * cells' walls; temporaries freed before return.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forecast/forecast.h"
#include "forecast/internal.h"

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

/* The bandwidth part of held step i's collective time (ms): the critical rank's (the
 * longest wall) DP group's least collective time, the member that waited least (its
 * time is the transfer; the others' include waiting for the group's last arrival, which
 * the max over replicas models). DP groups in Megatron order (tp fastest, then dp); with
 * D == P every rank is a replica and the group is the job. With tp > 1 a rank's
 * collective time also holds its TP group's (inside forward and backward): only its
 * collective kernels outside those phases count (DP's that overlap the backward pass are
 * missed, so not scaled). Ranks without such time are passed over; 0 when none has any,
 * or past the step's wall. */
static double fc_dp_coll(const struct fc *f, size_t i, uint32_t r, uint32_t tp)
{
    if (tp == 1)
        return f->comm[i * f->P + r];
    const struct argus_step_summary *s = argus_jobstore_get(f->js, r, f->step[f->h0 + i]);
    uint64_t ns = 0;
    for (uint32_t k = 0; s && k < s->n_kmodes && k < ARGUS_MAX_KMODES; k++)
        if (s->kmodes[k].kclass == ARGUS_KC_COLLECTIVE &&
            s->kmodes[k].phase != ARGUS_PH_FORWARD && s->kmodes[k].phase != ARGUS_PH_BACKWARD)
            ns += s->kmodes[k].sum_ns;
    return s ? (double)ns / 1e6 : NAN;
}

static double fc_transfer(const struct fc *f, size_t i, uint32_t tp, uint32_t D)
{
    const uint64_t step = f->step[f->h0 + i];
    uint64_t wmax = 0;
    uint32_t crit = 0;
    for (uint32_t r = 0; r < f->P; r++) {
        const struct argus_step_summary *s = argus_jobstore_get(f->js, r, step);
        if (s && s->end_ns > s->start_ns && s->end_ns - s->start_ns > wmax) {
            wmax = s->end_ns - s->start_ns;
            crit = r;
        }
    }
    const uint32_t t0 = crit % tp, p0 = crit / (tp * D);
    double cm = -1;
    for (uint32_t d = 0; d < D; d++) {
        const double v = fc_dp_coll(f, i, t0 + tp * (d + D * p0), tp);
        if (!isnan(v) && v > 0 && (cm < 0 || v < cm))
            cm = v;
    }
    return cm > 0 && cm < f->t[f->h0 + i] ? cm : 0;
}

int fc_whatif_series(const struct fc *f, const struct argus_result *res, size_t i0,
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
        const double cm = fc_transfer(f, i, tp, D);
        comm_seen += cm;
        out[(*nout)++] = (f->t[f->h0 + i] - cm) * mx1 / mx0 + cm * ring;
    }
    snprintf(wo->note, sizeof wo->note, "%u replica%s x %d drawn from the observed ones%s; %s%s; "
             "latency term not modelled; same planned steps", D, D > 1 ? "s" : "", w->k,
             D > 1 ? "" : " (one replica: all its variation common)",
             comm_seen > 0 ? "transfer (least collective time of the critical DP group) x "
                             "ring term" : "no communication measured: not scaled",
             tp > 1 && comm_seen > 0 ? " (TP > 1: collectives off forward/backward)" : "");
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