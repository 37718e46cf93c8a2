/* rank0.h — what rank 0 does with the windows it receives: keep them in a job store,
 * spool them to summaries.argus (zstd) for argus-analyze, run the analysis after every
 * window, append new anomalies to anomalies.jsonl at once, and (re)write the report —
 * provisional (job.complete false) after each window, final at the end. So a job killed
 * mid-run still leaves a report of everything up to its last window.
 * Only rank 0 touches this; single-threaded.
 */
#ifndef ARGUS_REDUCE_RANK0_H
#define ARGUS_REDUCE_RANK0_H

#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "common/config.h"
#include "reduce/condense.h"
#include "store/jobstore.h"
#include "common/spool.h"
#include "pipeline/carry.h"
#include "pipeline/traceplan.h"

struct argus_rank0 {
    struct argus_jobstore *js;
    struct argus_spool_writer *spool;
    struct argus_anomaly_log alog;
    struct argus_analysis_opts opts;
    char dir[4096];
    uint64_t bytes_in;      /* window bytes received, for the report */
    uint64_t windows;
    int report_ok;          /* 0 after a write failure was reported once */
    /* the reduction tree (parent[], set by the runtime), for missing subtrees */
    const int *tree_parent;
    int tree_size, tree_depth, fanin, threaded;
    uint64_t spilled_windows; /* rank 0's own windows that waited in a node-local file */
    long window_steps;
    size_t pin_steps;       /* steps the store may hold past its horizon until analysed */
    struct argus_rank0_miss {
        uint32_t rank;
        uint64_t from_step, window, at_ns;
    } *miss;
    size_t nmiss, capmiss;
    uint64_t windows_with_miss;
    uint32_t *late;         /* ranks whose marks argus_rank0_report(final) took back */
    size_t nlate;
    /* L4: the trace dumps planned after each window's analysis (reduce/tracereq.c
     * collects them while the job runs; the reports link the written ones) */
    struct argus_traceplan traces;
    int l4_on;              /* 0: no plans (ARGUS_TRACES 0, no ring, or no Argus thread) */
    /* anomalies of steps the job store has evicted, kept in every later report */
    struct argus_carry carry;
    int condense_on;        /* the tree condenses (ARGUS_CONDENSE); its root's figures: */
    struct argus_condense_stats condense;
    uint64_t pull_asks, pull_answers, pull_late, pull_unanswered; /* its pulls (pull.h) */
};

/* Create the output directory and the spool. 0 or negative errno (errbuf). */
int argus_rank0_open(struct argus_rank0 *r0, const struct argus_config *cfg, uint32_t nranks,
                     const char *jobid, const char *stepid, char *errbuf, size_t errlen);
/* Take one window's concatenated records. Damaged records are reported once and skipped. */
void argus_rank0_ingest(struct argus_rank0 *r0, const uint8_t *buf, size_t len);
/* The same for a condensing root's window (reduce/condense.h): buf's records are spooled
 * and stored, except that the rows of its rows records come from rows[0..nrows)
 * (argus_condense_thin_rows: the same rows, decoded already). rows NULL: as
 * argus_rank0_ingest. */
void argus_rank0_ingest_condensed(struct argus_rank0 *r0, const uint8_t *buf, size_t len,
                                  const struct argus_agg_row *rows, size_t nrows);
/* Analyse what is held and write the outputs; final=1 at the end of the job. Anomalies
 * of steps the store no longer holds stay in the report (pipeline/carry.h). After a
 * window's analysis (not the final one) each new anomaly gets an L4 trace plan while
 * l4_on; every report links the traces written so far. The final
 * report first takes back every mark from a step after the job's last step on a rank
 * that holds that last step: such a rank only missed the deadline of the last, empty
 * flush at MPI_Finalize and delivered all its real steps (reduce.json lists it under
 * "late_at_finalize"), so it is not missing. */
void argus_rank0_report(struct argus_rank0 *r0, int final);
void argus_rank0_close(struct argus_rank0 *r0);
/* The subtree rooted at `rank` sent nothing for `window` (first step from_step): mark each
 * of its ranks missing in the job store (report: complete false) and remember when, for
 * reduce.json. */
void argus_rank0_mark_missing(struct argus_rank0 *r0, uint32_t rank, uint64_t from_step,
                              uint64_t window);
/* Write reduce.json: the reduction's figures and who was missing from when. */
void argus_rank0_write_reduce_json(struct argus_rank0 *r0, double thread_cpu_s,
                                   uint64_t dropped, uint64_t inbound);

#endif /* ARGUS_REDUCE_RANK0_H */
