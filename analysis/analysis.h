/* analysis.h — rank-0 diagnosis over a job store: L1 (step-time outliers, change point),
 * L2 (phase, sources versus victims), L3 (kernels and groups compared with peers in the
 * same position). Reads only common/ types, so it runs online in rank 0 and offline in
 * argus-analyze alike. Pure computation: no I/O, no globals; deterministic.
 */
#ifndef ARGUS_ANALYSIS_ANALYSIS_H
#define ARGUS_ANALYSIS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "store/jobstore.h"

enum argus_anomaly_kind {
    ARGUS_AK_COMPUTE_STRAGGLER = 0,
    ARGUS_AK_COMM_DEGRADATION,
    ARGUS_AK_PIPELINE_BUBBLE,
    ARGUS_AK_HOST_STALL,
    ARGUS_AK_STEP_REGRESSION,
    ARGUS_AK_ITERATION_JITTER,
    ARGUS_AK_KERNEL_DEGRADATION,
    ARGUS_AK_PERSISTENT_IMBALANCE, /* a rank slower than its peers all along: reported
                                      once, with its size and cost, never as episodes */
    ARGUS_AK_COUNT
};
/* "compute_straggler", ... exactly as docs/REPORT_SCHEMA.md, anomalies[]. */
const char *argus_anomaly_kind_name(enum argus_anomaly_kind k);

enum argus_group_type { ARGUS_GT_NONE = 0, ARGUS_GT_DP, ARGUS_GT_TP, ARGUS_GT_PP, ARGUS_GT_EP };
const char *argus_group_type_name(enum argus_group_type g); /* "dp".. ; NULL for NONE */

#define ARGUS_ANOMALY_MAX_RANKS 64
#define ARGUS_ANOMALY_MAX_KERNELS 4
#define ARGUS_ANOMALY_MAX_HITS 32

/* The three levels of data a verdict can rest on (docs/ALGORITHMS.md, "Data levels"):
 * step times only (steps CSV, trainer logs), phases without kernels (argus.h / Python
 * marks with CUPTI unavailable, phase-only imports), kernels and phases (live CUPTI,
 * Kineto). */
enum argus_data_level {
    ARGUS_DL_NONE = 0,
    ARGUS_DL_STEPS = 1,
    ARGUS_DL_PHASES = 2,
    ARGUS_DL_KERNELS = 3,
};
/* "steps", "phases", "kernels"; "none" for ARGUS_DL_NONE and anything else. */
const char *argus_data_level_name(int level);

struct argus_anomaly {
    int id;                       /* 1-based, in order of detection */
    int level;                    /* 1, 2 or 3 */
    int kind;                     /* enum argus_anomaly_kind */
    uint64_t step_first, step_last;
    uint32_t n_ranks, ranks[ARGUS_ANOMALY_MAX_RANKS];     /* sources */
    uint32_t n_victims, victims[ARGUS_ANOMALY_MAX_RANKS];
    int group_type;               /* enum argus_group_type */
    uint32_t n_group, group[ARGUS_ANOMALY_MAX_RANKS];
    int phase;                    /* enum argus_phase, -1 when none */
    uint32_t n_kernels;
    uint64_t kernels[ARGUS_ANOMALY_MAX_KERNELS];          /* name hashes */
    double slowdown;              /* e.g. 1.42 */
    double score;                 /* robust z or similar, larger = surer */
    uint64_t detected_at_step;    /* the step at which the evidence first sufficed */
    char evidence[512];
    char trace[256];              /* relative path under the output dir, "" when none */
    /* Added in place (report version 1 grows, nothing renamed): */
    uint32_t period_steps;        /* iteration_jitter: spikes recur every this many steps, 0 */
    uint32_t n_occurrences;       /* iteration_jitter: spikes folded into this anomaly */
    double w1_intra_ns;           /* comm_degradation: mean W1 inside the group, 0 when none */
    double w1_inter_ns;           /* comm_degradation: mean W1 group to other groups */
    int data_level;               /* enum argus_data_level the verdict was judged on */
    double confidence;            /* 0..1: how sure (evidence strength, lowered when a
                                     level of data is missing or the run is short) */
    uint32_t n_hits;              /* intermittent and periodic findings: the affected
                                     steps, ascending, the first ARGUS_ANOMALY_MAX_HITS */
    uint64_t hits[ARGUS_ANOMALY_MAX_HITS];
    uint32_t n_hits_total;        /* all affected steps (>= n_hits) */
    double cost_share;            /* persistent_imbalance, periodic iteration_jitter: share
                                     of the job's wall time it costs, 0 when not judged */
};

struct argus_step_stats {
    uint64_t count, first, last;
    double median_ms, p99_ms, cv;
};

struct argus_rank_row {
    uint32_t rank;
    double median_step_ms;
    uint32_t flags;               /* bit k set: rank is a source of some anomaly of kind k */
};

/* Where each rank runs (its rank info's placement, tracer/placement.h) and what is wrong
 * with it: a misplacement finding (analysis/placement.c; docs/ALGORITHMS.md, "Placement";
 * docs/REPORT_SCHEMA.md, "placement"). */
enum argus_misplace_reason {
    ARGUS_MP_CPUS_NOT_LOCAL = 1, /* bound CPUs outside the GPU's NUMA node or package */
    ARGUS_MP_SHARED_GPU = 2,     /* several ranks of one host on one GPU */
};
/* "cpus_not_local", "shared_gpu"; "unknown" for anything else. */
const char *argus_misplace_reason_name(int reason);

struct argus_place_rank {
    uint32_t rank;
    char host[ARGUS_HOST_MAX];
    struct argus_placement place; /* flags has ARGUS_PLACE_KNOWN */
};

#define ARGUS_PLACEMENT_MAX_FINDINGS 64
struct argus_misplacement {
    int reason;                    /* enum argus_misplace_reason */
    char host[ARGUS_HOST_MAX];     /* shared_gpu: the host; cpus_not_local: the first rank's */
    char gpu_bus[ARGUS_PLACE_BUS_MAX]; /* shared_gpu: the GPU; cpus_not_local: "" */
    uint32_t n_ranks, ranks[ARGUS_ANOMALY_MAX_RANKS]; /* the first ranks, ascending */
    uint32_t n_ranks_total;        /* all ranks of the finding (>= n_ranks) */
    uint32_t n_host_stall;         /* of them, sources of a host_stall anomaly */
    char evidence[512];
};

struct argus_placement_map {
    uint32_t n_ranks;              /* ranks that said where they run, ascending rank ids */
    struct argus_place_rank *ranks;
    uint32_t n_findings;           /* at most ARGUS_PLACEMENT_MAX_FINDINGS */
    uint32_t findings_dropped;     /* shared GPUs past that */
    struct argus_misplacement findings[ARGUS_PLACEMENT_MAX_FINDINGS];
};
void argus_placement_map_free(struct argus_placement_map *m);

/* What NCCL's profiler plugin said about one communicator over a window of steps
 * (analysis/ncclview.c; docs/ALGORITHMS.md, "NCCL in-band view"; docs/REPORT_SCHEMA.md,
 * "nccl"): the same collective aligned across its members by (comm_hash, seqNumber) with
 * the clock offsets applied, who arrived last and by how much, and each member's split of
 * its collectives into waiting for peers, transfer and waiting for its own kernel. Plain
 * data. Times in ms; medians per step over the steps a member reported the communicator. */
#define ARGUS_NCCL_VIEW_RANKS 64 /* members listed per view (the first, ascending) */
#define ARGUS_NCCL_VIEW_COMMS 8  /* communicators in the whole-run summary */
struct argus_nccl_member {
    uint32_t rank;
    uint32_t steps;            /* steps of the window it reported the communicator in */
    uint32_t times_last;       /* aligned steps at which it arrived last */
    int32_t peer;              /* its busiest peer (global rank), -1 when NCCL named none */
    double peer_wait_ms, xfer_ms, gpu_wait_ms;
    double peer_xfer_ms;       /* transfer with that peer */
};
struct argus_nccl_view {
    uint64_t comm_hash;        /* 0: no view */
    uint64_t step_first, step_last;
    uint32_t n_members_total;  /* ranks that reported the communicator in the window */
    uint32_t steps_aligned;    /* steps where >= 2 members reported the same collective */
    int32_t last_arriver;      /* rank that arrived last most often, -1 when none */
    uint32_t times_last;
    double median_lateness_ms; /* its arrival after the other members' median, median over
                                  the steps it was last */
    int late;                  /* last most of the aligned steps, by >= AN_LATE_MATERIAL of
                                  the median step */
    int32_t pair_rank, pair_peer; /* slow pair (link): pair_rank's transfer with pair_peer
                                     stands out against the other members' busiest pairs
                                     and pair_rank barely waits; -1 when none */
    double pair_xfer_ms, pair_ratio, pair_z;
    uint32_t n_members;
    struct argus_nccl_member members[ARGUS_NCCL_VIEW_RANKS];
};

struct argus_layout {
    int tp, pp, dp, ep;
    int inferred;                 /* 1 when not given by the program */
};

struct argus_result {
    struct argus_layout layout;
    int data_level;                  /* enum argus_data_level of the judged steps: the
                                        lowest any rank's data reaches */
    struct argus_step_stats steps;
    size_t n_anomalies;
    struct argus_anomaly *anomalies; /* owned */
    uint32_t n_ranks;                /* rows: every id below the store's rank count when
                                        at least half of them are present, else only the
                                        ranks present (analysis/context.h, slots) */
    struct argus_rank_row *ranks;    /* owned, n_ranks entries, ascending rank ids */
    uint64_t kernels_seen;
    double summary_bytes_per_rank_step;
    uint64_t dropped_events;
    unsigned cupti_unavailable;      /* enum argus_cupti_why (common/types.h) of a rank that
                                        traced no GPU activity, 0 when every rank could */
    /* Steps held but not judged because some rank's data is missing or incomplete there
     * (docs/ALGORITHMS.md, "Missing data"): how many, and the first of them. */
    uint64_t incomplete_steps, incomplete_first;
    /* The first held step after the last one judged (the held steps' last + 1 when that
     * one was judged): live, the steps from it on may still complete, and a store with a
     * horizon keeps them pinned (pipeline/pipeline.c). 0 when nothing is held. */
    uint64_t judge_next;
    /* Where the ranks run: NULL when no rank said (older spools, no hwloc). Owned. */
    struct argus_placement_map *placement;
    /* NCCL's in-band view (analysis/ncclview.c): NULL / 0 when no summary carried an NCCL
     * block. nccl[i] belongs to anomalies[i] for i < n_nccl (comm_hash 0: none applies;
     * anomalies appended later, pipeline/carry.c's, have none); nccl_comms the
     * whole run, per communicator seen on several ranks, most members first
     * (then most aligned steps). Owned. */
    struct argus_nccl_view *nccl;
    size_t n_nccl;
    uint32_t n_nccl_comms;
    struct argus_nccl_view *nccl_comms;
};

struct argus_analysis_opts {
    double ratio;        /* smallest slowdown reported (ARGUS_RATIO), e.g. 1.15; a
                          * step_regression from 1 + (ratio - 1) / 3 (docs/ALGORITHMS.md,
                          * "Thresholds") */
    double z;            /* smallest robust z, e.g. 5 */
    uint32_t min_steps;  /* persistence: steps an effect must last, e.g. 3 */
};
void argus_analysis_opts_default(struct argus_analysis_opts *o);

/* Diagnose. r is overwritten (call argus_result_free after). 0 or -ENOMEM/-ENOENT.
 * No verdict rests on missing data: only steps that every rank with data holds are
 * judged (r->incomplete_steps counts the others). */
int argus_analyze(const struct argus_jobstore *js, const struct argus_analysis_opts *o,
                  struct argus_result *r);
void argus_result_free(struct argus_result *r);

#endif /* ARGUS_ANALYSIS_ANALYSIS_H */
