/* report.h — writers of a result: report.json (docs/REPORT_SCHEMA.md, via YAJL's generator),
 * report.md, steps.csv, anomalies.jsonl lines and the one-paragraph summary printed at the
 * end of a run. Every file is derived from the same in-memory report (struct argus_report:
 * the analysis result, and for argus-analyze the inputs it read), in one pass.
 * report.json/md and steps.csv are written to *.partial then renamed.
 * Single-threaded per report; the writers allocate only while writing.
 */
#ifndef ARGUS_REPORT_REPORT_H
#define ARGUS_REPORT_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "store/jobstore.h"

/* What argus-analyze read: report.json's "inputs" object (files, analysed, skipped) and
 * report.md's "Inputs skipped" section. Borrowed: the strings stay the caller's. */
struct argus_report_inputs {
    size_t files;                /* input files named or found in named directories */
    size_t analysed;             /* of them, the ones that delivered data */
    const char *const *skipped;  /* n_skipped lines "FILE: why" */
    size_t n_skipped;
};

/* One report as every writer reads it. */
struct argus_report {
    struct argus_result res;                  /* the analysis; its arrays stay the owner's */
    const struct argus_report_inputs *inputs; /* NULL: a live run (no "inputs") */
};

/* Write report.json, report.md, steps.csv, metrics.prom and the SVG heatmaps
 * (heatmap.svg, heatmap-<id>.svg, w1-<id>.svg) of rep into dir. 0 or negative errno
 * (errbuf). */
int argus_report_write_all(const char *dir, const struct argus_jobstore *js,
                           const struct argus_report *rep, char *errbuf, size_t errlen);
/* The same for a result alone (no inputs). */
int argus_report_write(const char *dir, const struct argus_jobstore *js,
                       const struct argus_result *r, char *errbuf, size_t errlen);

/* One anomaly as one JSON object on one line (no newline), same fields as report.json.
 * Returns bytes written (< len) or -ENOSPC. */
long argus_report_anomaly_json(const struct argus_jobstore *js, const struct argus_anomaly *a,
                               char *buf, size_t len);

/* Human summary: where the report is, then one line per anomaly naming kind, source
 * ranks, steps, phase, kernels and its L4 trace when there is one; "no anomalies" for a
 * clean run. */
void argus_report_print_summary(FILE *out, const char *dir, const struct argus_jobstore *js,
                                const struct argus_result *r);

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
/* Append the anomalies of r not yet logged to <dir>/anomalies.jsonl. */
int argus_anomaly_log_append(struct argus_anomaly_log *l, const char *dir,
                             const struct argus_jobstore *js, const struct argus_result *r,
                             char *errbuf, size_t errlen);

#endif /* ARGUS_REPORT_REPORT_H */
