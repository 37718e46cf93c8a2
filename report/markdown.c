/* report.md — the diagnosis for a person, as an incident summary: a lead sentence (what,
 * where, since when, how sure), one table row per anomaly, what to look at next per kind,
 * the step-time table with the rank heatmap, then each anomaly's evidence with its
 * heatmap and W1 matrix (report/svg.c) and the flagged ranks. Same result as report.json;
 * embeds only pictures that were written; written to report.md.partial and renamed.
 * For argus-analyze an "Inputs skipped" section before the step-time table names each
 * input file it could not use and why (struct argus_report_inputs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "analysis/labels.h"
#include "report/report_int.h"
#include "common/clock.h"
#include "common/outdir.h"

static const char *next_step(int kind)
{
    switch (kind) {
    case ARGUS_AK_COMPUTE_STRAGGLER:
        return "check the GPU of the source ranks: clocks and thermal or power throttling "
               "(`nvidia-smi -q -d PERFORMANCE,CLOCK`), ECC/XID errors in the kernel log, "
               "other processes on the GPU; the victims need no action";
    case ARGUS_AK_COMM_DEGRADATION:
        return "check the links and NICs of the group's nodes (`ibstat`, port error counters, "
               "`NCCL_DEBUG=INFO` topology) and compare with the paths of the healthy groups";
    case ARGUS_AK_PIPELINE_BUBBLE:
        return "the named stage carries more work than the others or runs on slower GPUs: "
               "check its nodes, then rebalance layers (or embedding/loss) across stages";
    case ARGUS_AK_HOST_STALL:
        return "look at the host side of the source ranks: data loading, garbage collection, "
               "JIT compilation, CPU contention (`py-spy dump --pid` while it happens)";
    case ARGUS_AK_STEP_REGRESSION:
        return "every rank slowed alike: look for a shared cause starting at that step "
               "(data shard, sequence length, software or configuration change, whole-job "
               "thermal state)";
    case ARGUS_AK_ITERATION_JITTER:
        return "look for host work that recurs at those steps (checkpointing, logging, "
               "evaluation, garbage collection) or for interference from other jobs";
    case ARGUS_AK_PERSISTENT_IMBALANCE:
        return "the rank was slower than its peers from the start: compare its GPU, clocks, "
               "power cap and node with a healthy peer's (`nvidia-smi -q -d CLOCK,POWER`), "
               "or give it less work; it is not a new event";
    case ARGUS_AK_KERNEL_DEGRADATION:
        return "profile the named kernel on the source ranks (`ncu`), and compare input shapes "
               "and library versions with a healthy rank of the same stage";
    default:
        return "compare the source ranks with their peers";
    }
}

static void md_kernel(FILE *f, const struct argus_jobstore *js, uint64_t h)
{
    char kb[40];
    const char *n = an_kernel_name(js, h, kb, sizeof kb);
    fputc('`', f);
    for (const char *p = n; *p; p++)
        fputc(*p == '`' ? '\'' : *p, f);
    fputc('`', f);
}

static void md_ranks(FILE *f, const uint32_t *v, uint32_t n)
{
    char buf[512];
    an_format_ranks(v, n, buf, sizeof buf);
    fputs(n ? buf : "none", f);
}

static const char *sureness(const struct argus_anomaly *a)
{
    if (a->confidence > 0)
        return a->confidence >= 0.8 ? "high" : a->confidence >= 0.5 ? "moderate" : "low";
    const uint64_t len = a->step_last - a->step_first + 1;
    if (a->score >= 10 && (len >= 5 || a->kind == ARGUS_AK_ITERATION_JITTER))
        return "high";
    return a->score >= 5 ? "moderate" : "low";
}

static const char *what(int kind)
{
    switch (kind) {
    case ARGUS_AK_COMPUTE_STRAGGLER: return "GPU compute slower than its peers";
    case ARGUS_AK_COMM_DEGRADATION: return "collectives of one group slower (link/NIC)";
    case ARGUS_AK_PIPELINE_BUBBLE: return "one pipeline stage slower, the others idle";
    case ARGUS_AK_HOST_STALL: return "GPU idle, the host did not launch work";
    case ARGUS_AK_STEP_REGRESSION: return "step time rose and stayed up";
    case ARGUS_AK_ITERATION_JITTER: return "transient step-time spikes";
    case ARGUS_AK_KERNEL_DEGRADATION: return "particular kernels slower on some ranks";
    case ARGUS_AK_PERSISTENT_IMBALANCE: return "slower than its peers all along";
    default: return "anomaly";
    }
}

/* One table row per anomaly: what, where, since when, how sure, impact. */
static void headline(FILE *f, const struct argus_anomaly *a)
{
    char src[300];
    an_describe_sources(a, src, sizeof src);
    fprintf(f, "| %d | **%s**: %s | %s | %llu (to %llu) | %llu | %.2fx | %s (score %.1f) |\n",
            a->id, argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind), what(a->kind),
            src, (unsigned long long)a->step_first, (unsigned long long)a->step_last,
            (unsigned long long)a->detected_at_step, a->slowdown, sureness(a), a->score);
}

static void details(FILE *f, const struct argus_jobstore *js, const struct argus_result *r,
                    const struct argus_anomaly *a, const struct an_svg_set *set, size_t idx,
                    const struct argus_stackset *stk)
{
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);
    fprintf(f, "\n### %d. %s (L%d)\n\n", a->id,
            argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind), a->level);
    fprintf(f, "- Evidence: %s\n", a->evidence);
    fputs("- Sources: ", f);
    md_ranks(f, a->ranks, a->n_ranks);
    fputs("\n- Victims: ", f);
    md_ranks(f, a->victims, a->n_victims);
    fputc('\n', f);
    if (gt && a->n_group) {
        fprintf(f, "- Group: %s ", gt);
        md_ranks(f, a->group, a->n_group);
        fputc('\n', f);
    }
    fprintf(f, "- Steps: %llu–%llu (evidence sufficed at step %llu)\n",
            (unsigned long long)a->step_first, (unsigned long long)a->step_last,
            (unsigned long long)a->detected_at_step);
    if (a->phase >= 0)
        fprintf(f, "- Phase: %s\n", argus_phase_name((enum argus_phase)a->phase));
    if (a->n_kernels) {
        fputs("- Kernels:", f);
        for (uint32_t i = 0; i < a->n_kernels; i++) {
            fputc(' ', f);
            md_kernel(f, js, a->kernels[i]);
        }
        fputc('\n', f);
    }
    if (a->n_hits) {
        fputs("- Affected steps:", f);
        for (uint32_t i = 0; i < a->n_hits && i < ARGUS_ANOMALY_MAX_HITS; i++)
            fprintf(f, " %llu", (unsigned long long)a->hits[i]);
        if (a->n_hits_total > a->n_hits)
            fprintf(f, " (%u in all)", a->n_hits_total);
        fputc('\n', f);
    }
    if (a->cost_share > 0)
        fprintf(f, "- Costs the job about %.1f %% of its wall time\n", 100 * a->cost_share);
    fprintf(f, "- Slowdown %.2fx, score %.1f; judged on %s data, confidence %.2f\n",
            a->slowdown, a->score, argus_data_level_name(a->data_level), a->confidence);
    if (a->trace[0])
        fprintf(f, "- Trace: [%s](%s) (open in https://ui.perfetto.dev)\n", a->trace, a->trace);
    an_md_stacks(f, stk, a); /* host call stacks (report/stacks.c) */
    an_md_nccl_anomaly(f, r, idx); /* NCCL's view (report/nccl.c), only with NCCL data */
    fprintf(f, "- What to look at next: %s.\n", next_step(a->kind));
    if (set && idx < AN_SVG_MAX && set->heat[idx])
        fprintf(f, "\n![anomaly %d: per-rank time over peer median](heatmap-%d.svg)\n", a->id,
                a->id);
    if (set && idx < AN_SVG_MAX && set->w1[idx])
        fprintf(f, "\n![anomaly %d: W1 distances, flagged group first](w1-%d.svg)\n"
                   "\nSmall distances inside the flagged group and large ones to the other "
                   "groups (block structure) mean the whole group's collectives are slower: "
                   "the link, not one late rank.\n",
                a->id, a->id);
}

/* The lead paragraph: the first anomaly in one sentence — what, where, since when, how
 * sure — and how many more there are. */
static void lead(FILE *f, const struct argus_result *r)
{
    const struct argus_anomaly *a = &r->anomalies[0];
    for (size_t i = 1; i < r->n_anomalies; i++)
        if (r->anomalies[i].n_ranks && !a->n_ranks)
            a = &r->anomalies[i];
    char src[300], vic[300];
    an_describe_sources(a, src, sizeof src);
    an_format_ranks(a->victims, a->n_victims, vic, sizeof vic);
    fprintf(f, "**%s on %s since step %llu** (through step %llu, evident at step %llu): %s, "
               "%.2fx; %s confidence.",
            argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind), src,
            (unsigned long long)a->step_first, (unsigned long long)a->step_last,
            (unsigned long long)a->detected_at_step, what(a->kind), a->slowdown, sureness(a));
    if (a->n_victims)
        fprintf(f, " Ranks %s only waited for it (victims, no action needed).", vic);
    if (r->n_anomalies > 1)
        fprintf(f, " %zu anomal%s in all, listed below.", r->n_anomalies,
                r->n_anomalies == 1 ? "y" : "ies");
    fputc('\n', f);
}

/* What to look at next, once per kind present. */
static void next_steps(FILE *f, const struct argus_result *r)
{
    unsigned seen = 0;
    for (size_t i = 0; i < r->n_anomalies; i++) {
        const int k = r->anomalies[i].kind;
        if (seen & (1u << k))
            continue;
        if (!seen)
            fputs("\n### What to look at next\n\n", f);
        seen |= 1u << k;
        fprintf(f, "- %s: %s.\n", argus_anomaly_kind_name((enum argus_anomaly_kind)k),
                next_step(k));
    }
}

static void rank_table(FILE *f, const struct argus_jobstore *js, const struct argus_result *r)
{
    int any = 0;
    for (uint32_t i = 0; i < r->n_ranks; i++) {
        const struct argus_rank_row *row = &r->ranks[i];
        if (!row->flags)
            continue;
        if (!any)
            fputs("\n## Flagged ranks\n\n| rank | host | device | median step ms | flags |\n"
                  "| ---: | --- | ---: | ---: | --- |\n", f);
        any = 1;
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, row->rank);
        fprintf(f, "| %u | %s | %d | %.3f | ", row->rank, ri && ri->host[0] ? ri->host : "?",
                ri ? ri->device : -1, row->median_step_ms);
        int first = 1;
        for (int k = 0; k < ARGUS_AK_COUNT; k++)
            if (row->flags & (1u << k)) {
                fprintf(f, "%s%s", first ? "" : ", ",
                        argus_anomaly_kind_name((enum argus_anomaly_kind)k));
                first = 0;
            }
        fputs(" |\n", f);
    }
}

/* A table cell from a rank's own string: '|' and line ends would break the table. */
static void md_cell(FILE *f, const char *s)
{
    if (!s[0]) {
        fputs("—", f);
        return;
    }
    for (; *s; s++)
        fputc(*s == '|' || *s == '\n' || *s == '\r' ? '/' : *s, f);
}

#define MD_PLACEMENT_ROWS 64 /* rows of the placement table; report.json has them all */

/* One line in the summary when some rank is misplaced. */
static void placement_note(FILE *f, const struct argus_result *r)
{
    const struct argus_placement_map *m = r->placement;
    if (!m || !m->n_findings)
        return;
    fprintf(f, "\n**misplacement**: %u finding%s about where ranks run (their CPUs or GPU), "
               "listed under Placement below.\n", m->n_findings + m->findings_dropped,
            m->n_findings + m->findings_dropped == 1 ? "" : "s");
}

/* "## Placement": the misplacement findings, then where each rank runs. */
static void placement_table(FILE *f, const struct argus_result *r)
{
    const struct argus_placement_map *m = r->placement;
    if (!m)
        return;
    fputs("\n## Placement\n\n", f);
    for (uint32_t i = 0; i < m->n_findings; i++) {
        const struct argus_misplacement *x = &m->findings[i];
        fprintf(f, "- **misplacement** (%s): ", argus_misplace_reason_name(x->reason));
        md_cell(f, x->evidence);
        fputc('\n', f);
    }
    if (m->findings_dropped)
        fprintf(f, "- %u more shared GPUs not listed.\n", m->findings_dropped);
    uint32_t judged = 0;
    for (uint32_t i = 0; i < m->n_ranks; i++)
        judged += (m->ranks[i].place.flags & (ARGUS_PLACE_GPU | ARGUS_PLACE_CPUS)) ==
                  (ARGUS_PLACE_GPU | ARGUS_PLACE_CPUS);
    if (!m->n_findings && judged)
        fprintf(f, "The %u rank%s whose GPU and CPUs are known run%s on CPUs local to the "
                   "GPU, and no two ranks of a host share a GPU.\n", judged,
                judged == 1 ? "" : "s", judged == 1 ? "s" : "");
    else if (!m->n_findings)
        fputs("No rank's GPU and binding are both known, so their locality is not judged; "
              "no two ranks of a host share a known GPU.\n", f);
    fputs("\n| rank | host | GPU | GPU NUMA | NIC | CPUs | local |\n"
          "| ---: | --- | --- | ---: | --- | --- | --- |\n", f);
    for (uint32_t i = 0; i < m->n_ranks && i < MD_PLACEMENT_ROWS; i++) {
        const struct argus_place_rank *e = &m->ranks[i];
        const struct argus_placement *p = &e->place;
        const int gpu = (p->flags & ARGUS_PLACE_GPU) != 0;
        const int cpus = (p->flags & ARGUS_PLACE_CPUS) != 0;
        fprintf(f, "| %u | ", e->rank);
        md_cell(f, e->host);
        fputs(" | ", f);
        md_cell(f, p->gpu_bus);
        if (gpu && p->gpu_numa >= 0)
            fprintf(f, " | %d | ", p->gpu_numa);
        else
            fputs(" | — | ", f);
        md_cell(f, p->nic);
        fputs(" | ", f);
        md_cell(f, cpus ? p->cpuset : "");
        fprintf(f, " | %s |\n", gpu && cpus ? ((p->flags & ARGUS_PLACE_LOCAL) ? "yes" : "**no**")
                                            : "—");
    }
    if (m->n_ranks > MD_PLACEMENT_ROWS)
        fprintf(f, "\n%u more ranks in report.json (`placement.ranks`).\n",
                m->n_ranks - MD_PLACEMENT_ROWS);
}

/* "## Inputs skipped": each entry of in->skipped is "FILE: why" (argus-analyze's error
 * line); nothing when no input was skipped. */
/* One "- `FILE` — why" line per "FILE: why" entry. */
static void md_input_lines(FILE *f, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *s = v[i], *why = strstr(s, ": ");
        size_t plen = why ? (size_t)(why - s) : strlen(s);
        fputs("- `", f);
        for (size_t j = 0; j < plen; j++)
            fputc(s[j] == '`' ? '\'' : s[j], f);
        fputc('`', f);
        if (why)
            fprintf(f, " — %s", why + 2);
        fputc('\n', f);
    }
}

static void md_inputs(FILE *f, const struct argus_report_inputs *in)
{
    if (!in)
        return;
    if (in->n_skipped) {
        fprintf(f, "\n## Inputs skipped\n\n%zu of %zu input files could not be used and were "
                   "left out of this analysis:\n\n", in->n_skipped, in->files);
        md_input_lines(f, in->skipped, in->n_skipped);
        fprintf(f, "\n%zu input%s analysed.\n", in->analysed, in->analysed == 1 ? "" : "s");
    }
    if (in->n_lost) {
        fputs("\n## Inputs read in part\n\nThis report is not complete: part of these inputs "
              "could not be read.\n\n", f);
        md_input_lines(f, in->lost, in->n_lost);
    }
    if (in->n_notes) {
        fputs("\n## Input notes\n\n", f);
        md_input_lines(f, in->notes, in->n_notes);
    }
}

int an_write_md(const struct argus_outdir *od, const struct argus_jobstore *js,
                const struct argus_result *r, const struct argus_report_inputs *in,
                const struct an_svg_set *set, const struct argus_forecast *fc,
                const struct argus_stackset *stacks, char *errbuf, size_t errlen)
{
    const struct argus_job_meta *m = argus_jobstore_meta_c(js);
    char *data = NULL, t0[40], t1[40];
    size_t len = 0;
    uint64_t start, end;
    FILE *f = open_memstream(&data, &len);

    if (!f) {
        snprintf(errbuf, errlen, "report.md: out of memory");
        return -ENOMEM;
    }
    an_job_span(js, &start, &end);
    argus_clock_rfc3339(start, t0, sizeof t0);
    argus_clock_rfc3339(end, t1, sizeof t1);
    fprintf(f, "# Argus report — job %s (step %s)\n\n", m->id[0] ? m->id : "unknown",
            m->step[0] ? m->step : "0");
    fprintf(f, "%u ranks on %u node%s, layout TP %d × PP %d × DP %d%s; %llu steps (%llu–%llu) "
            "from %s to %s; %s.\n",
            argus_jobstore_nranks(js), an_job_nodes(js), an_job_nodes(js) == 1 ? "" : "s",
            r->layout.tp, r->layout.pp, r->layout.dp, r->layout.inferred ? " (unknown)" : "",
            (unsigned long long)r->steps.count, (unsigned long long)r->steps.first,
            (unsigned long long)r->steps.last, t0, t1,
            m->complete ? "complete data" : "**partial data** (a rank stopped reporting or "
                                            "the job was cut short)");
    fputs("\n## Summary\n\n", f);
    if (r->n_anomalies == 0)
        fprintf(f, "No anomalies: no rank, group or stage stood out from its peers by "
                   "%s, and the job step time had no lasting change or spike.\n",
                "the reporting thresholds");
    else
        lead(f, r);
    if (r->n_anomalies)
        fputs("\n| # | what | where (sources) | since step | evident at step | slowdown | "
              "how sure |\n| ---: | --- | --- | --- | ---: | ---: | --- |\n", f);
    for (size_t i = 0; i < r->n_anomalies; i++)
        headline(f, &r->anomalies[i]);
    next_steps(f, r);
    placement_note(f, r);
    md_inputs(f, in);
    fputs("\n## Step time\n\n| steps | median ms | p99 ms | cv |\n| ---: | ---: | ---: | ---: |\n",
          f);
    fprintf(f, "| %llu | %.3f | %.3f | %.4f |\n", (unsigned long long)r->steps.count,
            r->steps.median_ms, r->steps.p99_ms, r->steps.cv);
    if (r->incomplete_steps)
        fprintf(f, "\n%llu step%s (the first: step %llu) %s not judged: some rank's data is "
                   "missing there, and no verdict rests on missing data.\n",
                (unsigned long long)r->incomplete_steps, r->incomplete_steps == 1 ? "" : "s",
                (unsigned long long)r->incomplete_first,
                r->incomplete_steps == 1 ? "was" : "were");
    fprintf(f, "\nCollection: %llu kernels seen, %.0f bytes per rank-step summarised, "
               "%llu events dropped.\n",
            (unsigned long long)r->kernels_seen, r->summary_bytes_per_rank_step,
            (unsigned long long)r->dropped_events);
    if (r->cupti_unavailable) /* why the diagnosis is at phase level */
        fprintf(f, "No GPU kernels traced on some ranks: CUPTI %s; they are judged from "
                   "their steps and phases.\n", argus_cupti_why_name(r->cupti_unavailable));
    if (fc)
        an_md_forecast(f, fc);
    if (set && set->steps)
        fputs("\n![step time over the run: median and max across ranks, anomalies shaded]"
              "(steptime.svg)\n", f);
    if (set && set->breakdown)
        fputs("\n![where each rank's step time goes: compute, communication, host gap]"
              "(breakdown.svg)\n", f);
    if (set && set->phases)
        fputs("\n![each rank's time per phase](phases.svg)\n", f);
    if (set && set->forecast)
        fputs("\n![forecast: elapsed time and the P10-P99 fan of the steps left]"
              "(forecast.svg)\n", f);
    if (set && set->job)
        fputs("\n![median GPU compute per step and rank over its peer class median (rows DP "
              "replica, columns PP stage / TP index)](heatmap.svg)\n", f);
    if (r->n_anomalies)
        fputs("\n## Anomalies\n", f);
    for (size_t i = 0; i < r->n_anomalies; i++)
        details(f, js, r, &r->anomalies[i], set, i, stacks);
    an_md_nccl_run(f, r); /* only with NCCL data */
    rank_table(f, js, r);
    placement_table(f, r);
    return an_emit_memstream(f, &data, &len, od, "report.md", errbuf, errlen);
}

/* report.md's wording, shared with report.html (report_int.h). */
const char *an_md_what(int kind)
{
    return what(kind);
}
const char *an_md_next_step(int kind)
{
    return next_step(kind);
}
const char *an_md_sureness(const struct argus_anomaly *a)
{
    return sureness(a);
}
