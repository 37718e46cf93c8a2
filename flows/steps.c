/* steps.c — step boundaries, each endpoint's and each job's step timeline, and slow steps
 * (flows/flows.h, "Steps", "Slow steps"). Allocates per analysis, never per record.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "flows/bocpd.h"
#include "flows/flows_int.h"
#include "flows/period.h"

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* v[k] becomes the k-th smallest, smaller ones before it, larger after (quickselect) */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double piv = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < piv)
                i++;
            while (v[j] > piv)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j], v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

/* the smallest of v[from..n) */
static double min_from(const double *v, size_t n, size_t from)
{
    double m = v[from];
    for (size_t i = from + 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

double fl_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double hi = select_kth(v, n, n / 2);
    if (n % 2)
        return hi;
    double lo = select_kth(v, n / 2, n / 2 - 1);   /* v[0..n/2) are the smaller half */
    return 0.5 * (lo + hi);
}

double fl_quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double x = q * (double)(n - 1);
    size_t i = (size_t)x;
    double a = select_kth(v, n, i);
    return i + 1 < n ? a + (x - (double)i) * (min_from(v, n, i + 1) - a) : a;
}

double fl_mad(double *v, size_t n, double med)
{
    for (size_t i = 0; i < n; i++)
        v[i] = fabs(v[i] - med);
    return fl_median(v, n);
}

int fl_split_gaps(struct fl_bocpd *bd, const double *g, size_t n, double ref,
                  unsigned char *b0, unsigned char *b1)
{
    double *s;
    double thr = INFINITY;

    if (n == 0)
        return 0;
    s = malloc(n * sizeof *s);
    if (!s)
        return -ENOMEM;
    memcpy(s, g, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_d);
    double mu0 = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    /* baseline: the largest jump of the sorted log gaps, when it is a factor 4 at least (a
     * step whose records were all lost doubles a gap: a factor 2 to 3) */
    double best = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i + 1] - s[i] > best)
            best = s[i + 1] - s[i], thr = 0.5 * (s[i] + s[i + 1]);
    if (best < FL_LEVEL_JUMP)   /* one class: all boundaries when the least is above ref */
        thr = s[0] > ref ? s[0] - 1e-9 : INFINITY;
    free(s);
    if (b0)
        for (size_t i = 0; i < n; i++)
            b0[i] = g[i] > thr;
    if (!b1)
        return 0;
    /* change points of the gap series in time order (flows/bocpd.h), then its levels */
    unsigned char *chg = malloc(n);
    if (!chg)
        return -ENOMEM;
    fl_bocpd_run(bd, g, n, mu0, chg);
    fl_bocpd_boundaries(g, n, chg, FL_LEVEL_JUMP, ref, b1);
    free(chg);
    return 0;
}

static int cmp_iv(const void *x, const void *y)
{
    const struct fl_iv *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* One endpoint's bursts of DP traffic (PP when it has no DP pair) into iv: how many. */
static size_t ep_bursts(const struct argus_flows *f, uint32_t e, struct fl_iv *iv)
{
    size_t n = 0;
    int any_dp = 0;

    for (size_t q = 0; q < f->npair; q++)
        any_dp |= f->pair[q].kind == FL_DP && (f->pair[q].a == e || f->pair[q].b == e);
    for (size_t q = 0; q < f->npair; q++) {
        const struct fl_pair *p = &f->pair[q];
        if ((p->a != e && p->b != e) || p->job < 0 || (any_dp && p->kind != FL_DP))
            continue;
        for (size_t i = 0; i < p->fl_n; i++)
            iv[n++] = (struct fl_iv){f->fl[p->fl_first + i].ts, f->fl[p->fl_first + i].te};
    }
    if (n == 0)
        return 0;
    qsort(iv, n, sizeof *iv, cmp_iv);
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (nb && iv[i].ts <= iv[nb - 1].te + f->o.merge_gap_ns) {
            if (iv[i].te > iv[nb - 1].te)
                iv[nb - 1].te = iv[i].te;
        } else
            iv[nb++] = iv[i];
    }
    return nb;
}

/* One endpoint's steps from the gaps between its bursts. */
static int ep_steps(struct argus_flows *f, struct fl_bocpd *bd, uint32_t e, struct fl_iv *iv,
                    double *g, unsigned char *b0, unsigned char *b1)
{
    struct fl_ep *ep = &f->ep[e];
    size_t nb = ep_bursts(f, e, iv);
    if (nb == 0)
        return 0;
    size_t ng = nb - 1;
    for (size_t i = 0; i < nb; i++)   /* the median burst length, for ref */
        g[i] = (double)(iv[i].te - iv[i].ts);
    double ref = log(2 * fl_median(g, nb) + 1.0);
    for (size_t i = 0; i < ng; i++)
        g[i] = log((double)(iv[i + 1].ts - iv[i].te) + 1.0);
    if (fl_split_gaps(bd, g, ng, ref, b0, b1))
        return -ENOMEM;
    size_t ns = 1;
    for (size_t i = 0; i < ng; i++) {
        ns += b1[i];
        ep->gaps_agree += b0[i] == b1[i];
    }
    ep->gaps = ng;
    ep->step_end = malloc(ns * sizeof *ep->step_end);
    ep->dp_start = malloc(ns * sizeof *ep->dp_start);
    if (!ep->step_end || !ep->dp_start)
        return -ENOMEM;
    size_t s = 0;
    ep->dp_start[0] = iv[0].ts;
    for (size_t i = 0; i < ng; i++)
        if (b1[i]) {
            ep->step_end[s++] = iv[i].te;
            ep->dp_start[s] = iv[i + 1].ts;
        }
    ep->step_end[s++] = iv[nb - 1].te;
    ep->nsteps = s;
    return 0;
}

/* An endpoint with another step count than the job's: each of its step ends goes to the
 * job's nearest step (within a quarter of the typical step), the others stay 0 (missing). */
static int align_steps(struct argus_flows *f, struct fl_job *jb, const int *cnt)
{
    size_t m = jb->nsteps;
    uint64_t typ = m > 1 ? (jb->step_end[m - 1] - jb->step_end[0]) / (m - 1) : UINT64_MAX;

    for (size_t k = 0; k < jb->nep; k++) {
        struct fl_ep *ep = &f->ep[jb->ep[k]];
        if ((size_t)cnt[k] == m || ep->nsteps == 0)
            continue;
        uint64_t *se = calloc(m, sizeof *se), *ds = calloc(m, sizeof *ds);
        if (!se || !ds) {
            free(se);
            free(ds);
            return -ENOMEM;
        }
        for (size_t i = 0; i < ep->nsteps; i++) {
            size_t lo = 0, hi = m;   /* first job end >= ep's end */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (jb->step_end[mid] < ep->step_end[i])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t best = lo < m ? lo : m - 1;
            if (lo > 0 && (lo == m || ep->step_end[i] - jb->step_end[lo - 1] <
                                          jb->step_end[lo] - ep->step_end[i]))
                best = lo - 1;
            uint64_t dist = ep->step_end[i] > jb->step_end[best]
                                ? ep->step_end[i] - jb->step_end[best]
                                : jb->step_end[best] - ep->step_end[i];
            if (dist <= typ / 4 && se[best] == 0)
                se[best] = ep->step_end[i], ds[best] = ep->dp_start[i];
        }
        free(ep->step_end);
        free(ep->dp_start);
        ep->step_end = se, ep->dp_start = ds, ep->nsteps = m;
    }
    return 0;
}

static int job_steps(struct argus_flows *f, struct fl_job *jb)
{
    int *cnt = malloc(jb->nep * sizeof *cnt);
    double *v = malloc((jb->nep + 1) * sizeof *v);
    int rc = -ENOMEM;

    if (!cnt || !v)
        goto out;
    size_t agree = 0, gaps = 0;
    for (size_t k = 0; k < jb->nep; k++) {
        cnt[k] = (int)f->ep[jb->ep[k]].nsteps;
        agree += f->ep[jb->ep[k]].gaps_agree, gaps += f->ep[jb->ep[k]].gaps;
    }
    jb->boundary_agreement = gaps ? (double)agree / (double)gaps : 1.0;
    jb->boundary_gaps = gaps, jb->boundary_disagree = gaps - agree;
    int m = 0;
    size_t mc = 0;
    for (size_t k = 0; k < jb->nep; k++) {   /* modal step count */
        size_t c = 0;
        for (size_t q = 0; q < jb->nep; q++)
            c += cnt[q] == cnt[k];
        if (c > mc)
            mc = c, m = cnt[k];
    }
    jb->nsteps = (size_t)m;
    for (size_t k = 0; k < jb->nep; k++)
        jb->eps_off_steps += cnt[k] != m;
    if (m == 0) {
        rc = 0;
        goto out;
    }
    jb->step_end = malloc((size_t)m * sizeof *jb->step_end);
    jb->step_dur = calloc((size_t)m, sizeof *jb->step_dur);
    if (!jb->step_end || !jb->step_dur)
        goto out;
    for (int s = 0; s < m; s++) {
        size_t nv = 0;
        for (size_t k = 0; k < jb->nep; k++)
            if (cnt[k] == m)
                v[nv++] = (double)f->ep[jb->ep[k]].step_end[s];
        jb->step_end[s] = (uint64_t)fl_median(v, nv);
    }
    if ((rc = align_steps(f, jb, cnt)) != 0)
        goto out;
    rc = -ENOMEM;
    double *d = malloc((size_t)m * sizeof *d), *d2 = malloc((size_t)m * sizeof *d2);
    if (!d || !d2) {
        free(d);
        free(d2);
        goto out;
    }
    for (int s = 1; s < m; s++) {
        jb->step_dur[s] = jb->step_end[s] - jb->step_end[s - 1];
        d[s - 1] = d2[s - 1] = (double)jb->step_dur[s];
    }
    size_t nd = (size_t)m - 1;
    if (nd >= 3) {
        jb->step_med_ns = fl_median(d2, nd);
        jb->step_mad_ns = fl_mad(d2, nd, jb->step_med_ns);
        double scale = 1.4826 * jb->step_mad_ns;
        if (scale < 0.005 * jb->step_med_ns)
            scale = 0.005 * jb->step_med_ns;
        /* each DP group's usual lateness (its burst start after the previous step end) */
        int ng = jb->ndp_groups > 0 ? jb->ndp_groups : 1;
        double *late = calloc((size_t)ng * (size_t)m, sizeof *late);
        double *usual = calloc((size_t)ng, sizeof *usual);
        double *tmpv = malloc((jb->nep + (size_t)m) * sizeof *tmpv);
        if (!late || !usual || !tmpv) {
            free(late), free(usual), free(tmpv), free(d), free(d2);
            goto out;
        }
        for (int gi = 0; gi < ng; gi++) {
            for (int s = 1; s < m; s++) {
                size_t nv = 0;
                for (size_t k = 0; k < jb->nep; k++) {
                    const struct fl_ep *ep = &f->ep[jb->ep[k]];
                    if (cnt[k] == m && ep->dp_group == gi)
                        tmpv[nv++] = (double)ep->dp_start[s] - (double)jb->step_end[s - 1];
                }
                late[(size_t)gi * (size_t)m + (size_t)s] = nv ? fl_median(tmpv, nv) : 0;
            }
            for (int s = 1; s < m; s++)
                tmpv[s - 1] = late[(size_t)gi * (size_t)m + (size_t)s];
            usual[gi] = fl_median(tmpv, (size_t)m - 1);
        }
        for (size_t s = 1; s < (size_t)m; s++) {
            double z = (d[s - 1] - jb->step_med_ns) / scale;
            if (z <= f->o.k_slow)
                continue;
            if (argus_grow(&jb->slow, &jb->slow_cap, jb->nslow + 1, sizeof *jb->slow, 8)) {
                free(late), free(usual), free(tmpv), free(d), free(d2);
                goto out;
            }
            int bestg = -1;
            double best = -INFINITY;
            for (int gi = 0; gi < ng && jb->ndp_groups > 0; gi++) {
                double x = late[(size_t)gi * (size_t)m + s] - usual[gi];
                if (x > best)
                    best = x, bestg = gi;
            }
            jb->slow[jb->nslow++] = (struct fl_slow){s, jb->step_dur[s], z, bestg};
        }
        free(late), free(usual), free(tmpv);
    }
    free(d);
    free(d2);
    rc = 0;
out:
    free(cnt);
    free(v);
    return rc;
}

#define ACF_BINS 512   /* coarse: a layer's pattern blurs, a step's stays */

/* The job's DP (else PP) bytes in ACF_BINS bins of binw from t0 into x. */
static void job_rate(const struct argus_flows *f, uint32_t j, uint64_t t0, double binw,
                     double *x)
{
    int any_dp = f->job[j].npairs_dp > 0;
    for (size_t i = 0; i < ACF_BINS; i++)
        x[i] = 0;
    for (size_t q = 0; q < f->npair; q++) {
        const struct fl_pair *p = &f->pair[q];
        if (p->job != (int)j || (any_dp && p->kind != FL_DP))
            continue;
        for (size_t i = 0; i < p->fl_n; i++) {
            const struct fl_flowlet *x0 = &f->fl[p->fl_first + i];
            if (x0->ts < t0)
                continue;
            double a = (double)(x0->ts - t0) / binw, b = (double)(x0->te - t0) / binw;
            if (a >= ACF_BINS)
                continue;
            if (b > ACF_BINS)
                b = ACF_BINS;
            double per = (double)x0->bytes / (b - a > 1e-9 ? b - a : 1e-9);
            for (size_t k = (size_t)a; (double)k < b; k++) {
                double lo = (double)k > a ? (double)k : a, hi = (double)k + 1 < b ? k + 1.0 : b;
                x[k] += per * (hi - lo);
            }
        }
    }
}

/* ZeRO-3 / FSDP (flows/period.h): the period of the job's byte rate; an endpoint whose
 * bursts' steps do not match it (a median step neither it nor a half or a third of it,
 * within 15 %; or fewer than 4 steps) has its steps tracked with the period instead. */
static int job_period(struct argus_flows *f, struct fl_job *jb, uint32_t j, struct fl_iv *iv,
                      double *x)
{
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (size_t q = 0; q < f->npair; q++)
        if (f->pair[q].job == (int)j && f->pair[q].fl_n) {
            const struct fl_pair *p = &f->pair[q];
            for (size_t i = 0; i < p->fl_n; i++) {
                if (f->fl[p->fl_first + i].ts < t0)
                    t0 = f->fl[p->fl_first + i].ts;
                if (f->fl[p->fl_first + i].te > t1)
                    t1 = f->fl[p->fl_first + i].te;
            }
        }
    if (t1 <= t0)
        return 0;
    /* bins over the whole span; finer (a prefix) while the period is under 16 bins: to
     * 40 bins a period (12 periods in the prefix), or a quarter when none was found */
    double binw = (double)(t1 - t0) / ACF_BINS, per = 0, peak = 0;
    for (int tries = 0; tries < 3 && binw >= 1000; tries++) {
        job_rate(f, j, t0, binw, x);
        per = fl_acf_period(x, ACF_BINS, x + ACF_BINS, &peak);
        if (per >= 16)
            break;
        if (tries < 2)
            binw *= per >= 2 ? per / 40 : 0.25;
    }
    if (!(per >= 2))
        return 0;
    double T = per * binw;
    jb->acf_period_ns = T, jb->acf_peak = peak;
    for (size_t k = 0; k < jb->nep; k++) {
        struct fl_ep *ep = &f->ep[jb->ep[k]];
        if (ep->nsteps >= 4) {   /* its median step from the bursts */
            double *d = malloc(ep->nsteps * sizeof *d);
            if (!d)
                return -ENOMEM;
            size_t nd = 0;
            for (size_t s = 1; s < ep->nsteps; s++)
                if (ep->step_end[s] && ep->step_end[s - 1])
                    d[nd++] = (double)(ep->step_end[s] - ep->step_end[s - 1]);
            double med = nd ? fl_median(d, nd) : 0;
            free(d);
            int agree = 0;
            for (int m = 1; m <= 3; m++)   /* the period may be a multiple of its step */
                agree |= fabs(m * med - T) <= 0.15 * T;
            if (agree)
                continue;
        }
        jb->eps_tracked++;
        size_t nb = ep_bursts(f, jb->ep[k], iv);
        free(ep->step_end), free(ep->dp_start);
        ep->step_end = ep->dp_start = NULL, ep->nsteps = 0;
        if (nb == 0)
            continue;
        size_t cap = (size_t)((double)(iv[nb - 1].te - iv[0].ts) / (0.75 * T)) + 2;
        ep->step_end = malloc(cap * sizeof *ep->step_end);
        ep->dp_start = malloc(cap * sizeof *ep->dp_start);
        if (!ep->step_end || !ep->dp_start)
            return -ENOMEM;
        ep->nsteps = fl_track_steps(iv, nb, T, ep->step_end, ep->dp_start, cap);
    }
    if (!jb->eps_tracked)
        return 0;
    jb->step_method = 1;
    /* the job's steps again, with the tracked ones */
    free(jb->step_end), free(jb->step_dur), free(jb->slow);
    jb->step_end = jb->step_dur = NULL, jb->slow = NULL;
    jb->nslow = jb->slow_cap = 0, jb->eps_off_steps = 0, jb->nsteps = 0;
    jb->step_med_ns = jb->step_mad_ns = 0;
    return job_steps(f, jb);
}

int fl_steps(struct argus_flows *f)
{
    struct fl_iv *iv = malloc((f->nfl + 1) * sizeof *iv);
    double *g = malloc((f->nfl + 1) * sizeof *g);
    unsigned char *b0 = malloc(f->nfl + 1), *b1 = malloc(f->nfl + 1);
    double *x = malloc((ACF_BINS + ACF_BINS / 3 + 2) * sizeof *x);
    struct fl_bocpd *bd = NULL;
    int rc = -ENOMEM;

    if (!iv || !g || !b0 || !b1 || !x ||
        fl_bocpd_create(FL_BOCPD_SIGMA, FL_BOCPD_HAZARD, FL_BOCPD_RMAX, &bd) != 0)
        goto out;
    for (size_t e = 0; e < f->nep; e++)
        if ((rc = ep_steps(f, bd, (uint32_t)e, iv, g, b0, b1)) != 0)
            goto out;
    for (size_t j = 0; j < f->njob; j++)
        if ((rc = job_steps(f, &f->job[j])) != 0 ||
            (rc = job_period(f, &f->job[j], (uint32_t)j, iv, x)) != 0)
            goto out;
    rc = 0;
out:
    fl_bocpd_free(bd);
    free(x);
    free(iv);
    free(g);
    free(b0);
    free(b1);
    return rc;
}
