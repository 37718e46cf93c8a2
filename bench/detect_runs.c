/* detect_runs.c — the runs of the detection suite (bench/detect_runs.h): the scenario table
 * (every anomaly kind at four severities), one fault run scored against its truth (source
 * ranks, kind, latency from onset, false alarms outside the fault), one clean run at a
 * variability level (false alarms; chronic ranks named by persistent_imbalance), and the
 * sum of tallies.
 * Must not keep state between runs: everything measured goes into the caller's tallies.
 */
#include "bench/detect_runs.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"

const struct scen detect_scenarios[NSCEN] = {
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
int detect_run_fault(const struct scen *sc, int tp, int pp, int dp, uint64_t seed, int level,
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
    if (detect_make_job(&o, level, &js) || argus_analyze(js, NULL, &r)) {
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
                detect_level_name[level], sc->kind_name, sc->sev, n, (unsigned long long)seed,
                r.n_anomalies,
                best ? argus_anomaly_kind_name((enum argus_anomaly_kind)best->kind) : "-");
    argus_result_free(&r);
    argus_jobstore_free(js);
    return 0;
}

/* ---- clean runs --------------------------------------------------------------------- */

const char *const detect_variant_name[V_N] = { "var_2pct", "var_5pct", "var_9pct",
                                                 "var_9pct_heavy_tail", "var_9pct_chronic" };

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
int detect_run_clean(int v, int k, const int lay[3], int per_run, int level, struct clean *cl,
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
    if (detect_make_job(&o, level, &js) || argus_analyze(js, NULL, &r)) {
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
                    detect_level_name[level], detect_variant_name[v], k,
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

void detect_tally_add(struct tally *d, const struct tally *s)
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
_Static_assert(sizeof detect_scenarios / sizeof detect_scenarios[0] == NSCEN,
               "NSCEN counts the scenario table");
