/* report.h — writers of a result: report.json (docs/REPORT_SCHEMA.md, via YAJL's generator),
 * report.md, steps.csv, anomalies.jsonl lines and the one-paragraph summary printed at the
 * end of a run. Every file is derived from the same in-memory report (struct argus_report:
 * the analysis result, and for argus-analyze the inputs it read), in one pass.
 * Every file is created relative to the output directory's fd (common/outdir.h): whole
 * files as *.partial then renamed, anomalies.jsonl appended.
 * Single-threaded per report; the writers allocate only while writing.
 */
#ifndef ARGUS_REPORT_REPORT_H
#define ARGUS_REPORT_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "common/stackrec.h"
#include "forecast/forecast.h"
#include "store/jobstore.h"

/* What argus-analyze read: report.json's "inputs" object (files, analysed, skipped) and
 * report.md's "Inputs skipped" section. Borrowed: the strings stay the caller's. */
struct argus_report_inputs {
    size_t files;                /* input files named or found in named directories */
    size_t analysed;             /* of them, the ones that delivered data */
    const char *const *skipped;  /* n_skipped lines "FILE: why" */
    size_t n_skipped;
    const char *const *lost;     /* n_lost lines "FILE[:LINE]: what was not read" of inputs
                                  * used in part (job.complete false) */
    size_t n_lost;
    const char *const *notes;    /* n_notes lines "FILE[:LINE]: what was dropped or cut" of
                                  * inputs used (bad event times, clipped strings, repeats) */
    size_t n_notes;
};

/* One report as every writer reads it. */
struct argus_report {
    struct argus_result res;                  /* the analysis; its arrays stay the owner's */
    const struct argus_report_inputs *inputs; /* NULL: a live run (no "inputs") */
    const struct argus_forecast *forecast;    /* NULL (or not valid): no "forecast" */
    const struct argus_stackset *stacks;      /* host call stack samples (common/stackrec.h)
                                               * merged per anomaly (report/stacks.c);
                                               * NULL: none */
};

/* The report files, as bits of argus_report_write_at's *written. */
enum {
    ARGUS_REPORT_F_JSON = 1,  /* report.json */
    ARGUS_REPORT_F_SVG = 2,   /* the pictures */
    ARGUS_REPORT_F_MD = 4,    /* report.md */
    ARGUS_REPORT_F_PROM = 8,  /* metrics.prom */
    ARGUS_REPORT_F_CSV = 16,  /* steps.csv */
    ARGUS_REPORT_F_HTML = 32, /* report.html */
    ARGUS_REPORT_F_ALL = 63
};

/* Write report.json, the SVG pictures (heatmap.svg, heatmap-<id>.svg, w1-<id>.svg,
 * steptime.svg, breakdown.svg, phases.svg, forecast.svg), report.md, report.html (the
 * pictures inlined), metrics.prom and steps.csv of rep, in that order, into the output directory
 * od, every file relative to od->fd (common/outdir.h: <name>.partial, then renamed). Stops
 * at the first failure: 0 or negative errno (errbuf); *written (may be NULL) gets the
 * files written by this call either way. */
struct argus_outdir;
int argus_report_write_at(const struct argus_outdir *od, const struct argus_jobstore *js,
                          const struct argus_report *rep, unsigned *written, char *errbuf,
                          size_t errlen);
/* The same into the directory dir names (opened once, then written through its fd). */
int argus_report_write_all(const char *dir, const struct argus_jobstore *js,
                           const struct argus_report *rep, char *errbuf, size_t errlen);
/* The same for a result alone (no inputs). */
int argus_report_write(const char *dir, const struct argus_jobstore *js,
                       const struct argus_result *r, char *errbuf, size_t errlen);

/* One anomaly as one JSON object on one line (no newline), same fields as report.json.
 * Returns bytes written (< len) or -ENOSPC. */
long argus_report_anomaly_json(const struct argus_jobstore *js, const struct argus_anomaly *a,
                               char *buf, size_t len);

/* What the summary may claim was written (argus_pipeline_print_summary fills it). */
struct argus_report_outcome {
    unsigned written;     /* ARGUS_REPORT_F_* written by the latest report write */
    const char *err;      /* why the latest write stopped; NULL: it wrote every file */
    int earlier;          /* an earlier write wrote every file (a provisional report) */
    const char *alog_err; /* why anomalies.jsonl misses lines; NULL: it has them all */
    int dirfd;            /* the output directory, to check that what is named is there
                           * (removed directory, trace files); -1: not checked */
};

/* Human summary: where the report is, then one line per anomaly naming kind, source
 * ranks, steps, phase, kernels and its L4 trace when there is one; "no anomalies" for a
 * clean run. oc NULL: every file was written. Else it says exactly what was and was not
 * written: a report that was not (why, the files that were, whether an earlier
 * provisional report is what the directory holds), anomalies.jsonl lines missing, an
 * output directory removed during the run, a trace file named that is not there. */
void argus_report_print_summary(FILE *out, const char *dir, const struct argus_jobstore *js,
                                const struct argus_result *r,
                                const struct argus_report_outcome *oc);

/* An anomaly's identity apart from its kind: FNV-1a over its sources (the group's
 * members when it names a group) and the group type. */
uint64_t argus_anomaly_sources_hash(const struct argus_anomaly *a);

/* Tracks anomalies already appended to anomalies.jsonl so that repeated online analyses
 * append each anomaly once: an anomaly with the same kind and the same sources (ranks, or
 * group members) as a logged one whose steps overlap or touch the logged steps is the
 * same anomaly (its logged span grows; nothing is appended). */
struct argus_anomaly_log {
    size_t n, cap;
    char (*keys)[96];
};
void argus_anomaly_log_init(struct argus_anomaly_log *l);
void argus_anomaly_log_free(struct argus_anomaly_log *l);
/* Append the anomalies of r not yet logged to anomalies.jsonl in od (relative to od->fd:
 * O_APPEND|O_NOFOLLOW, common/outdir.h). */
int argus_anomaly_log_append(struct argus_anomaly_log *l, const struct argus_outdir *od,
                             const struct argus_jobstore *js, const struct argus_result *r,
                             char *errbuf, size_t errlen);

#endif /* ARGUS_REPORT_REPORT_H */
