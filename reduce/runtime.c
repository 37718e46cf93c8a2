/* runtime.c — Argus inside one rank: configuration, the private communicator, the
 * node-aware reduction tree, the tracer's sinks (which hand summaries to the Argus thread,
 * agent.c) and (on rank 0) the output. MPI calls on the private communicator happen here
 * only before the Argus thread starts and after it has stopped.
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
#include "reduce/agent.h"
#include "reduce/rank0.h"
#include "reduce/testknob.h"
#include "reduce/tracereq.h"
#include "reduce/tree.h"
#include "tracer/commgroups.h"
#include "tracer/gpubus.h"
#include "tracer/placement.h"
#include "tracer/ring.h"
#include "tracer/tracer.h"

static struct {
    int active;
    struct argus_config cfg;
    MPI_Comm comm;
    int rank, size;
    int threaded;              /* MPI_THREAD_MULTIPLE: the Argus thread runs */
    int agent_on;
    int sent_rankinfo;
    uint64_t sent_groups_gen;  /* argus_commgroups_generation() of the last rank info */
    uint64_t info_started_ns;  /* started_ns of the first rank info (kept when re-sent) */
    uint64_t sent_planned;     /* argus_tracer_total_steps() in the last rank info */
    uint64_t planned_at_ns;    /* when it was seen to change (0: never given) */
    int *parent;               /* the reduction tree, parent[size] */
    struct argus_rank0 r0;     /* rank 0 only */
    struct argus_ring *ring;   /* the argus.h path's L4 ring (the GPU has its own) */
    int r0_left;               /* r0 is left to an abandoned Argus thread (it closes it) */
    struct argus_placer *placer; /* this machine's topology, for the rank info's placement */
} runtime = {.comm = MPI_COMM_NULL};

static void rankinfo_fill(struct argus_rank_info *ri)
{
    memset(ri, 0, sizeof *ri);
    ri->rank = (uint32_t)runtime.rank;
    ri->world_size = (uint32_t)runtime.size;
    ri->pid = (uint32_t)getpid();
    ri->device = -1;
    argus_tracer_coords(&ri->coords);
    if (!runtime.info_started_ns)
        runtime.info_started_ns = argus_clock_realtime_ns();
    ri->started_ns = runtime.info_started_ns;
    ri->planned_steps = runtime.sent_planned;
    ri->planned_at_ns = runtime.planned_at_ns;
    /* ARGUS_TOTAL_STEPS travels too, apart, so that the spool keeps it and the program's
     * value still wins wherever the records meet (store/jobstore.h) */
    ri->env_planned_steps = runtime.cfg.total_steps > 0 ? (uint64_t)runtime.cfg.total_steps : 0;
    if (gethostname(ri->host, sizeof ri->host - 1) != 0)
        snprintf(ri->host, sizeof ri->host, "unknown");
    ri->host[sizeof ri->host - 1] = '\0';
    ri->n_groups = argus_commgroups_get(ri->groups, ARGUS_MAX_COMM_GROUPS,
                                        &ri->groups_dropped);
    if (runtime.placer) { /* the GPU as CUDA names it now, the binding now */
        char bus[32], err[256];
        int have_bus = argus_gpubus_current(bus, sizeof bus) == 0;
        if (argus_placer_fill(runtime.placer, have_bus ? bus : NULL, NULL, &ri->place, err,
                              sizeof err) != 0)
            argus_log_once(ARGUS_LOG_INFO, "placement-fill", "rank %d: %s", runtime.rank, err);
    }
}

static void on_name(void *ctx, uint64_t hash, const char *name)
{
    (void)ctx;
    argus_agent_push_name(hash, name);
}

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    /* once, and again whenever the program made a communicator or gave its planned steps
     * (argus_set_total_steps, on any rank) since: rank 0 keeps the latest record of each
     * rank, so memberships made at any time reach the analysis, and the plan its forecast */
    const uint64_t gen = argus_commgroups_generation();
    const uint64_t plan = argus_tracer_total_steps();
    if (!runtime.sent_rankinfo || gen != runtime.sent_groups_gen ||
        plan != runtime.sent_planned) {
        struct argus_rank_info ri;
        if (plan != runtime.sent_planned) {
            runtime.sent_planned = plan;
            runtime.planned_at_ns = argus_clock_realtime_ns();
        }
        rankinfo_fill(&ri);
        argus_agent_push_rankinfo(&ri);
        runtime.sent_rankinfo = 1;
        runtime.sent_groups_gen = gen;
    }
    argus_agent_push_summary(s);
}

/* 1 when every rank says ok (logical AND over the private communicator). */
static int all_ok(int ok)
{
    int all = 0;

    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, runtime.comm) != MPI_SUCCESS)
        return 0;
    return all;
}

static void runtime_off(void)
{
    argus_tracer_stop();
    argus_placer_free(runtime.placer); /* no summary, so no rank info, is delivered now */
    runtime.placer = NULL;
    if (runtime.rank == 0 && !runtime.r0_left && runtime.r0.pl.js)
        argus_rank0_close(&runtime.r0);
    free(runtime.parent);
    runtime.parent = NULL;
    if (runtime.comm != MPI_COMM_NULL)
        MPI_Comm_free(&runtime.comm);
    runtime.comm = MPI_COMM_NULL;
    runtime.active = 0;
}

/* The node-aware tree: node = lowest rank sharing memory with us (MPI_Comm_split_type);
 * everyone learns everyone's node (one Allgather at start, 4 bytes per rank). */
static int tree_setup(void)
{
    MPI_Comm local = MPI_COMM_NULL;
    int leader = runtime.rank;
    int *node_of = malloc((size_t)runtime.size * sizeof *node_of);

    runtime.parent = malloc((size_t)runtime.size * sizeof *runtime.parent);
    if (!node_of || !runtime.parent) {
        free(node_of);
        return -ENOMEM;
    }
    /* PMPI_: Argus's own communicator is no membership of the program (pmpi.c) */
    if (PMPI_Comm_split_type(runtime.comm, MPI_COMM_TYPE_SHARED, runtime.rank, MPI_INFO_NULL,
                             &local)
        == MPI_SUCCESS) {
        MPI_Allreduce(&runtime.rank, &leader, 1, MPI_INT, MPI_MIN, local);
        MPI_Comm_free(&local);
    }
    int rc =
        MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, runtime.comm) == MPI_SUCCESS
            ? argus_tree_build_topo(runtime.size, node_of, (int)runtime.cfg.fanin, runtime.parent)
            : -EIO;
    free(node_of);
    return rc;
}

/* Prepare the agent (no thread yet, no MPI). */
static int agent_setup(void)
{
    int rc;
    int nk = argus_tree_children_of(runtime.parent, runtime.size, runtime.rank, NULL, 0);
    int *kids = malloc((size_t)(nk + 1) * sizeof *kids);
    if (!kids)
        return -ENOMEM;
    argus_tree_children_of(runtime.parent, runtime.size, runtime.rank, kids, nk);
    struct argus_agent_opts ao = {
        .comm = runtime.comm,
        .rank = runtime.rank,
        .size = runtime.size,
        .parent = runtime.parent[runtime.rank],
        .children = kids,
        .nchildren = nk,
        .height = argus_tree_height_of(runtime.parent, runtime.size, runtime.rank),
        .window = runtime.cfg.window,
        .deadline_ms = runtime.cfg.deadline_ms,
        .silence_ms = runtime.cfg.silence_ms,
        .finalize_ms = runtime.cfg.finalize_ms,
        .threaded = runtime.threaded,
        .clock_sync_ms = runtime.cfg.clock_sync_ms,
        .condense = runtime.size > runtime.cfg.condense,
        .r0 = runtime.rank == 0 ? &runtime.r0 : NULL,
    };
    if (runtime.rank == 0) {
        runtime.r0.tree_parent = runtime.parent;
        runtime.r0.tree_size = runtime.size;
        runtime.r0.tree_depth = argus_tree_depth_of(runtime.parent, runtime.size);
        runtime.r0.fanin = (int)runtime.cfg.fanin;
        runtime.r0.threaded = runtime.threaded;
        runtime.r0.window_steps = runtime.cfg.window;
        runtime.r0.condense_on = ao.condense;
    }
    rc = argus_agent_start(&ao);
    free(kids);
    return rc;
}

void argus_runtime_init(int thread_level)
{
    char err[512];
    int ok = 1;

    if (runtime.active)
        return;
    argus_config_defaults(&runtime.cfg);
    int cfg_rc = argus_config_load(&runtime.cfg, getenv, err, sizeof err);
    if (runtime.cfg.mode == ARGUS_MODE_OFF)
        return;
    argus_log_set_level((enum argus_log_level)runtime.cfg.log);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &runtime.comm) != MPI_SUCCESS) {
        argus_log_once(ARGUS_LOG_WARN, "dup", "cannot duplicate MPI_COMM_WORLD; Argus is off");
        runtime.comm = MPI_COMM_NULL;
        return;
    }
    MPI_Comm_rank(runtime.comm, &runtime.rank);
    MPI_Comm_size(runtime.comm, &runtime.size);
    if (cfg_rc && runtime.rank == 0)
        argus_log(ARGUS_LOG_WARN, "%s; using the default", err);

    runtime.threaded = thread_level >= MPI_THREAD_MULTIPLE;
    if (argus_testknob(ARGUS_KNOB_NO_THREAD) != 0) /* test builds: as if MULTIPLE was refused */
        runtime.threaded = 0;
    /* Rank 0 prepares the output; everyone learns whether that worked. */
    if (runtime.rank == 0 && ok) {
        char jobid[256];
        const char *step = getenv("SLURM_STEP_ID");
        argus_config_jobid(&runtime.cfg, getenv, jobid, sizeof jobid);
        if (argus_rank0_open(&runtime.r0, &runtime.cfg, (uint32_t)runtime.size, jobid,
                             step ? step : "0", err, sizeof err)
            != 0) {
            argus_log(ARGUS_LOG_ERROR, "%s; Argus is off for this job, training goes on", err);
            ok = 0;
        } else {
            runtime.r0.planned_steps = argus_tracer_total_steps; /* the forecast's plan */
        }
    }
    /* collective: every rank, whatever ok says */
    int trc0 = tree_setup();
    if (trc0 && ok) {
        argus_log(ARGUS_LOG_WARN, "rank %d: cannot build the reduction tree (%s)", runtime.rank,
                  strerror(-trc0));
        ok = 0;
    }
    if (ok) {
        int arc = agent_setup();
        if (arc) {
            argus_log(ARGUS_LOG_WARN, "rank %d: the reduction could not start (%s)", runtime.rank,
                      strerror(-arc));
            ok = 0;
        } else {
            runtime.agent_on = 1;
        }
    }
    if (ok && runtime.threaded && runtime.cfg.traces > 0 && runtime.cfg.ring_events > 0) {
        /* L4 (no MPI yet): a ring for the argus.h path and the trace service */
        struct argus_tracereq_opts qo = {
            .comm = runtime.comm,
            .rank = runtime.rank,
            .max_events = (size_t)runtime.cfg.trace_events,
            .timeout_ms = runtime.cfg.deadline_ms * 2 > 5000 ? runtime.cfg.deadline_ms * 2 : 5000,
            .plans = runtime.rank == 0 ? &runtime.r0.pl.traces : NULL,
            .dir = runtime.r0.pl.dir,
            .t0_ns = runtime.rank == 0 ? argus_jobstore_meta(runtime.r0.pl.js)->started_ns : 0};
        if (argus_ring_create((size_t)runtime.cfg.ring_events, (unsigned)runtime.cfg.ring_steps,
                              &runtime.ring) != 0 ||
            (qo.api_ring = runtime.ring, argus_tracereq_init(&qo)) != 0) {
            argus_log_once(ARGUS_LOG_WARN, "l4-init", "rank %d: no memory for the L4 ring; "
                           "no raw traces from this rank", runtime.rank);
            argus_ring_free(runtime.ring);
            runtime.ring = NULL;
        }
    }
    if (ok) { /* once, before the tracer can deliver a summary (rankinfo_fill reads it):
               * loading the topology reads sysfs (docs/ARCHITECTURE.md, "Placement");
               * rank 0 warns, the other ranks say it at info level */
        if (argus_placer_create(NULL, &runtime.placer, err, sizeof err) != 0)
            argus_log_once(runtime.rank == 0 ? ARGUS_LOG_WARN : ARGUS_LOG_INFO, "placement",
                           "rank %d: %s; no placement from this rank", runtime.rank, err);
    }
    if (ok) {
        struct argus_tracer_opts to = {
            .rank = (uint32_t)runtime.rank,
            .max_events = (size_t)runtime.cfg.max_events,
            .coverage = runtime.cfg.coverage,
            .on_summary = on_summary,
            .on_name = on_name,
            .ring = runtime.ring,
        };
        int trc = argus_tracer_start(&to);
        if (trc != 0) {
            argus_log(ARGUS_LOG_WARN, "rank %d: tracer could not start (%s)", runtime.rank,
                      strerror(-trc));
            ok = 0;
        }
    }
    runtime.active = 1;
    if (!all_ok(ok)) {
        if (runtime.rank == 0 && ok)
            argus_log(ARGUS_LOG_WARN, "another rank could not start Argus; Argus is off");
        /* the Argus thread has not started: nobody else uses the communicator */
        argus_tracer_stop();
        if (runtime.agent_on)
            argus_agent_abandon();
        runtime.agent_on = 0;
        argus_tracereq_free();
        argus_ring_free(runtime.ring);
        runtime.ring = NULL;
        runtime_off();
        return;
    }
    if (argus_agent_go() != 0)
        runtime.threaded = 0;
    /* rank 0 plans L4 traces only when the Argus thread can collect them */
    runtime.r0.pl.l4_on = runtime.rank == 0 && runtime.threaded && runtime.ring != NULL;
    if (runtime.rank == 0 && !runtime.threaded)
        argus_log(ARGUS_LOG_WARN, "MPI_THREAD_MULTIPLE refused (level %d); summaries are "
                  "kept in memory and exchanged at MPI_Finalize", thread_level);
    if (runtime.rank == 0)
        argus_log(ARGUS_LOG_INFO, "on for %d ranks; window %ld steps, fan-in %ld; output in %s",
                  runtime.size, runtime.cfg.window, runtime.cfg.fanin, runtime.r0.pl.dir);
}

void argus_runtime_finalize(void)
{
    if (!runtime.active)
        return;
    argus_tracer_stop(); /* delivers the last summaries to the sinks */
    if (runtime.agent_on && argus_agent_finish() != 0) {
        /* the Argus thread is stuck inside MPI, or rank 0's is still writing its report:
         * leave it its communicator, tree and ring, and rank 0's state, which it closes
         * itself (clearing r0.js here raced with that report: a crash at exit) */
        runtime.comm = MPI_COMM_NULL;
        runtime.parent = NULL;
        runtime.ring = NULL; /* the thread may still dump it: leave it */
        runtime.r0_left = 1;
    }
    runtime.agent_on = 0;
    argus_ring_free(runtime.ring);
    runtime.ring = NULL;
    runtime_off();
}
