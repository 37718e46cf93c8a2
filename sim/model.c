/* model.c — what argus-simtrain's GPU does: the table of kernels a Megatron-style GPT
 * layer launches (names as CUPTI reports them, median durations), the deterministic
 * per-rank noise (lognormal around the median) and the emission of compute kernels.
 * It must not talk to MPI: cross-rank waiting lives in vclock.c.
 */
#include <math.h>

#include "sim/sim.h"

#define GEMM_SM90(tile, rest) \
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_" tile "_execute_segment_k_" rest "_kernel__5x_cublas"
#define FLASH_BWD_TRAITS \
    "Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>"

#define COMPUTE(n, us) { n, us, ARGUS_KERNEL_COMPUTE, SIM_STREAM_COMPUTE }

const struct sim_kernel_def sim_kernels[K_COUNT] = {
    [K_EMBED_FWD] = COMPUTE("indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
                            "true>", 35),
    [K_LN_FWD] = COMPUTE("vectorized_layer_norm_kernel<c10::BFloat16, float>", 30),
    [K_GEMM_QKV_FWD] = COMPUTE(GEMM_SM90("tn_n_tilesize128x128x64_warpgroupsize1x1x1", "off"),
                               320),
    [K_FLASH_FWD] = COMPUTE("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, "
                            "false, cutlass::bfloat16_t>>", 380),
    [K_GEMM_PROJ_FWD] = COMPUTE(GEMM_SM90("tn_n_tilesize128x64x64_warpgroupsize1x1x1", "off"),
                                140),
    [K_ADD_FWD] = COMPUTE("vectorized_elementwise_kernel<4, CUDAFunctor_add<c10::BFloat16>, "
                          "at::detail::Array<char*, 3>>", 22),
    [K_GEMM_FC1_FWD] = COMPUTE(GEMM_SM90("tn_n_tilesize256x128x64_warpgroupsize2x1x1", "off"),
                               560),
    [K_GELU_FWD] = COMPUTE("vectorized_elementwise_kernel<4, GeluCUDAKernelImpl(at::"
                           "TensorIteratorBase&, GeluType)::{lambda()#2}::operator()() const::"
                           "{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
                           "at::detail::Array<char*, 2>>", 48),
    [K_GEMM_FC2_FWD] = COMPUTE("cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_"
                               "128x256_64x3_tn_align8>", 520),
    [K_GEMM_LOGITS_FWD] = COMPUTE(GEMM_SM90("tn_n_tilesize256x128x64_warpgroupsize2x1x1", "on"),
                                  260),
    [K_SOFTMAX_FWD] = COMPUTE("cunn_SoftMaxForward<4, float, float, float, "
                              "LogSoftMaxForwardEpilogue>", 55),

    [K_SOFTMAX_BWD] = COMPUTE("cunn_SoftMaxBackward<4, float, float, float, "
                              "LogSoftMaxBackwardEpilogue>", 50),
    [K_GEMM_LOGITS_DGRAD] = COMPUTE(GEMM_SM90("nn_n_tilesize256x128x64_warpgroupsize2x1x1",
                                              "on"), 260),
    [K_GEMM_LOGITS_WGRAD] = COMPUTE(GEMM_SM90("nt_n_tilesize256x128x64_warpgroupsize2x1x1",
                                              "on"), 270),
    [K_GEMM_FC2_DGRAD] = COMPUTE("cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_"
                                 "128x256_64x3_nn_align8>", 520),
    [K_GEMM_FC2_WGRAD] = COMPUTE("cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_"
                                 "128x256_64x3_nt_align8>", 540),
    [K_GELU_BWD] = COMPUTE("vectorized_elementwise_kernel<4, GeluBackwardCUDAKernelImpl(at::"
                           "TensorIteratorBase&, GeluType)::{lambda()#2}::operator()() const::"
                           "{lambda()#4}::operator()() const::{lambda(c10::BFloat16, "
                           "c10::BFloat16)#1}, at::detail::Array<char*, 3>>", 55),
    [K_GEMM_FC1_DGRAD] = COMPUTE(GEMM_SM90("nn_n_tilesize128x256x64_warpgroupsize2x1x1", "off"),
                                 580),
    [K_GEMM_FC1_WGRAD] = COMPUTE(GEMM_SM90("nt_n_tilesize128x256x64_warpgroupsize2x1x1", "off"),
                                 600),
    [K_LN_BWD_INPUT] = COMPUTE("layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>",
                               40),
    [K_LN_BWD_GAMMA] = COMPUTE("GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>", 28),
    [K_GEMM_PROJ_DGRAD] = COMPUTE(GEMM_SM90("nn_n_tilesize128x64x64_warpgroupsize1x1x1", "off"),
                                  150),
    [K_GEMM_PROJ_WGRAD] = COMPUTE(GEMM_SM90("nt_n_tilesize128x64x64_warpgroupsize1x1x1", "off"),
                                  160),
    [K_FLASH_BWD_DOT] = COMPUTE("flash_bwd_dot_do_o_kernel<true, " FLASH_BWD_TRAITS ">", 24),
    [K_FLASH_BWD] = COMPUTE("flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<" FLASH_BWD_TRAITS
                            ", true, false, false, false, false, true, false>", 560),
    [K_FLASH_BWD_CONVERT] = COMPUTE("flash_bwd_convert_dq_kernel<" FLASH_BWD_TRAITS ">", 26),
    [K_GEMM_QKV_DGRAD] = COMPUTE(GEMM_SM90("nn_n_tilesize128x128x64_warpgroupsize1x1x1", "off"),
                                 330),
    [K_GEMM_QKV_WGRAD] = COMPUTE(GEMM_SM90("nt_n_tilesize128x128x64_warpgroupsize1x1x1", "off"),
                                 340),
    [K_EMBED_BWD] = COMPUTE("embedding_backward_feature_kernel<c10::BFloat16, float, long>", 70),

    [K_GRAD_NORM] = COMPUTE("multi_tensor_apply_kernel<TensorListMetadata<1>, "
                            "L2NormFunctor<float, float>, float*, float*, int*, int, bool>", 120),
    [K_ADAM] = COMPUTE("multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, "
                       "float, float, float, float, float, float, adamMode_t, float>", 1400),

    [K_TP_ALLREDUCE] = { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 80,
                         ARGUS_KERNEL_COLLECTIVE, SIM_STREAM_NCCL },
    [K_PP_SENDRECV] = { "ncclDevKernel_SendRecv", 70, ARGUS_KERNEL_P2P, SIM_STREAM_NCCL_P2P },
    [K_DP_REDUCE_SCATTER] = { "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", 3200,
                              ARGUS_KERNEL_COLLECTIVE, SIM_STREAM_NCCL },
    [K_DP_ALLGATHER] = { "ncclDevKernel_AllGather_RING_LL", 2400, ARGUS_KERNEL_COLLECTIVE,
                         SIM_STREAM_NCCL },
};

/* splitmix64 finaliser of a ^ f(b): a cheap, well-mixed combination of two words. */
uint64_t sim_mix(uint64_t a, uint64_t b)
{
    uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sim_rng_seed(struct sim_rng *g, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ull;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        g->s[i] = z ^ (z >> 31);
    }
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** */
uint64_t sim_rng_next(struct sim_rng *g)
{
    uint64_t *s = g->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in (0, 1). */
static double rng_unit(struct sim_rng *g)
{
    return ((double)(sim_rng_next(g) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* exp(sigma * z), z standard normal (Box-Muller): median 1. */
double sim_rng_lognormal(struct sim_rng *g, double sigma)
{
    if (sigma <= 0)
        return 1.0;
    const double u1 = rng_unit(g), u2 = rng_unit(g);
    const double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
    return exp(sigma * z);
}

void sim_launch_gap(struct sim_rank *r)
{
    r->t += 2000 + sim_rng_next(&r->rng) % 4000; /* 2-6 µs between launches */
}

void sim_compute(struct sim_rank *r, enum sim_kid kid)
{
    const struct sim_kernel_def *k = &sim_kernels[kid];
    sim_launch_gap(r);
    double d = k->base_us * 1e3 * sim_rng_lognormal(&r->rng, r->o->noise) * r->kfactor[kid];
    uint64_t dur = d < 1000.0 ? 1000 : (uint64_t)(d + 0.5);
    argus_kernel(k->name, sim_ts(r, r->t), sim_ts(r, r->t + dur), r->device, k->stream, k->cls);
    r->t += dur;
    r->compute_ns += dur;
}
