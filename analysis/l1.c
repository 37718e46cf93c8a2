/* l1.c — iteration-level detectors (L1) on the job step time (per step, the longest
 * step wall over ranks): change points by binary segmentation of the median-filtered log
 * step time (the full scan; step_regression: upward shifts of >= 5% with both segments
 * >= 5 steps), timed by an online CUSUM that alarms as a live run would; ratio-gated
 * robust-z spikes of the log step time against a local median inside each segment
 * (iteration_jitter), with spikes that recur at a fixed period reported once
 * (periodic.c). Only adds candidates; suppression against rank-level verdicts is the
 * driver's job.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CPS 64
#define JITTER_CLUSTER 16
#define CUSUM_BASE 64
#define CUSUM_WARM 8

struct l1 {
    size_t m;           /* valid steps */
    size_t *idx;        /* [m] step index of each valid step */
    double *x, *y, *yf; /* [m] step time ns, its log, median-filtered log */
    double *pre;        /* [m + 1] prefix sums of yf */
    double *buf, *buf2; /* [m] scratch */
    double sigma;
};

static double seg_mean(const struct l1 *w, size_t a, size_t b)
{
    return (w->pre[b] - w->pre[a]) / (double)(b - a);
}

static double seg_median(struct l1 *w, size_t a, size_t b)
{
    memcpy(w->buf, w->x + a, (b - a) * sizeof *w->buf);
    return argus_stats_median(w->buf, b - a);
}

/* Mean-shift statistic of a split at k inside [a,b). */
static double split_t(const struct l1 *w, size_t a, size_t k, size_t b)
{
    double d = fabs(seg_mean(w, a, k) - seg_mean(w, k, b));
    return d / (w->sigma * sqrt(1.0 / (double)(k - a) + 1.0 / (double)(b - k)));
}

static size_t binseg(struct l1 *w, const struct an_ctx *c, size_t L, size_t *cps,
                     double *cpt)
{
    size_t stack[2 * MAX_CPS + 2][2], sp = 0, n = 0;
    stack[sp][0] = 0;
    stack[sp++][1] = w->m;
    while (sp > 0 && n < MAX_CPS) {
        const size_t a = stack[sp - 1][0], b = stack[sp - 1][1];
        sp--;
        if (b - a < 2 * L)
            continue;
        size_t bk = 0;
        double bt = -1;
        for (size_t k = a + L; k + L <= b; k++) {
            double t = split_t(w, a, k, b);
            if (t > bt) {
                bt = t;
                bk = k;
            }
        }
        double ml = seg_median(w, a, bk), mr = seg_median(w, bk, b);
        double mx = ml > mr ? ml : mr;
        if (!(bt >= c->o.z) || !(mx > 0) || fabs(ml - mr) / mx < AN_REGRESSION_EFFECT)
            continue;
        cps[n] = bk;
        cpt[n++] = bt;
        if (sp + 2 <= sizeof stack / sizeof stack[0]) {
            stack[sp][0] = a;
            stack[sp++][1] = bk;
            stack[sp][0] = bk;
            stack[sp++][1] = b;
        }
    }
    /* sort ascending (few entries) */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cps[j - 1] > cps[j]; j--) {
            size_t t = cps[j];
            cps[j] = cps[j - 1];
            cps[j - 1] = t;
            double u = cpt[j];
            cpt[j] = cpt[j - 1];
            cpt[j - 1] = u;
        }
    return n;
}

/* Online CUSUM on the log step time (docs/ALGORITHMS.md, L1: step time), run as live:
 * S_t = max(0, S_{t-1} + min(y_t - mu0 - k, h/2)) with mu0 the median of the last
 * CUSUM_BASE steps since the last alarm, k = max(ln(1.05)/2, sigma/2), h = 7.4 sigma
 * (5 sigma when k >= sigma), alarm at S_t > h, then reset. The clip at h/2 keeps one
 * spike from alarming. alarm[t] = 1 at an alarm. Its alarms time the regressions that the
 * full scan confirms. */
static void cusum(struct l1 *w, uint8_t *alarm)
{
    const double sg = w->sigma, kk = fmax(log(1.0 + AN_REGRESSION_EFFECT) / 2, sg / 2);
    const double h = kk >= sg ? 5 * sg : 7.4 * sg;
    double S = 0;
    size_t base0 = 0;
    memset(alarm, 0, w->m);
    for (size_t t = 0; t < w->m; t++) {
        const size_t lo = t > base0 + CUSUM_BASE ? t - CUSUM_BASE : base0;
        if (t - lo < CUSUM_WARM)
            continue;
        memcpy(w->buf2, w->y + lo, (t - lo) * sizeof *w->buf2);
        const double mu0 = argus_stats_median(w->buf2, t - lo);
        S += fmin(w->y[t] - mu0 - kk, h / 2);
        if (S < 0)
            S = 0;
        if (S > h) {
            alarm[t] = 1;
            S = 0;
            base0 = t >= 2 ? t - 2 : 0;
        }
    }
}

/* The smallest step_regression slowdown (right median / left median) reported: a 5 %
 * shift (AN_REGRESSION_EFFECT, of the larger median) at the default ratio, and one third
 * of the ratio's excess over 1 when that is more (ratio 2: 1.33x): a job-wide level shift
 * that lasts is stronger evidence than one rank against its peers, but a ratio raised to
 * ignore small effects raises this gate too (docs/ALGORITHMS.md, "Thresholds"). */
static double regression_min(const struct an_ctx *c)
{
    const double lo = 1.0 / (1.0 - AN_REGRESSION_EFFECT), scaled = 1.0 + (c->o.ratio - 1) / 3;
    return scaled > lo ? scaled : lo;
}

static int regressions(struct an_ctx *c, struct l1 *w, const size_t *cps, size_t ncp,
                       size_t L)
{
    uint8_t *alarm = malloc(w->m ? w->m : 1);
    if (!alarm)
        return -ENOMEM;
    cusum(w, alarm);
    for (size_t i = 0; i < ncp; i++) {
        const size_t a = i ? cps[i - 1] : 0, k = cps[i], b = i + 1 < ncp ? cps[i + 1] : w->m;
        const double ml = seg_median(w, a, k), mr = seg_median(w, k, b);
        if (!(mr > 0) || (mr - ml) / mr < AN_REGRESSION_EFFECT ||
            !(mr / ml >= regression_min(c)))
            continue;
        struct an_cand *cand;
        const double t = split_t(w, a, k, b);
        size_t det = k + L - 1 < b ? k + L - 1 : b - 1, cu = 0;
        /* the online CUSUM alarm, when it came first (the change point may sit a step or
         * two after the true onset, so look from two steps before it) */
        for (size_t j = k >= a + 2 ? k - 2 : a; j < det; j++)
            if (alarm[j]) {
                det = j < k ? k : j;
                cu = 1;
                break;
            }
        int rc = an_push_cand(c, ARGUS_AK_STEP_REGRESSION, 1, w->idx[k], w->idx[b - 1],
                              w->idx[det], mr / ml, t, mr - ml, &cand);
        if (rc) {
            free(alarm);
            return rc;
        }
        snprintf(cand->a.evidence, sizeof cand->a.evidence,
                 "job step time %.1f -> %.1f ms (+%.1f%%) from step %llu to %llu "
                 "(change point on log step time, shift z %.1f; %s at step %llu); no rank "
                 "stands out among its peers",
                 ml / 1e6, mr / 1e6, 100.0 * (mr / ml - 1.0),
                 (unsigned long long)c->step_id[w->idx[k]],
                 (unsigned long long)c->step_id[w->idx[b - 1]], t,
                 cu ? "online CUSUM alarm" : "full scan",
                 (unsigned long long)c->step_id[w->idx[det]]);
    }
    free(alarm);
    return 0;
}

/* The flagged steps of [a, b]: their z into w->buf (q of them), the largest ratio to the
 * baseline with that baseline and step time, and how many separate spike runs. */
struct spikes {
    size_t q, runs;
    double mr, mb, mx;
};

static struct spikes spikes_in(struct l1 *w, const uint8_t *fl, const double *rt,
                               const double *zz, const double *base, size_t a, size_t b)
{
    struct spikes sp = {0};
    for (size_t j = a; j <= b; j++) {
        if (!fl[j])
            continue;
        w->buf[sp.q++] = zz[j];
        if (rt[j] > sp.mr) {
            sp.mr = rt[j];
            sp.mb = base[j];
            sp.mx = w->x[j];
        }
        sp.runs += !(j > a && fl[j - 1]);
    }
    return sp;
}

/* Each step against the local median of the log step time inside its segment (the
 * change points cps[] cut the run): base = that median as a time, rt = the ratio to it,
 * zz = the robust z, fl = both gates pass. Steps left 0 are not judged. */
static void jitter_flags(struct an_ctx *c, struct l1 *w, const size_t *cps, size_t ncp,
                         double *rt, double *zz, double *base, uint8_t *fl)
{
    const size_t m = w->m;
    /* The first step held is never judged: it is often partial or a warm-up. */
    for (size_t i = 1, seg = 0; i < m; i++) {
        while (seg < ncp && cps[seg] <= i)
            seg++;
        const size_t s0 = seg ? cps[seg - 1] : 0, s1 = seg < ncp ? cps[seg] : m;
        if ((seg && i - s0 < 2) || (seg < ncp && s1 - i < 2))
            continue; /* next to a change point: the segmentation owns it */
        const size_t lo = i > s0 + AN_JITTER_HALF_WINDOW ? i - AN_JITTER_HALF_WINDOW : s0;
        const size_t hi = i + AN_JITTER_HALF_WINDOW + 1 < s1 ? i + AN_JITTER_HALF_WINDOW + 1 : s1;
        size_t q = 0;
        for (size_t j = lo; j < hi; j++)
            if (j != i)
                w->buf[q++] = w->y[j];
        if (q < 5)
            continue;
        /* Robust z of the log step time: step-time variability is multiplicative (a
         * lognormal-like right tail, PRISM), and a z on the linear time overstates the
         * upper tail: at 9 % variability it flagged 1.45x steps of clean runs as z >= 5.
         * A local MAD over a few dozen steps can come out far below the job's real
         * step-to-step noise: never judge against less than the whole run's (sigma). */
        const double med = argus_stats_median(w->buf, q);
        double sc = ARGUS_MAD_SIGMA * argus_stats_mad(w->buf, q, med, w->buf2);
        sc = fmax(sc, fmax(w->sigma, AN_JITTER_FLOOR));
        base[i] = exp(med);
        rt[i] = w->x[i] / base[i];
        zz[i] = (w->y[i] - med) / sc;
        fl[i] = rt[i] >= c->o.ratio && zz[i] >= c->o.z;
    }
}

/* Runs of consecutive flagged steps shorter than a segment (L) are spikes; longer ones
 * are unflagged (a level shift, not jitter). */
static void drop_long_runs(uint8_t *fl, size_t m, size_t L)
{
    for (size_t i = 0; i < m; i++) {
        if (!fl[i])
            continue;
        size_t j = i;
        while (j + 1 < m && fl[j + 1])
            j++;
        if (j - i + 1 >= L)
            for (size_t k = i; k <= j; k++)
                fl[k] = 0;
        i = j;
    }
}

/* One iteration_jitter candidate per cluster of spikes (flagged steps at most
 * JITTER_CLUSTER apart). 0 or -ENOMEM. */
static int jitter_clusters(struct an_ctx *c, struct l1 *w, const uint8_t *fl, const double *rt,
                           const double *zz, const double *base)
{
    const size_t m = w->m;
    for (size_t i = 0; i < m; i++) {
        if (!fl[i])
            continue;
        size_t last = i;
        for (size_t j = i; j < m && j <= last + JITTER_CLUSTER; j++)
            if (fl[j])
                last = j;
        const struct spikes sp = spikes_in(w, fl, rt, zz, base, i, last);
        /* One lone step is the weakest evidence there is, and the log step time still
         * has a heavier upper tail than its MAD says when only part of the step varies
         * (the compute share): a lone spike needs AN_LONE_SPIKE_Z more. */
        if (last == i && zz[i] < c->o.z + AN_LONE_SPIKE_Z) {
            i = last;
            continue;
        }
        struct an_cand *cand;
        double zmed = argus_stats_median(w->buf, sp.q);
        int rc = an_push_cand(c, ARGUS_AK_ITERATION_JITTER, 1, w->idx[i], w->idx[last],
                              w->idx[i], sp.mr, zmed, sp.mx - sp.mb, &cand);
        if (rc)
            return rc;
        snprintf(cand->a.evidence, sizeof cand->a.evidence,
                 "job step time up to %.1f ms = %.2fx the local median %.1f ms (z %.1f) in "
                 "%zu spike%s over steps %llu-%llu; no rank stands out among its peers",
                 sp.mx / 1e6, sp.mr, sp.mb / 1e6, zmed, sp.runs, sp.runs == 1 ? "" : "s",
                 (unsigned long long)c->step_id[w->idx[i]],
                 (unsigned long long)c->step_id[w->idx[last]]);
        i = last;
    }
    return 0;
}

/* iteration_jitter: spikes of the job step time inside the segments, reported once when
 * they recur at a fixed period (periodic), else per cluster. */
static int jitter(struct an_ctx *c, struct l1 *w, const size_t *cps, size_t ncp, size_t L)
{
    const size_t m = w->m;
    double *rt = calloc(m, sizeof *rt), *zz = calloc(m, sizeof *zz);
    double *base = calloc(m, sizeof *base);
    uint8_t *fl = calloc(m, 1);
    int rc = 0;

    if (!rt || !zz || !base || !fl) {
        rc = -ENOMEM;
        goto out;
    }
    jitter_flags(c, w, cps, ncp, rt, zz, base, fl);
    drop_long_runs(fl, m, L);
    /* spikes at a constant period are one finding (periodic.c), taken out of fl */
    rc = an_periodic(c, w->idx, w->x, m, rt, zz, base, fl, L);
    if (rc >= 0)
        rc = jitter_clusters(c, w, fl, rt, zz, base);
out:
    if (rc > 0)
        rc = 0;
    free(rt);
    free(zz);
    free(base);
    free(fl);
    return rc;
}

int an_detect_l1(struct an_ctx *c)
{
    struct l1 w = { 0 };
    const size_t S = c->S;
    size_t cps[MAX_CPS];
    double cpt[MAX_CPS];
    int rc = 0;

    w.idx = malloc(S * sizeof *w.idx);
    w.x = malloc(S * sizeof *w.x);
    w.y = malloc(S * sizeof *w.y);
    w.yf = malloc(S * sizeof *w.yf);
    w.pre = malloc((S + 1) * sizeof *w.pre);
    w.buf = malloc((S + 1) * sizeof *w.buf);
    w.buf2 = malloc((S + 1) * sizeof *w.buf2);
    if (!w.idx || !w.x || !w.y || !w.yf || !w.pre || !w.buf || !w.buf2) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t si = 0; si < S; si++)
        if (c->X[si] > 0) {
            w.idx[w.m] = si;
            w.x[w.m] = c->X[si];
            w.y[w.m] = log(c->X[si]);
            w.m++;
        }
    if (w.m < 3)
        goto out;
    for (size_t i = 0; i < w.m; i++) {
        size_t a = i >= 2 ? i - 2 : 0, b = i + 3 < w.m ? i + 3 : w.m, q = 0;
        for (size_t j = a; j < b; j++)
            w.buf[q++] = w.y[j];
        w.yf[i] = argus_stats_median(w.buf, q);
    }
    w.pre[0] = 0;
    for (size_t i = 0; i < w.m; i++)
        w.pre[i + 1] = w.pre[i] + w.yf[i];
    for (size_t i = 0; i + 1 < w.m; i++)
        w.buf[i] = w.y[i + 1] - w.y[i];
    double md = argus_stats_median(w.buf, w.m - 1);
    w.sigma = ARGUS_MAD_SIGMA * argus_stats_mad(w.buf, w.m - 1, md, w.buf2) / sqrt(2.0);
    if (!(w.sigma >= 0.002))
        w.sigma = 0.002;

    size_t L = AN_REGRESSION_MIN_SEG > c->o.min_steps ? AN_REGRESSION_MIN_SEG : c->o.min_steps;
    size_t ncp = binseg(&w, c, L, cps, cpt);
    if ((rc = regressions(c, &w, cps, ncp, L)))
        goto out;
    rc = jitter(c, &w, cps, ncp, L);
out:
    free(w.idx);
    free(w.x);
    free(w.y);
    free(w.yf);
    free(w.pre);
    free(w.buf);
    free(w.buf2);
    return rc;
}
