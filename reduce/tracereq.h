/* tracereq.h — L4 trace collection over Argus's private communicator (docs/ALGORITHMS.md, "L4 trace
 * plans"): rank 0 carries out the trace plans (pipeline/traceplan.h) — one small request to each
 * target rank — and every rank's Argus thread answers a request by dumping its raw ring
 * (tracer/ring.h) for the steps asked, with its timestamps moved onto rank 0's clock (its offset
 * from clocksync, plus the CUPTI-to-wall mapping of the clock triple for GPU rings), and sending
 * the Chrome-trace events back. Rank 0 checks each reply (CRC, JSON syntax) and hands a plan's
 * replies to the pipeline (pipeline/pipeline.h: argus_pipeline_write_trace), which merges them into
 * one Chrome-trace/Perfetto document `traces/<kind>-steps-A-B.json` under the output directory and
 * marks the plan written, so the next report links it from the anomaly. A target that does not
 * answer within the timeout is left out and named in the file's metadata; with no events from
 * anyone the plan fails with one line why (e.g. the rings had moved past the anomaly's steps).
 *
 * Called only from the Argus thread (or the MPI_Finalize thread without one); never
 * blocks: sends are non-blocking, replies are matched probes. One reply in flight per
 * rank; bounded memory (ARGUS_TRACE_EVENTS per rank per trace).
 */
#ifndef ARGUS_REDUCE_TRACEREQ_H
#define ARGUS_REDUCE_TRACEREQ_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/traceplan.h"

struct argus_ring;

struct argus_tracereq_opts {
    MPI_Comm comm;
    int rank;
    struct argus_ring *api_ring;  /* the argus.h path's ring; the GPU ring wins when set */
    size_t max_events;            /* per rank per trace */
    long timeout_ms;              /* rank 0: how long replies are awaited */
    /* rank 0 only */
    struct argus_traceplan *plans;
    const char *dir;              /* output directory (traces/ is created in it) */
    uint64_t t0_ns;               /* subtracted from every timestamp (job start, wall) */
};

/* Prepare (no MPI). 0 or -ENOMEM. */
int argus_tracereq_init(const struct argus_tracereq_opts *o);
/* One round: answer requests (every rank), send the requests of new plans and take in
 * replies (rank 0), write finished traces. offset_ns: this rank's clock offset to rank 0
 * (add to local wall time). final: rank 0 writes every pending trace with what has
 * arrived. 1 when something happened. */
int argus_tracereq_poll(int64_t offset_ns, int final);
/* 1 while a reply send is in flight (not rank 0) or replies are awaited (rank 0). */
int argus_tracereq_busy(void);
/* At the end of the exchange: when linger, keep polling (final) for at most 2.5 s while
 * busy, so that replies in flight go out (rank 0: come in and get written); then free. */
void argus_tracereq_finish(int64_t offset_ns, int linger);
/* Free everything; requests still in flight are released to MPI. */
void argus_tracereq_free(void);

/* Counters for reduce.json (rank 0): traces asked, written, failed; replies taken in. */
struct argus_tracereq_stats {
    uint64_t asked, written, failed, replies, reply_bytes, served;
};
void argus_tracereq_get_stats(struct argus_tracereq_stats *st);

#endif /* ARGUS_REDUCE_TRACEREQ_H */
