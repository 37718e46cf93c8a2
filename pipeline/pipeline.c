/* pipeline.c — rank 0's sequence, online and offline (pipeline.h): the store and
 * its spool, the missing marks, one analysis at a time with carry, pins and trace plans,
 * and every output written from that one result. No MPI; decides nothing the analysis
 * or the writers decide.
 */
#include "pipeline/pipeline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/outdir.h"
#include "common/wire.h"

#define PIN_WINDOWS 2 /* windows of steps not analysed yet that outlive the horizon */

/* A message that cannot be returned: "PROG: ..." offline, else once through the log. */
static void say_once(const struct argus_pipeline *pl, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say_once(const struct argus_pipeline *pl, const char *key, const char *fmt, ...)
{
    char msg[900];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (pl->prog)
        fprintf(stderr, "%s: %s\n", pl->prog, msg);
    else
        argus_log_once(ARGUS_LOG_WARN, key, "%s", msg);
}

static int make_store(struct argus_pipeline *pl, const struct argus_pipeline_opts *o)
{
    int rc = argus_jobstore_create(o->nranks, &pl->js);

    if (rc)
        return rc;
    if (o->keep_all)
        rc = argus_jobstore_set_retention(pl->js, 0, 0);
    else if (o->max_cells)
        rc = argus_jobstore_set_retention(pl->js, o->max_cells, 16);
    if (rc)
        return rc;
    /* Steps not analysed yet stay (up to PIN_WINDOWS windows past the horizon): a rank 0
     * that falls behind its children takes in several windows at once, and would evict
     * steps no analysis has seen, with their anomalies. */
    if (o->window > 0) {
        pl->pin_steps = (size_t)PIN_WINDOWS * (size_t)o->window;
        argus_jobstore_pin(pl->js, 0, pl->pin_steps);
    }
    return 0;
}

int argus_pipeline_open(struct argus_pipeline *pl, const struct argus_pipeline_opts *o,
                        char *errbuf, size_t errlen)
{
    int rc;

    memset(pl, 0, sizeof *pl);
    argus_outdir_init(&pl->out);
    argus_anomaly_log_init(&pl->alog);
    argus_carry_init(&pl->carry);
    argus_analysis_opts_default(&pl->opts);
    if (o->ratio > 0)
        pl->opts.ratio = o->ratio;
    pl->prog = o->prog;
    pl->total_steps = o->total_steps;
    if (o->dir)
        rc = argus_outdir_adopt(&pl->out, o->dir, errbuf, errlen);
    else if (o->name)
        rc = argus_outdir_fresh(&pl->out, o->base, o->name, errbuf, errlen);
    else
        rc = argus_outdir_create_at(&pl->out, o->base, o->jobid, errbuf, errlen);
    if (rc)
        goto fail;
    pl->have_out = 1;
    snprintf(pl->dir, sizeof pl->dir, "%s", pl->out.path);
    if ((rc = make_store(pl, o)) != 0) {
        snprintf(errbuf, errlen, "cannot allocate the job store for %u ranks", o->nranks);
        goto fail;
    }
    struct argus_job_meta *m = argus_jobstore_meta(pl->js);
    snprintf(m->id, sizeof m->id, "%s", o->jobid ? o->jobid : "");
    snprintf(m->step, sizeof m->step, "%s", o->stepid ? o->stepid : "");
    m->source = o->source;
    m->started_ns = argus_clock_realtime_ns();
    m->complete = 0;
    pl->report_ok = 1;
    if (argus_traceplan_init(&pl->traces, o->traces, o->nranks) != 0)
        argus_log_once(ARGUS_LOG_WARN, "traceplan", "out of memory; no L4 traces");
    pl->traces.out = &pl->out; /* trace files go under the directory held open */
    pl->spool_max = o->spool_max;
    if (o->spool) {
        char path[sizeof pl->dir + 32];
        char err[512];
        snprintf(path, sizeof path, "%s/summaries.argus", pl->dir);
        if (argus_spool_open_write_at(pl->out.fd, "summaries.argus", path, &pl->spool, err,
                                      sizeof err) != 0) {
            say_once(pl, "spool-open", "%s; summaries will not be spooled", err);
            pl->spool = NULL;
        }
    }
    return 0;
fail:
    argus_pipeline_close(pl);
    return rc;
}

void argus_pipeline_close(struct argus_pipeline *pl)
{
    if (pl->spool && argus_spool_close(pl->spool) != 0)
        argus_log(ARGUS_LOG_WARN, "closing %s/summaries.argus failed", pl->dir);
    pl->spool = NULL;
    argus_spoolcap_free(pl->spoolcap);
    pl->spoolcap = NULL;
    argus_result_free(&pl->rep.res);
    memset(&pl->rep.res, 0, sizeof pl->rep.res);
    pl->have_result = 0;
    free(pl->fc);
    pl->fc = NULL;
    pl->rep.forecast = NULL;
    free(pl->miss);
    pl->miss = NULL;
    pl->nmiss = pl->capmiss = 0;
    free(pl->late);
    pl->late = NULL;
    pl->nlate = pl->caplate = 0;
    argus_anomaly_log_free(&pl->alog);
    argus_traceplan_free(&pl->traces);
    argus_carry_free(&pl->carry);
    argus_jobstore_free(pl->js);
    pl->js = NULL;
    if (pl->have_out)
        argus_outdir_close(&pl->out);
    pl->have_out = 0;
}

/* ---- taking records in ---------------------------------------------------------------- */

/* Append every record of buf to the spool, stopping quietly at the first damaged one
 * (the job store reports damage); then, under spool_max, the size policy (spoolcap.h):
 * the steps of the latest analysis's anomalies, widened by the pin (two windows), stay
 * whole when older parts are thinned. */
void argus_pipeline_spool(struct argus_pipeline *pl, const uint8_t *buf, size_t len)
{
    size_t off = 0;
    char err[512];

    while (pl->spool && off < len) {
        int type;
        long n = argus_record_peek(buf + off, len - off, off, &type, err, sizeof err);
        if (n <= 0)
            break;
        if (argus_spool_append(pl->spool, buf + off, (size_t)n) != 0) {
            say_once(pl, "spool-write", "cannot write %s/summaries.argus; spooling turned off",
                     pl->dir);
            argus_spool_close(pl->spool);
            pl->spool = NULL;
            break;
        }
        off += (size_t)n;
    }
    if (!pl->spool || argus_spool_flush(pl->spool) != 0 || !pl->spool_max)
        return;
    if (!pl->spoolcap && argus_spoolcap_create(pl->spool_max, &pl->spoolcap) != 0) {
        say_once(pl, "spool-cap", "out of memory; %s/summaries.argus is not bounded", pl->dir);
        pl->spool_max = 0;
        return;
    }
    struct argus_spoolcap_keep keep[64];
    size_t nkeep = 0;
    const uint64_t margin = pl->pin_steps ? pl->pin_steps : 16;
    for (size_t i = 0; pl->have_result && i < pl->rep.res.n_anomalies && nkeep < 64; i++) {
        const struct argus_anomaly *a = &pl->rep.res.anomalies[i];
        keep[nkeep].first = a->step_first > margin ? a->step_first - margin : 0;
        keep[nkeep++].last = a->step_last + margin;
    }
    if (argus_spoolcap_after_flush(pl->spoolcap, &pl->spool, keep, nkeep, err, sizeof err)) {
        say_once(pl, "spool-cap", "%s/summaries.argus: %s; its size is no longer bounded",
                 pl->dir, err);
        pl->spool_max = 0;
    }
}

int argus_pipeline_store(struct argus_pipeline *pl, const uint8_t *buf, size_t len,
                         const struct argus_agg_row *rows, size_t nrows, char *errbuf,
                         size_t errlen)
{
    /* rows given: its rows records' rows, decoded already (not stored twice) */
    int rc = argus_jobstore_ingest_buffer_but(pl->js, buf, len, rows ? ARGUS_REC_ROWS : -1, 0,
                                              errbuf, errlen);
    if (rc == 0 && rows && (rc = argus_jobstore_add_rows(pl->js, rows, nrows)) != 0)
        snprintf(errbuf, errlen, "%s", rc == -EINVAL ? "a row of a rank outside the job"
                                                     : "out of memory storing its rows");
    return rc;
}

void argus_pipeline_ingest(struct argus_pipeline *pl, const uint8_t *buf, size_t len,
                           const struct argus_agg_row *rows, size_t nrows)
{
    char err[512];

    pl->bytes_in += len; /* rank 0's own records included: what the job store takes in */
    pl->windows++;
    argus_pipeline_spool(pl, buf, len);
    if (argus_pipeline_store(pl, buf, len, rows, nrows, err, sizeof err) != 0)
        argus_log_once(ARGUS_LOG_WARN, "ingest", "window %llu from the tree: %s",
                       (unsigned long long)pl->windows, err);
}

void argus_pipeline_mark_missing(struct argus_pipeline *pl, uint32_t rank, uint64_t from_step,
                                 uint64_t window)
{
    if (argus_jobstore_missing_since(pl->js, rank) != UINT64_MAX)
        return;
    argus_jobstore_mark_missing(pl->js, rank, from_step);
    if (argus_grow(&pl->miss, &pl->capmiss, pl->nmiss + 1, sizeof *pl->miss, 16) != 0)
        return; /* marked in the store all the same; reduce.json misses it */
    pl->miss[pl->nmiss++] = (struct argus_pipeline_miss){rank, from_step, window,
                                                         argus_clock_realtime_ns()};
}

/* ---- filling the store directly -------------------------------------------------------- */

int argus_pipeline_add_summary(struct argus_pipeline *pl, const struct argus_step_summary *s)
{
    return argus_jobstore_add_summary(pl->js, s);
}

int argus_pipeline_add_name(struct argus_pipeline *pl, uint64_t hash, const char *name)
{
    return argus_jobstore_add_name(pl->js, hash, name);
}

int argus_pipeline_set_rankinfo(struct argus_pipeline *pl, const struct argus_rank_info *ri)
{
    return argus_jobstore_set_rankinfo(pl->js, ri);
}

void argus_pipeline_seal(struct argus_pipeline *pl)
{
    struct argus_job_meta *m = argus_jobstore_meta(pl->js);
    uint64_t lo = UINT64_MAX, hi = 0, first, last;

    for (uint32_t k = 0; k < argus_jobstore_nranks(pl->js); k++) {
        const struct argus_step_summary *const *v;
        size_t n = argus_jobstore_rank_steps(pl->js, k, &v);
        if (n == 0) {
            argus_jobstore_mark_missing(pl->js, k, 0);
            continue;
        }
        lo = v[0]->start_ns < lo ? v[0]->start_ns : lo;
        hi = v[n - 1]->end_ns > hi ? v[n - 1]->end_ns : hi;
    }
    m->started_ns = lo == UINT64_MAX ? 0 : lo;
    m->ended_ns = hi;
    pl->sealed = 1;
    if (argus_jobstore_step_range(pl->js, &first, &last) == 0 &&
        last - first + 1 < pl->opts.min_steps)
        pl->opts.min_steps = (uint32_t)(last - first + 1); /* persistence cannot exceed data */
}

void argus_pipeline_set_inputs(struct argus_pipeline *pl, const struct argus_report_inputs *in)
{
    pl->rep.inputs = in;
}

/* ---- one report -------------------------------------------------------------------------- */

/* 1 when rank holds every step from `from` to the job's last (no hole, none evicted): it
 * was late, not missing. */
static int delivered_since(const struct argus_pipeline *pl, uint32_t rank, uint64_t from,
                           uint64_t last)
{
    const struct argus_step_summary *const *v;
    const size_t n = argus_jobstore_rank_steps(pl->js, rank, &v);

    if (n == 0 || v[n - 1]->step != last || v[0]->step > from)
        return 0;
    size_t held = 0;
    for (size_t i = n; i-- > 0 && v[i]->step >= from;)
        held++;
    return held == last - from + 1;
}

/* Take back the marks of ranks that delivered every real step after all (see
 * pipeline.h): final, also a mark past the last step (only the empty flush at
 * MPI_Finalize missed its deadline). */
static void settle_late(struct argus_pipeline *pl, int final)
{
    uint64_t first, last;
    size_t k = 0;

    if (pl->nmiss == 0 || argus_jobstore_step_range(pl->js, &first, &last) != 0)
        return;
    if (argus_grow(&pl->late, &pl->caplate, pl->nlate + pl->nmiss, sizeof *pl->late, 16) != 0)
        return;
    for (size_t i = 0; i < pl->nmiss; i++) {
        const struct argus_pipeline_miss *x = &pl->miss[i];
        const struct argus_step_summary *const *v;
        size_t n = argus_jobstore_rank_steps(pl->js, x->rank, &v);
        if ((final && x->from_step > last && n && v[n - 1]->step == last) ||
            (x->from_step <= last && delivered_since(pl, x->rank, x->from_step, last))) {
            argus_jobstore_clear_missing(pl->js, x->rank);
            pl->late[pl->nlate++] = x->rank;
            continue;
        }
        pl->miss[k++] = *x;
    }
    pl->nmiss = k;
}

/* The forecast's assumption of where its planned steps came from: the caller's (its
 * total_from), else the ranks' rank info (the program's argus_set_total_steps, else
 * ARGUS_TOTAL_STEPS; inband of rank prank). */
static void plan_note(struct argus_pipeline *pl, uint64_t inband, uint32_t prank)
{
    struct argus_forecast *fc = pl->fc;
    if (fc->per_1000 || fc->n_assume >= ARGUS_FC_MAX_NOTES)
        return;
    char *n = fc->assume[fc->n_assume++];
    const unsigned long long steps = (unsigned long long)fc->steps_total;
    if (pl->total_steps)
        snprintf(n, ARGUS_FC_NOTE_LEN, "the planned %llu steps from %s", steps,
                 pl->total_from[0] ? pl->total_from : "the caller");
    else if (inband && argus_jobstore_plan_from(pl->js) == ARGUS_PLAN_PROGRAM)
        snprintf(n, ARGUS_FC_NOTE_LEN, "the planned %llu steps from argus_set_total_steps "
                 "on rank %u", steps, prank);
    else if (inband)
        snprintf(n, ARGUS_FC_NOTE_LEN, "the planned %llu steps from ARGUS_TOTAL_STEPS as "
                 "rank %u read it", steps, prank);
    else
        fc->n_assume--;
}

int argus_pipeline_analyze(struct argus_pipeline *pl, int final)
{
    struct argus_job_meta *m = argus_jobstore_meta(pl->js);
    struct argus_result *res = &pl->rep.res;

    if (!pl->sealed)
        m->ended_ns = argus_clock_realtime_ns();
    pl->final = final;
    settle_late(pl, final);
    if (final) {
        int all = !(pl->rep.inputs && (pl->rep.inputs->n_skipped || pl->rep.inputs->n_lost));
        for (uint32_t r = 0; r < argus_jobstore_nranks(pl->js); r++)
            if (argus_jobstore_missing_since(pl->js, r) != UINT64_MAX)
                all = 0;
        m->complete = all;
    }
    argus_result_free(res);
    memset(res, 0, sizeof *res);
    pl->have_result = 0;
    int rc = argus_analyze(pl->js, &pl->opts, res);
    if (rc != 0) {
        argus_result_free(res);
        memset(res, 0, sizeof *res);
        return rc;
    }
    pl->have_result = 1;
    if (argus_jobstore_horizon(pl->js) != SIZE_MAX) { /* only a bounded store evicts */
        const struct argus_jobstore_gone *gone;
        size_t ngone = argus_jobstore_evicted(pl->js, &gone);
        if (argus_carry_apply(&pl->carry, res, ngone ? gone[ngone - 1].last + 1 : 0) < 0)
            argus_log_once(ARGUS_LOG_WARN, "carry", "out of memory; the report may miss "
                           "anomalies of steps rank 0 no longer holds");
    }
    /* the forecast of every report (docs/ALGORITHMS.md, "Forecast (PRISM)"): live with
     * fewer draws and the last 2,048 steps, so that it costs little per window */
    pl->rep.forecast = NULL;
    if (!pl->fc)
        pl->fc = malloc(sizeof *pl->fc);
    if (pl->fc) {
        /* the plan: the caller's (argus-analyze: ARGUS_TOTAL_STEPS; rank 0: the ranks'
         * argus_set_total_steps, reduce/rank0.c), else the one the ranks' rank info
         * recorded (the latest, in-band: a spool read offline) */
        uint32_t prank, orank;
        uint64_t other;
        const uint64_t inband = argus_jobstore_planned_steps(pl->js, &prank, &other, &orank);
        if (inband && other && (!pl->total_steps || pl->total_steps == inband))
            argus_log_once(ARGUS_LOG_WARN, "total-steps", "ranks disagree on the planned "
                           "steps (rank %u: %llu, rank %u: %llu); the forecast uses the "
                           "latest, rank %u's", orank, (unsigned long long)other, prank,
                           (unsigned long long)inband, prank);
        const struct argus_forecast_opts fo = {.total_steps = pl->total_steps
                                                                  ? pl->total_steps
                                                                  : inband,
                                               .seed = 1,
                                               .n_sims = pl->sealed ? 1000 : 200,
                                               .max_series = pl->sealed ? 0 : 2048};
        if (argus_forecast_run(pl->js, res, &fo, pl->fc) == 0 && pl->fc->valid) {
            pl->rep.forecast = pl->fc;
            plan_note(pl, inband, prank);
        }
    } else {
        argus_log_once(ARGUS_LOG_WARN, "forecast", "out of memory; the report has no forecast");
    }
    uint64_t first, last; /* every held step judged: the pin moves past them (not past
                           * the incomplete newest ones, analysis.h judge_next) */
    if (pl->pin_steps && argus_jobstore_step_range(pl->js, &first, &last) == 0)
        argus_jobstore_pin(pl->js, res->judge_next < last + 1 ? res->judge_next : last + 1,
                           pl->pin_steps);
    argus_traceplan_update(&pl->traces, pl->js, res, pl->l4_on && !final);
    return 0;
}

void argus_pipeline_write_log(struct argus_pipeline *pl)
{
    char err[512];

    if (!pl->have_result)
        return;
    if (argus_anomaly_log_append(&pl->alog, &pl->out, pl->js, &pl->rep.res, err,
                                 sizeof err) != 0) {
        say_once(pl, "alog", "%s", err);
        snprintf(pl->alog_err, sizeof pl->alog_err, "%s", err[0] ? err : "out of memory");
    } else {
        pl->alog_err[0] = '\0'; /* every anomaly not logged yet (retried) is in now */
    }
}

int argus_pipeline_write(struct argus_pipeline *pl, char *errbuf, size_t errlen)
{
    if (!pl->have_result) {
        snprintf(errbuf, errlen, "no analysis to write");
        return -ENOENT;
    }
    argus_pipeline_write_log(pl);
    if (!pl->report_ok && !pl->final)
        return 0; /* the final report tries once more */
    int rc = argus_report_write_at(&pl->out, pl->js, &pl->rep, &pl->written, errbuf, errlen);
    if (rc) {
        pl->report_ok = 0;
        snprintf(pl->report_err, sizeof pl->report_err, "%s",
                 errbuf && errlen && errbuf[0] ? errbuf : strerror(-rc));
    } else {
        pl->report_err[0] = '\0';
        pl->full_writes++;
    }
    return rc;
}

void argus_pipeline_print_summary(const struct argus_pipeline *pl, FILE *out)
{
    if (!pl->have_result)
        return;
    const int failed = pl->report_err[0] != '\0';
    const struct argus_report_outcome oc = {
        .written = pl->written,
        .err = failed ? pl->report_err : NULL,
        .earlier = failed && pl->full_writes > 0,
        .alog_err = pl->alog_err[0] ? pl->alog_err : NULL,
        .dirfd = pl->have_out ? pl->out.fd : -1,
    };
    argus_report_print_summary(out, pl->dir, pl->js, &pl->rep.res, &oc);
}

const char *argus_pipeline_kind_name(int kind)
{
    return argus_anomaly_kind_name((enum argus_anomaly_kind)kind);
}
