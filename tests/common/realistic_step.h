/* realistic_step.h — the "realistic step" shared by bench/tracer_bench.c and
 * tests/common/test_wire_step.c, so the figure the bench prints and the figure the test
 * holds to the budget come from the same launches: RS_KPS kernel launches per step over
 * RS_NAMES names (the first 8 NCCL all-reduce kernels on stream 1, the rest cutlass GEMMs
 * on stream 0), name n drawn with density ~ u^3 (a few hot kernels, a long tail), about
 * 400 / (1 + n) us long, every third name bimodal (x2 on odd launches), +-3 % noise. The
 * name sequence is the same every step (pick seed 7); the noise seed is 1234 + step.
 * Header-only test/bench code: every function is static. No allocation.
 */
#ifndef ARGUS_TESTS_COMMON_REALISTIC_STEP_H
#define ARGUS_TESTS_COMMON_REALISTIC_STEP_H

#include <stdint.h>
#include <stdio.h>

#define RS_KPS 50000
#define RS_NAMES 200
#define RS_NCCL 8 /* names 0..7: collectives */

struct rs_gen {
    uint32_t pick, seed;
    int i;
};

static inline uint32_t rs_rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* names[n] for n < RS_NAMES. */
static inline void rs_names(char names[][128])
{
    for (int i = 0; i < RS_NAMES; i++)
        snprintf(names[i], 128, i < RS_NCCL ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL_%d"
                 : "_ZN7cutlass6KernelINS_4gemm6kernel4GemmILi%dELi128ELi32EEEEEvNT_6ParamsE", i);
}

static inline void rs_begin(struct rs_gen *g, int step)
{
    g->pick = 7;
    g->seed = 1234u + (uint32_t)step;
    g->i = 0;
}

/* The next launch of the step: its name index in *name; returns its duration in ns.
 * Launches run back to back (the next starts where this one ends). */
static inline uint64_t rs_next(struct rs_gen *g, int *name)
{
    double u = (double)(rs_rnd(&g->pick) >> 8) / (double)(1u << 24);
    int n = (int)(u * u * u * RS_NAMES);
    double us = 400.0 / (1 + n) * (1 + (n % 3 == 0 && g->i % 2));
    double noise = 1 + 0.03 * ((double)(rs_rnd(&g->seed) % 2001) / 1000.0 - 1);

    g->i++;
    *name = n;
    return (uint64_t)(us * 1000 * noise) + 1000;
}

#endif /* ARGUS_TESTS_COMMON_REALISTIC_STEP_H */
