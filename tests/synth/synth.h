/* synth.h — a synthetic Megatron-style job for the analysis tests: ranks in TP × DP × PP
 * (Megatron order), a GPipe-like schedule over microbatches with TP all-reduces, pipeline
 * send/recv and DP reduce-scatter/all-gather in virtual time, where every wait happens
 * inside the communication kernel (the late member waits least). Lognormal kernel noise
 * and the same injections as argus-simtrain. Fills a job store with per-step summaries.
 * Test-only code; deterministic for a given seed.
 */
#ifndef ARGUS_TESTS_ANALYSIS_SYNTH_H
#define ARGUS_TESTS_ANALYSIS_SYNTH_H

#include <stdint.h>

#include "store/jobstore.h"

enum synth_kind {
    SY_STRAGGLER = 1, /* ranks: compute x factor */
    SY_COMM,          /* group (dp/tp, index): collective transfer x factor */
    SY_BUBBLE,        /* stage: compute x factor */
    SY_HOST,          /* ranks: idle ms before the step's first launch */
    SY_REGRESSION,    /* every rank: compute x factor */
    SY_KERNEL,        /* ranks: compute kernels whose name contains `kernel` x factor */
    SY_JITTER,        /* every rank: compute x factor (a step or two) */
    SY_CRASH,         /* ranks stop sending from step lo on */
    SY_EXTRA,         /* ranks: compute kernels whose name contains `kernel` launched
                       * factor times per call site (other work, not slower calls) */
    SY_LATE,          /* ranks: idle ms on the host before the step starts (late arriver) */
    SY_NCCL_LATE,     /* ranks: arrive ms late at the DP all-gather, the step's last
                       * collective on the DP communicator (the others wait in it) */
    SY_NCCL_LINK,     /* ranks[0]: its link to its DP ring peer (the next DP index) is
                       * slow: its DP group's collective transfers x factor; with nccl the
                       * extra is on its transfer with that peer, the others wait for it */
};

#define SYNTH_MAX_FAULTS 4
#define SYNTH_MAX_RANKS 64

struct synth_fault {
    int kind;
    int ranks[SYNTH_MAX_RANKS];
    int nranks;
    int lo, hi;          /* inclusive steps */
    double factor;
    double ms;
    const char *kernel;
    int stage;
    int group_tp;        /* SY_COMM: 0 = DP group, 1 = TP group */
    int group_index;     /* DP: tp + tp_size * pp; TP: dp + dp_size * pp */
    int period;          /* > 0: only steps lo, lo + period, ... up to hi */
};

struct synth_opts {
    int tp, pp, dp;
    int steps, microbatches, layers;
    uint64_t seed;
    double noise;
    double step_sigma;   /* > 0: lognormal step-time variability (job-wide + per rank / 3) */
    double tail;         /* > 0: probability of a heavy-tailed (Pareto 1.5, <= 20x) kernel */
    int no_coords;       /* leave coordinates unknown */
    int comm_groups;     /* rank infos list the TP, DP and PP communicators (families
                          * 1, 2, 3; ids from the member set), as reduce/pmpi.c does;
                          * 2: also an NCCL communicator over each DP group */
    int last_ends;       /* collective kernel modes carry last_end_ns (as the tracer's) */
    int nccl;            /* summaries carry an NCCL block (common/types.h) for the DP
                          * communicator, the id comm_groups 2 gives it: its collectives'
                          * peer wait, transfer and GPU wait, the busiest peer (the next DP
                          * index in the ring) and the all-gather's seqNumber and arrival */
    double clock_err_us; /* > 0: each rank's clock off by a constant in +-clock_err_us
                          * (its times shifted, clock_offset_ns still 0) */
    int nf;
    struct synth_fault f[SYNTH_MAX_FAULTS];
};

/* 16 ranks (tp 2, pp 2, dp 4), 60 steps, 4 microbatches, 2 layers, noise 0.03. */
void synth_default(struct synth_opts *o, uint64_t seed);
/* Add a fault; returns it for the caller to fill. */
struct synth_fault *synth_add(struct synth_opts *o, int kind, int lo, int hi, double factor);
/* Build the job; 0 or negative errno. */
int synth_job(const struct synth_opts *o, struct argus_jobstore **out);
/* Full name of the model kernel containing sub (for assertions). */
const char *synth_kernel_name(const char *sub);

#endif /* ARGUS_TESTS_ANALYSIS_SYNTH_H */
