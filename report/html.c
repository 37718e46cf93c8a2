/* html.c — report.html: the job's diagnosis as one self-contained page (docs/REPORT_SCHEMA.md,
 * "report.html"), from the same in-memory report as report.json and report.md: the job,
 * the lead sentence and the anomaly table, the step-time plot, the per-rank breakdown,
 * the forecast's fan chart, the whole-run heatmap, the inputs not used, then per anomaly
 * its evidence, a "what to look at next" box, its host stacks (report/stacks.c), its
 * heatmap and W1 matrix, its kernel table and its L4 trace link, and the flagged ranks. Pictures are the SVG text written beside
 * the page (an_svg_set), inlined; CSS inline; no script, nothing fetched. Elements that
 * tests read carry data-* attributes. Written to report.html.partial and renamed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/labels.h"
#include "common/clock.h"
#include "common/outdir.h"
#include "report/html.h"
#include "report/report.h"

static const char CSS[] =
    "body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:0 16px 40px;"
    "color:#222;line-height:1.4}h1{font-size:1.5em;margin:18px 0 4px}h2{border-bottom:1px solid "
    "#ccc;padding-bottom:2px;margin-top:28px}table{border-collapse:collapse;margin:8px 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f2f2f2}td.n{text-align:right}caption{text-align:left;font-weight:bold;"
    "padding:4px 0}svg{max-width:100%;height:auto;display:block;margin:8px 0}"
    ".lead{font-size:1.1em;background:#fff7e6;border-left:4px solid #f58518;padding:8px 12px}"
    ".clean{background:#eef8ee;border-left:4px solid #54a24b;padding:8px 12px}"
    ".next{background:#eef4fb;border:1px solid #9cc0e6;border-radius:4px;padding:6px 12px;"
    "margin:10px 0}.next h4{margin:2px 0}.anomaly{border-top:2px solid #ddd;margin-top:20px}"
    ".muted{color:#666}.warn{color:#a33}code{font-size:.92em}dl{display:grid;"
    "grid-template-columns:max-content auto;gap:2px 12px}dt{font-weight:bold}dd{margin:0}";

void an_html_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n')
                fputc(*s, f);
        }
    }
}

void an_html_num(FILE *f, double v, int prec)
{
    if (isnan(v) || isinf(v))
        fputs("&ndash;", f);
    else
        fprintf(f, "%.*f", prec, v);
}

/* An SVG text as written to its file, inline: without its XML declaration. written: the
 * file was written; without its text (past AN_SVG_KEEP_MAX) the page links to it. */
static void inline_svg(FILE *f, int written, const char *svg, const char *file)
{
    if (written && !svg)
        fprintf(f, "<p class=\"picture-link\"><a href=\"%s\">%s</a> (not inlined: the "
                   "pictures kept for this page reached %u MB)</p>\n",
                file, file, AN_SVG_KEEP_MAX >> 20);
    if (!svg)
        return;
    if (!strncmp(svg, "<?xml", 5)) {
        const char *nl = strchr(svg, '\n');
        svg = nl ? nl + 1 : svg;
    }
    fprintf(f, "<figure data-file=\"%s\">\n", file);
    fputs(svg, f);
    fprintf(f, "<figcaption class=\"muted\">also <a href=\"%s\">%s</a></figcaption></figure>\n",
            file, file);
}

static void ranks_text(FILE *f, const uint32_t *v, uint32_t n)
{
    char buf[512];
    an_format_ranks(v, n, buf, sizeof buf);
    an_html_text(f, n ? buf : "none");
}

static void head(FILE *f, const struct argus_jobstore *js, const struct argus_result *r)
{
    const struct argus_job_meta *m = argus_jobstore_meta_c(js);
    char t0[40], t1[40];
    uint64_t start, end;
    an_job_span(js, &start, &end);
    argus_clock_rfc3339(start, t0, sizeof t0);
    argus_clock_rfc3339(end, t1, sizeof t1);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>Argus report: job ", f);
    an_html_text(f, m->id[0] ? m->id : "unknown");
    fprintf(f, "</title>\n<style>%s</style></head>\n<body data-anomalies=\"%zu\" "
               "data-steps=\"%llu\" data-ranks=\"%u\">\n<h1>Argus report &mdash; job ",
            CSS, r->n_anomalies, (unsigned long long)r->steps.count, argus_jobstore_nranks(js));
    an_html_text(f, m->id[0] ? m->id : "unknown");
    fputs(" (step ", f);
    an_html_text(f, m->step[0] ? m->step : "0");
    fprintf(f, ")</h1>\n<p class=\"muted\">%u ranks on %u node%s, layout TP %d &times; PP %d "
               "&times; DP %d%s; %llu steps (%llu&ndash;%llu) from %s to %s; %s.</p>\n",
            argus_jobstore_nranks(js), an_job_nodes(js), an_job_nodes(js) == 1 ? "" : "s",
            r->layout.tp, r->layout.pp, r->layout.dp, r->layout.inferred ? " (unknown)" : "",
            (unsigned long long)r->steps.count, (unsigned long long)r->steps.first,
            (unsigned long long)r->steps.last, t0, t1,
            m->complete ? "complete data"
                        : "<strong class=\"warn\">partial data</strong> (a rank stopped "
                          "reporting or the job was cut short)");
}

static void summary(FILE *f, const struct argus_result *r)
{
    fputs("<h2>Summary</h2>\n", f);
    if (r->n_anomalies == 0) {
        fputs("<p class=\"clean\">No anomalies: no rank, group or stage stood out from its "
              "peers by the reporting thresholds, and the job step time had no lasting change "
              "or spike.</p>\n", f);
        return;
    }
    const struct argus_anomaly *a = &r->anomalies[0];
    for (size_t i = 1; i < r->n_anomalies; i++)
        if (r->anomalies[i].n_ranks && !a->n_ranks)
            a = &r->anomalies[i];
    char src[300];
    an_describe_sources(a, src, sizeof src);
    fprintf(f, "<p class=\"lead\"><strong>%s on ",
            argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind));
    an_html_text(f, src);
    fprintf(f, " since step %llu</strong> (through step %llu, evident at step %llu): %s, "
               "%.2f&times;; %s confidence.",
            (unsigned long long)a->step_first, (unsigned long long)a->step_last,
            (unsigned long long)a->detected_at_step, an_md_what(a->kind), a->slowdown,
            an_md_sureness(a));
    if (a->n_victims) {
        fputs(" Ranks ", f);
        ranks_text(f, a->victims, a->n_victims);
        fputs(" only waited for it (victims, no action needed).", f);
    }
    fputs("</p>\n<table class=\"anomalies\"><tr><th>#</th><th>what</th><th>where (sources)"
          "</th><th>steps</th><th>evident at step</th><th>slowdown</th><th>how sure</th></tr>\n",
          f);
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const struct argus_anomaly *b = &r->anomalies[i];
        an_describe_sources(b, src, sizeof src);
        fprintf(f, "<tr data-anomaly=\"%d\"><td><a href=\"#anomaly-%d\">%d</a></td><td><strong>"
                   "%s</strong>: %s</td><td>",
                b->id, b->id, b->id, argus_anomaly_kind_name((enum argus_anomaly_kind)b->kind),
                an_md_what(b->kind));
        an_html_text(f, src);
        fprintf(f, "</td><td>%llu&ndash;%llu</td><td class=\"n\">%llu</td><td class=\"n\">"
                   "%.2f&times;</td><td>%s (score %.1f)</td></tr>\n",
                (unsigned long long)b->step_first, (unsigned long long)b->step_last,
                (unsigned long long)b->detected_at_step, b->slowdown, an_md_sureness(b),
                b->score);
    }
    fputs("</table>\n", f);
}

static void steps_section(FILE *f, const struct argus_result *r, const struct an_svg_set *set)
{
    fprintf(f, "<h2>Step time</h2>\n<table class=\"steps\"><tr><th>steps</th><th>median ms"
               "</th><th>p99 ms</th><th>cv</th></tr><tr><td class=\"n\">%llu</td><td class=\"n\" "
               "data-key=\"median_ms\">%.3f</td><td class=\"n\" data-key=\"p99_ms\">%.3f</td>"
               "<td class=\"n\">%.4f</td></tr></table>\n",
            (unsigned long long)r->steps.count, r->steps.median_ms, r->steps.p99_ms,
            r->steps.cv);
    if (r->incomplete_steps)
        fprintf(f, "<p>%llu step%s (the first: step %llu) not judged: some rank's data is "
                   "missing there, and no verdict rests on missing data.</p>\n",
                (unsigned long long)r->incomplete_steps, r->incomplete_steps == 1 ? "" : "s",
                (unsigned long long)r->incomplete_first);
    fprintf(f, "<p class=\"muted\">Collection: %llu kernels seen, %.0f bytes per rank-step "
               "summarised, %llu events dropped; judged on %s data.</p>\n",
            (unsigned long long)r->kernels_seen, r->summary_bytes_per_rank_step,
            (unsigned long long)r->dropped_events, argus_data_level_name(r->data_level));
    if (set->steps)
        inline_svg(f, set->steps, set->t_steps, "steptime.svg");
    if (set->breakdown || set->phases)
        fputs("<h2>Where the time goes, per rank</h2>\n", f);
    inline_svg(f, set->breakdown, set->t_breakdown, "breakdown.svg");
    inline_svg(f, set->phases, set->t_phases, "phases.svg");
}

static void forecast_section(FILE *f, const struct argus_forecast *fc, const struct an_svg_set *set)
{
    if (!fc)
        return;
    fputs("<h2>Forecast</h2>\n", f);
    fprintf(f, "<p>%llu steps done, %llu left%s; step P50 %.3f ms, P90 %.3f ms; sync tax "
               "%.3f.</p>\n",
            (unsigned long long)fc->steps_done, (unsigned long long)fc->steps_left,
            fc->per_1000 ? " (plan unknown: the next 1,000)" : "", fc->step_p50_ms,
            fc->step_p90_ms, fc->sync_tax);
    const struct argus_fc_quant *q[2] = {&fc->remaining_s, &fc->total_s};
    const char *qn[2] = {"remaining", "total"};
    fputs("<table class=\"forecast\"><tr><th></th><th>P10 s</th><th>P50 s</th><th>P90 s</th>"
          "<th>P99 s</th></tr>\n", f);
    for (int i = 0; i < 2; i++)
        fprintf(f, "<tr data-key=\"%s_s\"><th>%s</th><td class=\"n\">%.1f</td><td class=\"n\">"
                   "%.1f</td><td class=\"n\">%.1f</td><td class=\"n\">%.1f</td></tr>\n",
                qn[i], qn[i], q[i]->p10, q[i]->p50, q[i]->p90, q[i]->p99);
    fputs("</table>\n", f);
    inline_svg(f, set->forecast, set->t_forecast, "forecast.svg");
    for (size_t i = 0; i < fc->n_warn && i < ARGUS_FC_MAX_NOTES; i++) {
        fputs("<p class=\"warn\">", f);
        an_html_text(f, fc->warn[i]);
        fputs("</p>\n", f);
    }
}

static void input_list(FILE *f, const char *title, const char *const *v, size_t n)
{
    if (!n)
        return;
    fprintf(f, "<h3>%s</h3>\n<ul>\n", title);
    for (size_t i = 0; i < n; i++) {
        fputs("<li><code>", f);
        an_html_text(f, v[i]);
        fputs("</code></li>\n", f);
    }
    fputs("</ul>\n", f);
}

static void inputs_section(FILE *f, const struct argus_report_inputs *in)
{
    if (!in || !(in->n_skipped || in->n_lost || in->n_notes))
        return;
    fprintf(f, "<h2>Inputs</h2>\n<p>%zu input files, %zu analysed.</p>\n", in->files,
            in->analysed);
    input_list(f, "Inputs skipped", in->skipped, in->n_skipped);
    input_list(f, "Inputs read in part (this report is not complete)", in->lost, in->n_lost);
    input_list(f, "Input notes", in->notes, in->n_notes);
}

/* Step-index window of a in the context (as svg.c's). */
static void window(const struct an_ctx *c, const struct argus_anomaly *a, size_t *lo, size_t *hi)
{
    *lo = 0;
    *hi = c->S ? c->S - 1 : 0;
    for (size_t si = 0; si < c->S; si++) {
        if (c->step_id[si] <= a->step_first)
            *lo = si;
        if (c->step_id[si] <= a->step_last)
            *hi = si;
    }
}

/* The host call stacks of a (report/stacks.c: report.md's lines, as text) and the link
 * to stacks.folded; nothing when no sample matched it. */
static void host_stacks(FILE *f, const struct argus_stackset *stk, const struct argus_anomaly *a)
{
    char *t = NULL;
    size_t n = 0;
    FILE *m = stk ? open_memstream(&t, &n) : NULL;
    if (!m)
        return;
    an_md_stacks(m, stk, a);
    if (fclose(m) == 0 && t && n) {
        fprintf(f, "<div class=\"stacks\" data-anomaly=\"%d\"><h4>Host stacks</h4><pre>", a->id);
        an_html_text(f, t);
        fputs("</pre><p class=\"muted\">every sample: <a href=\"stacks.folded\">stacks.folded"
              "</a> (flamegraph.pl, speedscope)</p></div>\n", f);
    }
    free(t);
}

static int anomaly(FILE *f, struct an_ctx *c, const struct argus_jobstore *js,
                   const struct argus_anomaly *a, const struct an_svg_set *set, size_t idx,
                   const struct argus_stackset *stk)
{
    const char *kn = argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind);
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);
    fprintf(f, "<section class=\"anomaly\" id=\"anomaly-%d\" data-anomaly=\"%d\" data-kind=\"%s\" "
               "data-step-start=\"%llu\" data-step-end=\"%llu\">\n<h3>%d. %s (L%d)</h3>\n<dl>"
               "<dt>Evidence</dt><dd>",
            a->id, a->id, kn, (unsigned long long)a->step_first, (unsigned long long)a->step_last,
            a->id, kn, a->level);
    an_html_text(f, a->evidence);
    fputs("</dd><dt>Sources</dt><dd data-key=\"ranks\">", f);
    ranks_text(f, a->ranks, a->n_ranks);
    fputs("</dd><dt>Victims</dt><dd data-key=\"victims\">", f);
    ranks_text(f, a->victims, a->n_victims);
    fputs("</dd>", f);
    if (gt && a->n_group) {
        fprintf(f, "<dt>Group</dt><dd>%s ", gt);
        ranks_text(f, a->group, a->n_group);
        fputs("</dd>", f);
    }
    fprintf(f, "<dt>Steps</dt><dd>%llu&ndash;%llu (evidence sufficed at step %llu)</dd>",
            (unsigned long long)a->step_first, (unsigned long long)a->step_last,
            (unsigned long long)a->detected_at_step);
    if (a->phase >= 0 && a->phase < ARGUS_PH_COUNT)
        fprintf(f, "<dt>Phase</dt><dd>%s</dd>", argus_phase_name((enum argus_phase)a->phase));
    if (a->n_hits) {
        fputs("<dt>Affected steps</dt><dd>", f);
        for (uint32_t i = 0; i < a->n_hits && i < ARGUS_ANOMALY_MAX_HITS; i++)
            fprintf(f, "%s%llu", i ? " " : "", (unsigned long long)a->hits[i]);
        if (a->n_hits_total > a->n_hits)
            fprintf(f, " (%u in all)", a->n_hits_total);
        if (a->period_steps)
            fprintf(f, "; every %u steps", a->period_steps);
        fputs("</dd>", f);
    }
    if (a->cost_share > 0)
        fprintf(f, "<dt>Cost</dt><dd>about %.1f %% of the job's wall time</dd>",
                100 * a->cost_share);
    fprintf(f, "<dt>Slowdown</dt><dd>%.2f&times;, score %.1f; judged on %s data, confidence "
               "%.2f</dd>",
            a->slowdown, a->score, argus_data_level_name(a->data_level), a->confidence);
    if (a->trace[0]) {
        fputs("<dt>L4 trace</dt><dd><a class=\"trace\" href=\"", f);
        an_html_text(f, a->trace);
        fputs("\">", f);
        an_html_text(f, a->trace);
        fputs("</a> (open in Perfetto, ui.perfetto.dev)</dd>", f);
    }
    fprintf(f, "</dl>\n<aside class=\"next\" data-anomaly=\"%d\"><h4>What to look at next</h4>"
               "<p>", a->id);
    an_html_text(f, an_md_next_step(a->kind));
    fputs(".</p></aside>\n", f);
    host_stacks(f, stk, a);
    if (idx < AN_SVG_MAX) {
        char name[48];
        snprintf(name, sizeof name, "heatmap-%d.svg", a->id);
        inline_svg(f, set->heat[idx], set->t_heat[idx], name);
        snprintf(name, sizeof name, "w1-%d.svg", a->id);
        inline_svg(f, set->w1[idx], set->t_w1[idx], name);
    }
    int rc = 0;
    if (c && c->S && a->step_last >= c->step_id[0] && idx < AN_SVG_MAX) { /* bounded, as
                                                                              the pictures */
        struct argus_anomaly as = *a;
        size_t sa, sb;
        an_anomaly_to_slots(c, &as);
        window(c, &as, &sa, &sb);
        rc = an_html_kernel_table(f, c, js, &as, sa, sb);
    }
    fputs("</section>\n", f);
    return rc < 0 ? rc : 0;
}

static void flagged(FILE *f, const struct argus_jobstore *js, const struct argus_result *r)
{
    int any = 0;
    for (uint32_t i = 0; i < r->n_ranks; i++) {
        const struct argus_rank_row *row = &r->ranks[i];
        if (!row->flags)
            continue;
        if (!any)
            fputs("<h2>Flagged ranks</h2>\n<table class=\"ranks\"><tr><th>rank</th><th>host"
                  "</th><th>device</th><th>median step ms</th><th>flags</th></tr>\n", f);
        any = 1;
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, row->rank);
        fprintf(f, "<tr data-rank=\"%u\"><td class=\"n\">%u</td><td>", row->rank, row->rank);
        an_html_text(f, ri && ri->host[0] ? ri->host : "?");
        fprintf(f, "</td><td class=\"n\">%d</td><td class=\"n\">%.3f</td><td>",
                ri ? ri->device : -1, row->median_step_ms);
        for (int k = 0, first = 1; k < ARGUS_AK_COUNT; k++)
            if (row->flags & (1u << k)) {
                fprintf(f, "%s%s", first ? "" : ", ",
                        argus_anomaly_kind_name((enum argus_anomaly_kind)k));
                first = 0;
            }
        fputs("</td></tr>\n", f);
    }
    if (any)
        fputs("</table>\n", f);
}

int an_write_html(const struct argus_outdir *od, const struct argus_jobstore *js,
                  const struct argus_report *rep, const struct an_svg_set *set,
                  char *errbuf, size_t errlen)
{
    const struct argus_result *r = &rep->res;
    const struct argus_forecast *fc = rep->forecast && rep->forecast->valid ? rep->forecast
                                                                            : NULL;
    struct an_ctx c;
    struct argus_analysis_opts o;
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    if (!f) {
        snprintf(errbuf, errlen, "report.html: out of memory");
        return -ENOMEM;
    }
    argus_analysis_opts_default(&o);
    int have_ctx = an_ctx_build(&c, js, &o) == 0, rc = 0;
    if (!have_ctx)
        an_ctx_free(&c);
    head(f, js, r);
    summary(f, r);
    steps_section(f, r, set);
    forecast_section(f, fc, set);
    if (set->job) {
        fputs("<h2>Ranks against their peers, whole run</h2>\n", f);
        inline_svg(f, set->job, set->t_job, "heatmap.svg");
    }
    inputs_section(f, rep->inputs);
    if (r->n_anomalies)
        fputs("<h2>Anomalies</h2>\n", f);
    for (size_t i = 0; i < r->n_anomalies && !rc; i++)
        rc = anomaly(f, have_ctx ? &c : NULL, js, &r->anomalies[i], set, i, rep->stacks);
    flagged(f, js, r);
    fputs("<p class=\"muted\">Also: <a href=\"report.json\">report.json</a> (for scripts), "
          "<a href=\"report.md\">report.md</a>, <a href=\"steps.csv\">steps.csv</a>, "
          "<a href=\"metrics.prom\">metrics.prom</a>. Written by Argus.</p>\n</body></html>\n",
          f);
    if (have_ctx)
        an_ctx_free(&c);
    if (rc) {
        fclose(f);
        free(data);
        snprintf(errbuf, errlen, "report.html: out of memory");
        return rc;
    }
    return an_emit_memstream(f, &data, &len, od, "report.html", errbuf, errlen);
}
