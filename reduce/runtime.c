/* runtime.c — Argus inside one rank: configuration, the private communicator, the tracer's
 * sinks, window exchanges and (on rank 0) the diagnosis. All state is this file's own.
 * Must never abort, exit or change the application's MPI results. */
#include "reduce/runtime.h"

#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "reduce/rank0.h"
#include "reduce/window.h"
#include "tracer/tracer.h"

static struct {
    int active;
    struct argus_config cfg;
    MPI_Comm comm;
    int rank, size;
    struct argus_window win;
    uint32_t steps_in_window;
    uint64_t windows_done;
    int sent_rankinfo;
    int exchange_failed;
    struct argus_rank0 r0;     /* rank 0 only */
} rt = {.comm = MPI_COMM_NULL};

static void rankinfo_fill(struct argus_rank_info *ri)
{
    memset(ri, 0, sizeof *ri);
    ri->rank = (uint32_t)rt.rank;
    ri->world_size = (uint32_t)rt.size;
    ri->pid = (uint32_t)getpid();
    ri->device = -1;
    argus_tracer_coords(&ri->coords);
    ri->started_ns = argus_clock_realtime_ns();
    if (gethostname(ri->host, sizeof ri->host - 1) != 0)
        snprintf(ri->host, sizeof ri->host, "unknown");
    ri->host[sizeof ri->host - 1] = '\0';
}

/* One window's exchange: every rank calls it the same number of times. */
static void window_flush(void)
{
    uint8_t *all = NULL;
    size_t len = 0;
    int rc = argus_window_exchange(&rt.win, rt.comm, (int)rt.cfg.fanin, &all, &len);

    if (rc && !rt.exchange_failed) {
        rt.exchange_failed = 1;
        argus_log(ARGUS_LOG_WARN, "rank %d: window exchange failed (%s); its summaries are lost",
                  rt.rank, strerror(-rc));
    }
    if (rt.rank == 0 && all) {
        argus_rank0_ingest(&rt.r0, all, len);
        argus_rank0_report(&rt.r0, 0);
    }
    free(all);
    rt.steps_in_window = 0;
    rt.windows_done++;
}

static void on_name(void *ctx, uint64_t hash, const char *name)
{
    (void)ctx;
    if (argus_window_add_name(&rt.win, hash, name) != 0)
        argus_log_once(ARGUS_LOG_WARN, "name-oom", "rank %d: out of memory for kernel names",
                       rt.rank);
}

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    if (!rt.sent_rankinfo) {
        struct argus_rank_info ri;
        rankinfo_fill(&ri);
        if (argus_window_add_rankinfo(&rt.win, &ri) == 0)
            rt.sent_rankinfo = 1;
    }
    if (argus_window_add_summary(&rt.win, s) != 0)
        argus_log_once(ARGUS_LOG_WARN, "sum-oom", "rank %d: a step summary could not be kept",
                       rt.rank);
    if (++rt.steps_in_window >= (uint32_t)rt.cfg.window)
        window_flush();
}

/* 1 when every rank says ok (logical AND over the private communicator). */
static int all_ok(int ok)
{
    int all = 0;

    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, rt.comm) != MPI_SUCCESS)
        return 0;
    return all;
}

static void runtime_off(void)
{
    argus_tracer_stop();
    if (rt.rank == 0 && rt.r0.js)
        argus_rank0_close(&rt.r0);
    argus_window_free(&rt.win);
    if (rt.comm != MPI_COMM_NULL)
        MPI_Comm_free(&rt.comm);
    rt.comm = MPI_COMM_NULL;
    rt.active = 0;
}

void argus_runtime_init(void)
{
    char err[512];
    int ok = 1;

    if (rt.active)
        return;
    argus_config_defaults(&rt.cfg);
    int cfg_rc = argus_config_load(&rt.cfg, getenv, err, sizeof err);
    if (rt.cfg.mode == ARGUS_MODE_OFF)
        return;
    argus_log_set_level((enum argus_log_level)rt.cfg.log);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &rt.comm) != MPI_SUCCESS) {
        argus_log_once(ARGUS_LOG_WARN, "dup", "cannot duplicate MPI_COMM_WORLD; Argus is off");
        rt.comm = MPI_COMM_NULL;
        return;
    }
    MPI_Comm_rank(rt.comm, &rt.rank);
    MPI_Comm_size(rt.comm, &rt.size);
    if (cfg_rc && rt.rank == 0)
        argus_log(ARGUS_LOG_WARN, "%s; using the default", err);

    size_t reserve = (size_t)rt.cfg.window * argus_summary_encoded_max(64);
    if (argus_window_init(&rt.win, reserve) != 0)
        ok = 0;

    /* Rank 0 prepares the output; everyone learns whether that worked. */
    if (rt.rank == 0 && ok) {
        char jobid[256];
        const char *step = getenv("SLURM_STEP_ID");
        argus_config_jobid(&rt.cfg, getenv, jobid, sizeof jobid);
        if (argus_rank0_open(&rt.r0, &rt.cfg, (uint32_t)rt.size, jobid, step ? step : "0", err,
                             sizeof err) != 0) {
            argus_log(ARGUS_LOG_ERROR, "%s; Argus is off for this job, training goes on", err);
            ok = 0;
        }
    }
    if (ok) {
        struct argus_tracer_opts to = {
            .rank = (uint32_t)rt.rank,
            .max_events = (size_t)rt.cfg.max_events,
            .on_summary = on_summary,
            .on_name = on_name,
        };
        int trc = argus_tracer_start(&to);
        if (trc != 0) {
            argus_log(ARGUS_LOG_WARN, "rank %d: tracer could not start (%s)", rt.rank,
                      strerror(-trc));
            ok = 0;
        }
    }
    rt.active = 1;
    if (!all_ok(ok)) {
        if (rt.rank == 0 && ok)
            argus_log(ARGUS_LOG_WARN, "another rank could not start Argus; Argus is off");
        runtime_off();
        return;
    }
    if (rt.rank == 0)
        argus_log(ARGUS_LOG_INFO, "on for %d ranks; window %ld steps, fan-in %ld; output in %s",
                  rt.size, rt.cfg.window, rt.cfg.fanin, rt.r0.dir);
}

void argus_runtime_finalize(void)
{
    if (!rt.active)
        return;
    argus_tracer_stop();
    /* Ranks may have done different numbers of windows; align, then flush the rest. */
    unsigned long long mine = rt.windows_done, most = mine;
    MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, rt.comm);
    while (rt.windows_done < most)
        window_flush();
    window_flush();
    if (rt.rank == 0) {
        argus_rank0_report(&rt.r0, 1);
        argus_rank0_close(&rt.r0);
    }
    runtime_off();
}
