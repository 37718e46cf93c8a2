/* reduce_job.c — bench/reduce_scale's rank-0 job (reduce_job.h), through rank 0's own
 * pipeline (pipeline/pipeline.h). */
#include "bench/reduce_job.h"
#include "common/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/wire.h"
#include "pipeline/pipeline.h"

double bench_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

long bench_minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}



static void thin_shift(struct thin_rows *t, uint64_t shift)
{
    for (size_t i = 0; i < t->n; i++) {
        t->shifted[i] = t->base[i];
        t->shifted[i].step += shift;
        t->shifted[i].start_ns += 1000000000ull * shift;
    }
}

/* What the condensing root wrote, its summary records moved `shift` steps on (decoded,
 * shifted and encoded again into *to; the other records copied as they are: rank 0 takes
 * its rows records' rows from the root's decoded rows, t->shifted). The bench's own work,
 * before the clock starts. 0 or -1. */
static int shift_out(const struct argus_bytebuf *out, uint64_t shift,
                     struct argus_step_summary *sum, struct argus_bytebuf *to)
{
    char err[128];

    to->len = 0;
    for (size_t off = 0; off < out->len;) {
        int type = 0;
        long n = argus_record_peek(out->p + off, out->len - off, off, &type, err, sizeof err);
        if (n <= 0)
            return -1;
        if (type == ARGUS_REC_SUMMARY &&
            argus_summary_decode(out->p + off, (size_t)n, sum, err, sizeof err) == 0) {
            sum->step += shift;
            sum->start_ns += 1000000000ull * shift;
            sum->end_ns += 1000000000ull * shift;
            size_t cap = argus_summary_encoded_max(sum->n_kmodes);
            if (argus_bytebuf_reserve(to, cap) != 0)
                return -1;
            long m = argus_summary_encode(sum, to->p + to->len, cap);
            if (m <= 0)
                return -1;
            to->len += (size_t)m;
        } else if (argus_bytebuf_append(to, out->p + off, (size_t)n) != 0) {
            return -1;
        }
        off += (size_t)n;
    }
    return 0;
}

/* One window at rank 0 through the pipeline (pipeline/pipeline.h), as reduce/rank0.c
 * takes it in (argus_pipeline_ingest, its halves timed apart): the window's records
 * spooled (when spool), stored with the root's decoded rows, then the analysis of
 * everything the store holds (argus_pipeline_analyze: analysis, carry). */
static void an_window(struct argus_pipeline *pl, int spool, const struct argus_bytebuf *out,
                      struct thin_rows *t, uint64_t shift, struct argus_step_summary *sum,
                      struct argus_bytebuf *win, struct an_cost *c)
{
    char err[256];

    thin_shift(t, shift);
    if (shift_out(out, shift, sum, win) != 0) {
        c->rc = -1;
        return;
    }
    double ts = bench_cpu_s();
    if (spool)
        argus_pipeline_spool(pl, win->p, win->len);
    c->spool = bench_cpu_s() - ts;
    long f0 = bench_minflt();
    double t0 = bench_cpu_s();
    int src = argus_pipeline_store(pl, win->p, win->len, t->shifted, t->n, err, sizeof err);
    double t1 = bench_cpu_s();
    long f1 = bench_minflt();
    c->rc = argus_pipeline_analyze(pl, 0) | src;
    c->store = t1 - t0;
    c->analyze = bench_cpu_s() - t1;
    c->flt_store = f1 - f0;
    c->flt_analyze = bench_minflt() - f1;
}

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median5(double *v)
{
    qsort(v, STEADY, sizeof *v, cmp_d);
    return v[STEADY / 2];
}

/* The first window in a fresh pipeline, then a job of windows in one pipeline until
 * STEADY windows past a full horizon, spooled into a scratch output directory in TMPDIR
 * (removed). */
/* Remove a scratch job directory the pipeline made (it holds traces/ and at most the
 * spool, unlinked by the caller). */
static void remove_job_dir(const char *dir)
{
    char path[4200];

    snprintf(path, sizeof path, "%s/traces", dir);
    rmdir(path);
    rmdir(dir);
}

int an_job(const struct argus_bytebuf *root, struct thin_rows *t, int P, int W,
           struct job_cost *jc)
{
    struct argus_pipeline pl;
    struct argus_bytebuf win = {0};
    double st[STEADY], an[STEADY], fs[STEADY], fa[STEADY], sp[STEADY];
    char jobid[64], path[4200] = "", dir[4096] = "", err[512];
    const char *tmp = getenv("TMPDIR");
    struct argus_pipeline_opts o = {
        .nranks = (uint32_t)P, .base = tmp && *tmp ? tmp : "/tmp", .jobid = jobid,
        .prog = "reduce_scale"}; /* the store's default retention; no pin, no L4 plans */
    int rc = -1;

    memset(jc, 0, sizeof *jc);
    snprintf(jobid, sizeof jobid, "reduce_scale-%ld", (long)getpid());
    struct argus_step_summary *sum = malloc(sizeof *sum); /* decode scratch */
    if (!sum || argus_pipeline_open(&pl, &o, err, sizeof err) != 0) {
        fprintf(stderr, "reduce_scale: %s\n", sum ? err : "out of memory");
        free(sum);
        return -1;
    }
    an_window(&pl, 0, root, t, 0, sum, &win, &jc->first);
    snprintf(dir, sizeof dir, "%s", pl.dir);
    argus_pipeline_close(&pl);
    remove_job_dir(dir); /* the next open makes its own */
    dir[0] = '\0';

    o.spool = 1;
    struct argus_config *cfg = malloc(sizeof *cfg); /* the default ARGUS_SPOOL_MAX */
    if (cfg) {
        argus_config_defaults(cfg);
        o.spool_max = (uint64_t)cfg->spool_max << 20;
        free(cfg);
    }
    jc->spool_max = o.spool_max;
    if (argus_pipeline_open(&pl, &o, err, sizeof err) != 0) {
        fprintf(stderr, "reduce_scale: %s\n", err);
        goto out;
    }
    snprintf(dir, sizeof dir, "%s", pl.dir);
    if (!pl.spool)
        fprintf(stderr, "reduce_scale: no spool figures\n");
    jc->horizon = argus_jobstore_horizon(pl.js);
    jc->windows = (jc->horizon + W - 1) / W + 1 + STEADY;
    for (size_t w = 0; w < jc->windows; w++) {
        struct an_cost c;
        an_window(&pl, 1, root, t, (uint64_t)w * W, sum, &win, &c);
        jc->steady.rc |= c.rc;
        if (w + STEADY < jc->windows)
            continue;
        const size_t k = w + STEADY - jc->windows;
        st[k] = c.store;
        an[k] = c.analyze;
        fs[k] = (double)c.flt_store;
        fa[k] = (double)c.flt_analyze;
        sp[k] = c.spool;
    }
    jc->held = argus_jobstore_count(pl.js);
    snprintf(path, sizeof path, "%s/summaries.argus", pl.dir);
    argus_pipeline_close(&pl);
    struct stat sb;
    jc->spool_bytes = stat(path, &sb) == 0 ? (double)sb.st_size / (double)(jc->windows * W) : 0;
    jc->steady.spool = median5(sp);
    jc->steady.store = median5(st);
    jc->steady.analyze = median5(an);
    jc->steady.flt_store = (long)median5(fs);
    jc->steady.flt_analyze = (long)median5(fa);
    rc = 0;
out:
    if (path[0])
        unlink(path);
    if (dir[0])
        remove_job_dir(dir);
    free(win.p);
    free(sum);
    return rc;
}
