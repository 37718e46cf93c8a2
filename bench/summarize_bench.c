/* summarize_bench.c — cost of the tracer's hot path: ns per argus_kernel() call and per
 * step-summary build, for STEPS steps of KERNELS kernels (default 50,000) over NAMES
 * distinct, realistically long kernel names with 1-3 duration modes each, on 2 streams.
 * Times are thread CPU time. Not a test; prints its result as one JSON line through
 * yajl_gen (docs/STYLE.md, "Benchmarks"):
 *   {"bench":"summarize","kernels_per_step":..,"names":..,"steps":..,
 *    "ns_per_kernel_call":..,"ms_per_step_build":..,"ns_per_kernel_build":..,"kmodes":..}
 * Built and run by `make bench` (bench/Makefile.inc).
 * Usage: summarize_bench [kernels_per_step [names [steps]]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#include "bench/benchline.h"
#include "tracer/argus.h"
#include "tracer/tracer.h"

/* Thread CPU time, so that other load on the machine (preemption) does not count. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t build_ns_total;
static uint64_t end_call_t0;
static uint32_t kmodes_last;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    build_ns_total += cpu_ns() - end_call_t0;
    kmodes_last = s->n_kmodes;
}

/* The one result line; 0, or 1 when generation failed. */
static int print_result(size_t nk, size_t nn, size_t steps, uint64_t kern_ns)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    int bad = !g;

    if (bad)
        return 1;
    yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout);
    bad = yajl_gen_map_open(g) != yajl_gen_status_ok ||
          argus_bench_str(g, "bench", "summarize") ||
          argus_bench_uint(g, "kernels_per_step", nk) || argus_bench_uint(g, "names", nn) ||
          argus_bench_uint(g, "steps", steps) ||
          argus_bench_fix(g, "ns_per_kernel_call", (double)kern_ns / (double)(nk * steps), 1) ||
          argus_bench_fix(g, "ms_per_step_build",
                          (double)build_ns_total / (double)steps / 1e6, 3) ||
          argus_bench_fix(g, "ns_per_kernel_build",
                          (double)build_ns_total / (double)(nk * steps), 1) ||
          argus_bench_uint(g, "kmodes", kmodes_last) ||
          yajl_gen_map_close(g) != yajl_gen_status_ok;
    yajl_gen_free(g);
    fputc('\n', stdout);
    return bad;
}

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

int main(int argc, char **argv)
{
    size_t nk = argc > 1 ? strtoul(argv[1], NULL, 10) : 50000;
    size_t nn = argc > 2 ? strtoul(argv[2], NULL, 10) : 400;
    size_t steps = argc > 3 ? strtoul(argv[3], NULL, 10) : 20;
    struct argus_tracer_opts o = {.rank = 0, .max_events = nk, .on_summary = on_summary};
    char (*names)[160] = calloc(nn, sizeof *names);
    uint32_t *seq = calloc(nk, sizeof *seq);
    uint64_t *dur = calloc(nk, sizeof *dur);
    uint32_t seed = 12345;
    uint64_t kern_ns = 0;

    if (!names || !seq || !dur || nn == 0)
        return 1;
    for (size_t i = 0; i < nn; i++)
        snprintf(names[i], sizeof names[i],
                 "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelined"
                 "ILi%zuELi128ELi32EEENS_8epilogue11EpilogueTileILi64EEEEEvNT_6ParamsE",
                 i);
    /* A fixed per-step sequence, as a training step repeats its kernels. */
    for (size_t i = 0; i < nk; i++) {
        seq[i] = rnd(&seed) % (uint32_t)nn;
        uint64_t base = 5000 + (uint64_t)(seq[i] % 50) * 4000;
        dur[i] = base * (1 + rnd(&seed) % 3 * 3) + rnd(&seed) % (base / 20 + 1);
    }
    if (argus_tracer_start(&o) < 0)
        return 1;
    uint64_t t = argus_now_ns();
    for (size_t s = 0; s < steps; s++) {
        argus_step_begin(s + 1, t);
        argus_phase_push("forward", t);
        uint64_t c0 = cpu_ns();
        uint64_t ts[2] = {t, t};
        for (size_t i = 0; i < nk; i++) {
            if (i == nk / 2) {
                argus_phase_pop(ts[0]);
                argus_phase_push("backward", ts[0]);
            }
            uint64_t *st = &ts[i % 7 == 0];
            argus_kernel(names[seq[i]], *st, *st + dur[i], 0, (uint32_t)(i % 7 == 0),
                         i % 7 == 0 ? ARGUS_KERNEL_COLLECTIVE : ARGUS_KERNEL_COMPUTE);
            *st += dur[i] + 2000;
        }
        kern_ns += cpu_ns() - c0;
        argus_phase_pop(ts[0]);
        t = (ts[0] > ts[1] ? ts[0] : ts[1]) + 10000;
        end_call_t0 = cpu_ns();
        argus_step_end(s + 1, t);
        t += 10000;
    }
    argus_tracer_stop();
    int bad = print_result(nk, nn, steps, kern_ns);
    free(names);
    free(seq);
    free(dur);
    return bad || fflush(stdout) != 0;
}
