/* rank0.c — rank 0's side of the reduction: store, spool, analyse, report (rank0.h). */
#include "reduce/rank0.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/outdir.h"
#include "common/wire.h"
#include "reduce/tree.h"

#define R0_PIN_WINDOWS 2

int argus_rank0_open(struct argus_rank0 *r0, const struct argus_config *cfg, uint32_t nranks,
                     const char *jobid, const char *stepid, char *errbuf, size_t errlen)
{
    int rc;

    memset(r0, 0, sizeof *r0);
    argus_anomaly_log_init(&r0->alog);
    argus_carry_init(&r0->carry);
    argus_analysis_opts_default(&r0->opts);
    r0->opts.ratio = cfg->ratio;
    rc = argus_outdir_create(cfg->outdir, jobid, r0->dir, sizeof r0->dir, errbuf, errlen);
    if (rc)
        return rc;
    rc = argus_jobstore_create(nranks, &r0->js);
    if (rc) {
        snprintf(errbuf, errlen, "cannot allocate the job store for %u ranks", nranks);
        return rc;
    }
    const char *cells = getenv("ARGUS_TEST_STORE_CELLS"); /* test knob: a short horizon */
    if (cells)
        argus_jobstore_set_retention(r0->js, (size_t)strtoull(cells, NULL, 10), 16);
    /* Steps not analysed yet stay (up to R0_PIN_WINDOWS windows past the horizon): a rank
     * 0 that falls behind its children takes in several windows at once, and would evict
     * steps no analysis has seen, with their anomalies. */
    r0->pin_steps = (size_t)R0_PIN_WINDOWS * (size_t)(cfg->window > 0 ? cfg->window : 1);
    argus_jobstore_pin(r0->js, 0, r0->pin_steps);
    struct argus_job_meta *m = argus_jobstore_meta(r0->js);
    snprintf(m->id, sizeof m->id, "%s", jobid);
    snprintf(m->step, sizeof m->step, "%s", stepid);
    m->source = ARGUS_SRC_REPLAY;
    m->started_ns = argus_clock_realtime_ns();
    m->complete = 0;
    r0->report_ok = 1;
    if (argus_traceplan_init(&r0->traces, cfg->ring_events ? (size_t)cfg->traces : 0,
                             nranks) != 0)
        argus_log_once(ARGUS_LOG_WARN, "traceplan", "out of memory; no L4 traces");
    if (cfg->spool) {
        char path[4200];
        char err[512];
        snprintf(path, sizeof path, "%s/summaries.argus", r0->dir);
        if (argus_spool_open_write(path, &r0->spool, err, sizeof err) != 0) {
            argus_log_once(ARGUS_LOG_WARN, "spool-open", "%s; summaries will not be spooled",
                           err);
            r0->spool = NULL;
        }
    }
    return 0;
}

/* Append every record of buf to the spool, stopping quietly at the first damaged one
 * (the job store reports damage). */
static void spool_records(struct argus_rank0 *r0, const uint8_t *buf, size_t len)
{
    size_t off = 0;
    char err[256];

    while (r0->spool && off < len) {
        int type;
        long n = argus_record_peek(buf + off, len - off, off, &type, err, sizeof err);
        if (n <= 0)
            break;
        if (argus_spool_append(r0->spool, buf + off, (size_t)n) != 0) {
            argus_log_once(ARGUS_LOG_WARN, "spool-write",
                           "cannot write %s/summaries.argus; spooling turned off", r0->dir);
            argus_spool_close(r0->spool);
            r0->spool = NULL;
            break;
        }
        off += (size_t)n;
    }
    if (r0->spool)
        argus_spool_flush(r0->spool);
}

void argus_rank0_ingest(struct argus_rank0 *r0, const uint8_t *buf, size_t len)
{
    argus_rank0_ingest_condensed(r0, buf, len, NULL, 0);
}

void argus_rank0_ingest_condensed(struct argus_rank0 *r0, const uint8_t *buf, size_t len,
                                  const struct argus_agg_row *rows, size_t nrows)
{
    char err[512];

    r0->bytes_in += len; /* rank 0's own records included: what the job store takes in */
    r0->windows++;
    spool_records(r0, buf, len);
    /* rows given: its rows records' rows, decoded already (not stored twice) */
    int rc = argus_jobstore_ingest_buffer_but(r0->js, buf, len, rows ? ARGUS_REC_ROWS : -1, 0,
                                              err, sizeof err);
    if (rc == 0 && rows && (rc = argus_jobstore_add_rows(r0->js, rows, nrows)) != 0)
        snprintf(err, sizeof err, "%s", rc == -EINVAL ? "a row of a rank outside the job"
                                                      : "out of memory storing its rows");
    if (rc != 0)
        argus_log_once(ARGUS_LOG_WARN, "ingest", "window %llu from the tree: %s",
                       (unsigned long long)r0->windows, err);
}

/* Take back the marks of ranks that delivered every real step (see rank0.h). */
static void settle_late_final(struct argus_rank0 *r0)
{
    uint64_t first, last;
    size_t k = 0;

    if (r0->nmiss == 0 || argus_jobstore_step_range(r0->js, &first, &last) != 0)
        return;
    uint32_t *late = realloc(r0->late, (r0->nlate + r0->nmiss) * sizeof *late);
    if (!late)
        return;
    r0->late = late;
    for (size_t i = 0; i < r0->nmiss; i++) {
        const struct argus_rank0_miss *x = &r0->miss[i];
        const struct argus_step_summary *const *v;
        size_t n = argus_jobstore_rank_steps(r0->js, x->rank, &v);
        if (x->from_step > last && n && v[n - 1]->step == last) {
            argus_jobstore_clear_missing(r0->js, x->rank);
            r0->late[r0->nlate++] = x->rank;
            continue;
        }
        r0->miss[k++] = *x;
    }
    r0->nmiss = k;
}

void argus_rank0_report(struct argus_rank0 *r0, int final)
{
    struct argus_result res;
    char err[512];
    struct argus_job_meta *m = argus_jobstore_meta(r0->js);

    m->ended_ns = argus_clock_realtime_ns();
    if (final) {
        settle_late_final(r0);
        int all = 1;
        for (uint32_t r = 0; r < argus_jobstore_nranks(r0->js); r++)
            if (argus_jobstore_missing_since(r0->js, r) != UINT64_MAX)
                all = 0;
        m->complete = all;
    }
    memset(&res, 0, sizeof res);
    if (argus_analyze(r0->js, &r0->opts, &res) != 0) {
        if (final)
            argus_log(ARGUS_LOG_WARN, "no step summaries reached rank 0; no report written");
        argus_result_free(&res);
        return;
    }
    const struct argus_jobstore_gone *gone;
    size_t ngone = argus_jobstore_evicted(r0->js, &gone);
    if (argus_carry_apply(&r0->carry, &res, ngone ? gone[ngone - 1].step + 1 : 0) < 0)
        argus_log_once(ARGUS_LOG_WARN, "carry", "out of memory; the report may miss "
                       "anomalies of steps rank 0 no longer holds");
    uint64_t first, last; /* every held step analysed: the pin moves past them */
    if (argus_jobstore_step_range(r0->js, &first, &last) == 0)
        argus_jobstore_pin(r0->js, last + 1, r0->pin_steps);
    argus_traceplan_update(&r0->traces, r0->js, &res, r0->l4_on && !final);
    if (argus_anomaly_log_append(&r0->alog, r0->dir, r0->js, &res, err, sizeof err) != 0)
        argus_log_once(ARGUS_LOG_WARN, "alog", "%s", err);
    if (r0->report_ok && argus_report_write(r0->dir, r0->js, &res, err, sizeof err) != 0) {
        argus_log(ARGUS_LOG_WARN, "%s; the report is not written", err);
        r0->report_ok = 0;
    }
    if (final)
        argus_report_print_summary(stderr, r0->dir, r0->js, &res);
    argus_result_free(&res);
}

static void miss_one(struct argus_rank0 *r0, uint32_t rank, uint64_t from_step,
                     uint64_t window)
{
    if (argus_jobstore_missing_since(r0->js, rank) != UINT64_MAX)
        return;
    argus_jobstore_mark_missing(r0->js, rank, from_step);
    if (r0->nmiss == r0->capmiss) {
        size_t cap = r0->capmiss ? r0->capmiss * 2 : 16;
        struct argus_rank0_miss *n = realloc(r0->miss, cap * sizeof *n);
        if (!n)
            return;
        r0->miss = n;
        r0->capmiss = cap;
    }
    r0->miss[r0->nmiss++] = (struct argus_rank0_miss){rank, from_step, window,
                                                      argus_clock_realtime_ns()};
}

void argus_rank0_mark_missing(struct argus_rank0 *r0, uint32_t rank, uint64_t from_step,
                              uint64_t window)
{
    if (!r0->js)
        return;
    r0->windows_with_miss++;
    if (!r0->tree_parent) {
        miss_one(r0, rank, from_step, window);
        return;
    }
    for (int x = 0; x < r0->tree_size; x++)
        if (argus_tree_in_subtree(r0->tree_parent, r0->tree_size, x, (int)rank))
            miss_one(r0, (uint32_t)x, from_step, window);
}

void argus_rank0_write_reduce_json(struct argus_rank0 *r0, double thread_cpu_s,
                                   uint64_t dropped, uint64_t inbound)
{
    char path[4200], tmp[4300], t[40];
    uint64_t first = 0, last = 0, steps = 0;

    if (!r0->js)
        return;
    if (argus_jobstore_step_range(r0->js, &first, &last) == 0)
        steps = last - first + 1;
    snprintf(path, sizeof path, "%s/reduce.json", r0->dir);
    snprintf(tmp, sizeof tmp, "%s.partial", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "{\"ranks\": %u, \"tree\": {\"fanin\": %d, \"depth\": %d, "
            "\"node_aware\": true}, \"exchange\": \"%s\",\n",
            argus_jobstore_nranks(r0->js), r0->fanin, r0->tree_depth,
            r0->threaded ? "argus-thread" : "at-finalize");
    fprintf(f, " \"windows\": %llu, \"window_steps\": %ld, \"steps\": %llu, "
            "\"rank0_bytes_in\": %llu, \"rank0_bytes_in_per_step\": %.1f, "
            "\"argus_thread_cpu_s\": %.4f, \"summaries_dropped_rank0\": %llu, "
            "\"windows_spilled_rank0\": %llu,\n",
            (unsigned long long)r0->windows, r0->window_steps, (unsigned long long)steps,
            (unsigned long long)inbound,
            steps ? (double)inbound / (double)steps : 0.0, thread_cpu_s,
            (unsigned long long)dropped, (unsigned long long)r0->spilled_windows);
    fprintf(f, " \"condense\": {\"on\": %s, \"exemplars\": %llu, \"thin\": %llu, "
            "\"rows\": %llu, \"pull\": {\"asks\": %llu, \"cells_wanted\": %llu, "
            "\"answers\": %llu, \"late\": %llu, \"unanswered\": %llu}},\n",
            r0->condense_on ? "true" : "false",
            (unsigned long long)r0->condense.exemplars, (unsigned long long)r0->condense.thin,
            (unsigned long long)r0->condense.rows, (unsigned long long)r0->pull_asks,
            (unsigned long long)r0->condense.wanted, (unsigned long long)r0->pull_answers,
            (unsigned long long)r0->pull_late, (unsigned long long)r0->pull_unanswered);
    fprintf(f, " \"clock_offsets_ns\": [");
    for (uint32_t r = 0; r < argus_jobstore_nranks(r0->js); r++) {
        const struct argus_step_summary *const *v;
        size_t n = argus_jobstore_rank_steps(r0->js, r, &v);
        while (n && (v[n - 1]->flags & ARGUS_SF_THIN)) /* rows carry no offset */
            n--;
        if (n)
            fprintf(f, "%s%lld", r ? ", " : "", (long long)v[n - 1]->clock_offset_ns);
        else
            fprintf(f, "%snull", r ? ", " : "");
    }
    fprintf(f, "],\n \"missing\": [");
    for (size_t i = 0; i < r0->nmiss; i++) {
        argus_clock_rfc3339(r0->miss[i].at_ns, t, sizeof t);
        fprintf(f, "%s\n  {\"rank\": %u, \"from_step\": %llu, \"window\": %llu, "
                "\"marked_at\": \"%s\"}", i ? "," : "", r0->miss[i].rank,
                (unsigned long long)r0->miss[i].from_step,
                (unsigned long long)r0->miss[i].window, t);
    }
    fprintf(f, "],\n \"late_at_finalize\": [");
    for (size_t i = 0; i < r0->nlate; i++)
        fprintf(f, "%s%u", i ? ", " : "", r0->late[i]);
    fprintf(f, "],\n \"l4_traces\": {\"on\": %s, \"planned\": %zu, \"plans\": [",
            r0->l4_on ? "true" : "false", r0->traces.n);
    for (size_t i = 0; i < r0->traces.n; i++) {
        const struct argus_trace_plan *p = &r0->traces.v[i];
        static const char *const state[] = {"wanted", "asked", "written", "failed"};
        fprintf(f, "%s\n  {\"kind\": \"%s\", \"targets\": %u, \"state\": \"%s\", "
                "\"path\": \"%s\", \"why\": \"%s\"}", i ? "," : "",
                argus_anomaly_kind_name((enum argus_anomaly_kind)p->kind), p->ntargets,
                state[p->state & 3], p->path, p->why);
    }
    fprintf(f, "]}}\n");
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        remove(tmp);
}

void argus_rank0_close(struct argus_rank0 *r0)
{
    free(r0->miss);
    r0->miss = NULL;
    r0->nmiss = r0->capmiss = 0;
    free(r0->late);
    r0->late = NULL;
    r0->nlate = 0;
    if (r0->spool && argus_spool_close(r0->spool) != 0)
        argus_log(ARGUS_LOG_WARN, "closing %s/summaries.argus failed", r0->dir);
    r0->spool = NULL;
    argus_anomaly_log_free(&r0->alog);
    argus_traceplan_free(&r0->traces);
    argus_carry_free(&r0->carry);
    argus_jobstore_free(r0->js);
    r0->js = NULL;
}
