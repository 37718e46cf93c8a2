/* sim.h — internal types shared by the files of argus-simtrain (options, injections,
 * per-rank virtual-time state, kernel table). Nothing here is part of Argus's API: the
 * simulator talks to Argus only through tracer/argus.h. Everything is single-threaded
 * (one MPI rank, one step loop).
 */
#ifndef ARGUS_SIM_SIM_H
#define ARGUS_SIM_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "argus.h"
#include "sim/ncclplay.h"

#define SIM_PROG "argus-simtrain"

/* ---- injections (inject.c) ---------------------------------------------------------- */

enum sim_inject_kind {
    SIM_INJ_COMPUTE_STRAGGLER,
    SIM_INJ_COMM_DEGRADATION,
    SIM_INJ_PIPELINE_BUBBLE,
    SIM_INJ_HOST_STALL,
    SIM_INJ_STEP_REGRESSION,
    SIM_INJ_KERNEL_DEGRADATION,
    SIM_INJ_ITERATION_JITTER,
    SIM_INJ_CRASH,
};

enum sim_group_type { SIM_GROUP_DP = 0, SIM_GROUP_TP = 1 };

struct sim_inject {
    enum sim_inject_kind kind;
    int step_lo, step_hi;       /* inclusive, already clipped to [0, steps-1] */
    int *ranks;                 /* source ranks (sorted, unique); owned */
    int nranks;
    double factor;              /* slowdown factor (1 when not used) */
    double ms;                  /* host_stall only */
    char kernel[128];           /* kernel_degradation only: name substring */
    int stage;                  /* pipeline_bubble only */
    enum sim_group_type group;  /* comm_degradation only */
    int group_index;            /* comm_degradation only */
};

/* ---- options (simtrain.c) ----------------------------------------------------------- */

struct sim_opts {
    int tp, pp, dp;
    int microbatches;
    int steps;
    int layers;
    uint64_t seed;
    double noise;
    const char *truth;
    int print_steps;
    int pace_ms;                /* real milliseconds each step lasts at least (0: none) */
    int no_layout;              /* --no-layout: argus_set_layout is not called */
    int late_groups;            /* --late-groups S: communicators seen by Argus from step S
                                   on only (-1: from the start) */
    int nccl_groups;            /* --nccl-groups: communicators out of Argus's PMPI sight,
                                   told to the NCCL profiler plugin instead (ncclplay.h) */
    int nccl_shuffle;           /* --nccl-shuffle: --nccl-groups, each rank telling the
                                   plugin of its communicators in its own order */
    struct sim_inject *inj;     /* owned */
    int ninj;
};

/* Parse one --inject SPEC against the final options (sizes known). 0, or -EINVAL after
 * writing one line naming the problem into err. */
int sim_inject_parse(const char *spec, const struct sim_opts *o, struct sim_inject *out,
                     char *err, size_t errlen);
void sim_inject_free(struct sim_opts *o);
/* Write the ground-truth JSON atomically (tmp + rename). 0 or -errno. */
int sim_truth_write(const struct sim_opts *o, const char *path);
const char *sim_inject_kind_name(enum sim_inject_kind k);

/* Ranks of DP group / TP group `index` (Megatron order), written to out (size dp / tp). */
void sim_group_ranks(const struct sim_opts *o, enum sim_group_type g, int index, int *out);

/* ---- kernels (model.c) -------------------------------------------------------------- */

enum sim_kid {
    /* compute, forward */
    K_EMBED_FWD, K_LN_FWD, K_GEMM_QKV_FWD, K_FLASH_FWD, K_GEMM_PROJ_FWD, K_ADD_FWD,
    K_GEMM_FC1_FWD, K_GELU_FWD, K_GEMM_FC2_FWD, K_GEMM_LOGITS_FWD, K_SOFTMAX_FWD,
    /* compute, backward */
    K_SOFTMAX_BWD, K_GEMM_LOGITS_DGRAD, K_GEMM_LOGITS_WGRAD, K_GEMM_FC2_DGRAD,
    K_GEMM_FC2_WGRAD, K_GELU_BWD, K_GEMM_FC1_DGRAD, K_GEMM_FC1_WGRAD, K_LN_BWD_INPUT,
    K_LN_BWD_GAMMA, K_GEMM_PROJ_DGRAD, K_GEMM_PROJ_WGRAD, K_FLASH_BWD_DOT, K_FLASH_BWD,
    K_FLASH_BWD_CONVERT, K_GEMM_QKV_DGRAD, K_GEMM_QKV_WGRAD, K_EMBED_BWD,
    /* compute, optimizer */
    K_GRAD_NORM, K_ADAM,
    /* communication */
    K_TP_ALLREDUCE, K_PP_SENDRECV, K_DP_REDUCE_SCATTER, K_DP_ALLGATHER,
    K_COUNT
};

struct sim_kernel_def {
    const char *name;
    double base_us;             /* compute: median duration; comm: median transfer */
    enum argus_kernel_class cls;
    uint32_t stream;
};

extern const struct sim_kernel_def sim_kernels[K_COUNT];

#define SIM_STREAM_COMPUTE 7u
#define SIM_STREAM_NCCL 13u
#define SIM_STREAM_NCCL_P2P 14u

/* ---- per-rank state ----------------------------------------------------------------- */

struct sim_rng {
    uint64_t s[4];
};

struct sim_rank {
    const struct sim_opts *o;
    int rank, world;
    int tp_i, pp_i, dp_i;
    int tp_group, dp_group;     /* group indices (see sim_group_ranks) */
    MPI_Comm tp_comm, dp_comm, pp_comm;
    struct sim_nccl_comm tp_nccl, dp_nccl, pp_nccl; /* --nccl-groups; else unmade */
    uint32_t device;

    uint64_t t;                 /* virtual GPU-stream clock, ns since the epoch */
    uint64_t skew_ns;           /* this rank's clock error: added to what Argus is told */
    struct sim_rng rng;         /* per-rank, seeded from (seed, rank) */
    int step;
    uint32_t coll_idx;          /* collectives issued this step (same on all members) */

    /* per-step factors set by sim_inject_step() */
    double kfactor[K_COUNT];    /* compute kernels: duration multiplier */
    double tp_comm_factor, dp_comm_factor;
    uint64_t host_stall_ns;

    /* pending p2p sends of this step */
    MPI_Request *reqs;
    uint64_t *sendbuf;
    int nreqs, maxreqs;

    /* per-step accounting for --print-steps */
    uint64_t compute_ns, comm_ns;
};

/* A time of r's virtual clock as r's own (skewed) clock reads it: what the rank reports
 * to Argus. ARGUS_TEST_CLOCK_SKEW_NS=D makes rank r's clock D x r ahead, the same knob
 * reduce/clocksync.c reads in test builds (reduce/testknob.h: libargus.so alone ignores
 * it, the simulator always reads it), so that the offsets Argus estimates can be checked. */
static inline uint64_t sim_ts(const struct sim_rank *r, uint64_t t)
{
    return t + r->skew_ns;
}

/* Set the per-step factors of r for r->step from the injections; returns 1 when this
 * rank must crash at the start of this step. */
int sim_inject_step(struct sim_rank *r);

/* model.c */
void sim_rng_seed(struct sim_rng *g, uint64_t seed);
uint64_t sim_rng_next(struct sim_rng *g);
double sim_rng_lognormal(struct sim_rng *g, double sigma);
uint64_t sim_mix(uint64_t a, uint64_t b);
/* Advance r->t by a launch gap of a few µs. */
void sim_launch_gap(struct sim_rank *r);
/* Emit compute kernel kid after a launch gap; advances r->t. */
void sim_compute(struct sim_rank *r, enum sim_kid kid);

/* vclock.c: communication kernels in virtual time, waiting by real MPI exchanges; each
 * also played to the NCCL profiler plugin on nc (tp_nccl, dp_nccl; pp_nccl for p2p) when
 * that communicator is made (--nccl-groups). */
void sim_collective(struct sim_rank *r, enum sim_kid kid, MPI_Comm comm,
                    struct sim_nccl_comm *nc, int group_id, double comm_factor);
/* dir: 0 forward activations (to pp+1), 1 backward gradients (to pp-1). */
void sim_p2p_send(struct sim_rank *r, int dir, int mb);
void sim_p2p_recv(struct sim_rank *r, int dir, int mb);
/* Complete this step's pending sends. */
void sim_p2p_flush(struct sim_rank *r);

/* schedule.c: one training step (1F1B + optimizer), from step_begin to step_end. */
void sim_step(struct sim_rank *r, int step);

#endif /* ARGUS_SIM_SIM_H */
