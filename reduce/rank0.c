/* rank0.c — rank 0's side of the reduction (rank0.h): the pipeline (pipeline/pipeline.h)
 * does the store, spool, analysis and reports; this adds the missing subtrees and
 * reduce.json, generated with YAJL's yajl_gen. */
#include "reduce/rank0.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "common/clock.h"
#include "common/jsongen.h"
#include "common/log.h"
#include "common/outdir.h"
#include "common/types.h"
#include "reduce/testknob.h"
#include "reduce/tree.h"
#include "store/jobstore.h"

int argus_rank0_open(struct argus_rank0 *r0, const struct argus_config *cfg, uint32_t nranks,
                     const char *jobid, const char *stepid, char *errbuf, size_t errlen)
{
    struct argus_pipeline_opts o = {
        .nranks = nranks,
        .base = cfg->outdir,
        .jobid = jobid,
        .stepid = stepid,
        .source = ARGUS_SRC_REPLAY,
        .ratio = cfg->ratio,
        .spool = cfg->spool,
        .spool_max = (uint64_t)cfg->spool_max << 20, /* MiB */
        .traces = cfg->ring_events ? (size_t)cfg->traces : 0,
        .window = cfg->window > 0 ? cfg->window : 1,
        .total_steps = cfg->total_steps > 0 ? (uint64_t)cfg->total_steps : 0,
    };
    const double cells = argus_testknob(ARGUS_KNOB_STORE_CELLS); /* test builds: short */

    if (cells >= 1)
        o.max_cells = (size_t)cells;
    memset(r0, 0, sizeof *r0);
    r0->env_steps = o.total_steps;
    return argus_pipeline_open(&r0->pl, &o, errbuf, errlen);
}

void argus_rank0_ingest(struct argus_rank0 *r0, const uint8_t *buf, size_t len)
{
    argus_pipeline_ingest(&r0->pl, buf, len, NULL, 0);
}

void argus_rank0_ingest_condensed(struct argus_rank0 *r0, const uint8_t *buf, size_t len,
                                  const struct argus_agg_row *rows, size_t nrows)
{
    argus_pipeline_ingest(&r0->pl, buf, len, rows, nrows);
}

void argus_rank0_report(struct argus_rank0 *r0, int final)
{
    char err[512];
    /* the program's argus_set_total_steps wins over ARGUS_TOTAL_STEPS: any rank's, the
     * latest, from the rank info records (in-band, store/jobstore.h), else rank 0's own
     * before its record is in; else ARGUS_TOTAL_STEPS as the records give it (the lowest
     * rank's), else rank 0's own. Chosen afresh each time: a plan taken back (0) leaves
     * the environment's */
    uint32_t prank = 0;
    uint64_t planned = argus_jobstore_planned_steps(r0->pl.js, &prank, NULL, NULL);
    const char *how = argus_jobstore_plan_from(r0->pl.js) == ARGUS_PLAN_PROGRAM
                          ? "argus_set_total_steps"
                          : "ARGUS_TOTAL_STEPS";

    if (argus_jobstore_plan_from(r0->pl.js) != ARGUS_PLAN_PROGRAM) {
        const uint64_t own = r0->planned_steps ? r0->planned_steps() : 0;
        if (own) {
            planned = own, prank = 0, how = "argus_set_total_steps";
        } else if (!planned) {
            planned = r0->env_steps, prank = 0;
        }
    }
    r0->pl.total_steps = planned;
    if (how[0] == 'a')
        snprintf(r0->pl.total_from, sizeof r0->pl.total_from, "%s on rank %u", how, prank);
    else
        snprintf(r0->pl.total_from, sizeof r0->pl.total_from, "%s as rank %u read it", how,
                 prank);
    if (argus_pipeline_analyze(&r0->pl, final) != 0) {
        if (final)
            argus_log(ARGUS_LOG_WARN, "no step summaries reached rank 0; no report written");
        return;
    }
    const int news = r0->windows_with_miss != r0->misses_written; /* a rank went missing */
    if (!final && !argus_reportpace_want(&r0->pace, argus_clock_monotonic_ns()) && !news) {
        argus_pipeline_write_log(&r0->pl); /* new anomalies at once; the files wait */
        return;
    }
    const uint64_t t0 = argus_clock_monotonic_ns();
    r0->misses_written = r0->windows_with_miss;
    if (argus_pipeline_write(&r0->pl, err, sizeof err) != 0)
        argus_log(ARGUS_LOG_WARN, "%s; the report is not written", err);
    argus_reportpace_wrote(&r0->pace, t0, argus_clock_monotonic_ns());
    if (final)
        argus_pipeline_print_summary(&r0->pl, stderr);
}

uint64_t argus_rank0_report_due(const struct argus_rank0 *r0)
{
    return argus_reportpace_due(&r0->pace);
}

int argus_rank0_report_held(struct argus_rank0 *r0, uint64_t now_ns)
{
    char err[512];

    if (now_ns < argus_reportpace_due(&r0->pace))
        return 0;
    const uint64_t t0 = argus_clock_monotonic_ns();
    r0->misses_written = r0->windows_with_miss;
    if (argus_pipeline_write(&r0->pl, err, sizeof err) != 0)
        argus_log(ARGUS_LOG_WARN, "%s; the report is not written", err);
    argus_reportpace_wrote(&r0->pace, t0, argus_clock_monotonic_ns());
    return 1;
}

void argus_rank0_mark_missing(struct argus_rank0 *r0, uint32_t rank, uint64_t from_step,
                              uint64_t window)
{
    if (!r0->pl.js)
        return;
    r0->windows_with_miss++;
    if (!r0->tree_parent) {
        argus_pipeline_mark_missing(&r0->pl, rank, from_step, window);
        return;
    }
    for (int x = 0; x < r0->tree_size; x++)
        if (argus_tree_in_subtree(r0->tree_parent, r0->tree_size, x, (int)rank))
            argus_pipeline_mark_missing(&r0->pl, (uint32_t)x, from_step, window);
}

/* ---- reduce.json ---------------------------------------------------------------------- */

#define CK(x) ARGUS_JSON_CK(x)
#define CKR(x) ARGUS_JSON_TRY(x)
#define KEY(k) CKR(argus_json_key(g, (k)))
#define U64(v) CKR(argus_json_numf(g, "%llu", (unsigned long long)(v)))

static int gen_condense(yajl_gen g, const struct argus_rank0 *r0)
{
    KEY("condense");
    CK(yajl_gen_map_open(g));
    KEY("on");
    CK(yajl_gen_bool(g, r0->condense_on != 0));
    KEY("exemplars");
    U64(r0->condense.exemplars);
    KEY("thin");
    U64(r0->condense.thin);
    KEY("rows");
    U64(r0->condense.rows);
    KEY("pull");
    CK(yajl_gen_map_open(g));
    KEY("asks");
    U64(r0->pull_asks);
    KEY("cells_wanted");
    U64(r0->condense.wanted);
    KEY("answers");
    U64(r0->pull_answers);
    KEY("late");
    U64(r0->pull_late);
    KEY("unanswered");
    U64(r0->pull_unanswered);
    CK(yajl_gen_map_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

/* Each rank's clock offset from its latest full summary (rows carry none); null if none. */
static int gen_offsets(yajl_gen g, const struct argus_jobstore *js)
{
    KEY("clock_offsets_ns");
    CK(yajl_gen_array_open(g));
    for (uint32_t r = 0; r < argus_jobstore_nranks(js); r++) {
        const struct argus_step_summary *const *v;
        size_t n = argus_jobstore_rank_steps(js, r, &v);
        while (n && (v[n - 1]->flags & ARGUS_SF_THIN))
            n--;
        if (n)
            CKR(argus_json_numf(g, "%lld", (long long)v[n - 1]->clock_offset_ns));
        else
            CK(yajl_gen_null(g));
    }
    CK(yajl_gen_array_close(g));
    return 0;
}

static int gen_missing(yajl_gen g, const struct argus_pipeline *pl)
{
    char t[40];

    KEY("missing");
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < pl->nmiss; i++) {
        argus_clock_rfc3339(pl->miss[i].at_ns, t, sizeof t);
        CK(yajl_gen_map_open(g));
        KEY("rank");
        U64(pl->miss[i].rank);
        KEY("from_step");
        U64(pl->miss[i].from_step);
        KEY("window");
        U64(pl->miss[i].window);
        KEY("marked_at");
        CKR(argus_json_str(g, t));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    KEY("late_at_finalize");
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < pl->nlate; i++)
        U64(pl->late[i]);
    CK(yajl_gen_array_close(g));
    return 0;
}

static int gen_traces(yajl_gen g, const struct argus_pipeline *pl)
{
    static const char *const state[] = {"wanted", "asked", "written", "failed"};

    KEY("l4_traces");
    CK(yajl_gen_map_open(g));
    KEY("on");
    CK(yajl_gen_bool(g, pl->l4_on != 0));
    KEY("planned");
    U64(pl->traces.n);
    KEY("plans");
    CK(yajl_gen_array_open(g));
    for (size_t i = 0; i < pl->traces.n; i++) {
        const struct argus_trace_plan *p = &pl->traces.v[i];
        CK(yajl_gen_map_open(g));
        KEY("kind");
        CKR(argus_json_str(g, argus_pipeline_kind_name(p->kind)));
        KEY("targets");
        U64(p->ntargets);
        KEY("state");
        CKR(argus_json_str(g, state[p->state & 3]));
        KEY("path");
        CKR(argus_json_str(g, p->path));
        KEY("why");
        CKR(argus_json_str(g, p->why));
        CK(yajl_gen_map_close(g));
    }
    CK(yajl_gen_array_close(g));
    CK(yajl_gen_map_close(g));
    return 0;
}

static int gen_reduce(yajl_gen g, const struct argus_rank0 *r0, double thread_cpu_s,
                      uint64_t dropped, uint64_t inbound)
{
    const struct argus_pipeline *pl = &r0->pl;
    uint64_t first = 0, last = 0, steps = 0;

    if (argus_jobstore_step_range(pl->js, &first, &last) == 0)
        steps = last - first + 1;
    CK(yajl_gen_map_open(g));
    KEY("ranks");
    U64(argus_jobstore_nranks(pl->js));
    KEY("tree");
    CK(yajl_gen_map_open(g));
    KEY("fanin");
    CK(yajl_gen_integer(g, r0->fanin));
    KEY("depth");
    CK(yajl_gen_integer(g, r0->tree_depth));
    KEY("node_aware");
    CK(yajl_gen_bool(g, 1));
    CK(yajl_gen_map_close(g));
    KEY("exchange");
    CKR(argus_json_str(g, r0->threaded ? "argus-thread" : "at-finalize"));
    KEY("windows");
    U64(pl->windows);
    KEY("window_steps");
    CK(yajl_gen_integer(g, r0->window_steps));
    KEY("steps");
    U64(steps);
    KEY("rank0_bytes_in");
    U64(inbound);
    KEY("rank0_bytes_in_per_step");
    CKR(argus_json_numf(g, "%.1f", steps ? (double)inbound / (double)steps : 0.0));
    KEY("argus_thread_cpu_s");
    CKR(argus_json_numf(g, "%.4f", thread_cpu_s));
    KEY("summaries_dropped_rank0");
    U64(dropped);
    KEY("windows_spilled_rank0");
    U64(r0->spilled_windows);
    CKR(gen_condense(g, r0));
    CKR(gen_offsets(g, pl->js));
    CKR(gen_missing(g, pl));
    CKR(gen_traces(g, pl));
    CK(yajl_gen_map_close(g));
    return 0;
}

int argus_rank0_write_reduce_json(struct argus_rank0 *r0, double thread_cpu_s,
                                  uint64_t dropped, uint64_t inbound)
{
    char err[512];
    const unsigned char *buf;
    size_t len;

    if (!r0->pl.js)
        return -EINVAL;
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g)
        return -ENOMEM;
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_config(g, yajl_gen_indent_string, " ");
    int rc = gen_reduce(g, r0, thread_cpu_s, dropped, inbound);
    if (rc == 0 && yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
        rc = -EIO;
    if (rc == 0) {
        /* relative to the job directory held open, mode 0640 (common/outdir.h) */
        rc = r0->pl.have_out ? argus_file_write_at(r0->pl.out.fd, r0->pl.out.path,
                                                   "reduce.json", buf, len, err, sizeof err)
                             : -EBADF;
    }
    yajl_gen_free(g);
    return rc;
}

void argus_rank0_close(struct argus_rank0 *r0)
{
    argus_pipeline_close(&r0->pl);
}
