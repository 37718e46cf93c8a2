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
#include "reduce/tracereq.h"
#include "reduce/tree.h"
#include "tracer/commgroups.h"
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
    int *parent;               /* the reduction tree, parent[size] */
    struct argus_rank0 r0;     /* rank 0 only */
    struct argus_ring *ring;   /* the argus.h path's L4 ring (the GPU has its own) */
    int r0_left;               /* r0 is left to an abandoned Argus thread (it closes it) */
} rt = {.comm = MPI_COMM_NULL};

static void rankinfo_fill(struct argus_rank_info *ri)
{
    memset(ri, 0, sizeof *ri);
    ri->rank = (uint32_t)rt.rank;
    ri->world_size = (uint32_t)rt.size;
    ri->pid = (uint32_t)getpid();
    ri->device = -1;
    argus_tracer_coords(&ri->coords);
    if (!rt.info_started_ns)
        rt.info_started_ns = argus_clock_realtime_ns();
    ri->started_ns = rt.info_started_ns;
    if (gethostname(ri->host, sizeof ri->host - 1) != 0)
        snprintf(ri->host, sizeof ri->host, "unknown");
    ri->host[sizeof ri->host - 1] = '\0';
    ri->n_groups = argus_commgroups_get(ri->groups, ARGUS_MAX_COMM_GROUPS,
                                        &ri->groups_dropped);
}

static void on_name(void *ctx, uint64_t hash, const char *name)
{
    (void)ctx;
    argus_agent_push_name(hash, name);
}

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    /* once, and again whenever the program made a communicator since: rank 0 keeps the
     * latest record of each rank, so memberships made at any time reach the analysis */
    const uint64_t gen = argus_commgroups_generation();
    if (!rt.sent_rankinfo || gen != rt.sent_groups_gen) {
        struct argus_rank_info ri;
        rankinfo_fill(&ri);
        argus_agent_push_rankinfo(&ri);
        rt.sent_rankinfo = 1;
        rt.sent_groups_gen = gen;
    }
    argus_agent_push_summary(s);
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
    if (rt.rank == 0 && !rt.r0_left && rt.r0.js)
        argus_rank0_close(&rt.r0);
    free(rt.parent);
    rt.parent = NULL;
    if (rt.comm != MPI_COMM_NULL)
        MPI_Comm_free(&rt.comm);
    rt.comm = MPI_COMM_NULL;
    rt.active = 0;
}

/* The node-aware tree: node = lowest rank sharing memory with us (MPI_Comm_split_type);
 * everyone learns everyone's node (one Allgather at start, 4 bytes per rank). */
static int tree_setup(void)
{
    MPI_Comm local = MPI_COMM_NULL;
    int leader = rt.rank;
    int *node_of = malloc((size_t)rt.size * sizeof *node_of);

    rt.parent = malloc((size_t)rt.size * sizeof *rt.parent);
    if (!node_of || !rt.parent) {
        free(node_of);
        return -ENOMEM;
    }
    /* PMPI_: Argus's own communicator is no membership of the program (pmpi.c) */
    if (PMPI_Comm_split_type(rt.comm, MPI_COMM_TYPE_SHARED, rt.rank, MPI_INFO_NULL, &local) ==
        MPI_SUCCESS) {
        MPI_Allreduce(&rt.rank, &leader, 1, MPI_INT, MPI_MIN, local);
        MPI_Comm_free(&local);
    }
    int rc = MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, rt.comm) == MPI_SUCCESS
                 ? argus_tree_build_topo(rt.size, node_of, (int)rt.cfg.fanin, rt.parent)
                 : -EIO;
    free(node_of);
    return rc;
}

/* Prepare the agent (no thread yet, no MPI). */
static int agent_setup(void)
{
    int rc;
    int nk = argus_tree_children_of(rt.parent, rt.size, rt.rank, NULL, 0);
    int *kids = malloc((size_t)(nk + 1) * sizeof *kids);
    if (!kids)
        return -ENOMEM;
    argus_tree_children_of(rt.parent, rt.size, rt.rank, kids, nk);
    struct argus_agent_opts ao = {
        .comm = rt.comm, .rank = rt.rank, .size = rt.size, .parent = rt.parent[rt.rank],
        .children = kids, .nchildren = nk,
        .height = argus_tree_height_of(rt.parent, rt.size, rt.rank),
        .window = rt.cfg.window, .deadline_ms = rt.cfg.deadline_ms,
        .finalize_ms = rt.cfg.finalize_ms, .threaded = rt.threaded,
        .clock_sync_ms = rt.cfg.clock_sync_ms,
        .condense = rt.size > rt.cfg.condense,
        .r0 = rt.rank == 0 ? &rt.r0 : NULL,
    };
    if (rt.rank == 0) {
        rt.r0.tree_parent = rt.parent;
        rt.r0.tree_size = rt.size;
        rt.r0.tree_depth = argus_tree_depth_of(rt.parent, rt.size);
        rt.r0.fanin = (int)rt.cfg.fanin;
        rt.r0.threaded = rt.threaded;
        rt.r0.window_steps = rt.cfg.window;
        rt.r0.condense_on = ao.condense;
    }
    rc = argus_agent_start(&ao);
    free(kids);
    return rc;
}

void argus_runtime_init(int thread_level)
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

    rt.threaded = thread_level >= MPI_THREAD_MULTIPLE;
    if (getenv("ARGUS_TEST_NO_THREAD")) /* test knob: behave as if MULTIPLE was refused */
        rt.threaded = 0;
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
    /* collective: every rank, whatever ok says */
    int trc0 = tree_setup();
    if (trc0 && ok) {
        argus_log(ARGUS_LOG_WARN, "rank %d: cannot build the reduction tree (%s)", rt.rank,
                  strerror(-trc0));
        ok = 0;
    }
    if (ok) {
        int arc = agent_setup();
        if (arc) {
            argus_log(ARGUS_LOG_WARN, "rank %d: the reduction could not start (%s)", rt.rank,
                      strerror(-arc));
            ok = 0;
        } else {
            rt.agent_on = 1;
        }
    }
    if (ok && rt.threaded && rt.cfg.traces > 0 && rt.cfg.ring_events > 0) {
        /* L4 (no MPI yet): a ring for the argus.h path and the trace service */
        struct argus_tracereq_opts qo = {
            .comm = rt.comm, .rank = rt.rank, .max_events = (size_t)rt.cfg.trace_events,
            .timeout_ms = rt.cfg.deadline_ms * 2 > 5000 ? rt.cfg.deadline_ms * 2 : 5000,
            .plans = rt.rank == 0 ? &rt.r0.traces : NULL, .dir = rt.r0.dir,
            .t0_ns = rt.rank == 0 ? argus_jobstore_meta(rt.r0.js)->started_ns : 0};
        if (argus_ring_create((size_t)rt.cfg.ring_events, (unsigned)rt.cfg.ring_steps,
                              &rt.ring) != 0 ||
            (qo.api_ring = rt.ring, argus_tracereq_init(&qo)) != 0) {
            argus_log_once(ARGUS_LOG_WARN, "l4-init", "rank %d: no memory for the L4 ring; "
                           "no raw traces from this rank", rt.rank);
            argus_ring_free(rt.ring);
            rt.ring = NULL;
        }
    }
    if (ok) {
        struct argus_tracer_opts to = {
            .rank = (uint32_t)rt.rank,
            .max_events = (size_t)rt.cfg.max_events,
            .coverage = rt.cfg.coverage,
            .on_summary = on_summary,
            .on_name = on_name,
            .ring = rt.ring,
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
        /* the Argus thread has not started: nobody else uses the communicator */
        argus_tracer_stop();
        if (rt.agent_on)
            argus_agent_abandon();
        rt.agent_on = 0;
        argus_tracereq_free();
        argus_ring_free(rt.ring);
        rt.ring = NULL;
        runtime_off();
        return;
    }
    if (argus_agent_go() != 0)
        rt.threaded = 0;
    /* rank 0 plans L4 traces only when the Argus thread can collect them */
    rt.r0.l4_on = rt.rank == 0 && rt.threaded && rt.ring != NULL;
    if (rt.rank == 0 && !rt.threaded)
        argus_log(ARGUS_LOG_WARN, "MPI_THREAD_MULTIPLE refused (level %d); summaries are "
                  "kept in memory and exchanged at MPI_Finalize", thread_level);
    if (rt.rank == 0)
        argus_log(ARGUS_LOG_INFO, "on for %d ranks; window %ld steps, fan-in %ld; output in %s",
                  rt.size, rt.cfg.window, rt.cfg.fanin, rt.r0.dir);
}

void argus_runtime_finalize(void)
{
    if (!rt.active)
        return;
    argus_tracer_stop(); /* delivers the last summaries to the sinks */
    if (rt.agent_on && argus_agent_finish() != 0) {
        /* the Argus thread is stuck inside MPI, or rank 0's is still writing its report:
         * leave it its communicator, tree and ring, and rank 0's state, which it closes
         * itself (clearing r0.js here raced with that report: a crash at exit) */
        rt.comm = MPI_COMM_NULL;
        rt.parent = NULL;
        rt.ring = NULL; /* the thread may still dump it: leave it */
        rt.r0_left = 1;
    }
    rt.agent_on = 0;
    argus_ring_free(rt.ring);
    rt.ring = NULL;
    runtime_off();
}
