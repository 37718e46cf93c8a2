/* types.h — Argus's shared vocabulary: events, per-step summaries, per-(kernel, mode)
 * statistics. Every room speaks these types; nothing here allocates or does I/O.
 *
 * Contracts 2 (event) and 3 (step summary) of docs/ARCHITECTURE.md live here. The binary encoding
 * of a summary is in wire.h; the merge-friendly quantile sketch in qsketch.h.
 */
#ifndef ARGUS_COMMON_TYPES_H
#define ARGUS_COMMON_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "common/qsketch.h"

/* Kernel classes (what a GPU activity is). Values travel on the wire: append only. */
enum argus_kclass {
    ARGUS_KC_COMPUTE = 0,
    ARGUS_KC_COLLECTIVE = 1, /* all-reduce, reduce-scatter, all-gather, all-to-all, bcast */
    ARGUS_KC_P2P = 2,        /* pipeline send/recv */
    ARGUS_KC_MEMCPY = 3,
    ARGUS_KC_MEMSET = 4,
    ARGUS_KC_COUNT
};

/* Phases a step's time is attributed to. Values travel on the wire: append only.
 * FORWARD/BACKWARD/OPTIMIZER come from phase ranges (argus_phase_push); COMM is the time
 * in collective + p2p kernels; HOST is GPU idle time inside the step (no kernel running on
 * any stream of the rank); OTHER collects ranges whose name maps to no known phase. */
enum argus_phase {
    ARGUS_PH_FORWARD = 0,
    ARGUS_PH_BACKWARD = 1,
    ARGUS_PH_OPTIMIZER = 2,
    ARGUS_PH_COMM = 3,
    ARGUS_PH_HOST = 4,
    ARGUS_PH_OTHER = 5,
    ARGUS_PH_COUNT
};

/* Names used in reports and CSV ("forward", "backward", "optimizer", "communication",
 * "host", "other"); never NULL for a valid value, "unknown" otherwise. */
const char *argus_phase_name(enum argus_phase p);
/* "compute", "collective", "p2p", "memcpy", "memset"; "unknown" otherwise. */
const char *argus_kclass_name(enum argus_kclass c);
/* Map a range name to a phase, case-insensitively: names containing "forward"/"fwd" →
 * FORWARD, "backward"/"bwd" → BACKWARD, "optim" → OPTIMIZER, "comm"/"nccl"/"gloo"/
 * "all_reduce"/"allreduce"/"all_gather"/"allgather"/"reduce_scatter"/"barrier" → COMM,
 * "data"/"host" → HOST; anything else → OTHER. */
enum argus_phase argus_phase_from_name(const char *name);

/* 64-bit FNV-1a of a kernel name: the job-wide kernel key. Deterministic on every rank. */
uint64_t argus_name_hash(const char *name);

/* Contract 2: one GPU activity, the same struct whether it came from CUPTI, a replay
 * or a Kineto import. Times are ns in the rank's clock (CLOCK_REALTIME-based). */
struct argus_kernel_event {
    uint64_t name_hash;  /* argus_name_hash(name) */
    uint64_t start_ns;
    uint64_t end_ns;     /* >= start_ns */
    uint32_t device;
    uint32_t stream;
    uint8_t kclass;      /* enum argus_kclass */
    uint8_t phase;       /* enum argus_phase of the innermost open range at launch */
    uint16_t pad;
    uint32_t corr;       /* correlation id, 0 when unknown */
};

/* Per-(kernel, mode) statistics of one rank in one step (or merged over many). */
struct argus_kmode_stats {
    uint64_t name_hash;
    uint8_t mode;        /* 0 = shortest mode of this kernel in this step, ascending */
    uint8_t kclass;      /* enum argus_kclass */
    uint8_t phase;       /* phase most of its time fell in */
    uint8_t pad;
    uint32_t count;
    uint64_t sum_ns;
    uint64_t min_ns;
    uint64_t max_ns;
    uint64_t last_end_ns; /* collective class only: end of the kernel's last instance in
                             the step (of any of its modes: every mode record of the name
                             carries it), in the rank's clock like the summary's start_ns;
                             0 = unknown (other classes, "[other]" records, imports) */
    struct argus_qsketch sketch; /* durations, relative error ARGUS_QSKETCH_ALPHA */
};

/* Layout coordinates of a rank (Megatron order: tp fastest, then dp, then pp).
 * Sizes of 0 mean "unknown". */
struct argus_coords {
    uint16_t tp_size, pp_size, dp_size, ep_size;
    uint16_t tp, pp, dp, ep;
};

/* A communicator this rank belongs to, as seen when the program created it (MPI_Comm_split,
 * MPI_Comm_create, MPI_Comm_split_type, ncclCommInitRank, ncclCommSplit). Ranks that
 * report the same (kind, id) are the members of one group; the groups of one (kind,
 * family) are the parts of one partition (one collective creating call). */
enum argus_comm_kind {
    ARGUS_COMM_MPI = 1,
    ARGUS_COMM_NCCL = 2,
};

struct argus_comm_group {
    uint64_t id;     /* the same on every member, different for other member sets */
    uint32_t family; /* the same for the groups one creating call made (on every rank) */
    uint32_t size;   /* members */
    uint32_t index;  /* this rank's rank inside the group */
    uint8_t kind;    /* enum argus_comm_kind */
};

/* Memberships kept per rank; later ones are counted and dropped. */
#define ARGUS_MAX_COMM_GROUPS 8

/* Bounded number of (kernel, mode) records per summary; the summariser folds the
 * smallest contributors into "other" records when a step has more (flag PARTIAL). */
#define ARGUS_MAX_KMODES 256

enum argus_summary_flags {
    ARGUS_SF_PARTIAL = 1u << 0,       /* kernel records folded or events dropped */
    ARGUS_SF_STEP_INFERRED = 1u << 1, /* step boundaries not marked by the program */
    ARGUS_SF_THIN = 1u << 2,     /* row values only (reduce/condense.h): no kernel modes,
                                    no phase compute split; readers of kernel statistics
                                    treat the cell as absent */
    ARGUS_SF_EXEMPLAR = 1u << 3, /* sent in full by a condensing tree node: its row is
                                    already in that node's window aggregate */
    ARGUS_SF_NO_CUPTI = 1u << 4, /* GPU activity not traced: CUPTI unavailable; bits 8-11
                                    (ARGUS_SF_CUPTI_WHY) say why: enum argus_cupti_why */
};

/* Why a rank traced no GPU activity (summary flags bits 8-11, with ARGUS_SF_NO_CUPTI). */
enum argus_cupti_why {
    ARGUS_CUPTI_HELD_OTHER = 1, /* another subscriber, not recognised */
    ARGUS_CUPTI_HELD_NSYS = 2,  /* Nsight Systems */
    ARGUS_CUPTI_HELD_NCU = 3,   /* Nsight Compute */
    ARGUS_CUPTI_HELD_NVRX = 4,  /* NVRx straggler detection */
    ARGUS_CUPTI_HELD_DCGM = 5,  /* a DCGM-based tool */
    ARGUS_CUPTI_HELD_KINETO = 6, /* the PyTorch profiler (Kineto) */
    ARGUS_CUPTI_NO_ACTIVITY = 7, /* subscribed, but activity collection could not start */
    ARGUS_CUPTI_VERSION = 8,    /* CUPTI API version other than the one Argus was built for */
    ARGUS_CUPTI_WHY_COUNT
};
#define ARGUS_SF_CUPTI_WHY_SHIFT 8
#define ARGUS_SF_CUPTI_WHY(flags) (((flags) >> ARGUS_SF_CUPTI_WHY_SHIFT) & 0xfu)

/* The reason's words for logs and reports ("held by Nsight Systems"). */
static inline const char *argus_cupti_why_name(unsigned why)
{
    static const char *const n[ARGUS_CUPTI_WHY_COUNT] = {
        "", "held by another CUPTI subscriber", "held by Nsight Systems",
        "held by Nsight Compute", "held by NVRx straggler detection", "held by a DCGM tool",
        "held by the PyTorch profiler (Kineto)", "activity collection failed to start",
        "API version mismatch"};
    return why && why < ARGUS_CUPTI_WHY_COUNT ? n[why] : "CUPTI unavailable";
}

/* Contract 3: the per-rank, per-step summary. Bounded size (no pointers).
 * All durations in ns. Times (start/end) in the rank's clock; clock_offset_ns is the
 * rank's estimated offset to rank 0 (add it to convert to rank 0's clock). */
/* The kernel-mode record that stands for the modes a summary folded (one per class):
 * its name_hash is argus_name_hash(ARGUS_OTHER_KERNEL). Not a kernel: the analysis
 * gives no kernel verdict on it. */
#define ARGUS_OTHER_KERNEL "[other]"

/* What NCCL's profiler plugin said about one communicator in one step (tracer/
 * nccl_profiler_stats.h has the full aggregate; tracer/ keeps the communicators with the
 * most wait + transfer time). Times in ns; last_start_ns in the rank's clock like the
 * summary's start_ns. */
#define ARGUS_NCCL_SUM_COMMS 2 /* communicators kept per summary (the rest are counted;
                                  two keep a realistic rank-step within 1,024 B) */
struct argus_nccl_comm_sum {
    uint64_t comm_hash;    /* commId / commHash: the same on every member */
    uint32_t colls;        /* collectives and p2p calls completed in the step */
    int32_t peer;          /* the peer (rank in the communicator) with the most transfer
                              time, -1 when NCCL named none; < ARGUS_NCCL_PEER_LIMIT */
    uint64_t peer_wait_ns; /* waiting for peers (SendPeerWait + RecvWait), all channels */
    uint64_t xfer_ns;      /* on the wire (SendWait + RecvFlushWait) */
    uint64_t gpu_wait_ns;  /* waiting for this rank's own kernel */
    uint64_t peer_xfer_ns; /* peer's share of xfer_ns (0 with peer -1) */
    uint64_t last_seq;     /* seqNumber of the step's last collective on it; with
                              last_start_ns 0 there is none (p2p calls only) */
    uint64_t last_start_ns;/* when this rank arrived at it (NCCL started the call) */
};
#define ARGUS_NCCL_PEER_LIMIT ((1 << 19) - 1) /* peers at or past it travel as -1 */
#define ARGUS_NCCL_DROPPED_MAX 127           /* comms_dropped saturates there */
struct argus_nccl_sum {
    uint32_t n_comms;      /* valid entries of comm, by descending peer_wait + xfer */
    uint32_t comms_dropped;/* further communicators with activity in the step (at most
                              ARGUS_NCCL_DROPPED_MAX: these two limits keep a record's
                              size bound, argus_summary_encoded_max, within 512 B for
                              a summary without kernel modes) */
    struct argus_nccl_comm_sum comm[ARGUS_NCCL_SUM_COMMS];
};

struct argus_step_summary {
    uint64_t step;         /* the job's step id (ProfilerStep#N or the tracer's counter) */
    uint32_t rank;         /* global rank */
    uint32_t flags;        /* enum argus_summary_flags */
    uint64_t start_ns;
    uint64_t end_ns;
    int64_t clock_offset_ns;
    struct argus_coords coords;
    uint64_t phase_wall_ns[ARGUS_PH_COUNT];    /* wall time inside ranges of that phase;
                                                  [COMM] = collective+p2p kernel time,
                                                  [HOST] = GPU idle time (host gap) */
    uint64_t phase_compute_ns[ARGUS_PH_COUNT]; /* compute kernel time launched in phase */
    uint64_t compute_ns;   /* total compute-class kernel time */
    uint64_t collective_ns;/* total collective kernel time (includes waiting) */
    uint64_t p2p_ns;       /* total p2p kernel time (includes waiting) */
    uint64_t memcpy_ns;    /* memcpy + memset kernel time */
    uint64_t busy_ns;      /* union of all kernel intervals (GPU busy) */
    uint64_t host_gap_ns;  /* (end-start) - busy_ns */
    uint64_t kernel_count; /* kernels seen in this step */
    uint64_t dropped;      /* events dropped (buffer full) in this step */
    uint64_t overhead_ns;  /* CUPTI overhead records (buffer flushes, ...) in this step */
    uint64_t clock_gpu_ns; /* the tracer's latest clock triple: cuptiGetTimestamp, */
    uint64_t clock_real_ns;/* CLOCK_REALTIME and CLOCK_MONOTONIC read together (0 when */
    uint64_t clock_mono_ns;/* the tracer has none, e.g. replayed or imported steps) */
    uint64_t idle_long_ns; /* the step's longest GPU idle interval: the longest gap of the
                              union of kernel intervals clipped to [start_ns, end_ns],
                              the gaps before the first and after the last kernel
                              included (the whole wall when no kernel ran); the earliest
                              of equally long ones. 0 when the GPU never idled, and
                              when unknown (thin rows, steps CSV, step logs) */
    uint64_t idle_long_end_ns; /* where that interval ends, ns after start_ns (a source's
                                  host stall ends before its waiting peers' idle does);
                                  0 when unknown */
    struct argus_nccl_sum nccl; /* NCCL profiler plugin view; n_comms 0 when none */
    uint32_t n_kmodes;     /* valid entries in kmodes */
    uint32_t pad;
    struct argus_kmode_stats kmodes[ARGUS_MAX_KMODES];
};

#endif /* ARGUS_COMMON_TYPES_H */
