/* pipeline.h — rank 0's sequence, built once and run the same by the live job
 * (reduce/rank0.c), by argus-analyze (import/argus_analyze.c) and by the benchmarks
 * (bench/reduce_job.c), docs/ARCHITECTURE.md (rooms, pipeline/):
 *
 *   wire records -> job store (and summaries.argus) -> analysis -> anomalies of evicted
 *   steps carried (carry.h) -> L4 trace plans (traceplan.h) -> anomalies.jsonl ->
 *   report.json, report.md, steps.csv, metrics.prom, SVGs
 *
 * Every output of one report is written from one in-memory report (struct argus_report:
 * the latest analysis result and, offline, the inputs read), so the files cannot disagree.
 *
 * Live: argus_pipeline_open with base + jobid, then per window argus_pipeline_ingest,
 * argus_pipeline_analyze(0) and argus_pipeline_write (a provisional report: job.complete
 * false); at the end argus_pipeline_analyze(1), argus_pipeline_write and
 * argus_pipeline_print_summary. The job's span is wall-clock time: started at open, ended
 * at every analysis.
 * Offline: argus_pipeline_open with dir, the store filled (argus_pipeline_add_* or the
 * store's own importers on pl->js), argus_pipeline_seal, argus_pipeline_set_inputs, then
 * the final analysis and write. The span comes from the summaries.
 *
 * One owner, one thread (rank 0's Argus thread, or a program's main thread); no MPI.
 * Memory: the job store's horizon (store/jobstore.h), the latest result, and lists that
 * grow per window (missing marks, carried anomalies, trace plans), never per event.
 * Errors are values; what cannot be returned (a spool that stops, anomalies.jsonl that
 * cannot be appended) is said once on stderr: "argus: ..." live, "PROG: ..." offline.
 */
#ifndef ARGUS_PIPELINE_PIPELINE_H
#define ARGUS_PIPELINE_PIPELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "common/aggregate.h"
#include "common/outdir.h"
#include "common/spool.h"
#include "forecast/forecast.h"
#include "pipeline/carry.h"
#include "pipeline/spoolcap.h"
#include "pipeline/traceplan.h"
#include "report/report.h"
#include "store/jobstore.h"

struct argus_pipeline_opts {
    uint32_t nranks;
    /* the output directory: dir when set (a directory of ours the user named, made with
     * its parents when missing, and traces/ in it: argus_outdir_adopt), else a fresh
     * <base>/argus-<jobid>/ (argus_outdir_create_at); held open until close, and every
     * file written relative to it (common/outdir.h) */
    const char *dir;
    const char *base;
    const char *name;    /* not NULL: the fresh directory is <base>/<name> (argus-analyze's
                          * default: argus_outdir_fresh), not <base>/argus-<jobid> */
    const char *jobid;   /* job.id of the report; live, also the directory's name */
    const char *stepid;  /* job.step; NULL: none */
    int source;          /* job.source: enum argus_source (0: replay) */
    double ratio;        /* smallest slowdown reported (ARGUS_RATIO); 0: the default */
    int spool;           /* write every record taken in to summaries.argus (zstd) */
    uint64_t spool_max;  /* bytes the spool may take (ARGUS_SPOOL_MAX; pipeline/spoolcap.h:
                          * older parts downsampled, then removed); 0: unbounded */
    size_t traces;       /* L4 trace plans at most (ARGUS_TRACES); 0: none */
    long window;         /* steps per window: up to 2 windows of steps not analysed yet
                          * stay past the store's horizon; 0: no pin */
    int keep_all;        /* the store keeps every step (argus-analyze) */
    size_t max_cells;    /* else, with max_cells > 0: the store's horizon, in summaries
                          * (a test's short horizon; 16 steps at least) */
    const char *prog;    /* offline program name for its messages; NULL: argus_log */
    uint64_t total_steps; /* the job's planned steps for the forecast (ARGUS_TOTAL_STEPS);
                           * 0: unknown (the forecast is for 1,000 steps) */
};

/* A rank marked missing (argus_pipeline_mark_missing), for reduce.json. */
struct argus_pipeline_miss {
    uint32_t rank;
    uint64_t from_step, window, at_ns; /* at_ns: wall clock when it was marked */
};

/* Fields are read by the callers (reduce.json, the L4 service, tests); they change them
 * only where a comment says so. */
struct argus_pipeline {
    struct argus_jobstore *js;         /* owned */
    struct argus_spool_writer *spool;  /* summaries.argus; NULL: not spooled */
    struct argus_spoolcap *spoolcap;   /* its size policy (spool_max); NULL: none yet */
    uint64_t spool_max;                /* from the opts; 0: unbounded */
    struct argus_anomaly_log alog;     /* what anomalies.jsonl holds already */
    struct argus_carry carry;          /* anomalies of steps the store evicted */
    struct argus_traceplan traces;     /* L4 plans; reduce/tracereq.c carries them out */
    struct argus_analysis_opts opts;
    struct argus_report rep;           /* the latest analysis: every writer's input */
    struct argus_forecast *fc;         /* the latest forecast (rep.forecast when valid);
                                        * owned, NULL until the first analysis */
    uint64_t total_steps;              /* planned steps; callers may change it (the
                                        * program's argus_set_total_steps) */
    char total_from[128];              /* where the caller's total_steps came from, for
                                        * the forecast's assumptions ("": the caller's);
                                        * callers may change it with total_steps */
    int have_result;                   /* rep holds an analysis */
    struct argus_outdir out;           /* the output directory, held open (have_out) */
    int have_out;
    char dir[4096];                    /* its path, for messages and callers' reports */
    const char *prog;
    int report_ok;                     /* 0 once a report write failed (retried only by
                                        * the final report) */
    int final;                         /* the latest analysis was the final one */
    unsigned written;                  /* ARGUS_REPORT_F_* of the latest report write */
    size_t full_writes;                /* report writes that wrote every file */
    char report_err[512];              /* why the latest report write failed; "": none */
    char alog_err[512];                /* why the latest append to anomalies.jsonl
                                        * failed; "": it holds every anomaly */
    int l4_on;                         /* caller-set: plan L4 traces after each window */
    int sealed;                        /* argus_pipeline_seal ran: span from the data */
    size_t pin_steps;
    uint64_t bytes_in, windows;        /* taken in by argus_pipeline_ingest */
    struct argus_pipeline_miss *miss;  /* ranks marked missing, in order */
    size_t nmiss, capmiss;
    uint32_t *late;                    /* marks the final analysis took back */
    size_t nlate, caplate;
};

/* Make the output directory, the job store (job.complete false, started now) and, when
 * asked, the spool (a spool that cannot be opened costs one log line, not the
 * pipeline). 0 or negative errno with errbuf naming what failed; pl is then closed. */
int argus_pipeline_open(struct argus_pipeline *pl, const struct argus_pipeline_opts *o,
                        char *errbuf, size_t errlen);
/* Free everything; the spool is closed (a failure is said once). Idempotent. */
void argus_pipeline_close(struct argus_pipeline *pl);

/* ---- taking records in (live) ------------------------------------------------------- */

/* One window's concatenated wire records: counted, spooled and stored. rows not NULL
 * (a condensing root's window, reduce/condense.h): the rows of its rows records come
 * from rows[0..nrows), decoded already, and those records are not decoded again.
 * Damaged records are reported once (log) and skipped. */
void argus_pipeline_ingest(struct argus_pipeline *pl, const uint8_t *buf, size_t len,
                           const struct argus_agg_row *rows, size_t nrows);
/* The two halves of argus_pipeline_ingest, for a benchmark that times them apart. */
void argus_pipeline_spool(struct argus_pipeline *pl, const uint8_t *buf, size_t len);
int argus_pipeline_store(struct argus_pipeline *pl, const uint8_t *buf, size_t len,
                         const struct argus_agg_row *rows, size_t nrows, char *errbuf,
                         size_t errlen);

/* The rank sent nothing from step from_step on (window `window`): marked missing in the
 * store (the report says complete false) and remembered with the time, once per rank. */
void argus_pipeline_mark_missing(struct argus_pipeline *pl, uint32_t rank, uint64_t from_step,
                                 uint64_t window);

/* ---- filling the store directly (offline) ------------------------------------------- */

/* The store's own calls (store/jobstore.h); 0 or negative errno. */
int argus_pipeline_add_summary(struct argus_pipeline *pl, const struct argus_step_summary *s);
int argus_pipeline_add_name(struct argus_pipeline *pl, uint64_t hash, const char *name);
int argus_pipeline_set_rankinfo(struct argus_pipeline *pl, const struct argus_rank_info *ri);
/* Everything is in: every rank without a step is marked missing from step 0, the job's
 * span is taken from the summaries (no clock from now on), and the persistence the
 * analysis asks for is cut to the steps there are. */
void argus_pipeline_seal(struct argus_pipeline *pl);
/* What was read, for report.json "inputs" and report.md "Inputs skipped"; borrowed until
 * close. A skipped input or one read in part (lost) makes the data partial (job.complete
 * false). */
void argus_pipeline_set_inputs(struct argus_pipeline *pl, const struct argus_report_inputs *in);

/* ---- one report --------------------------------------------------------------------- */

/* Analyse what the store holds into pl->rep, replacing the previous analysis. First the
 * mark of a rank that holds every step from its mark to the job's last step is taken
 * back (it was late, not missing: a deadline or silence on a busy node; listed in
 * late[]); final=1 at the end, also a mark from a step after the job's last step on a
 * rank that holds that last step (it only missed the deadline of the last, empty flush
 * at MPI_Finalize); then job.complete is set: no rank missing and no input skipped. Then anomalies of steps the store no longer holds are
 * added back (carry.h; only a store with a horizon evicts), the steps analysed are let go
 * (pin), and each new anomaly gets an L4 trace plan while l4_on and not final (the
 * written traces are linked either way). 0, or negative errno (-ENOENT: no step
 * summaries; pl->rep is then empty). */
int argus_pipeline_analyze(struct argus_pipeline *pl, int final);
/* Write pl->rep: its anomalies not logged yet appended to anomalies.jsonl, then every
 * report file. 0, -ENOENT (no analysis), or the report writers' negative errno with
 * errbuf; after a failure report files are not written again (anomalies.jsonl is) until
 * the final report, which tries once more. What was and was not written is kept for
 * argus_pipeline_print_summary. */
int argus_pipeline_write(struct argus_pipeline *pl, char *errbuf, size_t errlen);
/* Only the first part of argus_pipeline_write: pl->rep's anomalies not logged yet appended
 * to anomalies.jsonl (rank 0 between the provisional rewrites it paces: reduce/reportpace.h).
 * Nothing without an analysis. */
void argus_pipeline_write_log(struct argus_pipeline *pl);
/* The human summary of pl->rep (report/report.h) on out, saying exactly what was written:
 * the report, or why not and which of its files were; anomalies.jsonl lines lost; the
 * output directory removed meanwhile; trace files named that are not there. */
void argus_pipeline_print_summary(const struct argus_pipeline *pl, FILE *out);

/* ---- L4 traces (for reduce/tracereq.c) --------------------------------------------- */

/* The name of an anomaly kind (enum argus_anomaly_kind), as reports and trace files
 * spell it. */
const char *argus_pipeline_kind_name(int kind);

/* One target's answer to an L4 trace request. */
struct argus_pipeline_trace_reply {
    int got;                 /* 0: it did not answer (json unused) */
    const char *json;        /* a JSON array of Chrome-trace events, NUL-terminated, checked */
    size_t len;
    uint64_t events, first_step, last_step; /* events it holds, and their steps */
};

/* Plan i of tp is collected: merge the replies (reply[k] is p->targets[k]'s) into one
 * Chrome-trace document traces/<kind>-steps-A-B.json, created relative to tp->out's
 * traces/ fd (the pipeline's output directory; tp->out NULL: dir's traces/, opened for
 * this call without following a symlink at traces; dir names the directory in messages)
 * (report/trace_merge.h: offsets refined on shared collectives; sources labelled and on
 * top, the ranks that did not answer named), then mark the plan WRITTEN with its path, or
 * FAILED with one line why (nobody answered, the rings had moved on, a reply is not a JSON
 * array of events, no memory, the file cannot be written: that last said once in the
 * log). 1 written, 0 failed. */
int argus_pipeline_write_trace(struct argus_traceplan *tp, size_t i, const char *dir,
                               const struct argus_pipeline_trace_reply *reply);

#endif /* ARGUS_PIPELINE_PIPELINE_H */
