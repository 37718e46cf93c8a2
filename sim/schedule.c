/* schedule.c — one training step of argus-simtrain: the data-loading host gap, the 1F1B
 * pipeline schedule over microbatches (warmup forwards, steady forward/backward pairs,
 * cooldown backwards) with the kernels of each transformer layer, then the distributed
 * optimizer. Phases and step marks go to Argus through argus.h. It must not decide
 * injections (inject.c sets the factors) nor exchange clocks itself (vclock.c does).
 */
#include "sim/sim.h"

#define DATA_LOADING_US 200.0

static int first_stage(const struct sim_rank *r)
{
    return r->pp_i == 0;
}

static int last_stage(const struct sim_rank *r)
{
    return r->pp_i == r->o->pp - 1;
}

static void tp_allreduce(struct sim_rank *r)
{
    if (r->o->tp > 1)
        sim_collective(r, K_TP_ALLREDUCE, r->tp_comm, &r->tp_nccl, r->tp_group,
                       r->tp_comm_factor);
}

static void forward(struct sim_rank *r, int mb)
{
    argus_phase_push("forward", sim_ts(r, r->t));
    if (!first_stage(r))
        sim_p2p_recv(r, 0, mb);
    else
        sim_compute(r, K_EMBED_FWD);
    for (int l = 0; l < r->o->layers; l++) {
        /* attention block: column-parallel QKV, row-parallel projection, all-reduce */
        sim_compute(r, K_LN_FWD);
        sim_compute(r, K_GEMM_QKV_FWD);
        sim_compute(r, K_FLASH_FWD);
        sim_compute(r, K_GEMM_PROJ_FWD);
        tp_allreduce(r);
        sim_compute(r, K_ADD_FWD);
        /* MLP block */
        sim_compute(r, K_LN_FWD);
        sim_compute(r, K_GEMM_FC1_FWD);
        sim_compute(r, K_GELU_FWD);
        sim_compute(r, K_GEMM_FC2_FWD);
        tp_allreduce(r);
        sim_compute(r, K_ADD_FWD);
    }
    if (last_stage(r)) {
        sim_compute(r, K_LN_FWD);
        sim_compute(r, K_GEMM_LOGITS_FWD);
        sim_compute(r, K_SOFTMAX_FWD);
    } else {
        sim_p2p_send(r, 0, mb);
    }
    argus_phase_pop(sim_ts(r, r->t));
}

static void backward(struct sim_rank *r, int mb)
{
    argus_phase_push("backward", sim_ts(r, r->t));
    if (!last_stage(r)) {
        sim_p2p_recv(r, 1, mb);
    } else {
        sim_compute(r, K_SOFTMAX_BWD);
        sim_compute(r, K_GEMM_LOGITS_DGRAD);
        sim_compute(r, K_GEMM_LOGITS_WGRAD);
        sim_compute(r, K_LN_BWD_INPUT);
        sim_compute(r, K_LN_BWD_GAMMA);
    }
    for (int l = 0; l < r->o->layers; l++) {
        /* MLP block backward: the column-parallel FC1's input grad is all-reduced */
        sim_compute(r, K_GEMM_FC2_DGRAD);
        sim_compute(r, K_GEMM_FC2_WGRAD);
        sim_compute(r, K_GELU_BWD);
        sim_compute(r, K_GEMM_FC1_DGRAD);
        sim_compute(r, K_GEMM_FC1_WGRAD);
        tp_allreduce(r);
        sim_compute(r, K_LN_BWD_INPUT);
        sim_compute(r, K_LN_BWD_GAMMA);
        /* attention block backward */
        sim_compute(r, K_GEMM_PROJ_DGRAD);
        sim_compute(r, K_GEMM_PROJ_WGRAD);
        sim_compute(r, K_FLASH_BWD_DOT);
        sim_compute(r, K_FLASH_BWD);
        sim_compute(r, K_FLASH_BWD_CONVERT);
        sim_compute(r, K_GEMM_QKV_DGRAD);
        sim_compute(r, K_GEMM_QKV_WGRAD);
        tp_allreduce(r);
        sim_compute(r, K_LN_BWD_INPUT);
        sim_compute(r, K_LN_BWD_GAMMA);
    }
    if (first_stage(r))
        sim_compute(r, K_EMBED_BWD);
    else
        sim_p2p_send(r, 1, mb);
    argus_phase_pop(sim_ts(r, r->t));
}

static void optimizer(struct sim_rank *r)
{
    argus_phase_push("optimizer", sim_ts(r, r->t));
    if (r->o->dp > 1)
        sim_collective(r, K_DP_REDUCE_SCATTER, r->dp_comm, &r->dp_nccl, r->dp_group,
                       r->dp_comm_factor);
    sim_compute(r, K_GRAD_NORM);
    sim_compute(r, K_ADAM);
    if (r->o->dp > 1)
        sim_collective(r, K_DP_ALLGATHER, r->dp_comm, &r->dp_nccl, r->dp_group,
                       r->dp_comm_factor);
    argus_phase_pop(sim_ts(r, r->t));
}

void sim_step(struct sim_rank *r, int step)
{
    const int m = r->o->microbatches;
    int warm = r->o->pp - 1 - r->pp_i;
    if (warm > m)
        warm = m;
    const int steady = m - warm;

    r->coll_idx = 0;
    r->compute_ns = 0;
    r->comm_ns = 0;
    argus_step_begin((uint64_t)step, sim_ts(r, r->t));

    /* host side: fetch the batch (and any injected stall) before the first launch */
    r->t += (uint64_t)(DATA_LOADING_US * 1e3 * sim_rng_lognormal(&r->rng, r->o->noise));
    r->t += r->host_stall_ns;

    for (int i = 0; i < warm; i++)
        forward(r, i);
    for (int i = 0; i < steady; i++) {
        forward(r, warm + i);
        backward(r, i);
    }
    for (int i = steady; i < m; i++)
        backward(r, i);
    optimizer(r);

    sim_p2p_flush(r);
    argus_step_end((uint64_t)step, sim_ts(r, r->t));
}
