/* reduce_job.h — bench/reduce_scale's rank-0 job (reduce_job.c): what rank 0 pays per
 * step after the condensing root has written a window, through the pipeline rank 0 runs
 * (pipeline/pipeline.h) — the window spooled (argus_pipeline_spool, timed apart), stored
 * (argus_pipeline_store: summary records decoded and added, the rows from the root's
 * decoded rows) and the job analysed (argus_pipeline_analyze: analysis and carry) — over
 * the first window in a fresh pipeline and over a job of windows in one pipeline. The
 * store keeps its default horizon without rank 0's pin (each window is analysed before
 * the next arrives); no report files are written (not part of the figures). Shared CPU
 * and page-fault clocks. */
#ifndef ARGUS_BENCH_REDUCE_JOB_H
#define ARGUS_BENCH_REDUCE_JOB_H

#include <stddef.h>

#include "common/aggregate.h"
#include "reduce/bytebuf.h"

#define STEADY 5 /* windows of the job measured after its horizon filled */

/* The condensing root's thin rows (argus_condense_thin_rows), and a copy of them shifted
 * to a later window (made before the clock starts: the bench's own work). */
struct thin_rows {
    struct argus_agg_row *base, *shifted;
    size_t n;
};

struct an_cost {
    double store, analyze, spool; /* CPU s */
    long flt_store, flt_analyze;
    int rc;
};

struct job_cost {
    struct an_cost first;  /* the first window, fresh store */
    struct an_cost steady; /* medians over the last STEADY windows of the job */
    size_t horizon, windows, held;
    double spool_bytes; /* compressed spool bytes per step */
    uint64_t spool_max; /* the cap it ran under (ARGUS_SPOOL_MAX's default), bytes */
};

/* This process's CPU seconds, and its minor page faults so far. */
double bench_cpu_s(void);
long bench_minflt(void);
/* The median of STEADY values (v is reordered). */
double median5(double *v);
/* The first window of root's records (the root's thin rows t) in a fresh pipeline of P
 * ranks, then a job of W-step windows in one pipeline (each the same window shifted W
 * steps on) until STEADY windows past a full horizon, spooled into a scratch output
 * directory in TMPDIR (removed). 0, or -1 when out of memory. */
int an_job(const struct argus_bytebuf *root, struct thin_rows *t, int P, int W,
           struct job_cost *jc);

#endif /* ARGUS_BENCH_REDUCE_JOB_H */
