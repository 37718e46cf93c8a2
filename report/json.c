/* json.c — report.json (docs/REPORT_SCHEMA.md, version 1) and the one-line anomaly
 * object of anomalies.jsonl, generated with YAJL's yajl_gen. Derived only from the result
 * and the job store; written to report.json.partial and renamed, relative to the output
 * directory's fd (common/outdir.h). argus_report_write_at runs every writer in turn.
 */
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report_int.h"
#include "common/clock.h"
#include "common/jsongen.h"
#include "common/outdir.h"

#define REPORT_VERSION 1

#define CK(x) ARGUS_JSON_CK(x)
#define CKR(x) ARGUS_JSON_TRY(x)

const char *an_kernel_name(const struct argus_jobstore *js, uint64_t hash, char *buf,
                           size_t len)
{
    const char *n = argus_jobstore_name(js, hash);
    if (n)
        return n;
    snprintf(buf, len, "0x%016llx", (unsigned long long)hash);
    return buf;
}

static int gen_ranks(yajl_gen g, const uint32_t *v, uint32_t n)
{
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < n; i++)
        CKR(argus_json_uint(g, v[i]));
    CK(yajl_gen_array_close(g));
    return 0;
}

/* One anomaly; with stk, its host call stacks (report/stacks.c) inside it. */
static int gen_anomaly_with(yajl_gen g, const struct argus_jobstore *js,
                            const struct argus_anomaly *a, const struct argus_stackset *stk,
                            const struct argus_nccl_view *nv)
{
    char lv[8], kb[40];
    const char *gt = argus_group_type_name((enum argus_group_type)a->group_type);

    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "id"));
    CKR(argus_json_uint(g, (uint64_t)(a->id > 0 ? a->id : 0)));
    CKR(argus_json_key(g, "level"));
    snprintf(lv, sizeof lv, "L%d", a->level);
    CKR(argus_json_str(g, lv));
    CKR(argus_json_key(g, "kind"));
    CKR(argus_json_str(g, argus_anomaly_kind_name((enum argus_anomaly_kind)a->kind)));
    CKR(argus_json_key(g, "steps"));
    CK(yajl_gen_array_open(g));
    CKR(argus_json_uint(g, a->step_first));
    CKR(argus_json_uint(g, a->step_last));
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "ranks"));
    CKR(gen_ranks(g, a->ranks, a->n_ranks));
    CKR(argus_json_key(g, "victims"));
    CKR(gen_ranks(g, a->victims, a->n_victims));
    if (gt && a->n_group) {
        CKR(argus_json_key(g, "group"));
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "type"));
        CKR(argus_json_str(g, gt));
        CKR(argus_json_key(g, "ranks"));
        CKR(gen_ranks(g, a->group, a->n_group));
        CK(yajl_gen_map_close(g));
    }
    CKR(argus_json_key(g, "phase"));
    if (a->phase >= 0 && a->phase < ARGUS_PH_COUNT)
        CKR(argus_json_str(g, argus_phase_name((enum argus_phase)a->phase)));
    else
        CK(yajl_gen_null(g));
    CKR(argus_json_key(g, "kernels"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < a->n_kernels && i < ARGUS_ANOMALY_MAX_KERNELS; i++)
        CKR(argus_json_str(g, an_kernel_name(js, a->kernels[i], kb, sizeof kb)));
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "slowdown"));
    CKR(argus_json_num(g, a->slowdown, 3));
    CKR(argus_json_key(g, "score"));
    CKR(argus_json_num(g, a->score, 2));
    CKR(argus_json_key(g, "detected_at_step"));
    CKR(argus_json_uint(g, a->detected_at_step));
    CKR(argus_json_key(g, "evidence"));
    CKR(argus_json_str(g, a->evidence));
    if (a->trace[0]) {
        CKR(argus_json_key(g, "trace"));
        CKR(argus_json_str(g, a->trace));
    }
    if (a->period_steps) {
        CKR(argus_json_key(g, "period_steps"));
        CKR(argus_json_uint(g, a->period_steps));
    }
    if (a->n_occurrences) {
        CKR(argus_json_key(g, "occurrences"));
        CKR(argus_json_uint(g, a->n_occurrences));
    }
    if (a->n_hits) {
        CKR(argus_json_key(g, "affected_steps"));
        CK(yajl_gen_array_open(g));
        for (uint32_t i = 0; i < a->n_hits && i < ARGUS_ANOMALY_MAX_HITS; i++)
            CKR(argus_json_uint(g, a->hits[i]));
        CK(yajl_gen_array_close(g));
        CKR(argus_json_key(g, "affected_steps_total"));
        CKR(argus_json_uint(g, a->n_hits_total > a->n_hits ? a->n_hits_total : a->n_hits));
    }
    if (a->cost_share > 0) {
        CKR(argus_json_key(g, "cost_share"));
        CKR(argus_json_num(g, a->cost_share, 4));
    }
    CKR(argus_json_key(g, "data_level"));
    CKR(argus_json_str(g, argus_data_level_name(a->data_level)));
    CKR(argus_json_key(g, "confidence"));
    CKR(argus_json_num(g, a->confidence, 2));
    if (a->w1_inter_ns > 0) {
        CKR(argus_json_key(g, "w1_us"));
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "intra_group"));
        CKR(argus_json_num(g, a->w1_intra_ns / 1e3, 3));
        CKR(argus_json_key(g, "to_other_groups"));
        CKR(argus_json_num(g, a->w1_inter_ns / 1e3, 3));
        CK(yajl_gen_map_close(g));
    }
    if (stk)
        CKR(an_gen_stacks(g, stk, a));
    if (nv && nv->comm_hash) { /* NCCL's in-band view (report/nccl.c) */
        CKR(argus_json_key(g, "nccl"));
        CKR(an_gen_nccl_view(g, nv));
    }
    CK(yajl_gen_map_close(g));
    return 0;
}

int an_gen_anomaly(yajl_gen g, const struct argus_jobstore *js, const struct argus_anomaly *a)
{
    return gen_anomaly_with(g, js, a, NULL, NULL);
}

static const char *source_name(int s)
{
    switch (s) {
    case ARGUS_SRC_CUPTI: return "cupti";
    case ARGUS_SRC_KINETO: return "kineto";
    default: return "replay";
    }
}

static int gen_job(yajl_gen g, const struct argus_jobstore *js)
{
    const struct argus_job_meta *m = argus_jobstore_meta_c(js);
    char t[40];
    uint64_t start, end;

    an_job_span(js, &start, &end);
    CKR(argus_json_key(g, "job"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "id"));
    CKR(argus_json_str(g, m->id[0] ? m->id : "unknown"));
    CKR(argus_json_key(g, "step"));
    CKR(argus_json_str(g, m->step[0] ? m->step : "0"));
    CKR(argus_json_key(g, "ranks"));
    CKR(argus_json_uint(g, argus_jobstore_nranks(js)));
    CKR(argus_json_key(g, "nodes"));
    CKR(argus_json_uint(g, an_job_nodes(js)));
    CKR(argus_json_key(g, "source"));
    CKR(argus_json_str(g, source_name(m->source)));
    CKR(argus_json_key(g, "started_at"));
    argus_clock_rfc3339(start, t, sizeof t);
    CKR(argus_json_str(g, t));
    CKR(argus_json_key(g, "ended_at"));
    argus_clock_rfc3339(end, t, sizeof t);
    CKR(argus_json_str(g, t));
    CKR(argus_json_key(g, "complete"));
    CK(yajl_gen_bool(g, m->complete != 0));
    /* Ranks that stopped delivering, and from which step (empty when none). */
    CKR(argus_json_key(g, "missing_ranks"));
    CK(yajl_gen_array_open(g));
    for (uint32_t rk = 0; rk < argus_jobstore_nranks(js); rk++) {
        uint64_t since = argus_jobstore_missing_since(js, rk);
        if (since == UINT64_MAX)
            continue;
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "rank"));
        CKR(argus_json_uint(g, rk));
        CKR(argus_json_key(g, "since_step"));
        CKR(argus_json_uint(g, since));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

/* Summaries held with kernel detail: thin ones (ARGUS_SF_THIN, rows only) saw kernels that
 * kernels_seen does not count, so they are no rank-step of the raw-bytes figure. */
static size_t kernel_held(const struct argus_jobstore *js)
{
    size_t n = 0;
    for (uint32_t r = 0; r < argus_jobstore_nranks(js); r++) {
        const struct argus_step_summary *const *v;
        const size_t m = argus_jobstore_rank_steps(js, r, &v);
        for (size_t i = 0; i < m; i++)
            n += !(v[i]->flags & ARGUS_SF_THIN);
    }
    return n;
}

/* "inputs": {files, analysed, skipped: ["FILE: why", ...]} (argus-analyze; a field added,
 * as docs/REPORT_SCHEMA.md allows). */
static int gen_inputs(yajl_gen g, const struct argus_report_inputs *in)
{
    CKR(argus_json_key(g, "inputs"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "files"));
    CKR(argus_json_uint(g, in->files));
    CKR(argus_json_key(g, "analysed"));
    CKR(argus_json_uint(g, in->analysed));
    CKR(argus_json_key(g, "skipped"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < in->n_skipped; i++)
        CKR(argus_json_str(g, in->skipped[i]));
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "lost")); /* inputs used in part */
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < in->n_lost; i++)
        CKR(argus_json_str(g, in->lost[i]));
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "notes")); /* data dropped or cut inside inputs used */
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < in->n_notes; i++)
        CKR(argus_json_str(g, in->notes[i]));
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

/* A string, null when empty. */
static int gen_str_or_null(yajl_gen g, const char *s)
{
    if (!s[0]) {
        CK(yajl_gen_null(g));
        return 0;
    }
    return argus_json_str(g, s);
}

/* A node number, null when unknown (< 0). */
static int gen_node(yajl_gen g, int node)
{
    if (node < 0)
        CK(yajl_gen_null(g));
    else
        CK(yajl_gen_integer(g, node));
    return 0;
}

/* "placement": where each rank runs and the misplacement findings (docs/REPORT_SCHEMA.md,
 * "placement"); only when some rank said where it runs. */
static int gen_placement(yajl_gen g, const struct argus_placement_map *m)
{
    CKR(argus_json_key(g, "placement"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "ranks"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < m->n_ranks; i++) {
        const struct argus_place_rank *e = &m->ranks[i];
        const struct argus_placement *p = &e->place;
        const int gpu = (p->flags & ARGUS_PLACE_GPU) != 0;
        const int cpus = (p->flags & ARGUS_PLACE_CPUS) != 0;
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "rank"));
        CKR(argus_json_uint(g, e->rank));
        CKR(argus_json_key(g, "host"));
        CKR(argus_json_str(g, e->host[0] ? e->host : "unknown"));
        CKR(argus_json_key(g, "gpu_bus_id"));
        CKR(gen_str_or_null(g, p->gpu_bus));
        CKR(argus_json_key(g, "gpu_in_topology"));
        CK(yajl_gen_bool(g, gpu));
        CKR(argus_json_key(g, "gpu_numa"));
        CKR(gen_node(g, gpu ? p->gpu_numa : -1));
        CKR(argus_json_key(g, "nic"));
        CKR(gen_str_or_null(g, p->nic));
        CKR(argus_json_key(g, "cpuset"));
        CKR(gen_str_or_null(g, cpus ? p->cpuset : ""));
        CKR(argus_json_key(g, "cpuset_cut"));
        CK(yajl_gen_bool(g, (p->flags & ARGUS_PLACE_CPUS_CUT) != 0));
        CKR(argus_json_key(g, "cpu_numa"));
        CKR(gen_node(g, cpus ? p->cpu_numa : -1));
        CKR(argus_json_key(g, "local"));
        if (gpu && cpus)
            CK(yajl_gen_bool(g, (p->flags & ARGUS_PLACE_LOCAL) != 0));
        else
            CK(yajl_gen_null(g));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "findings"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < m->n_findings; i++) {
        const struct argus_misplacement *f = &m->findings[i];
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "kind"));
        CKR(argus_json_str(g, "misplacement"));
        CKR(argus_json_key(g, "reason"));
        CKR(argus_json_str(g, argus_misplace_reason_name(f->reason)));
        CKR(argus_json_key(g, "ranks"));
        CKR(gen_ranks(g, f->ranks, f->n_ranks));
        CKR(argus_json_key(g, "ranks_total"));
        CKR(argus_json_uint(g, f->n_ranks_total));
        CKR(argus_json_key(g, "host"));
        CKR(gen_str_or_null(g, f->host));
        CKR(argus_json_key(g, "gpu_bus_id"));
        CKR(gen_str_or_null(g, f->gpu_bus));
        CKR(argus_json_key(g, "host_stall_sources"));
        CKR(argus_json_uint(g, f->n_host_stall));
        CKR(argus_json_key(g, "evidence"));
        CKR(argus_json_str(g, f->evidence));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CKR(argus_json_key(g, "findings_dropped"));
    CKR(argus_json_uint(g, m->findings_dropped));
    CK(yajl_gen_map_close(g));
    return 0;
}

static int gen_report(yajl_gen g, const struct argus_jobstore *js, const struct argus_report *rep)
{
    const struct argus_result *r = &rep->res;
    const size_t held = kernel_held(js);

    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "argus_report_version"));
    CKR(argus_json_uint(g, REPORT_VERSION));
    CKR(gen_job(g, js));

    CKR(argus_json_key(g, "layout"));
    CK(yajl_gen_map_open(g));
    const char *lk[4] = { "tp", "pp", "dp", "ep" };
    const int lv[4] = { r->layout.tp, r->layout.pp, r->layout.dp, r->layout.ep };
    for (int i = 0; i < 4; i++) {
        CKR(argus_json_key(g, lk[i]));
        CKR(argus_json_uint(g, (uint64_t)(lv[i] > 0 ? lv[i] : 1)));
    }
    CKR(argus_json_key(g, "inferred"));
    CK(yajl_gen_bool(g, r->layout.inferred != 0));
    CK(yajl_gen_map_close(g));

    CKR(argus_json_key(g, "steps"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "count"));
    CKR(argus_json_uint(g, r->steps.count));
    CKR(argus_json_key(g, "first"));
    CKR(argus_json_uint(g, r->steps.first));
    CKR(argus_json_key(g, "last"));
    CKR(argus_json_uint(g, r->steps.last));
    CKR(argus_json_key(g, "median_ms"));
    CKR(argus_json_num(g, r->steps.median_ms, 3));
    CKR(argus_json_key(g, "p99_ms"));
    CKR(argus_json_num(g, r->steps.p99_ms, 3));
    CKR(argus_json_key(g, "cv"));
    CKR(argus_json_num(g, r->steps.cv, 4));
    /* Steps held but not judged: some rank's data is missing there (no verdict rests on
     * missing data, docs/ALGORITHMS.md); first is null when there are none. */
    CKR(argus_json_key(g, "unjudged"));
    CKR(argus_json_uint(g, r->incomplete_steps));
    CKR(argus_json_key(g, "unjudged_first"));
    if (r->incomplete_steps)
        CKR(argus_json_uint(g, r->incomplete_first));
    else
        CK(yajl_gen_null(g));
    CK(yajl_gen_map_close(g));

    CKR(argus_json_key(g, "collection"));
    CK(yajl_gen_map_open(g));
    CKR(argus_json_key(g, "data_level"));
    CKR(argus_json_str(g, argus_data_level_name(r->data_level)));
    CKR(argus_json_key(g, "kernels_seen"));
    CKR(argus_json_uint(g, r->kernels_seen));
    CKR(argus_json_key(g, "summary_bytes_per_rank_step"));
    CKR(argus_json_uint(g, (uint64_t)llround(r->summary_bytes_per_rank_step)));
    CKR(argus_json_key(g, "raw_bytes_per_rank_step"));
    CKR(argus_json_uint(g, held ? (uint64_t)llround((double)r->kernels_seen / (double)held *
                                                (double)sizeof(struct argus_kernel_event))
                            : 0));
    CKR(argus_json_key(g, "dropped_events"));
    CKR(argus_json_uint(g, r->dropped_events));
    CKR(argus_json_key(g, "cupti_unavailable")); /* why a rank has no kernels; null: none */
    if (r->cupti_unavailable)
        CKR(argus_json_str(g, argus_cupti_why_name(r->cupti_unavailable)));
    else
        CK(yajl_gen_null(g));
    CK(yajl_gen_map_close(g));

    CKR(argus_json_key(g, "anomalies"));
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < r->n_anomalies; i++)
        CKR(gen_anomaly_with(g, js, &r->anomalies[i], rep->stacks,
                             r->nccl && i < r->n_nccl ? &r->nccl[i] : NULL));
    CK(yajl_gen_array_close(g));

    CKR(argus_json_key(g, "ranks"));
    CK(yajl_gen_array_open(g));
    for (uint32_t i = 0; i < r->n_ranks; i++) {
        const struct argus_rank_row *row = &r->ranks[i];
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, row->rank);
        CK(yajl_gen_map_open(g));
        CKR(argus_json_key(g, "rank"));
        CKR(argus_json_uint(g, row->rank));
        CKR(argus_json_key(g, "host"));
        CKR(argus_json_str(g, ri && ri->host[0] ? ri->host : "unknown"));
        CKR(argus_json_key(g, "device"));
        CK(yajl_gen_integer(g, ri ? ri->device : -1));
        CKR(argus_json_key(g, "median_step_ms"));
        CKR(argus_json_num(g, row->median_step_ms, 3));
        CKR(argus_json_key(g, "flags"));
        CK(yajl_gen_array_open(g));
        for (int k = 0; k < ARGUS_AK_COUNT; k++)
            if (row->flags & (1u << k))
                CKR(argus_json_str(g, argus_anomaly_kind_name((enum argus_anomaly_kind)k)));
        CK(yajl_gen_array_close(g));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    if (r->placement)
        CKR(gen_placement(g, r->placement));
    CKR(an_gen_nccl_run(g, r)); /* only with NCCL data */
    if (rep->inputs)
        CKR(gen_inputs(g, rep->inputs));
    if (rep->forecast && rep->forecast->valid)
        CKR(an_gen_forecast(g, rep->forecast));
    CK(yajl_gen_map_close(g));
    return 0;
}


static int write_json(const struct argus_outdir *od, const struct argus_jobstore *js,
                      const struct argus_report *rep, char *errbuf, size_t errlen)
{
    const unsigned char *buf;
    size_t len;
    int rc;
    yajl_gen g = yajl_gen_alloc(NULL);

    if (!g)
        return -ENOMEM;
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_config(g, yajl_gen_indent_string, "  ");
    rc = gen_report(g, js, rep);
    if (!rc && yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
        rc = -EIO;
    if (rc) {
        snprintf(errbuf, errlen, "report.json: JSON generation failed");
        goto out;
    }
    /* a newline at the end, as text files have */
    char *copy = malloc(len + 1);
    if (!copy) {
        rc = -ENOMEM;
        goto out;
    }
    memcpy(copy, buf, len);
    copy[len] = '\n';
    rc = argus_file_write_at(od->fd, od->path, "report.json", copy, len + 1, errbuf, errlen);
    free(copy);
out:
    yajl_gen_free(g);
    return rc;
}

int argus_report_write_at(const struct argus_outdir *od, const struct argus_jobstore *js,
                          const struct argus_report *rep, unsigned *written, char *errbuf,
                          size_t errlen)
{
    char dummy[8];
    unsigned w = 0;
    int rc;

    if (!errbuf || !errlen) {
        errbuf = dummy;
        errlen = sizeof dummy;
    }
    errbuf[0] = '\0';
    if (written)
        *written = 0;
    if (!od || od->fd < 0 || !js || !rep) {
        snprintf(errbuf, errlen, "report: bad arguments");
        return -EINVAL;
    }
    const struct argus_result *r = &rep->res;
    const struct argus_forecast *fcv = rep->forecast && rep->forecast->valid ? rep->forecast
                                                                             : NULL;
    if ((rc = write_json(od, js, rep, errbuf, errlen)))
        goto out;
    w |= ARGUS_REPORT_F_JSON;
    if ((rc = an_write_stacks(od, r, rep->stacks, errbuf, errlen))) /* stacks.folded */
        goto out;
    /* pictures first, so that report.md links only to files that exist */
    struct an_svg_set set;
    if ((rc = an_write_svgs(od, js, r, fcv, &set, errbuf, errlen)))
        goto out_svg;
    w |= ARGUS_REPORT_F_SVG;
    if ((rc = an_write_md(od, js, r, rep->inputs, &set, fcv, rep->stacks, errbuf, errlen)))
        goto out_svg;
    w |= ARGUS_REPORT_F_MD;
    /* report.html inlines the pictures' very text (report/html.c) */
    rc = an_write_html(od, js, rep, &set, errbuf, errlen);
out_svg:
    an_svg_set_free(&set);
    if (rc)
        goto out;
    w |= ARGUS_REPORT_F_HTML;
    if ((rc = an_write_prom(od, js, r, fcv, errbuf, errlen)))
        goto out;
    w |= ARGUS_REPORT_F_PROM;
    if ((rc = an_write_csv(od, js, errbuf, errlen)))
        goto out;
    w |= ARGUS_REPORT_F_CSV;
out:
    if (written)
        *written = w;
    return rc;
}

int argus_report_write_all(const char *dir, const struct argus_jobstore *js,
                           const struct argus_report *rep, char *errbuf, size_t errlen)
{
    struct argus_outdir od;

    argus_outdir_init(&od);
    if (!dir) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "report: bad arguments");
        return -EINVAL;
    }
    snprintf(od.path, sizeof od.path, "%s", dir);
    od.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (od.fd < 0) {
        int e = errno;
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "%s: cannot open the directory: %s", dir, strerror(e));
        return -e;
    }
    int rc = argus_report_write_at(&od, js, rep, NULL, errbuf, errlen);
    argus_outdir_close(&od);
    return rc;
}

int argus_report_write(const char *dir, const struct argus_jobstore *js,
                       const struct argus_result *r, char *errbuf, size_t errlen)
{
    if (!r) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "report: bad arguments");
        return -EINVAL;
    }
    const struct argus_report rep = {.res = *r, .inputs = NULL}; /* a view: r keeps its arrays */
    return argus_report_write_all(dir, js, &rep, errbuf, errlen);
}

long argus_report_anomaly_json(const struct argus_jobstore *js, const struct argus_anomaly *a,
                               char *buf, size_t len)
{
    const unsigned char *out;
    size_t n;
    long rc;
    yajl_gen g = yajl_gen_alloc(NULL);

    if (!g)
        return -ENOMEM;
    if (an_gen_anomaly(g, js, a) || yajl_gen_get_buf(g, &out, &n) != yajl_gen_status_ok) {
        rc = -EIO;
    } else if (n + 1 > len) {
        rc = -ENOSPC;
    } else {
        memcpy(buf, out, n);
        buf[n] = '\0';
        rc = (long)n;
    }
    yajl_gen_free(g);
    return rc;
}
