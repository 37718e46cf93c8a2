/* rank0.h — rank 0's driver of the pipeline (pipeline/pipeline.h) while the job runs: the
 * windows it receives go into the job store and the spool (summaries.argus, zstd, for
 * argus-analyze), the analysis runs after every window, new anomalies are appended to
 * anomalies.jsonl at once and the report is (re)written — provisional (job.complete
 * false) after each window, at most at the pace of reportpace.h (0.5 % of the time),
 * final at the end. So a job killed mid-run still leaves a report of everything up to
 * a recent window.
 * What is the reduction's own stays here: a silent subtree's ranks marked missing from
 * the tree's parent array, the condensing root's and the pull's figures, and reduce.json.
 * Only rank 0 touches this; single-threaded.
 */
#ifndef ARGUS_REDUCE_RANK0_H
#define ARGUS_REDUCE_RANK0_H

#include <stddef.h>
#include <stdint.h>

#include "common/aggregate.h"
#include "common/config.h"
#include "pipeline/pipeline.h"
#include "reduce/condense.h"
#include "reduce/reportpace.h"

struct argus_rank0 {
    struct argus_pipeline pl;  /* store, spool, analysis, carry, L4 plans, reports */
    /* the program's planned steps (argus_set_total_steps), read before every report; set
     * by the runtime after open (NULL: none, ARGUS_TOTAL_STEPS only) */
    uint64_t (*planned_steps)(void);
    uint64_t env_steps;        /* ARGUS_TOTAL_STEPS as rank 0 read it (0: unset) */
    /* the reduction tree (parent[], set by the runtime), for missing subtrees */
    const int *tree_parent;
    int tree_size, tree_depth, fanin, threaded;
    uint64_t spilled_windows; /* rank 0's own windows that waited in a node-local file */
    long window_steps;
    uint64_t windows_with_miss;
    uint64_t misses_written;  /* windows_with_miss when the report files were last written */
    int condense_on;        /* the tree condenses (ARGUS_CONDENSE); its root's figures: */
    struct argus_condense_stats condense;
    uint64_t pull_asks, pull_answers, pull_late, pull_unanswered; /* its pulls (pull.h) */
    struct argus_reportpace pace; /* the provisional rewrites' pace (reportpace.h) */
};

/* Create the output directory, the job store and the spool. 0 or negative errno
 * (errbuf). */
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
/* Analyse what is held and write the outputs from that one result (argus_pipeline_analyze,
 * argus_pipeline_write); final=1 at the end of the job, which also prints the summary
 * on stderr. The final report takes back the marks of ranks that only missed the last,
 * empty flush at MPI_Finalize (reduce.json lists them under "late_at_finalize"). */
void argus_rank0_report(struct argus_rank0 *r0, int final);
/* The provisional report files are rewritten at the pace of reportpace.h: a report asked
 * for too early is analysed and its new anomalies are appended to anomalies.jsonl at once,
 * its files are held, unless a rank was marked missing since they were last written
 * (argus_rank0_mark_missing): that goes to disk at once, since a launcher may kill the
 * whole job a second after one rank dies. argus_rank0_report_due: when the held files are due (monotonic ns;
 * UINT64_MAX: none held); argus_rank0_report_held: write them if due at now (the latest
 * analysis; nothing analysed anew), 1 when written. */
uint64_t argus_rank0_report_due(const struct argus_rank0 *r0);
int argus_rank0_report_held(struct argus_rank0 *r0, uint64_t now_ns);
void argus_rank0_close(struct argus_rank0 *r0);
/* The subtree rooted at `rank` sent nothing for `window` (first step from_step): mark each
 * of its ranks missing in the job store (report: complete false) and remember when, for
 * reduce.json. */
void argus_rank0_mark_missing(struct argus_rank0 *r0, uint32_t rank, uint64_t from_step,
                              uint64_t window);
/* Write reduce.json (YAJL; written to reduce.json.partial relative to the job directory's
 * fd, mode 0640, then renamed: common/outdir.h): the reduction's figures and who was
 * missing from when. 0 or negative errno (nothing is logged). */
int argus_rank0_write_reduce_json(struct argus_rank0 *r0, double thread_cpu_s,
                                  uint64_t dropped, uint64_t inbound);

#endif /* ARGUS_REDUCE_RANK0_H */
