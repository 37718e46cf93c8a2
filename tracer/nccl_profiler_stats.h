/* nccl_profiler_stats.h — what Argus's NCCL profiler plugin (libargus_nccl.so,
 * nccl_profiler.c) tells libargus.so, and the per-step aggregate libargus.so keeps of it.
 *
 * The plugin is a separate library that NCCL dlopen()s (RTLD_LOCAL); it finds this module
 * with dlsym(RTLD_DEFAULT, ARGUS_NCCLPROF_SINK_SYMBOL) and, when libargus.so is not in the
 * process, records nothing. It calls the sink once per communicator (init), once per
 * completed proxy operation and once per completed collective or p2p call — never per
 * proxy step or kernel channel (those are summed in the plugin's own event pool).
 *
 * The aggregate is bounded: ARGUS_NCCL_MAX_COMMS communicators, ARGUS_NCCL_MAX_PEERS
 * peers per communicator and ARGUS_NCCL_MAX_SEQ collective arrivals per step; what does
 * not fit is counted. No allocation; one short mutex; any thread.
 *
 * The split of a collective (summed over its proxy steps, docs/ARCHITECTURE.md, "NCCL
 * profiler plugin"): peer_wait = SendPeerWait + RecvWait (waiting for the peer's buffer
 * or data), xfer = SendWait + RecvFlushWait (on the wire, flushing), gpu_wait =
 * SendGPUWait + RecvGPUWait (waiting for this rank's own kernel). kernel_ns is the
 * longest kernel channel's GPU time. A collective is reported once NCCL stopped it and
 * its last proxy op or kernel channel is done (or when the plugin's ring reuses its slot,
 * for one whose children never came); a child finishing after that still counts in the
 * communicator's and the peer's totals (from the proxy records), not in the collective's.
 */
#ifndef ARGUS_TRACER_NCCL_PROFILER_STATS_H
#define ARGUS_TRACER_NCCL_PROFILER_STATS_H

#include <stdint.h>

#include "common/types.h"

/* Collective functions (argus_nccl_func). */
enum argus_nccl_func {
    ARGUS_NCCL_F_OTHER = 0,
    ARGUS_NCCL_F_BROADCAST,
    ARGUS_NCCL_F_REDUCE,
    ARGUS_NCCL_F_ALLGATHER,
    ARGUS_NCCL_F_REDUCESCATTER,
    ARGUS_NCCL_F_ALLREDUCE,
    ARGUS_NCCL_F_SEND,
    ARGUS_NCCL_F_RECV,
    ARGUS_NCCL_F_N
};
/* One communicator as NCCL's init told the plugin. */
struct argus_nccl_comm_info {
    uint64_t comm_hash; /* commId (v5, v6) or commHash (v4): the same on every member */
    const char *name;   /* commName, may be NULL; copied (bounded) */
    int nnodes, nranks, rank;
};

/* One finished collective (seq valid) or p2p call (seq = UINT64_MAX). Times: host
 * CLOCK_REALTIME ns; start = when NCCL started the event (the call's enqueue, this
 * rank's arrival), end = when its last proxy operation or kernel channel finished. */
struct argus_nccl_coll_rec {
    uint64_t comm_hash, seq, start_ns, end_ns, bytes;
    uint64_t peer_wait_ns, xfer_ns, gpu_wait_ns, kernel_ns;
    uint32_t steps;
    uint8_t func, algo_ring, nchannels; /* enum argus_nccl_func; algo_ring: 1 if "Ring" */
};

/* One finished proxy operation (one channel, one peer, one direction). */
struct argus_nccl_proxy_rec {
    uint64_t comm_hash;
    int32_t peer; /* rank in the communicator */
    uint8_t is_send;
    uint32_t steps;
    uint64_t peer_wait_ns, xfer_ns, gpu_wait_ns;
};

/* The table the plugin finds by name. version: ARGUS_NCCLPROF_SINK_VERSION. */
#define ARGUS_NCCLPROF_SINK_SYMBOL "argus_ncclprof_sink"
#define ARGUS_NCCLPROF_SINK_VERSION 1
struct argus_ncclprof_sink {
    uint32_t version;
    void (*comm)(const struct argus_nccl_comm_info *c);
    void (*coll)(const struct argus_nccl_coll_rec *r);
    void (*proxy)(const struct argus_nccl_proxy_rec *r);
    void (*dropped)(uint64_t events); /* events the plugin's pool could not hold */
};
/* The sink (exported from libargus.so under ARGUS_NCCLPROF_SINK_SYMBOL); NULL unless
 * ARGUS_MODE=on (Argus's default is off), so that the plugin then only chains. */
const struct argus_ncclprof_sink *argus_ncclprof_sink(void);

/* ---- the per-step aggregate ---- */
#define ARGUS_NCCL_MAX_COMMS 16
#define ARGUS_NCCL_MAX_PEERS 8
#define ARGUS_NCCL_MAX_SEQ 64
#define ARGUS_NCCL_NAME_MAX 32

struct argus_nccl_peer_stats {
    int32_t peer;
    uint32_t ops, steps;
    uint64_t send_wait_ns, recv_wait_ns, xfer_ns, gpu_wait_ns;
};

struct argus_nccl_comm_stats {
    uint64_t comm_hash;
    char name[ARGUS_NCCL_NAME_MAX];
    int32_t nnodes, nranks, rank;
    uint32_t colls, p2ps;
    uint64_t bytes, span_ns, kernel_ns, peer_wait_ns, xfer_ns, gpu_wait_ns;
    uint32_t n_peers, peers_dropped; /* proxy operations of peers past the bound */
    struct argus_nccl_peer_stats peer[ARGUS_NCCL_MAX_PEERS];
};

/* One collective on this rank: with the same (comm_hash, seq) from every member, the
 * latest start is the last to arrive and start - min(start) how late; its own split
 * (waits, transfer, kernel) as in struct argus_nccl_coll_rec. */
struct argus_nccl_arrival {
    uint64_t comm_hash, seq, start_ns, end_ns;
    uint64_t peer_wait_ns, xfer_ns, gpu_wait_ns, kernel_ns;
    uint32_t steps;
    uint8_t func;
};

struct argus_nccl_step_stats {
    uint32_t n_comms, comms_dropped;
    struct argus_nccl_comm_stats comm[ARGUS_NCCL_MAX_COMMS];
    uint32_t n_arrivals, arrivals_dropped;
    struct argus_nccl_arrival arrival[ARGUS_NCCL_MAX_SEQ];
    uint64_t events_dropped; /* by the plugin's pool */
};

/* Copy what was recorded since the last call into *out and start a new step: counters
 * reset, the communicators (identity, name, size) stay. Returns the number of
 * communicators known. Any thread; no allocation. In libargus.so its one caller is
 * tracer/api.c, as it queues each step summary (a second caller would split the steps). */
uint32_t argus_nccl_step_stats(struct argus_nccl_step_stats *out);

/* The step summary's compact form of an aggregate (common/types.h, struct
 * argus_nccl_sum): of the communicators with any call or proxy time in the step, the
 * ARGUS_NCCL_SUM_COMMS with the most peer_wait + xfer time (ties: more calls, then the
 * lower hash), the others counted in comms_dropped; per communicator its busiest peer by
 * transfer time and the collective with the largest seqNumber among st's arrivals (its
 * start: this rank's arrival). Pure; no allocation. */
void argus_nccl_compact(const struct argus_nccl_step_stats *st, struct argus_nccl_sum *out);

#endif /* ARGUS_TRACER_NCCL_PROFILER_STATS_H */
