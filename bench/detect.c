/* detect.c — the detection scenario suite: every anomaly kind at four severities on the
 * synthetic Megatron job of tests/synth/synth.c (the same injections and the same
 * schedule model as argus-simtrain, in-process, so a few hundred runs take seconds), several
 * seeds, plus clean runs with 2 %, 5 % and 9 % step-time variability, heavy-tailed kernel
 * noise, and 9 % with ranks/8 ranks chronically 5-15 % slower. Every run at three data
 * levels (bench/README.md, "Data levels"): kernels (the summaries as made), phases (the
 * kernel figures removed, the marked phases' walls kept) and steps (only the step
 * intervals left). Prints one JSON line through yajl_gen (docs/STYLE.md, "Benchmarks"),
 * source "argus-synth": per level precision and recall of source ranks (all severities,
 * >= x1.2 and >= x1.3), kind accuracy, detection latency in steps from onset (and in
 * ARGUS_WINDOW=10-step windows), false alarms per 1,000 clean steps per variability level
 * (below the kernels level: 9 % plain and chronic only) and, with chronic offsets, the
 * share of chronic ranks named by a persistent_imbalance finding. The kernels level's
 * figures also stand at the top of the line, under the keys of earlier versions.
 * Usage: bench/detect [--seeds N] [--clean-steps N] [--ranks 16|64]
 * [--level kernels|phases|steps|all] [--no-faults] [--condense] [--verbose]: 16 ranks
 * (tp 2, pp 2, dp 4) or 64 (tp 2, pp 4, dp 8) for the fault and the clean runs alike;
 * 30,000 clean steps per variability level by default (enough to tell 1 false alarm per
 * 10,000 steps from 0). Not run by `make check`; deterministic for given arguments.
 * --condense: every run's summaries go through the condensing root (reduce/condense.h) as
 * rank 0 would take them, one batch per WINDOW steps (names and rank info in the first),
 * and the analysis reads the store built from what the root writes (exemplars + thin
 * summaries) instead of the full one: whether detection survives condensing. By the
 * module's contract one root over the raw summaries gives what any tree gives. The data
 * level is applied after condensing.
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "bench/benchline.h"
#include "common/jsongen.h"
#include "reduce/condense.h"
#include "common/wire.h"
#include "reduce/bytebuf.h"
#include "tests/synth/synth.h"

#define STEPS 100
#define ONSET 40
#define END 79
#define WINDOW 10

/* --condense: on, and what the condensing root kept over all runs */
static struct {
    int on;
    double exemplars, thin, bad;
} cond;

/* Append one encoded record (enc: 0 summary, 1 name, 2 rank info). 0 or -1. */
static int eput(struct argus_bytebuf *b, int enc, const void *x, uint64_t h)
{
    const size_t room = enc == 0 ? argus_summary_encoded_max(
                                       ((const struct argus_step_summary *)x)->n_kmodes)
                                 : 4096;
    uint8_t *p = argus_bytebuf_reserve(b, room) ? NULL : b->p + b->len;
    long n = !p ? -1
             : enc == 0 ? argus_summary_encode(x, p, room)
             : enc == 1 ? argus_name_encode(h, x, p, room)
                        : argus_rankinfo_encode(x, p, room);
    if (n <= 0)
        return -1;
    b->len += (size_t)n;
    return 0;
}

/* Replace *js by the store rank 0 builds when every summary of *js goes through the
 * condensing root, a batch per WINDOW steps. 0 or -1 (*js untouched). */
static int condense_job(struct argus_jobstore **js)
{
    const struct argus_jobstore *src = *js;
    const uint32_t n = argus_jobstore_nranks(src);
    struct argus_jobstore *dst = NULL;
    struct argus_condense c;
    struct argus_bytebuf b = { 0 };
    uint64_t first, last, bad = 0, *seen = NULL;
    size_t nseen = 0, *cur = calloc(n, sizeof *cur);
    char err[256] = "out of memory";
    int rc = -1;

    if (!cur || argus_jobstore_step_range(src, &first, &last) ||
        argus_jobstore_create(n, &dst) || argus_condense_init(&c, n))
        goto out_nocd;
    *argus_jobstore_meta(dst) = *argus_jobstore_meta_c(src);
    for (uint32_t q = 0; q < n; q++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(src, q);
        if (ri && eput(&b, 2, ri, 0))
            goto out;
        if (argus_jobstore_missing_since(src, q) != UINT64_MAX)
            argus_jobstore_mark_missing(dst, q, argus_jobstore_missing_since(src, q));
    }
    for (uint64_t w = first; w <= last; w += WINDOW) {
        for (uint32_t q = 0; q < n; q++) {
            const struct argus_step_summary *const *ss;
            const size_t ns = argus_jobstore_rank_steps(src, q, &ss);
            for (; cur[q] < ns && ss[cur[q]]->step < w + WINDOW; cur[q]++) {
                const struct argus_step_summary *s = ss[cur[q]];
                for (uint32_t k = 0; k < s->n_kmodes; k++) { /* names the first time */
                    const uint64_t h = s->kmodes[k].name_hash;
                    size_t i = 0;
                    while (i < nseen && seen[i] != h)
                        i++;
                    if (i < nseen)
                        continue;
                    uint64_t *ns2 = realloc(seen, (nseen + 1) * sizeof *seen);
                    if (!ns2)
                        goto out;
                    seen = ns2;
                    seen[nseen++] = h;
                    const char *nm = argus_jobstore_name(src, h);
                    if (nm && eput(&b, 1, nm, h))
                        goto out;
                }
                if (eput(&b, 0, s, 0))
                    goto out;
            }
        }
        if (argus_condense_run(&c, b.p, b.len, 1, &bad) ||
            argus_jobstore_ingest_buffer(dst, c.out, c.outlen, 0, err, sizeof err)) {
            fprintf(stderr, "detect: condense: %s\n", err);
            goto out;
        }
        b.len = 0;
    }
    cond.exemplars += (double)c.st.exemplars;
    cond.thin += (double)c.st.thin;
    cond.bad += (double)bad;
    argus_jobstore_free(*js);
    *js = dst;
    dst = NULL;
    rc = 0;
out:
    argus_condense_free(&c);
out_nocd:
    argus_jobstore_free(dst);
    free(b.p);
    free(seen);
    free(cur);
    return rc;
}

/* ---- data levels ----------------------------------------------------------------- */

/* The three levels of data a job can bring (bench/README.md, "Data levels"). */
enum { LV_KERNELS, LV_PHASES, LV_STEPS, LV_N };
static const char *const lv_name[LV_N] = { "kernels", "phases", "steps" };

/* s at a lower level, in place: phases = every figure that comes from kernels gone
 * (class times, busy time, kernel modes and count, the phase compute split, the COMM and
 * HOST phase walls, which the summariser derives from kernels; host_gap_ns 0), the walls
 * of the marked phases kept; steps = the phase walls gone too, only the step's interval
 * left. Coordinates and rank infos stay. */
static void degrade_summary(struct argus_step_summary *s, int level)
{
    s->compute_ns = s->collective_ns = s->p2p_ns = s->memcpy_ns = s->busy_ns = 0;
    s->host_gap_ns = 0;
    s->kernel_count = 0;
    s->n_kmodes = 0;
    memset(s->phase_compute_ns, 0, sizeof s->phase_compute_ns);
    s->phase_wall_ns[ARGUS_PH_COMM] = s->phase_wall_ns[ARGUS_PH_HOST] = 0;
    if (level == LV_STEPS)
        memset(s->phase_wall_ns, 0, sizeof s->phase_wall_ns);
}

/* Replace *js by a store of its summaries at `level` (LV_KERNELS: untouched). 0 or -1
 * (*js untouched). */
static int degrade_job(struct argus_jobstore **js, int level)
{
    const struct argus_jobstore *src = *js;
    const uint32_t n = argus_jobstore_nranks(src);
    struct argus_jobstore *dst = NULL;
    struct argus_step_summary *tmp = NULL;
    int rc = -1;

    if (level == LV_KERNELS)
        return 0;
    if (argus_jobstore_create(n, &dst) || !(tmp = malloc(sizeof *tmp)))
        goto out;
    *argus_jobstore_meta(dst) = *argus_jobstore_meta_c(src);
    for (uint32_t q = 0; q < n; q++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(src, q);
        const struct argus_step_summary *const *ss;
        const size_t ns = argus_jobstore_rank_steps(src, q, &ss);
        if (ri && argus_jobstore_set_rankinfo(dst, ri))
            goto out;
        for (size_t i = 0; i < ns; i++) {
            memcpy(tmp, ss[i], offsetof(struct argus_step_summary, kmodes));
            degrade_summary(tmp, level);
            if (argus_jobstore_add_summary(dst, tmp))
                goto out;
        }
        if (argus_jobstore_missing_since(src, q) != UINT64_MAX)
            argus_jobstore_mark_missing(dst, q, argus_jobstore_missing_since(src, q));
    }
    argus_jobstore_free(*js);
    *js = dst;
    dst = NULL;
    rc = 0;
out:
    argus_jobstore_free(dst);
    free(tmp);
    return rc;
}

/* synth_job, then (--condense) the condensed store, then the data level. */
static int make_job(const struct synth_opts *o, int level, struct argus_jobstore **js)
{
    if (synth_job(o, js))
        return -1;
    if ((cond.on && condense_job(js)) || degrade_job(js, level)) {
        argus_jobstore_free(*js);
        *js = NULL;
        return -1;
    }
    return 0;
}

/* Severity classes: below x1.2, x1.2 up to x1.3, x1.3 and above. */
enum { SEV_LOW, SEV_12, SEV_13 };

struct scen {
    const char *kind_name;
    int kind;        /* expected enum argus_anomaly_kind */
    int sy;          /* enum synth_kind */
    double sev;      /* factor, or ms for host stalls */
    int cls;         /* severity class (comm x1.5 and x3, host 50/500 ms: SEV_13) */
};

static const struct scen scens[] = {
    { "compute_straggler", ARGUS_AK_COMPUTE_STRAGGLER, SY_STRAGGLER, 1.1, SEV_LOW },
    { "compute_straggler", ARGUS_AK_COMPUTE_STRAGGLER, SY_STRAGGLER, 1.2, SEV_12 },
    { "compute_straggler", ARGUS_AK_COMPUTE_STRAGGLER, SY_STRAGGLER, 1.3, SEV_13 },
    { "compute_straggler", ARGUS_AK_COMPUTE_STRAGGLER, SY_STRAGGLER, 2.0, SEV_13 },
    { "kernel_degradation", ARGUS_AK_KERNEL_DEGRADATION, SY_KERNEL, 1.1, SEV_LOW },
    { "kernel_degradation", ARGUS_AK_KERNEL_DEGRADATION, SY_KERNEL, 1.2, SEV_12 },
    { "kernel_degradation", ARGUS_AK_KERNEL_DEGRADATION, SY_KERNEL, 1.3, SEV_13 },
    { "kernel_degradation", ARGUS_AK_KERNEL_DEGRADATION, SY_KERNEL, 2.0, SEV_13 },
    { "pipeline_bubble", ARGUS_AK_PIPELINE_BUBBLE, SY_BUBBLE, 1.1, SEV_LOW },
    { "pipeline_bubble", ARGUS_AK_PIPELINE_BUBBLE, SY_BUBBLE, 1.2, SEV_12 },
    { "pipeline_bubble", ARGUS_AK_PIPELINE_BUBBLE, SY_BUBBLE, 1.3, SEV_13 },
    { "pipeline_bubble", ARGUS_AK_PIPELINE_BUBBLE, SY_BUBBLE, 2.0, SEV_13 },
    { "comm_degradation", ARGUS_AK_COMM_DEGRADATION, SY_COMM, 1.5, SEV_13 },
    { "comm_degradation", ARGUS_AK_COMM_DEGRADATION, SY_COMM, 3.0, SEV_13 },
    { "host_stall", ARGUS_AK_HOST_STALL, SY_HOST, 50, SEV_13 },
    { "host_stall", ARGUS_AK_HOST_STALL, SY_HOST, 500, SEV_13 },
    { "step_regression", ARGUS_AK_STEP_REGRESSION, SY_REGRESSION, 1.1, SEV_LOW },
    { "step_regression", ARGUS_AK_STEP_REGRESSION, SY_REGRESSION, 1.2, SEV_12 },
    { "step_regression", ARGUS_AK_STEP_REGRESSION, SY_REGRESSION, 1.3, SEV_13 },
    { "step_regression", ARGUS_AK_STEP_REGRESSION, SY_REGRESSION, 2.0, SEV_13 },
    { "iteration_jitter", ARGUS_AK_ITERATION_JITTER, SY_JITTER, 1.1, SEV_LOW },
    { "iteration_jitter", ARGUS_AK_ITERATION_JITTER, SY_JITTER, 1.2, SEV_12 },
    { "iteration_jitter", ARGUS_AK_ITERATION_JITTER, SY_JITTER, 1.3, SEV_13 },
    { "iteration_jitter", ARGUS_AK_ITERATION_JITTER, SY_JITTER, 2.0, SEV_13 },
};
#define NSCEN (sizeof scens / sizeof scens[0])

struct tally {
    double tp, fp, fn;       /* source ranks (rank-less kinds: the job as one "rank") */
    double runs, detected, kind_ok, lat_sum, lat_max, lat_n, within2w, fa;
};

static void add_rank(int *v, int *n, int r)
{
    for (int i = 0; i < *n; i++)
        if (v[i] == r)
            return;
    v[(*n)++] = r;
}

static int overlaps(const struct argus_anomaly *a, int lo, int hi)
{
    return (int64_t)a->step_first <= hi + 2 && (int64_t)a->step_last + 2 >= lo;
}

/* One fault run at a data level; adds to t. */
static int run_fault(const struct scen *sc, int tp, int pp, int dp, uint64_t seed, int level,
                     struct tally *t, int verbose)
{
    struct synth_opts o;
    struct argus_jobstore *js = NULL;
    struct argus_result r;
    synth_default(&o, seed);
    o.tp = tp;
    o.pp = pp;
    o.dp = dp;
    o.steps = STEPS;
    const int n = tp * pp * dp;
    const int hi = sc->sy == SY_JITTER ? ONSET : sc->sy == SY_REGRESSION ? STEPS - 1 : END;
    struct synth_fault *f = synth_add(&o, sc->sy, ONSET, hi, sc->sy == SY_HOST ? 1.0 : sc->sev);
    int truth[SYNTH_MAX_RANKS], nt = 0;
    const int victim = (int)((seed * 7 + 3) % (uint64_t)n);
    switch (sc->sy) {
    case SY_STRAGGLER:
    case SY_HOST:
    case SY_KERNEL:
        f->ranks[f->nranks++] = victim;
        truth[nt++] = victim;
        f->ms = sc->sev;
        f->kernel = "flash_bwd";
        break;
    case SY_BUBBLE:
        f->stage = pp - 1;
        for (int q = 0; q < n; q++)
            if (q / (tp * dp) == pp - 1)
                truth[nt++] = q;
        break;
    case SY_COMM:
        f->group_index = (int)(seed % (uint64_t)(tp * pp));
        for (int q = 0; q < n; q++) /* DP group tp_i + tp * pp_i */
            if (q % tp + tp * (q / (tp * dp)) == f->group_index)
                truth[nt++] = q;
        break;
    default:
        break;
    }
    if (make_job(&o, level, &js) || argus_analyze(js, NULL, &r)) {
        argus_jobstore_free(js);
        return -1;
    }
    int pred[SYNTH_MAX_RANKS], np = 0, det = 0, job_named = 0;
    const struct argus_anomaly *best = NULL;
    for (size_t i = 0; i < r.n_anomalies; i++) {
        const struct argus_anomaly *a = &r.anomalies[i];
        if (!overlaps(a, ONSET, hi)) {
            t->fa++;
            continue;
        }
        for (uint32_t k = 0; k < a->n_ranks; k++)
            add_rank(pred, &np, (int)a->ranks[k]);
        job_named |= a->n_ranks == 0;
        if (!best || (best->kind != sc->kind && a->kind == sc->kind))
            best = a;
        det = 1;
    }
    if (nt == 0) { /* rank-less kinds: the job is the one "rank" */
        t->tp += job_named;
        t->fn += !job_named;
        t->fp += np;
    } else {
        for (int i = 0; i < np; i++) {
            int in = 0;
            for (int k = 0; k < nt; k++)
                in |= pred[i] == truth[k];
            t->tp += in;
            t->fp += !in;
        }
        for (int k = 0; k < nt; k++) {
            int in = 0;
            for (int i = 0; i < np; i++)
                in |= pred[i] == truth[k];
            t->fn += !in;
        }
        t->fp += job_named;
    }
    t->runs++;
    if (det) {
        t->detected++;
        t->kind_ok += best->kind == sc->kind;
        const double lat = (double)best->detected_at_step - ONSET;
        t->lat_sum += lat;
        t->lat_n++;
        t->lat_max = lat > t->lat_max ? lat : t->lat_max;
        t->within2w += lat <= 2 * WINDOW;
    }
    if (verbose && (!det || best->kind != sc->kind || np != nt))
        fprintf(stderr, "miss: %s %s %.2g n=%d seed=%llu: %zu anomalies, first kind %s\n",
                lv_name[level], sc->kind_name, sc->sev, n, (unsigned long long)seed,
                r.n_anomalies,
                best ? argus_anomaly_kind_name((enum argus_anomaly_kind)best->kind) : "-");
    argus_result_free(&r);
    argus_jobstore_free(js);
    return 0;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 1.0;
}

/* ---- clean runs --------------------------------------------------------------------- */

/* Variability levels of the clean runs: step cv ~2, 5, 9 %, 9 % with heavy-tailed kernel
 * noise, 9 % with ranks/8 ranks chronically 5-15 % slower from the first step (each
 * should be one persistent_imbalance finding, never an episode). */
enum { V_2, V_5, V_9, V_9_TAIL, V_9_CHRONIC, V_N };
static const char *const v_name[V_N] = { "var_2pct", "var_5pct", "var_9pct",
                                         "var_9pct_heavy_tail", "var_9pct_chronic" };

struct clean {
    double fa[V_N], steps[V_N], cv[V_N], runs[V_N];
    double pi_found, pi_total;   /* V_9_CHRONIC: chronic ranks named by persistent_imbalance */
};

/* The chronic ranks of a V_9_CHRONIC run (ranks/8 of them, spread over the job) and
 * their factors (1.05 ... 1.15), as at most SYNTH_MAX_FAULTS straggler faults from step 0
 * to the end. Returns the count. */
static int add_chronic(struct synth_opts *o, int n, uint64_t k, int *ranks)
{
    const int nc = n / 8 > 0 ? n / 8 : 1;
    const int nf = nc < SYNTH_MAX_FAULTS ? nc : SYNTH_MAX_FAULTS;
    for (int i = 0; i < nf; i++)
        synth_add(o, SY_STRAGGLER, 0, o->steps - 1, 1.05 + 0.10 * i / (nf > 1 ? nf - 1 : 1));
    for (int i = 0; i < nc; i++) {
        ranks[i] = (int)((k * 5 + 3 + (uint64_t)i * (uint64_t)(n / nc)) % (uint64_t)n);
        struct synth_fault *f = &o->f[i % nf];
        f->ranks[f->nranks++] = ranks[i];
    }
    return nc;
}

static int in_set(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* One clean run of variant v at a data level; adds to cl. */
static int run_clean(int v, int k, const int lay[3], int per_run, int level, struct clean *cl,
                     int verbose)
{
    static const double var[] = { 0.024, 0.06, 0.11 }; /* sigma giving step cv ~2, 5, 9 % */
    struct synth_opts o;
    struct argus_jobstore *js = NULL;
    struct argus_result r;
    int chronic[SYNTH_MAX_RANKS], nc = 0;
    synth_default(&o, 5000u + 31u * (uint64_t)k + 7u * (uint64_t)v);
    o.tp = lay[0];
    o.pp = lay[1];
    o.dp = lay[2];
    o.steps = per_run;
    o.step_sigma = v < V_9_TAIL ? var[v] : var[2];
    o.tail = v == V_9_TAIL ? 0.002 : 0;
    if (v == V_9_CHRONIC)
        nc = add_chronic(&o, lay[0] * lay[1] * lay[2], (uint64_t)k, chronic);
    if (make_job(&o, level, &js) || argus_analyze(js, NULL, &r)) {
        argus_jobstore_free(js);
        return -1;
    }
    int named[SYNTH_MAX_RANKS], nn = 0;
    for (size_t i = 0; i < r.n_anomalies; i++) {
        const struct argus_anomaly *a = &r.anomalies[i];
        int ok = nc > 0 && a->n_ranks > 0 &&
                 !strcmp(argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind),
                         "persistent_imbalance");
        for (uint32_t q = 0; ok && q < a->n_ranks; q++)
            ok = in_set(chronic, nc, (int)a->ranks[q]);
        for (uint32_t q = 0; ok && q < a->n_ranks; q++)
            add_rank(named, &nn, (int)a->ranks[q]);
        cl->fa[v] += !ok;
        if (verbose && !ok)
            fprintf(stderr, "false alarm: %s %s seed %d: %s steps %llu-%llu x%.3f z %.1f: %s\n",
                    lv_name[level], v_name[v], k,
                    argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind),
                    (unsigned long long)a->step_first, (unsigned long long)a->step_last,
                    a->slowdown, a->score, a->evidence);
    }
    cl->steps[v] += per_run;
    cl->cv[v] += r.steps.cv;
    cl->runs[v]++;
    cl->pi_found += nn;
    cl->pi_total += nc;
    argus_result_free(&r);
    argus_jobstore_free(js);
    return 0;
}

/* ---- the result line (docs/STYLE.md, "File formats and JSON") ---------------------- */

/* Everything measured at one data level */
struct level_res {
    int on;
    struct tally per[NSCEN], all, ge12, ge13;
    struct clean cl;
};

/* "name": a tally's figures */
static int put_tally(yajl_gen g, const char *name, const struct tally *t)
{
    ARGUS_JSON_TRY(argus_json_key(g, name));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_BENCH_PUT_F(g, "runs", "%.0f", t->runs);
    ARGUS_BENCH_PUT_F(g, "precision", "%.4f", ratio(t->tp, t->tp + t->fp));
    ARGUS_BENCH_PUT_F(g, "recall", "%.4f", ratio(t->tp, t->tp + t->fn));
    ARGUS_BENCH_PUT_F(g, "detected", "%.4f", ratio(t->detected, t->runs));
    ARGUS_BENCH_PUT_F(g, "kind_accuracy", "%.4f", ratio(t->kind_ok, t->detected));
    ARGUS_BENCH_PUT_F(g, "latency_steps_mean", "%.2f", t->lat_n ? t->lat_sum / t->lat_n : 0);
    ARGUS_BENCH_PUT_F(g, "latency_steps_max", "%.0f", t->lat_max);
    ARGUS_BENCH_PUT_F(g, "within_2_windows", "%.4f", ratio(t->within2w, t->lat_n));
    ARGUS_BENCH_PUT_F(g, "false_alarms", "%.0f", t->fa);
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

/* "clean": the variants run at this level */
static int put_clean(yajl_gen g, const struct clean *cl)
{
    ARGUS_JSON_TRY(argus_json_key(g, "clean"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    for (int v = 0; v < V_N; v++) {
        if (!cl->runs[v])
            continue;
        ARGUS_JSON_TRY(argus_json_key(g, v_name[v]));
        ARGUS_JSON_CK(yajl_gen_map_open(g));
        ARGUS_BENCH_PUT_F(g, "steps", "%.0f", cl->steps[v]);
        ARGUS_BENCH_PUT_F(g, "step_cv", "%.4f", cl->cv[v] / cl->runs[v]);
        ARGUS_BENCH_PUT_F(g, "false_alarms", "%.0f", cl->fa[v]);
        ARGUS_BENCH_PUT_F(g, "per_1000_steps", "%.3f",
              cl->steps[v] ? 1000 * cl->fa[v] / cl->steps[v] : 0);
        if (v == V_9_CHRONIC)
            ARGUS_BENCH_PUT_F(g, "persistent_imbalance_recall", "%.4f",
                  ratio(cl->pi_found, cl->pi_total));
        ARGUS_JSON_CK(yajl_gen_map_close(g));
    }
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

/* all, severity_ge_1.2, severity_ge_1.3, by_scenario and clean of one level */
static int put_level_body(yajl_gen g, const struct level_res *lr)
{
    ARGUS_JSON_TRY(put_tally(g, "all", &lr->all));
    ARGUS_JSON_TRY(put_tally(g, "severity_ge_1.2", &lr->ge12));
    ARGUS_JSON_TRY(put_tally(g, "severity_ge_1.3", &lr->ge13));
    ARGUS_JSON_TRY(argus_json_key(g, "by_scenario"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    for (size_t s = 0; s < NSCEN; s++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s_x%g%s", scens[s].kind_name, scens[s].sev,
                 scens[s].sy == SY_HOST ? "ms" : "");
        ARGUS_JSON_TRY(put_tally(g, nm, &lr->per[s]));
    }
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return put_clean(g, &lr->cl);
}

/* The result object: the kernels level's figures at the top (the keys readers of earlier
 * lines know), then every level run under "levels". 0, -EIO or -ENOMEM. */
static int put_result(yajl_gen g, int ranks, int seeds, const struct level_res *lv,
                      double seconds)
{
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_json_key(g, "bench"));
    ARGUS_JSON_TRY(argus_json_str(g, "detect"));
    ARGUS_JSON_TRY(argus_json_key(g, "source"));
    ARGUS_JSON_TRY(argus_json_str(g, "argus-synth"));
    ARGUS_JSON_TRY(argus_json_key(g, "ranks"));
    ARGUS_JSON_CK(yajl_gen_array_open(g));
    ARGUS_JSON_CK(yajl_gen_integer(g, ranks));
    ARGUS_JSON_CK(yajl_gen_array_close(g));
    ARGUS_JSON_TRY(argus_json_key(g, "seeds"));
    ARGUS_JSON_CK(yajl_gen_integer(g, seeds));
    ARGUS_JSON_TRY(argus_json_key(g, "steps_per_run"));
    ARGUS_JSON_CK(yajl_gen_integer(g, STEPS));
    ARGUS_JSON_TRY(argus_json_key(g, "onset_step"));
    ARGUS_JSON_CK(yajl_gen_integer(g, ONSET));
    ARGUS_JSON_TRY(argus_json_key(g, "window_steps"));
    ARGUS_JSON_CK(yajl_gen_integer(g, WINDOW));
    ARGUS_JSON_TRY(argus_json_key(g, "condense"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_json_key(g, "on"));
    ARGUS_JSON_CK(yajl_gen_bool(g, cond.on));
    ARGUS_BENCH_PUT_F(g, "exemplars", "%.0f", cond.exemplars);
    ARGUS_BENCH_PUT_F(g, "thin", "%.0f", cond.thin);
    ARGUS_BENCH_PUT_F(g, "bad", "%.0f", cond.bad);
    ARGUS_BENCH_PUT_F(g, "full_share", "%.4f",
          cond.on ? ratio(cond.exemplars, cond.exemplars + cond.thin) : 1.0);
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    if (lv[LV_KERNELS].on)
        ARGUS_JSON_TRY(put_level_body(g, &lv[LV_KERNELS]));
    ARGUS_JSON_TRY(argus_json_key(g, "levels"));
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    for (int l = 0; l < LV_N; l++) {
        if (!lv[l].on)
            continue;
        ARGUS_JSON_TRY(argus_json_key(g, lv_name[l]));
        ARGUS_JSON_CK(yajl_gen_map_open(g));
        ARGUS_JSON_TRY(put_level_body(g, &lv[l]));
        ARGUS_JSON_CK(yajl_gen_map_close(g));
    }
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    ARGUS_BENCH_PUT_F(g, "seconds", "%.1f", seconds);
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

static void tally_add(struct tally *d, const struct tally *s)
{
    d->tp += s->tp;
    d->fp += s->fp;
    d->fn += s->fn;
    d->runs += s->runs;
    d->detected += s->detected;
    d->kind_ok += s->kind_ok;
    d->lat_sum += s->lat_sum;
    d->lat_n += s->lat_n;
    d->lat_max = s->lat_max > d->lat_max ? s->lat_max : d->lat_max;
    d->within2w += s->within2w;
    d->fa += s->fa;
}

/* "kernels", "phases", "steps" or "all" into on[]; 0 or -1. */
static int parse_levels(const char *s, int *on)
{
    for (int l = 0; l < LV_N; l++)
        on[l] = !strcmp(s, "all") || !strcmp(s, lv_name[l]);
    return on[0] || on[1] || on[2] ? 0 : -1;
}

int main(int argc, char **argv)
{
    int seeds = 3, clean_steps = 30000, ranks = 16, verbose = 0, faults = 1, bad = 0;
    int lv_on[LV_N] = { 1, 1, 1 };
    for (int i = 1; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--clean-steps") && i + 1 < argc)
            clean_steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ranks64"))
            ranks = 64;
        else if (!strcmp(argv[i], "--level") && i + 1 < argc)
            bad = parse_levels(argv[++i], lv_on);
        else if (!strcmp(argv[i], "--no-faults"))
            faults = 0;
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
        else if (!strcmp(argv[i], "--condense"))
            cond.on = 1;
        else
            bad = 1;
        bad |= ranks != 16 && ranks != 64;
    }
    if (bad) {
        fprintf(stderr, "usage: detect [--seeds N] [--clean-steps N] [--ranks 16|64] "
                        "[--level kernels|phases|steps|all] [--no-faults] [--condense] "
                        "[--verbose]\n");
        return 2;
    }
    /* Every run allocates and frees tens of MB of summaries: keep the freed heap instead
     * of returning it to the kernel and faulting it in again (a third of the run time). */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* tp, pp, dp: 16 ranks = 2 x 2 x 4, 64 ranks = 2 x 4 x 8 (faults and clean runs) */
    const int lay[3] = { 2, ranks == 64 ? 4 : 2, ranks == 64 ? 8 : 4 };
    static struct level_res lv[LV_N];
    const int per_run = 500, runs = (clean_steps + per_run - 1) / per_run;
    for (int l = 0; l < LV_N; l++) {
        struct level_res *lr = &lv[l];
        lr->on = lv_on[l];
        for (size_t s = 0; lr->on && faults && s < NSCEN; s++)
            for (int k = 0; k < seeds; k++)
                if (run_fault(&scens[s], lay[0], lay[1], lay[2],
                              1000u + 17u * (uint64_t)k + 101u * s, l, &lr->per[s], verbose)) {
                    fprintf(stderr, "detect: run failed\n");
                    return 1;
                }
        for (size_t s = 0; s < NSCEN; s++) {
            tally_add(&lr->all, &lr->per[s]);
            if (scens[s].cls >= SEV_12)
                tally_add(&lr->ge12, &lr->per[s]);
            if (scens[s].cls >= SEV_13)
                tally_add(&lr->ge13, &lr->per[s]);
        }
        /* clean runs: false alarms per 1,000 steps; below the kernels level only at 9 %
         * variability, plain and with chronic offsets (what the figures are asked of) */
        for (int v = 0; lr->on && v < V_N; v++) {
            if (l != LV_KERNELS && v != V_9 && v != V_9_CHRONIC)
                continue;
            for (int k = 0; k < runs; k++)
                if (run_clean(v, k, lay, per_run, l, &lr->cl, verbose)) {
                    fprintf(stderr, "detect: clean run failed\n");
                    return 1;
                }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = -ENOMEM;
    if (g && yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout)) {
        rc = put_result(g, ranks, seeds, lv,
                        (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        putchar('\n');
    }
    if (g)
        yajl_gen_free(g);
    if (rc) {
        fprintf(stderr, "detect: the result line could not be generated\n");
        return 1;
    }
    return 0;
}
