/* report_int.h — helpers shared by the report writers (internal to report/): the JSON
 * object of one anomaly (report.json and anomalies.jsonl), the forecast's parts, display
 * names of kernels,
 * and the job's distinct step ids (strings and numbers: common/jsongen.h).
 */
#ifndef ARGUS_REPORT_REPORT_INT_H
#define ARGUS_REPORT_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <yajl/yajl_gen.h>

#include "analysis/analysis.h"
#include "common/jsongen.h"
#include "forecast/forecast.h"
#include "store/jobstore.h"

/* Generate one anomaly object with every field of docs/REPORT_SCHEMA.md. */
int an_gen_anomaly(yajl_gen g, const struct argus_jobstore *js, const struct argus_anomaly *a);
/* Kernel name for reports: the dictionary's name or "0x<hash>". */
const char *an_kernel_name(const struct argus_jobstore *js, uint64_t hash, char *buf,
                           size_t len);
/* Distinct step ids held by any rank, ascending; *out is malloc'ed (free it). */
int an_job_steps(const struct argus_jobstore *js, uint64_t **out, size_t *n);
/* Number of distinct hosts in the rank infos (at least 1). */
uint32_t an_job_nodes(const struct argus_jobstore *js);
/* Start and end of the job in ns: meta when set, else the summaries' extremes. */
void an_job_span(const struct argus_jobstore *js, uint64_t *start, uint64_t *end);
/* "rank 5", "ranks 1,3,5,7", "dp group 1,3,5,7" or "all ranks" into buf. */
void an_describe_sources(const struct argus_anomaly *a, char *buf, size_t len);

/* Pictures written for a report (report/svg.c): job = heatmap.svg, heat[i] =
 * heatmap-<id>.svg and w1[i] = w1-<id>.svg of the i-th anomaly (i < AN_SVG_MAX). */
#define AN_SVG_MAX 16
#define AN_SVG_KEEP_MAX (24u << 20)
struct an_svg_set {
    uint8_t job;
    uint8_t heat[AN_SVG_MAX], w1[AN_SVG_MAX];
    /* steptime.svg, breakdown.svg, phases.svg, forecast.svg (report/plot_*.c) */
    uint8_t steps, breakdown, phases, forecast;
    /* The text of each picture written, kept for report.html (report/html.c), which
     * inlines the very same SVG; NULL when not written, or when keeping it would take
     * the texts kept past AN_SVG_KEEP_MAX bytes (the page links to that file instead).
     * an_svg_set_free frees them. */
    char *t_job, *t_steps, *t_breakdown, *t_phases, *t_forecast;
    char *t_heat[AN_SVG_MAX], *t_w1[AN_SVG_MAX];
    size_t kept; /* bytes of the texts kept */
};
void an_svg_set_free(struct an_svg_set *set);
/* Close the memstream f (opened on *data, *len) and write its text atomically to name
 * in the output directory (relative to od->fd: common/outdir.h); frees and clears *data.
 * 0 or negative errno with errbuf. */
struct argus_outdir;
int an_emit_memstream(FILE *f, char **data, size_t *len, const struct argus_outdir *od,
                      const char *name, char *errbuf, size_t errlen);
int an_write_svgs(const struct argus_outdir *od, const struct argus_jobstore *js,
                  const struct argus_result *r, const struct argus_forecast *fc,
                  struct an_svg_set *set, char *errbuf, size_t errlen);
/* report.html (report/html.c): the page of rep, inlining set's pictures. */
struct argus_report;
int an_write_html(const struct argus_outdir *od, const struct argus_jobstore *js,
                  const struct argus_report *rep, const struct an_svg_set *set,
                  char *errbuf, size_t errlen);
/* report.md's wording (report/markdown.c), shared with report.html: what an anomaly kind
 * is, what to look at next for it, how sure a finding is ("high", "moderate", "low"). */
const char *an_md_what(int kind);
const char *an_md_next_step(int kind);
const char *an_md_sureness(const struct argus_anomaly *a);
/* report.md, embedding the pictures of set (may be NULL), with an "Inputs skipped"
 * section when in (may be NULL) names skipped inputs. */
struct argus_report_inputs;
struct argus_stackset;
int an_write_md(const struct argus_outdir *od, const struct argus_jobstore *js,
                const struct argus_result *r, const struct argus_report_inputs *in,
                const struct an_svg_set *set, const struct argus_forecast *fc,
                const struct argus_stackset *stacks, char *errbuf, size_t errlen);
/* NCCL's in-band view (report/nccl.c; docs/REPORT_SCHEMA.md, "nccl"): one view as a JSON
 * object; the whole run's "nccl" key and object (nothing without NCCL data); report.md's
 * line for anomaly idx (nothing when it has no view) and its whole-run section. */
int an_gen_nccl_view(yajl_gen g, const struct argus_nccl_view *v);
int an_gen_nccl_run(yajl_gen g, const struct argus_result *r);
void an_md_nccl_anomaly(FILE *f, const struct argus_result *r, size_t idx);
void an_md_nccl_run(FILE *f, const struct argus_result *r);
int an_write_csv(const struct argus_outdir *od, const struct argus_jobstore *js,
                 char *errbuf, size_t errlen);
/* metrics.prom (report/prometheus.c). */
int an_write_prom(const struct argus_outdir *od, const struct argus_jobstore *js,
                  const struct argus_result *r, const struct argus_forecast *fc, char *errbuf,
                  size_t errlen);
/* The forecast (report/forecast.c): report.json's "forecast" object, report.md's
 * "Forecast" section, metrics.prom's argus_forecast_* series (L: the job's labels). */
int an_gen_forecast(yajl_gen g, const struct argus_forecast *fc);
void an_md_forecast(FILE *f, const struct argus_forecast *fc);
void an_prom_forecast(FILE *f, const char *L, const struct argus_forecast *fc);

/* Host call stacks (report/stacks.c): an anomaly's "stacks" key and object in report.json
 * (nothing when no sample matched it), its report.md lines, and stacks.folded (nothing
 * written when no anomaly has samples). */
struct argus_stackset;
int an_gen_stacks(yajl_gen g, const struct argus_stackset *set, const struct argus_anomaly *a);
void an_md_stacks(FILE *f, const struct argus_stackset *set, const struct argus_anomaly *a);
int an_write_stacks(const struct argus_outdir *od, const struct argus_result *r,
                    const struct argus_stackset *set, char *errbuf, size_t errlen);

#endif /* ARGUS_REPORT_REPORT_INT_H */
