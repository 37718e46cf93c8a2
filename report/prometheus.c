/* prometheus.c — metrics.prom: the job-level figures of a result in the Prometheus text
 * exposition format (version 0.0.4) for node-exporter's textfile collector: one HELP and
 * one TYPE line per family, base units (seconds, bytes), counters ending in _total, no
 * timestamps, label values escaped. Bounded size whatever the job: per-anomaly series for
 * the first PROM_MAX_ANOMALIES anomalies and per-rank series only for flagged ranks (at
 * most PROM_MAX_RANKS). Derived only from the result and the job store; written to
 * metrics.prom.partial and renamed. Must not print or exit.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"
#include "common/outdir.h"

#define PROM_MAX_ANOMALIES 64
#define PROM_MAX_RANKS 256

/* Label value with \\, \" and \n escaped, cut to fit. */
static void esc(const char *s, char *out, size_t len)
{
    size_t k = 0;
    for (; s && *s && k + 3 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\\' || ch == '"') {
            out[k++] = '\\';
            out[k++] = (char)ch;
        } else if (ch == '\n') {
            out[k++] = '\\';
            out[k++] = 'n';
        } else if (ch >= 0x20 && ch != 0x7f) {
            out[k++] = (char)ch;
        }
    }
    out[k] = '\0';
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample value: integers as such, others with up to 9 significant digits; NaN as NaN. */
static void value(FILE *f, double v)
{
    if (isnan(v))
        fputs(" NaN\n", f);
    else if (isinf(v))
        fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, " %.0f\n", v);
    else
        fprintf(f, " %.9g\n", v);
}

static const char *source_label(int s)
{
    switch (s) {
    case ARGUS_SRC_CUPTI: return "cupti";
    case ARGUS_SRC_KINETO: return "kineto";
    default: return "replay";
    }
}

static void gen(FILE *f, const struct argus_jobstore *js, const struct argus_result *r,
                const struct argus_forecast *fc)
{
    const struct argus_job_meta *m = argus_jobstore_meta_c(js);
    char id[300], st[100], L[420];
    uint64_t start, end;

    esc(m->id[0] ? m->id : "unknown", id, sizeof id);
    esc(m->step[0] ? m->step : "0", st, sizeof st);
    snprintf(L, sizeof L, "job=\"%s\",step=\"%s\"", id, st);
    an_job_span(js, &start, &end);

    family(f, "argus_report_info", "gauge",
           "Argus diagnosis of a job (always 1; the labels carry the facts).");
    fprintf(f, "argus_report_info{%s,source=\"%s\",report_version=\"1\"} 1\n", L,
            source_label(m->source));
    family(f, "argus_job_complete", "gauge",
           "1 when every rank delivered every window, 0 for a report from partial data.");
    fprintf(f, "argus_job_complete{%s}", L);
    value(f, m->complete ? 1 : 0);
    family(f, "argus_job_ranks", "gauge", "Ranks (GPUs) in the job.");
    fprintf(f, "argus_job_ranks{%s}", L);
    value(f, argus_jobstore_nranks(js));
    family(f, "argus_job_nodes", "gauge", "Distinct hosts in the job.");
    fprintf(f, "argus_job_nodes{%s}", L);
    value(f, an_job_nodes(js));
    family(f, "argus_job_start_time_seconds", "gauge", "Job start, Unix time.");
    fprintf(f, "argus_job_start_time_seconds{%s}", L);
    value(f, (double)(start / 1000000000ull) + (double)(start % 1000000000ull) / 1e9);
    family(f, "argus_job_end_time_seconds", "gauge", "Job end (or last step seen), Unix time.");
    fprintf(f, "argus_job_end_time_seconds{%s}", L);
    value(f, (double)(end / 1000000000ull) + (double)(end % 1000000000ull) / 1e9);
    family(f, "argus_layout_size", "gauge", "Parallel degree per dimension (tp, pp, dp, ep).");
    const int dims[4] = { r->layout.tp, r->layout.pp, r->layout.dp, r->layout.ep };
    const char *dn[4] = { "tp", "pp", "dp", "ep" };
    for (int i = 0; i < 4; i++) {
        fprintf(f, "argus_layout_size{%s,dim=\"%s\",inferred=\"%s\"}", L, dn[i],
                r->layout.inferred ? "true" : "false");
        value(f, dims[i]);
    }
    family(f, "argus_steps", "gauge", "Training steps seen.");
    fprintf(f, "argus_steps{%s}", L);
    value(f, (double)r->steps.count);
    family(f, "argus_step_last", "gauge", "Id of the last step seen.");
    fprintf(f, "argus_step_last{%s}", L);
    value(f, (double)r->steps.last);
    family(f, "argus_step_time_median_seconds", "gauge",
           "Median job step time (longest rank per step).");
    fprintf(f, "argus_step_time_median_seconds{%s}", L);
    value(f, r->steps.median_ms / 1e3);
    family(f, "argus_step_time_p99_seconds", "gauge",
           "99th percentile of the job step time (longest rank per step).");
    fprintf(f, "argus_step_time_p99_seconds{%s}", L);
    value(f, r->steps.p99_ms / 1e3);
    family(f, "argus_step_time_cv_ratio", "gauge",
           "Coefficient of variation of the job step time.");
    fprintf(f, "argus_step_time_cv_ratio{%s}", L);
    value(f, r->steps.cv);
    family(f, "argus_kernels_seen_total", "counter", "GPU kernels summarised.");
    fprintf(f, "argus_kernels_seen_total{%s}", L);
    value(f, (double)r->kernels_seen);
    family(f, "argus_dropped_events_total", "counter", "Kernel events lost by the tracer.");
    fprintf(f, "argus_dropped_events_total{%s}", L);
    value(f, (double)r->dropped_events);
    family(f, "argus_rank_step_encoded_bytes", "gauge",
           "Mean encoded size of one rank-step summary.");
    fprintf(f, "argus_rank_step_encoded_bytes{%s}", L);
    value(f, round(r->summary_bytes_per_rank_step));

    family(f, "argus_anomalies", "gauge", "Anomalies in the report, by kind.");
    for (int k = 0; k < ARGUS_AK_COUNT; k++) {
        size_t n = 0;
        for (size_t i = 0; i < r->n_anomalies; i++)
            n += r->anomalies[i].kind == k;
        fprintf(f, "argus_anomalies{%s,kind=\"%s\"}", L,
                argus_anomaly_kind_name((enum argus_anomaly_kind)k));
        value(f, (double)n);
    }
    const size_t na = r->n_anomalies < PROM_MAX_ANOMALIES ? r->n_anomalies : PROM_MAX_ANOMALIES;
    static const struct {
        const char *name, *help;
    } fam[] = {
        {"argus_anomaly_slowdown_ratio", "Slowdown of the anomaly's sources (1.42 = 42% slower)."},
        {"argus_anomaly_score", "Strength of the evidence (robust z or similar)."},
        {"argus_anomaly_first_step", "First step the anomaly was seen in."},
        {"argus_anomaly_last_step", "Last step the anomaly was seen in."},
        {"argus_anomaly_detected_step", "Step at which the evidence first sufficed."},
        {"argus_anomaly_source_ranks", "Number of source ranks of the anomaly."},
        {"argus_anomaly_victim_ranks", "Number of ranks that waited on the sources."},
    };
    for (size_t fi = 0; na && fi < sizeof fam / sizeof fam[0]; fi++) {
        family(f, fam[fi].name, "gauge", fam[fi].help);
        for (size_t i = 0; i < na; i++) {
            const struct argus_anomaly *a = &r->anomalies[i];
            const char *ph = a->phase >= 0 ? argus_phase_name((enum argus_phase)a->phase) : "";
            double v = 0;
            switch (fi) {
            case 0: v = a->slowdown; break;
            case 1: v = a->score; break;
            case 2: v = (double)a->step_first; break;
            case 3: v = (double)a->step_last; break;
            case 4: v = (double)a->detected_at_step; break;
            case 5: v = a->n_ranks; break;
            default: v = a->n_victims; break;
            }
            fprintf(f, "%s{%s,id=\"%d\",level=\"L%d\",kind=\"%s\",phase=\"%s\"}", fam[fi].name, L,
                    a->id, a->level, argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind),
                    ph);
            value(f, v);
        }
    }
    size_t nflag = 0;
    for (uint32_t i = 0; i < r->n_ranks && nflag < PROM_MAX_RANKS; i++) {
        const struct argus_rank_row *row = &r->ranks[i];
        if (!row->flags)
            continue;
        if (nflag++ == 0)
            family(f, "argus_rank_flagged", "gauge",
                   "1 for a rank named as a source of an anomaly of that kind.");
        for (int k = 0; k < ARGUS_AK_COUNT; k++)
            if (row->flags & (1u << k))
                fprintf(f, "argus_rank_flagged{%s,rank=\"%u\",kind=\"%s\"} 1\n", L, row->rank,
                        argus_anomaly_kind_name((enum argus_anomaly_kind)k));
    }
    nflag = 0;
    for (uint32_t i = 0; i < r->n_ranks && nflag < PROM_MAX_RANKS; i++) {
        const struct argus_rank_row *row = &r->ranks[i];
        if (!row->flags)
            continue;
        if (nflag++ == 0)
            family(f, "argus_rank_median_step_seconds", "gauge",
                   "Median step wall time of a flagged rank.");
        fprintf(f, "argus_rank_median_step_seconds{%s,rank=\"%u\"}", L, row->rank);
        value(f, row->median_step_ms / 1e3);
    }
    if (fc)
        an_prom_forecast(f, L, fc);
}

int an_write_prom(const struct argus_outdir *od, const struct argus_jobstore *js,
                  const struct argus_result *r, const struct argus_forecast *fc, char *errbuf,
                  size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);

    if (!f) {
        snprintf(errbuf, errlen, "metrics.prom: out of memory");
        return -ENOMEM;
    }
    gen(f, js, r, fc);
    return an_emit_memstream(f, &data, &len, od, "metrics.prom", errbuf, errlen);
}
