/* reduce_job.c — bench/reduce_scale's rank-0 job (reduce_job.h). */
#include "bench/reduce_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "store/jobstore.h"
#include "common/spool.h"
#include "common/wire.h"

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

/* Add what the condensing root wrote, shifted by `shift` steps, to js as rank 0 does
 * (reduce/rank0.c: argus_rank0_ingest_condensed): its summary records decoded and added,
 * its rows records' rows from the root's thin rows (t->shifted, shifted already). */
static void store_out(struct argus_jobstore *js, const struct argus_bytebuf *out,
                      const struct thin_rows *t, uint64_t shift, struct argus_step_summary *sum)
{
    char err[128];
    for (size_t off = 0; off < out->len;) {
        int type = 0;
        long n = argus_record_peek(out->p + off, out->len - off, off, &type, err, sizeof err);
        if (n < 0)
            return;
        if (type == ARGUS_REC_SUMMARY &&
            argus_summary_decode(out->p + off, (size_t)n, sum, err, sizeof err) == 0) {
            sum->step += shift;
            sum->start_ns += 1000000000ull * shift;
            sum->end_ns += 1000000000ull * shift;
            argus_jobstore_add_summary(js, sum);
        }
        off += (size_t)n;
    }
    argus_jobstore_add_rows(js, t->shifted, t->n);
}

/* Rank 0's spool of a window (reduce/rank0.c): every record appended, then a flush. */
static void spool_out(struct argus_spool_writer *sw, const struct argus_bytebuf *out)
{
    char err[128];
    for (size_t off = 0; sw && off < out->len;) {
        int type = 0;
        long n = argus_record_peek(out->p + off, out->len - off, off, &type, err, sizeof err);
        if (n <= 0 || argus_spool_append(sw, out->p + off, (size_t)n) != 0)
            return;
        off += (size_t)n;
    }
    if (sw)
        argus_spool_flush(sw);
}

/* One window at rank 0: its records spooled (sw, when not NULL: the same records every
 * window), its summaries into js (shifted by `shift` steps), then the analysis of
 * everything js holds. */
static void an_window(struct argus_jobstore *js, struct argus_spool_writer *sw,
                      const struct argus_bytebuf *out, struct thin_rows *t, uint64_t shift,
                      struct argus_step_summary *sum, struct an_cost *c)
{
    struct argus_analysis_opts o;
    struct argus_result res;

    thin_shift(t, shift);
    double ts = bench_cpu_s();
    spool_out(sw, out);
    c->spool = bench_cpu_s() - ts;
    long f0 = bench_minflt();
    double t0 = bench_cpu_s();
    store_out(js, out, t, shift, sum);
    double t1 = bench_cpu_s();
    long f1 = bench_minflt();
    argus_analysis_opts_default(&o);
    memset(&res, 0, sizeof res);
    c->rc = argus_analyze(js, &o, &res);
    c->store = t1 - t0;
    c->analyze = bench_cpu_s() - t1;
    c->flt_store = f1 - f0;
    c->flt_analyze = bench_minflt() - f1;
    argus_result_free(&res);
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

/* The first window in a fresh store, then a job of windows in one store until STEADY
 * windows past a full horizon, spooled to a scratch file in TMPDIR (removed). */
int an_job(const struct argus_bytebuf *root, struct thin_rows *t, int P, int W,
           struct job_cost *jc)
{
    struct argus_jobstore *js;
    struct argus_spool_writer *sw = NULL;
    double st[STEADY], an[STEADY], fs[STEADY], fa[STEADY], sp[STEADY];
    char path[512], err[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/reduce_scale-%ld.spool", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
    if (argus_spool_open_write(path, &sw, err, sizeof err) != 0)
        fprintf(stderr, "reduce_scale: no spool figures: %s\n", err);

    memset(jc, 0, sizeof *jc);
    struct argus_step_summary *sum = malloc(sizeof *sum); /* decode scratch */
    if (!sum || argus_jobstore_create((uint32_t)P, &js) != 0) {
        free(sum);
        argus_spool_close(sw);
        unlink(path);
        return -1;
    }
    an_window(js, NULL, root, t, 0, sum, &jc->first);
    argus_jobstore_free(js);

    if (argus_jobstore_create((uint32_t)P, &js) != 0) {
        free(sum);
        argus_spool_close(sw);
        unlink(path);
        return -1;
    }
    jc->horizon = argus_jobstore_horizon(js);
    jc->windows = (jc->horizon + W - 1) / W + 1 + STEADY;
    for (size_t w = 0; w < jc->windows; w++) {
        struct an_cost c;
        an_window(js, sw, root, t, (uint64_t)w * W, sum, &c);
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
    struct stat sb;
    argus_spool_close(sw);
    jc->spool_bytes = stat(path, &sb) == 0 ? (double)sb.st_size / (double)(jc->windows * W) : 0;
    unlink(path);
    jc->steady.spool = median5(sp);
    jc->steady.store = median5(st);
    jc->steady.analyze = median5(an);
    jc->steady.flt_store = (long)median5(fs);
    jc->steady.flt_analyze = (long)median5(fa);
    jc->held = argus_jobstore_count(js);
    argus_jobstore_free(js);
    free(sum);
    return 0;
}
