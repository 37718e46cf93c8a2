/* import_gen.c — writes a synthetic PyTorch-profiler (Kineto) trace of any size to stdout,
 * laid out as Kineto writes it: distributedInfo, then every CPU event of every step
 * (ProfilerStep#N, forward/optimizer annotations, autograd backward ops, cudaLaunchKernel
 * with correlation ids), then every GPU event (kernels with stream/device/correlation,
 * NCCL all-reduces), so an importer must hold or spill the whole CPU side before the first
 * kernel. Deterministic (seeded per step). For the big-trace benchmark (make
 * bench-import-big) and the bounded-memory test (tests/import/t_spill.sh).
 * usage: import_gen [-r RANK] [-s STEPS] [-k KERNELS_PER_STEP] [-m MB] [-S SLOW_RANK]
 *   -m MB: as many steps as make about MB megabytes (overrides -s).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static uint64_t rng;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static const char *const names[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
    "void at::native::(anonymous namespace)::layer_norm_kernel<float, float>",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn",
    "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_nn>",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>",
    "fmha_cutlassF_bf16_aligned_64x128_rf_sm80",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>",
};
#define NNAMES (sizeof names / sizeof names[0])
#define STEP_US 20000

struct k {
    uint64_t launch, start, dur;
    uint32_t name, phase; /* phase 0 fwd, 1 bwd, 2 optimizer, 3 nccl */
};

static void step_kernels(uint32_t step, uint32_t nk, int slow, struct k *out)
{
    uint64_t base = 1000000 + (uint64_t)step * STEP_US, t = base + 200, g = base + 900;

    rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)step * 2654435761u + 1);
    for (uint32_t i = 0; i < nk; i++) {
        struct k *x = &out[i];
        x->phase = i < nk * 4 / 10 ? 0 : i < nk * 9 / 10 ? 1 : i < nk - 2 ? 2 : 3;
        x->name = x->phase == 3 ? NNAMES : rnd() % NNAMES;
        x->launch = t;
        t += 8 + rnd() % 8;
        x->dur = x->phase == 3 ? 900 + rnd() % 200 : 5 + (x->name * 7 + rnd() % 5) * (slow ? 2 : 1);
        x->start = g > x->launch + 4 ? g : x->launch + 4;
        g = x->start + x->dur + 1;
    }
}

int main(int argc, char **argv)
{
    uint32_t rank = 0, steps = 20, nk = 400;
    int slow = -1, c;
    long mb = 0;

    while ((c = getopt(argc, argv, "r:s:k:m:S:")) != -1) {
        switch (c) {
        case 'r': rank = (uint32_t)atol(optarg); break;
        case 's': steps = (uint32_t)atol(optarg); break;
        case 'k': nk = (uint32_t)atol(optarg); break;
        case 'm': mb = atol(optarg); break;
        case 'S': slow = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: import_gen [-r RANK] [-s STEPS] [-k KERNELS] [-m MB] "
                            "[-S SLOW_RANK]\n");
            return 2;
        }
    }
    if (nk < 8)
        nk = 8;
    if (mb > 0) /* about 560 bytes per kernel (launch + kernel) plus the step's ranges */
        steps = (uint32_t)((mb * 1000000) / (nk * 560ull + 2000) + 1);
    struct k *v = malloc(nk * sizeof *v);
    if (!v)
        return 1;
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    printf("{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %u, "
           "\"world_size\": 8, \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", "
           "\"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": 8, "
           "\"ranks\": [0, 1, 2, 3, 4, 5, 6, 7]}]},\n\"traceEvents\": [\n", rank);
    int first = 1;
#define SEP() (first ? (first = 0, "") : ",\n")
    for (uint32_t s = 0; s < steps; s++) { /* CPU side */
        uint64_t base = 1000000 + (uint64_t)s * STEP_US;
        step_kernels(s, nk, (int)rank == slow, v);
        uint64_t cpu_end = v[nk - 1].launch + 50;
        printf("%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%u\", "
               "\"pid\": 1, \"tid\": 1, \"ts\": %llu, \"dur\": %llu, \"args\": {\"External id\": "
               "%u}}", SEP(), s, (unsigned long long)base + 100,
               (unsigned long long)(cpu_end - base - 100), s);
        printf(",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"## forward ##\", "
               "\"pid\": 1, \"tid\": 1, \"ts\": %llu, \"dur\": %llu}",
               (unsigned long long)v[0].launch - 1,
               (unsigned long long)(v[nk * 4 / 10].launch - v[0].launch));
        for (uint32_t i = 0; i < nk; i++) {
            if (v[i].phase == 1 && (i - nk * 4 / 10) % 4 == 0)
                printf(",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"autograd::engine::"
                       "evaluate_function: MmBackward0\", \"pid\": 1, \"tid\": 2, \"ts\": %llu, "
                       "\"dur\": %llu, \"args\": {\"Sequence number\": %u, \"Fwd thread id\": 1}}",
                       (unsigned long long)v[i].launch - 2, (unsigned long long)50, i);
            if (v[i].phase == 2 && i == nk * 9 / 10)
                printf(",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                       "\"Optimizer.step#AdamW.step\", \"pid\": 1, \"tid\": 1, \"ts\": %llu, "
                       "\"dur\": %llu}", (unsigned long long)v[i].launch - 1,
                       (unsigned long long)(v[nk - 3].launch - v[i].launch + 5));
            printf(",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                   "\"pid\": 1, \"tid\": %u, \"ts\": %llu, \"dur\": 5, \"args\": {\"cbid\": 211, "
                   "\"correlation\": %llu, \"External id\": %u}}", v[i].phase == 1 ? 2 : 1,
                   (unsigned long long)v[i].launch,
                   (unsigned long long)s * nk + i + 1, i);
        }
    }
    for (uint32_t s = 0; s < steps; s++) { /* GPU side */
        step_kernels(s, nk, (int)rank == slow, v);
        for (uint32_t i = 0; i < nk; i++) {
            const char *n = v[i].name < NNAMES ? names[v[i].name]
                                               : "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
            printf("%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, "
                   "\"tid\": %u, \"ts\": %llu, \"dur\": %llu, \"args\": {\"queued\": 0, "
                   "\"device\": 0, \"context\": 1, \"stream\": %u, \"correlation\": %llu, "
                   "\"registers per thread\": 128, \"shared memory\": 49152, \"blocks per SM\": "
                   "1.5, \"grid\": [132, 1, 1], \"block\": [256, 1, 1]}}", SEP(), n,
                   v[i].phase == 3 ? 20 : 7, (unsigned long long)v[i].start,
                   (unsigned long long)v[i].dur, v[i].phase == 3 ? 20 : 7,
                   (unsigned long long)s * nk + i + 1);
        }
    }
    printf("\n]}\n");
    free(v);
    return fflush(stdout) != 0;
}
