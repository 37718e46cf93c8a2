/* synth_int.h — internal to the synthetic job (tests/synth/synth.c: schedule and faults;
 * tests/synth/synth_sum.c: turning a rank's step into a summary). Test-only.
 */
#ifndef ARGUS_TESTS_SYNTH_INT_H
#define ARGUS_TESTS_SYNTH_INT_H

#include "tests/synth/synth.h"

enum kid {
    K_EMBED_FWD, K_LN_FWD, K_QKV_FWD, K_FLASH_FWD, K_PROJ_FWD, K_ADD_FWD, K_FC1_FWD,
    K_GELU_FWD, K_FC2_FWD, K_LOGITS_FWD, K_SOFTMAX_BWD, K_FC2_DGRAD, K_FC1_DGRAD,
    K_WGRAD, K_LN_BWD, K_FLASH_BWD, K_QKV_DGRAD, K_EMBED_BWD, K_ADAM,
    K_TP_AR, K_P2P, K_DP_RS, K_DP_AG, K_N
};

struct kdef {
    const char *name;
    double us;
    int kclass;
};

extern const struct kdef kdefs[K_N];

#define MAX_MB 64
#define MAX_CALLS 512
#define MAX_MODES 4
#define MODE_GAP 1.5

/* Calls of one kernel in one step; split into modes (log-gaps) when summarised. */
struct acc {
    uint32_t count;
    int phase;
    uint64_t last_end; /* collectives: latest end in the step */
    uint64_t d[MAX_CALLS];
};

struct rk {
    int rank, tp, pp, dp;
    uint64_t t, start, rng, phase_t0;
    int phase;
    double kf[K_N], tpf, dpf;
    int kdup[K_N];
    uint64_t stall, late;
    int dead;
    struct acc acc[K_N];
    uint64_t ph_wall[ARGUS_PH_COUNT], ph_comp[ARGUS_PH_COUNT];
    uint64_t comp, coll, p2p, busy, nk;
    uint64_t fsent[MAX_MB], bsent[MAX_MB];
    /* the NCCL block of the DP communicator (synth_opts.nccl) */
    uint64_t nc_hash, nc_late, nc_wait, nc_xfer, nc_gpu, nc_pxfer, nc_seq, nc_arr;
    uint32_t nc_colls;
    double nc_link;      /* SY_NCCL_LINK factor, 0 when none */
};

struct job {
    const struct synth_opts *o;
    struct rk *r;
    int n, step;
};

/* tests/synth/synth_sum.c */
void synth_khash_init(void);
void synth_reset_step(struct rk *r);
int synth_emit_summary(struct job *j, struct rk *r, struct argus_step_summary *s,
                       struct argus_jobstore *js);

#endif /* ARGUS_TESTS_SYNTH_INT_H */
