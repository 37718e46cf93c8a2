/* traceplan.h — rank 0's plan of L4 trace dumps (docs/ALGORITHMS.md, "L4 trace plans"): which
 * anomalies get an aligned raw trace, from which ranks and steps, and which trace file each anomaly
 * links to. Pure bookkeeping (no MPI, no I/O); reduce/tracereq.c carries the plans out over the
 * private communicator and marks them done.
 *
 * One plan per anomaly identity: kind plus sources (the group's members when the anomaly
 * names a group) — an anomaly that grows over later windows keeps its plan and its trace.
 * Targets: the sources (at most ARGUS_TRACE_SOURCES of them) and ARGUS_TRACE_PEERS
 * healthy peers for comparison: ranks in the first source's position (same TP, PP and EP
 * index, nearest DP replicas; they share its data-parallel collectives, so the trace
 * shows the source next to its peers and the collectives' common ends), else victims,
 * the group's other members, the next ranks; an anomaly without sources (a job-wide
 * regression) is traced on rank 0 and the last rank. Steps: the anomaly's span as
 * analysed; each rank shows the newest ARGUS_RING_STEPS of them its ring still holds, so
 * the ring must cover the steps between an anomaly and its analysis (about two windows:
 * ARGUS_RING_EVENTS >= 2 x ARGUS_WINDOW x kernels per step), else the plan fails and
 * reduce.json says why.
 * At most `max` plans per job (ARGUS_TRACES); later anomalies get none.
 */
#ifndef ARGUS_PIPELINE_TRACEPLAN_H
#define ARGUS_PIPELINE_TRACEPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "store/jobstore.h"

#define ARGUS_TRACE_SOURCES 4
#define ARGUS_TRACE_PEERS 2
#define ARGUS_TRACE_TARGETS (ARGUS_TRACE_SOURCES + ARGUS_TRACE_PEERS)

enum argus_trace_state {
    ARGUS_TRACE_WANTED = 0, /* planned, not asked yet */
    ARGUS_TRACE_ASKED,      /* requests sent, replies awaited */
    ARGUS_TRACE_WRITTEN,    /* path names the file under the output directory */
    ARGUS_TRACE_FAILED      /* no events came back (rings had moved on, ranks silent) */
};

struct argus_trace_plan {
    int kind;                 /* enum argus_anomaly_kind */
    uint64_t sources_hash;
    uint64_t from, to;        /* steps asked for */
    uint32_t ntargets, targets[ARGUS_TRACE_TARGETS];
    uint32_t nsources;        /* targets[0 .. nsources-1] are sources, the rest peers */
    int state;                /* enum argus_trace_state */
    uint64_t asked_ns;        /* monotonic, when the requests went out */
    char path[128];           /* "traces/<kind>-steps-A-B.json" once written */
    char why[160];            /* FAILED: one line why */
};

struct argus_outdir;
struct argus_traceplan {
    struct argus_trace_plan *v; /* [max] */
    size_t n, max;
    uint32_t nranks;
    /* borrowed: the output directory (common/outdir.h) whose traces/ fd the trace files
     * are created under (pipeline.h: argus_pipeline_write_trace); NULL after init */
    const struct argus_outdir *out;
};

/* max 0: L4 dumps off (update does nothing). 0 or -ENOMEM. */
int argus_traceplan_init(struct argus_traceplan *tp, size_t max, uint32_t nranks);
void argus_traceplan_free(struct argus_traceplan *tp);

/* After an analysis: plan a trace for each anomaly of r that has none yet (while room
 * is left; js gives the ranks' layout coordinates, may be NULL), and copy the path of
 * each written trace into its anomalies' `trace` field. plan: 0 only links (the final
 * report plans nothing it could not collect). Returns plans added. */
size_t argus_traceplan_update(struct argus_traceplan *tp, const struct argus_jobstore *js,
                              struct argus_result *r, int plan);

#endif /* ARGUS_PIPELINE_TRACEPLAN_H */
