/* own.c — each rank's own baseline next to its peers' (docs/ALGORITHMS.md, "Own baseline
 * and persistent imbalance"). The rank-level detectors judge a rank by q[si], its value
 * over its peer class's reference at each step. A rank that was slower than its peers
 * all along (a slower GPU, a power cap, a busier node) has q well above 1 at every step:
 * that is one persistent_imbalance finding, with its size and its cost to the job, and
 * its episodes are judged against its own level, so that it never turns into a string
 * of short "new" stragglers. A rank that became slower than its own past keeps its old
 * level as the baseline, and its episode has an onset.
 *
 * Pure computation on the context; no allocation but the candidates.
 */
#include "analysis/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The first quarter of the run counts as "its own past" once it has this many steps. */
#define OWN_EARLY_MIN 8
/* A lower first segment counts as "its own past" when its mean is below the rest's by
 * this many standard errors (the largest of S splits of pure noise stays near 3-4). */
#define OWN_ONSET_T 6.0
/* ... and its q is clipped at this many times the rank's median (one stalled step must
 * not make the split) */
#define OWN_ONSET_CLIP 3.0

/* The rank's q in step order (v, m values) as a lower first segment and the rest: the
 * split k (both parts at least AN_REGRESSION_MIN_SEG long) whose rise of the mean is
 * the most standard errors, pooled over both parts, or 0 when none reaches OWN_ONSET_T
 * or the rise is below AN_CHRONIC_MIN. One pass after the totals, nothing allocated. */
static size_t onset_split(const double *v, size_t m, double clip)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < m; i++) {
        const double x = v[i] < clip ? v[i] : clip;
        s += x;
        ss += x * x;
    }
    double a = 0, aa = 0, best = OWN_ONSET_T;
    size_t at = 0;
    for (size_t k = 1; k + AN_REGRESSION_MIN_SEG <= m; k++) {
        const double x = v[k - 1] < clip ? v[k - 1] : clip;
        a += x;
        aa += x * x;
        if (k < AN_REGRESSION_MIN_SEG)
            continue;
        const double n1 = (double)k, n2 = (double)(m - k);
        const double mu1 = a / n1, mu2 = (s - a) / n2;
        const double sse = (aa - a * mu1) + ((ss - aa) - (s - a) * mu2);
        const double var = (sse > 0 ? sse : 0) / (double)(m - 2) * (1.0 / n1 + 1.0 / n2);
        if (mu2 - mu1 < AN_CHRONIC_MIN * mu1)
            continue;
        /* a floor on the error: a noiseless series still needs a material rise */
        const double se = sqrt(var) > 1e-3 * mu1 ? sqrt(var) : 1e-3 * mu1;
        const double t = (mu2 - mu1) / se;
        if (t > best) {
            best = t;
            at = k;
        }
    }
    return at;
}

/* q's judged entries (> 0, finite) into buf in step order; their count. */
static size_t judged_in_order(const double *q, size_t S, double *buf)
{
    size_t m = 0;
    for (size_t si = 0; si < S; si++)
        if (q[si] > 0 && isfinite(q[si]))
            buf[m++] = q[si];
    return m;
}

int an_own_past(const struct an_ctx *c)
{
    const struct argus_jobstore_gone *g;
    return argus_jobstore_evicted(c->js, &g) == 0;
}

void an_own_level(const double *q, size_t S, double *buf, struct an_own *out)
{
    memset(out, 0, sizeof *out);
    out->base = 1.0;
    out->level = NAN;
    size_t m = judged_in_order(q, S, buf);
    out->n = m;
    if (m < 2 * AN_REGRESSION_MIN_SEG)
        return;
    /* the early and late parts, in step order (each selection reorders buf: refilled) */
    const size_t m4 = m / 4;
    double early = NAN, late = NAN;
    if (m4 >= OWN_EARLY_MIN) {
        early = argus_stats_median(buf, m4);
        judged_in_order(q, S, buf);
        late = argus_stats_median(buf + (m - m4), m4);
        judged_in_order(q, S, buf);
    }
    /* A rank that became slow before the first quarter's middle (or before that quarter
     * is long enough to count) still has a past: the lower first segment of the best
     * split. Its median joins the first quarter's. The clip needs the median first. */
    const double med_all = argus_stats_median(buf, m);
    judged_in_order(q, S, buf);
    const size_t k = onset_split(buf, m, OWN_ONSET_CLIP * med_all);
    if (k) {
        const double pre = argus_stats_median(buf, k);
        early = isnan(early) || pre < early ? pre : early;
        judged_in_order(q, S, buf);
    }
    argus_stats_sort(buf, m);
    const double med = argus_stats_quantile_sorted(buf, m, 0.5);
    const double low = argus_stats_quantile_sorted(buf, m, 0.25);
    /* A slowdown that lasts past three quarters of the run would lift the lower
     * quartile; its first quarter is then still the rank's own past. */
    double base = low, level = med;
    if (!isnan(early)) {
        base = early < base ? early : base;
        level = early < level ? early : level;
    }
    /* Slower all along means slower at the end too: an episode in the middle lifts the
     * median, and noise can lift the first quarter, but the last quarter is back at the
     * rank's usual level (a slowdown that lasts to the end has an onset instead). */
    if (!isnan(late))
        level = late < level ? late : level;
    out->base = base > 1.0 ? base : 1.0;
    out->level = level;
    /* steady: most steps above the midpoint between 1 and the level */
    size_t above = 0;
    const double mid = 0.5 * (1.0 + level);
    for (size_t i = 0; i < m; i++)
        above += buf[i] >= mid;
    out->steady = (double)above / (double)m;
}

int an_persistent(struct an_ctx *c, const struct an_own *own, const double *cost, int phase,
                  int data_level)
{
    double *lv = c->tmp3; /* an_tmp_reserve(c, n) by the caller */
    for (uint32_t k = 0; k < c->n_cls; k++) {
        const uint32_t *mem = c->cls_mem + c->cls_off[k];
        const uint32_t nm = c->cls_off[k + 1] - c->cls_off[k];
        size_t m = 0;
        for (uint32_t i = 0; i < nm; i++)
            if (!isnan(own[mem[i]].level))
                lv[m++] = own[mem[i]].level;
        if (m < 2)
            continue;
        /* the class's usual level and its spread over the members (a few chronic ones
         * barely move either) */
        struct argus_robust r;
        argus_stats_robust(lv, m, 0, c->tmp2, &r);
        if (m < 3) { /* two ranks: the faster is the usual level */
            r.ref = lv[0] < lv[1] ? lv[0] : lv[1];
            r.scale = 0;
        }
        const double med = r.ref;
        const double sc = r.scale > AN_CHRONIC_SCALE * med ? r.scale : AN_CHRONIC_SCALE * med;
        for (uint32_t i = 0; i < nm; i++) {
            const uint32_t q = mem[i];
            const struct an_own *o = &own[q];
            /* against the class's usual level, not 1: levels are ratios to the lower-half
             * reference, which sits a little under the typical member */
            if (isnan(o->level) || !(med > 0) || o->level < (1.0 + AN_CHRONIC_MIN) * med ||
                o->steady < 0.75)
                continue;
            const double z = (o->level - r.ref) / sc, size = o->level / med;
            if (z < c->o.z || !(cost[q] >= AN_COMPUTE_MATERIAL))
                continue;
            /* one finding per rank: keep the strongest when several tables flag it */
            struct an_cand *prev = NULL;
            for (size_t j = 0; j < c->cand.n && !prev; j++) {
                struct an_cand *k2 = &c->cand.v[j];
                if (k2->a.kind == ARGUS_AK_PERSISTENT_IMBALANCE && k2->a.ranks[0] == q)
                    prev = k2;
            }
            if (prev && prev->a.score >= z)
                continue;
            struct an_cand *cand = prev;
            if (!cand) {
                int rc = an_push_cand(c, ARGUS_AK_PERSISTENT_IMBALANCE, 2, 0, c->S - 1,
                                      c->S - 1, size, z, 0, &cand);
                if (rc)
                    return rc;
                an_cand_add_rank(cand, q);
            }
            cand->a.slowdown = size;
            cand->a.score = z;
            cand->a.phase = phase;
            cand->a.data_level = data_level;
            cand->a.cost_share = cost[q];
            cand->n_peers = nm - 1;
            cand->a.detected_at_step = c->step_id[c->S - 1 < 2 * AN_REGRESSION_MIN_SEG - 1
                                                      ? c->S - 1
                                                      : 2 * AN_REGRESSION_MIN_SEG - 1];
            char rk[24];
            an_format_slots(c, &q, 1, rk, sizeof rk);
            snprintf(cand->a.evidence, sizeof cand->a.evidence,
                     "rank %s was %.1f%% slower than the other %u ranks of its peer class "
                     "from the first step judged (%s%s; median over %zu steps, %.0f%% of "
                     "them above half of that; z %.1f against the class's ranks) and never "
                     "came back: not a new event; it costs the job up to %.1f%% of its wall "
                     "time when it gates the step",
                     rk, 100.0 * (size - 1.0), nm - 1,
                     phase >= 0 ? argus_phase_name((enum argus_phase)phase) : "",
                     phase >= 0 ? " phase" : data_level == ARGUS_DL_STEPS ? "step time"
                                                                          : "compute",
                     o->n, 100.0 * o->steady, z, 100.0 * cost[q]);
        }
    }
    return 0;
}
