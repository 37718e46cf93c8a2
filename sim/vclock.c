/* vclock.c — communication kernels of argus-simtrain in virtual time. Every wait a rank
 * shows comes from a real MPI exchange of virtual clocks: a collective ends at the latest
 * member's arrival (MPI_Allreduce MAX on the group's communicator) plus a transfer time
 * that all members compute identically; a pipeline receive ends at the sender's send time
 * (sent with MPI_Isend) plus the same transfer. With --nccl-groups each one is also
 * played to the NCCL profiler plugin (ncclplay.h) as NCCL would report it. It must not
 * emit compute kernels.
 */
#include "sim/sim.h"

/* What NCCL would be told of each communication kernel: function, elements, datatype
 * (a GPT layer's bf16 activations; fp32 gradient shards and bf16 parameters for DP). */
static const struct {
    enum sim_nccl_func func;
    size_t count;
    const char *datatype;
} nccl_call[K_COUNT] = {
    [K_TP_ALLREDUCE] = {SIM_NCCL_ALLREDUCE, 4u << 20, "ncclBfloat16"},
    [K_DP_REDUCE_SCATTER] = {SIM_NCCL_REDUCESCATTER, 32u << 20, "ncclFloat32"},
    [K_DP_ALLGATHER] = {SIM_NCCL_ALLGATHER, 32u << 20, "ncclBfloat16"},
    [K_PP_SENDRECV] = {SIM_NCCL_SEND, 4u << 20, "ncclBfloat16"},
};

/* Transfer time in ns shared by every party of one communication: its noise comes from
 * a generator seeded by (seed, step, what, who, index), never from a rank's own stream. */
static uint64_t shared_transfer(const struct sim_rank *r, enum sim_kid kid, uint64_t who,
                                uint64_t index, double factor)
{
    struct sim_rng g;
    uint64_t s = sim_mix(r->o->seed, (uint64_t)r->step);
    s = sim_mix(s, (uint64_t)kid);
    s = sim_mix(s, who);
    s = sim_mix(s, index);
    sim_rng_seed(&g, s);
    double d = sim_kernels[kid].base_us * 1e3 * sim_rng_lognormal(&g, r->o->noise) * factor;
    return d < 1000.0 ? 1000 : (uint64_t)(d + 0.5);
}

static void emit_comm(struct sim_rank *r, enum sim_kid kid, uint64_t start, uint64_t end)
{
    const struct sim_kernel_def *k = &sim_kernels[kid];
    argus_kernel(k->name, sim_ts(r, start), sim_ts(r, end), r->device, k->stream, k->cls);
    r->comm_ns += end - start;
    r->t = end;
}

void sim_collective(struct sim_rank *r, enum sim_kid kid, MPI_Comm comm,
                    struct sim_nccl_comm *nc, int group_id, double comm_factor)
{
    sim_launch_gap(r);
    uint64_t arrive = r->t, latest = arrive;
    MPI_Allreduce(&arrive, &latest, 1, MPI_UINT64_T, MPI_MAX, comm);
    uint64_t xfer = shared_transfer(r, kid, (uint64_t)group_id, r->coll_idx, comm_factor);
    r->coll_idx++;
    sim_ncclplay_coll(nc, nccl_call[kid].func, nccl_call[kid].count, nccl_call[kid].datatype,
                      sim_ts(r, arrive), sim_ts(r, latest + xfer));
    emit_comm(r, kid, arrive, latest + xfer);
}

/* Link index of a transfer: the global rank of its sender, the direction and the
 * microbatch; both ends compute the same. */
static uint64_t link_index(int dir, int mb)
{
    return (uint64_t)mb * 2u + (uint64_t)dir;
}

void sim_p2p_send(struct sim_rank *r, int dir, int mb)
{
    const int peer = dir == 0 ? r->pp_i + 1 : r->pp_i - 1;
    sim_launch_gap(r);
    const uint64_t start = r->t;
    const uint64_t xfer = shared_transfer(r, K_PP_SENDRECV, (uint64_t)r->rank,
                                          link_index(dir, mb), 1.0);
    if (r->nreqs < r->maxreqs) {
        r->sendbuf[r->nreqs] = start;
        MPI_Isend(&r->sendbuf[r->nreqs], 1, MPI_UINT64_T, peer, dir, r->pp_comm,
                  &r->reqs[r->nreqs]);
        r->nreqs++;
    } else { /* cannot happen with the 1F1B schedule; stay correct anyway */
        MPI_Send(&start, 1, MPI_UINT64_T, peer, dir, r->pp_comm);
    }
    sim_ncclplay_p2p(&r->pp_nccl, SIM_NCCL_SEND, peer, nccl_call[K_PP_SENDRECV].count,
                     nccl_call[K_PP_SENDRECV].datatype, sim_ts(r, start),
                     sim_ts(r, start + xfer));
    emit_comm(r, K_PP_SENDRECV, start, start + xfer);
}

void sim_p2p_recv(struct sim_rank *r, int dir, int mb)
{
    const int peer = dir == 0 ? r->pp_i - 1 : r->pp_i + 1;
    const int sender = r->rank + (peer - r->pp_i) * r->o->tp * r->o->dp;
    sim_launch_gap(r);
    const uint64_t ready = r->t;
    uint64_t sent = 0;
    MPI_Recv(&sent, 1, MPI_UINT64_T, peer, dir, r->pp_comm, MPI_STATUS_IGNORE);
    const uint64_t xfer = shared_transfer(r, K_PP_SENDRECV, (uint64_t)sender,
                                          link_index(dir, mb), 1.0);
    const uint64_t end = (sent > ready ? sent : ready) + xfer;
    sim_ncclplay_p2p(&r->pp_nccl, SIM_NCCL_RECV, peer, nccl_call[K_PP_SENDRECV].count,
                     nccl_call[K_PP_SENDRECV].datatype, sim_ts(r, ready), sim_ts(r, end));
    emit_comm(r, K_PP_SENDRECV, ready, end);
}

void sim_p2p_flush(struct sim_rank *r)
{
    if (r->nreqs > 0)
        MPI_Waitall(r->nreqs, r->reqs, MPI_STATUSES_IGNORE);
    r->nreqs = 0;
}
