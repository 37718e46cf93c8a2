/* analysis.c — the diagnosis driver (analysis.h): builds the context, fills the step and
 * rank statistics over every step held, keeps only the complete steps for the verdicts
 * (none rests on missing data), runs the L2/L3 rank and group detectors and the L1
 * step-time detectors, drops verdicts under the ratio and verdicts explained by
 * another (waiting that a compute or host source explains; step-time changes covered by
 * a rank-level anomaly), explains the rest and fills struct argus_result. Pure
 * computation over the job store: no I/O, no globals, deterministic.
 */
#include "analysis/analysis.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "common/wire.h"

#define BYTES_SAMPLE 4096

static const char *const kind_names[ARGUS_AK_COUNT] = {
    "compute_straggler", "comm_degradation", "pipeline_bubble", "host_stall",
    "step_regression",   "iteration_jitter", "kernel_degradation", "persistent_imbalance",
};

const char *argus_anomaly_kind_name(enum argus_anomaly_kind k)
{
    return (unsigned)k < ARGUS_AK_COUNT ? kind_names[k] : "unknown";
}

const char *argus_data_level_name(int level)
{
    switch (level) {
    case ARGUS_DL_STEPS: return "steps";
    case ARGUS_DL_PHASES: return "phases";
    case ARGUS_DL_KERNELS: return "kernels";
    default: return "none";
    }
}

const char *argus_group_type_name(enum argus_group_type g)
{
    switch (g) {
    case ARGUS_GT_DP: return "dp";
    case ARGUS_GT_TP: return "tp";
    case ARGUS_GT_PP: return "pp";
    case ARGUS_GT_EP: return "ep";
    default: return NULL;
    }
}

void argus_analysis_opts_default(struct argus_analysis_opts *o)
{
    o->ratio = 1.15;
    o->z = 5.0;
    o->min_steps = 3;
}

static int is_source_kind(int kind)
{
    return kind == ARGUS_AK_COMPUTE_STRAGGLER || kind == ARGUS_AK_PIPELINE_BUBBLE ||
           kind == ARGUS_AK_HOST_STALL || kind == ARGUS_AK_KERNEL_DEGRADATION;
}

/* Group communication that overlaps a compute/host source is waiting, not the network. */
static void suppress_comm(struct an_ctx *c)
{
    for (size_t i = 0; i < c->cand.n; i++) {
        struct an_cand *k = &c->cand.v[i];
        if (k->dropped || k->a.kind != ARGUS_AK_COMM_DEGRADATION)
            continue;
        for (size_t j = 0; j < c->cand.n && !k->dropped; j++) {
            const struct an_cand *s = &c->cand.v[j];
            if (!s->dropped && is_source_kind(s->a.kind) &&
                2 * an_overlap(k->si_a, k->si_b, s->si_a, s->si_b) >= k->si_b - k->si_a + 1)
                k->dropped = 1;
        }
    }
}

/* Two ranks of one dependency chain: the same DP replica when the layout is known (its
 * pipeline and tensor peers wait for it), else any two ranks. */
static int same_chain(const struct an_ctx *c, uint32_t a, uint32_t b)
{
    return !c->layout_known || c->co[a].dp == c->co[b].dp;
}

/* Host gaps that a compute source explains are waiting, not the host: a rank that waits
 * on the host side for a slow pipeline or tensor peer (a blocking receive, gloo, a
 * receive launched when the data is nearly there) idles while its own work matches. A
 * host_stall run (not a late arriver, not an intermittent stall) whose ranks all sit in
 * a chain with a source of a compute, bubble or kernel verdict overlapping at least half
 * of its window is that source's victim: dropped. */
static void suppress_waiting_hosts(struct an_ctx *c)
{
    for (size_t i = 0; i < c->cand.n; i++) {
        struct an_cand *h = &c->cand.v[i];
        if (h->dropped || h->a.kind != ARGUS_AK_HOST_STALL || h->late)
            continue;
        for (size_t j = 0; j < c->cand.n && !h->dropped; j++) {
            const struct an_cand *s = &c->cand.v[j];
            const int src = s->a.kind == ARGUS_AK_COMPUTE_STRAGGLER ||
                            s->a.kind == ARGUS_AK_PIPELINE_BUBBLE ||
                            s->a.kind == ARGUS_AK_KERNEL_DEGRADATION;
            if (s->dropped || !src ||
                2 * an_overlap(h->si_a, h->si_b, s->si_a, s->si_b) < h->si_b - h->si_a + 1)
                continue;
            uint32_t in = 0;
            for (uint32_t x = 0; x < h->a.n_ranks; x++) {
                int hit = 0;
                for (uint32_t y = 0; y < s->a.n_ranks && !hit; y++)
                    hit = same_chain(c, h->a.ranks[x], s->a.ranks[y]);
                in += (uint32_t)hit;
            }
            if (in == h->a.n_ranks)
                h->dropped = 1;
        }
    }
}

/* Step-time anomalies whose steps are mostly covered by a rank- or group-level anomaly
 * with sources are that anomaly's echo. */
static void suppress_l1(struct an_ctx *c, size_t first_l1)
{
    for (size_t i = first_l1; i < c->cand.n; i++) {
        struct an_cand *k = &c->cand.v[i];
        size_t tot = 0, cov = 0;
        for (size_t si = k->si_a; si <= k->si_b; si++) {
            if (!(c->X[si] > 0))
                continue;
            tot++;
            for (size_t j = 0; j < first_l1; j++) {
                const struct an_cand *s = &c->cand.v[j];
                if (!s->dropped && s->a.n_ranks && si + 2 >= s->si_a && si <= s->si_b + 2) {
                    cov++;
                    break;
                }
            }
        }
        if (tot && 2 * cov >= tot)
            k->dropped = 1;
    }
}

/* ---- no verdict on missing data (docs/ALGORITHMS.md, "Missing data") ---------------- */

/* Only the complete steps are judged: a step is complete when every rank that holds any
 * step of the context holds it. A rank whose data stopped (marked missing: its cells from
 * that step on are cut off), a rank whose window has not arrived yet, or a hole left by a
 * dropped summary leaves the steps it lacks incomplete, and no detector sees them: what
 * the others show there (waiting on the silent rank looks like slow communication) would
 * rest on data that is not there. A rank that holds nothing at all is left out of the
 * rule; the report names it missing from step 0. The context is compacted in place to
 * the complete steps (their tables keep their order; X, med_step, cwall and held follow);
 * r gets how many steps were left unjudged, the first of them, and the first step after
 * the last one judged. 0 or -ENOMEM. */
static int judge_complete(struct an_ctx *c, struct argus_result *r)
{
    const size_t S = c->S;
    uint32_t present = 0;
    int rc = an_tmp_reserve(c, S + 16);
    if (rc)
        return rc;
    double *cnt = c->tmp2; /* ranks holding each step */
    for (size_t si = 0; si < S; si++)
        cnt[si] = 0;
    for (uint32_t q = 0; q < c->n; q++) {
        const struct argus_step_summary **row = c->cell + (size_t)q * S;
        int any = 0;
        for (size_t si = 0; si < S; si++)
            if (row[si]) {
                cnt[si] += 1;
                any = 1;
            }
        present += (uint32_t)any;
    }
    size_t keep = 0;
    r->judge_next = S ? c->step_id[0] : 0;
    for (size_t si = 0; si < S; si++)
        if (cnt[si] == (double)present) {
            keep++;
            r->judge_next = c->step_id[si] + 1;
        } else if (r->incomplete_steps++ == 0) {
            r->incomplete_first = c->step_id[si];
        }
    if (keep == S)
        return 0;
    /* every move goes to an index no greater than its source: forward, in place */
    for (uint32_t q = 0; q < c->n; q++) {
        const size_t from = (size_t)q * S, to = (size_t)q * keep;
        for (size_t si = 0, k = 0; si < S; si++) {
            if (cnt[si] != (double)present)
                continue;
            c->cell[to + k] = c->cell[from + si];
            c->vwall[to + k] = c->vwall[from + si];
            c->vcomp[to + k] = c->vcomp[from + si];
            c->vhost[to + k] = c->vhost[from + si];
            c->vstart[to + k] = c->vstart[from + si];
            c->vcomm[to + k] = c->vcomm[from + si];
            c->kd[to + k] = c->kd[from + si];
            c->lv[to + k] = c->lv[from + si];
            k++;
        }
    }
    for (uint32_t g = 0; g < c->n_cls; g++)
        for (size_t si = 0, k = 0; si < S; si++)
            if (cnt[si] == (double)present) {
                c->cwall[(size_t)g * keep + k] = c->cwall[(size_t)g * S + si];
                k++;
            }
    size_t k = 0, m = 0;
    for (size_t si = 0; si < S; si++) {
        if (cnt[si] != (double)present)
            continue;
        c->step_id[k] = c->step_id[si];
        c->X[k] = c->X[si];
        if (!isnan(c->X[k]))
            c->tmp1[m++] = c->X[k];
        k++;
    }
    c->S = keep;
    c->held = (size_t)present * keep;
    c->med_step = m ? argus_stats_median(c->tmp1, m) : 0;
    memset(c->cflag, 0, (size_t)c->n * keep);
    return 0;
}

/* ---- the ratio (docs/ALGORITHMS.md, "Thresholds") ------------------------------------ */

/* No verdict below ARGUS_RATIO: every candidate but step_regression reports its slowdown
 * against the reference it was judged by, and one under the ratio is dropped here, before
 * any suppression counts it (the detectors gate each step by the ratio, but a run's
 * typical slowdown can come out lower). step_regression gates itself (l1.c,
 * regression_min), persistent_imbalance has its own floor (AN_CHRONIC_MIN, own.c): a
 * rank 5-15 % slower than its peers all along is worth one line, never an episode. */
static void gate_ratio(struct an_ctx *c)
{
    for (size_t i = 0; i < c->cand.n; i++) {
        struct an_cand *k = &c->cand.v[i];
        if (!k->dropped && k->a.kind != ARGUS_AK_STEP_REGRESSION &&
            k->a.kind != ARGUS_AK_PERSISTENT_IMBALANCE && !(k->a.slowdown >= c->o.ratio))
            k->dropped = 1;
    }
}

static int cmp_anomaly(const void *x, const void *y)
{
    const struct argus_anomaly *a = x, *b = y;
    if (a->detected_at_step != b->detected_at_step)
        return a->detected_at_step < b->detected_at_step ? -1 : 1;
    if (a->step_first != b->step_first)
        return a->step_first < b->step_first ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    uint32_t ra = a->n_ranks ? a->ranks[0] : 0, rb = b->n_ranks ? b->ranks[0] : 0;
    return (ra > rb) - (ra < rb);
}

/* A step time and how many steps have it. */
struct an_wstep {
    double ms, n;
};

static int cmp_wstep(const void *a, const void *b)
{
    const double x = ((const struct an_wstep *)a)->ms, y = ((const struct an_wstep *)b)->ms;
    return (x > y) - (x < y);
}

/* The q-quantile of the N steps of v[0..k) (sorted), as argus_stats_quantile_sorted would
 * give it on the steps one by one. */
static double wstep_quantile(const struct an_wstep *v, size_t k, double N, double q)
{
    const double pos = q * (N - 1), i0 = floor(pos);
    double at = 0, lo = NAN;
    for (size_t j = 0; j < k; j++) {
        at += v[j].n;
        if (isnan(lo) && i0 < at)
            lo = v[j].ms;
        if (i0 + 1 < at || j + 1 == k)
            return lo + (pos - i0) * (v[j].ms - lo);
    }
    return lo;
}

/* The report's step figures once the store merged its oldest evicted steps (g[0..nc), n > 1
 * each: store/jobstore.h): a merged entry counts as its longest step and its n - 1 others
 * as two equal halves at their mean less and plus their standard deviation (so the count,
 * the sum and the sum of squares, and so the cv, stay those of the steps), and the median
 * and p99 read those steps at the entries' resolution. tmp1[0..m) the other steps (ms). */
static int fill_steps_merged(struct an_ctx *c, const struct argus_jobstore_gone *g,
                             size_t nc, size_t m, double sum, struct argus_result *r)
{
    struct an_wstep *v = malloc((m + 3 * nc) * sizeof *v);
    double N = (double)m, sq = 0;
    size_t k = 0;
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < m; i++)
        v[k++] = (struct an_wstep){c->tmp1[i], 1};
    for (size_t i = 0; i < nc; i++) {
        const double mx = (double)g[i].wall_ns / 1e6, n = (double)g[i].n;
        const double mo = (double)(g[i].wall_sum_ns - g[i].wall_ns) / 1e6 / (n - 1);
        const double var = (g[i].wall_sq_ms2 - mx * mx) / (n - 1) - mo * mo;
        const double sd = var > 0 ? sqrt(var) : 0;
        v[k++] = (struct an_wstep){mx, 1};
        v[k++] = (struct an_wstep){mo - sd, (n - 1) / 2};
        v[k++] = (struct an_wstep){mo + sd, (n - 1) / 2};
        N += n;
        sum += (double)g[i].wall_sum_ns / 1e6;
    }
    const double mean = sum / N;
    for (size_t i = 0; i < k; i++)
        sq += v[i].n * (v[i].ms - mean) * (v[i].ms - mean);
    qsort(v, k, sizeof *v, cmp_wstep);
    r->steps.first = g[0].step;
    if (!m)
        r->steps.last = g[nc - 1].last;
    r->steps.count = (size_t)N;
    r->steps.median_ms = wstep_quantile(v, k, N, 0.5);
    r->steps.p99_ms = wstep_quantile(v, k, N, 0.99);
    r->steps.cv = mean > 0 && N > 1 ? sqrt(sq / (N - 1)) / mean : 0;
    free(v);
    return 0;
}

/* Job step time over every step of the job: the evicted steps' (kept by the store, see
 * store/jobstore.h) and then the held ones'. */
static int fill_steps(struct an_ctx *c, struct argus_result *r)
{
    const struct argus_jobstore_gone *g;
    const size_t ng = argus_jobstore_evicted(c->js, &g);
    size_t m = 0, nc = 0;
    double sum = 0, sq = 0;
    int rc = an_tmp_reserve(c, ng + c->S + 16);
    if (rc)
        return rc;
    while (nc < ng && g[nc].n > 1) /* merged entries, the oldest */
        nc++;
    for (size_t i = nc; i < ng + c->S; i++) {
        const double x = i < ng ? (double)g[i].wall_ns : c->X[i - ng];
        if (!(x > 0))
            continue;
        const uint64_t id = i < ng ? g[i].step : c->step_id[i - ng];
        if (m == 0)
            r->steps.first = id;
        r->steps.last = id;
        c->tmp1[m++] = x / 1e6;
        sum += x / 1e6;
    }
    if (nc)
        return fill_steps_merged(c, g, nc, m, sum, r);
    r->steps.count = m;
    if (!m)
        return 0;
    const double mean = sum / (double)m;
    for (size_t i = 0; i < m; i++)
        sq += (c->tmp1[i] - mean) * (c->tmp1[i] - mean);
    argus_stats_sort(c->tmp1, m);
    r->steps.median_ms = argus_stats_quantile_sorted(c->tmp1, m, 0.5);
    r->steps.p99_ms = argus_stats_quantile_sorted(c->tmp1, m, 0.99);
    r->steps.cv = mean > 0 && m > 1 ? sqrt(sq / (double)(m - 1)) / mean : 0;
    return 0;
}

/* Per-rank median step time: exact over the held steps; once the store evicted some of a
 * rank's steps, the median of its sketch of them plus its held walls (within
 * ARGUS_QSKETCH_ALPHA). */
static int fill_ranks(struct an_ctx *c, struct argus_result *r)
{
    r->n_ranks = c->n;
    r->ranks = calloc(c->n, sizeof *r->ranks);
    if (!r->ranks)
        return -ENOMEM;
    for (uint32_t q = 0; q < c->n; q++) {
        size_t m = 0;
        const double *w = c->vwall + (size_t)q * c->S;
        const struct argus_qsketch *gone = argus_jobstore_rank_gone(c->js, c->rank_of[q]);
        r->ranks[q].rank = c->rank_of[q];
        if (gone) {
            for (size_t si = 0; si < c->S; si++)
                if (!isnan(w[si]))
                    c->tmp1[m++] = w[si];
            argus_stats_sort(c->tmp1, m);
            r->ranks[q].median_step_ms = argus_qsketch_quantile_with(gone, c->tmp1, m, 0.5) / 1e6;
            continue;
        }
        for (size_t si = 0; si < c->S; si++)
            if (!isnan(w[si]))
                c->tmp1[m++] = w[si] / 1e6;
        r->ranks[q].median_step_ms = m ? argus_stats_median(c->tmp1, m) : 0;
    }
    return 0;
}

/* Each rank row's flags: the kinds of the anomalies it is a source of (rows are slots,
 * the anomalies' ranks rank ids). */
static void flag_ranks(const struct an_ctx *c, struct argus_result *r)
{
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *a = &r->anomalies[i];
        for (uint32_t j = 0; j < a->n_ranks; j++) {
            const long q = an_slot_of(c, a->ranks[j]);
            if (q >= 0 && (uint32_t)q < r->n_ranks)
                r->ranks[q].flags |= 1u << a->kind;
        }
    }
}

static int fill_collection(struct an_ctx *c, struct argus_result *r)
{
    const size_t cells = (size_t)c->n * c->S, held = c->held;
    r->kernels_seen = c->kernels_seen;
    r->dropped_events = c->dropped;
    r->cupti_unavailable = c->cupti_why;
    if (!held)
        return 0;
    const size_t cap = argus_summary_encoded_max(ARGUS_MAX_KMODES);
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    const size_t stride = held > BYTES_SAMPLE ? (held + BYTES_SAMPLE - 1) / BYTES_SAMPLE : 1;
    double bytes = 0;
    size_t seen = 0, used = 0;
    for (size_t i = 0; i < cells; i++) {
        const struct argus_step_summary *s = c->cell[i];
        if (!s || seen++ % stride)
            continue;
        long n = argus_summary_encode(s, buf, cap);
        bytes += n > 0 ? (double)n : (double)argus_summary_encoded_max(s->n_kmodes);
        used++;
    }
    free(buf);
    r->summary_bytes_per_rank_step = used ? bytes / (double)used : 0;
    return 0;
}

static int fill_anomalies(struct an_ctx *c, struct argus_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < c->cand.n; i++)
        n += !c->cand.v[i].dropped;
    r->anomalies = calloc(n ? n : 1, sizeof *r->anomalies);
    if (!r->anomalies)
        return -ENOMEM;
    for (size_t i = 0; i < c->cand.n; i++) {
        const struct an_cand *k = &c->cand.v[i];
        if (k->dropped)
            continue;
        struct argus_anomaly *a = &r->anomalies[r->n_anomalies++];
        *a = k->a; /* the context's slots become rank ids */
        an_slots_to_ranks(c, a->ranks, a->n_ranks);
        an_slots_to_ranks(c, a->victims, a->n_victims);
        an_slots_to_ranks(c, a->group, a->n_group);
        if (!isfinite(a->slowdown))
            a->slowdown = 0;
        if (!isfinite(a->score))
            a->score = 0;
    }
    qsort(r->anomalies, r->n_anomalies, sizeof *r->anomalies, cmp_anomaly);
    for (size_t i = 0; i < r->n_anomalies; i++)
        r->anomalies[i].id = (int)i + 1;
    return 0;
}

int argus_analyze(const struct argus_jobstore *js, const struct argus_analysis_opts *o,
                  struct argus_result *r)
{
    struct argus_analysis_opts def;
    struct an_ctx c;
    int rc;

    if (!js || !r)
        return -EINVAL;
    memset(r, 0, sizeof *r);
    if (!o) {
        argus_analysis_opts_default(&def);
        o = &def;
    }
    rc = an_ctx_build(&c, js, o);
    if (rc)
        goto out;
    r->layout = c.lay;
    r->data_level = c.level;
    /* what was received, over every step held; then the verdicts, over complete steps */
    if ((rc = fill_steps(&c, r)) || (rc = fill_ranks(&c, r)) || (rc = fill_collection(&c, r)) ||
        (rc = judge_complete(&c, r)))
        goto out;
    if (c.S) {
        if ((rc = an_detect_compute(&c)) || (rc = an_detect_kernels(&c)) ||
            (rc = an_detect_host(&c)) || (rc = an_detect_comm(&c)) ||
            (rc = an_detect_late(&c)) || (rc = an_detect_stalls(&c)))
            goto out;
        gate_ratio(&c);
        suppress_comm(&c);
        suppress_waiting_hosts(&c);
        size_t first_l1 = c.cand.n;
        if ((rc = an_detect_l1(&c)))
            goto out;
        suppress_l1(&c, first_l1);
        if ((rc = an_explain(&c)))
            goto out;
        an_confidence(&c);
    }
    if ((rc = fill_anomalies(&c, r)))
        goto out;
    flag_ranks(&c, r);
    if (c.S && (rc = an_nccl_result(&c, r)))
        goto out;
    rc = an_placement(js, r);
out:
    if (rc == -ENOENT) {
        /* An empty store is a valid (empty) result: layout unknown, no steps. */
        r->layout.tp = r->layout.pp = r->layout.ep = 1;
        r->layout.dp = (int)argus_jobstore_nranks(js);
        r->layout.inferred = 1;
    }
    if (rc && rc != -ENOENT)
        argus_result_free(r);
    an_ctx_free(&c);
    return rc;
}

void argus_result_free(struct argus_result *r)
{
    if (!r)
        return;
    free(r->anomalies);
    free(r->ranks);
    argus_placement_map_free(r->placement);
    free(r->nccl);
    free(r->nccl_comms);
    memset(r, 0, sizeof *r);
}
