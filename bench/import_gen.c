/* import_gen.c — writes a synthetic PyTorch-profiler (Kineto) trace of any size to stdout,
 * laid out as Kineto writes it: distributedInfo, then every CPU event of every step
 * (ProfilerStep#N, forward/optimizer annotations, autograd backward ops, cudaLaunchKernel
 * with correlation ids), then every GPU event (kernels with stream/device/correlation,
 * NCCL all-reduces), so an importer must hold or spill the whole CPU side before the first
 * kernel. Deterministic (seeded per step). For the big-trace benchmark (make
 * bench-import-big) and the bounded-memory test (tests/import/t_spill.sh).
 * The document goes through one yajl_gen whose print callback streams it to stdout through
 * a 1 MiB buffer (docs/STYLE.md, "File formats and JSON"): memory stays flat at any size.
 * Must not print JSON by hand, must not hold the trace in memory.
 * usage: import_gen [-r RANK] [-s STEPS] [-k KERNELS_PER_STEP] [-m MB] [-S SLOW_RANK]
 *   -m MB: as many steps as make about MB megabytes (overrides -s).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

static struct {
    uint64_t rng;
    yajl_gen g;
    int bad;           /* a generator call or a write failed: the exit status says so */
    size_t n;          /* bytes in out */
    char out[1 << 20]; /* yajl prints a few bytes a call: gathered here, written by MiB */
} import_gen;

static uint32_t rnd(void)
{
    import_gen.rng ^= import_gen.rng << 13;
    import_gen.rng ^= import_gen.rng >> 7;
    import_gen.rng ^= import_gen.rng << 17;
    return (uint32_t)(import_gen.rng >> 11);
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

    import_gen.rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)step * 2654435761u + 1);
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

/* ---- the generator: every token checked, the first failure remembered ----------- */

static void ck(yajl_gen_status s)
{
    if (s != yajl_gen_status_ok)
        import_gen.bad = 1;
}

static void str(const char *s)
{
    ck(yajl_gen_string(import_gen.g, (const unsigned char *)s, strlen(s)));
}

static void kstr(const char *key, const char *s)
{
    str(key);
    str(s);
}

static void kint(const char *key, unsigned long long v)
{
    str(key);
    ck(yajl_gen_integer(import_gen.g, (long long)v));
}

static void open_map(void)
{
    ck(yajl_gen_map_open(import_gen.g));
}

static void close_map(void)
{
    ck(yajl_gen_map_close(import_gen.g));
}

/* "key": [a, b, c] */
static void kints3(const char *key, long long a, long long b, long long c)
{
    str(key);
    ck(yajl_gen_array_open(import_gen.g));
    ck(yajl_gen_integer(import_gen.g, a));
    ck(yajl_gen_integer(import_gen.g, b));
    ck(yajl_gen_integer(import_gen.g, c));
    ck(yajl_gen_array_close(import_gen.g));
}

/* {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
 * leaving the map open for "args" */
static void x_event(const char *cat, const char *name, unsigned pid, unsigned tid,
                    unsigned long long ts, unsigned long long dur)
{
    open_map();
    kstr("ph", "X");
    kstr("cat", cat);
    kstr("name", name);
    kint("pid", pid);
    kint("tid", tid);
    kint("ts", ts);
    kint("dur", dur);
}

static void header(uint32_t rank)
{
    open_map();
    kint("schemaVersion", 1);
    str("distributedInfo");
    open_map();
    kstr("backend", "nccl");
    kint("rank", rank);
    kint("world_size", 8);
    kint("pg_count", 1);
    str("pg_config");
    ck(yajl_gen_array_open(import_gen.g));
    open_map();
    kstr("pg_name", "0");
    kstr("pg_desc", "default_pg");
    kstr("backend_config", "cuda:nccl");
    kint("pg_size", 8);
    str("ranks");
    ck(yajl_gen_array_open(import_gen.g));
    for (int r = 0; r < 8; r++)
        ck(yajl_gen_integer(import_gen.g, r));
    ck(yajl_gen_array_close(import_gen.g));
    close_map();
    ck(yajl_gen_array_close(import_gen.g));
    close_map();
    str("traceEvents");
    ck(yajl_gen_array_open(import_gen.g));
}

static void cpu_step(uint32_t s, uint32_t nk, const struct k *v)
{
    uint64_t base = 1000000 + (uint64_t)s * STEP_US;
    uint64_t cpu_end = v[nk - 1].launch + 50;
    char name[32];

    snprintf(name, sizeof name, "ProfilerStep#%u", s);
    x_event("user_annotation", name, 1, 1, base + 100, cpu_end - base - 100);
    str("args");
    open_map();
    kint("External id", s);
    close_map();
    close_map();
    x_event("user_annotation", "## forward ##", 1, 1, v[0].launch - 1,
            v[nk * 4 / 10].launch - v[0].launch);
    close_map();
    for (uint32_t i = 0; i < nk; i++) {
        if (v[i].phase == 1 && (i - nk * 4 / 10) % 4 == 0) {
            x_event("cpu_op", "autograd::engine::evaluate_function: MmBackward0", 1, 2,
                    v[i].launch - 2, 50);
            str("args");
            open_map();
            kint("Sequence number", i);
            kint("Fwd thread id", 1);
            close_map();
            close_map();
        }
        if (v[i].phase == 2 && i == nk * 9 / 10) {
            x_event("user_annotation", "Optimizer.step#AdamW.step", 1, 1, v[i].launch - 1,
                    v[nk - 3].launch - v[i].launch + 5);
            close_map();
        }
        x_event("cuda_runtime", "cudaLaunchKernel", 1, v[i].phase == 1 ? 2 : 1, v[i].launch, 5);
        str("args");
        open_map();
        kint("cbid", 211);
        kint("correlation", (uint64_t)s * nk + i + 1);
        kint("External id", i);
        close_map();
        close_map();
    }
}

static void gpu_step(uint32_t s, uint32_t nk, const struct k *v)
{
    for (uint32_t i = 0; i < nk; i++) {
        const char *n = v[i].name < NNAMES ? names[v[i].name]
                                           : "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
        unsigned stream = v[i].phase == 3 ? 20 : 7;
        x_event("kernel", n, 0, stream, v[i].start, v[i].dur);
        str("args");
        open_map();
        kint("queued", 0);
        kint("device", 0);
        kint("context", 1);
        kint("stream", stream);
        kint("correlation", (uint64_t)s * nk + i + 1);
        kint("registers per thread", 128);
        kint("shared memory", 49152);
        str("blocks per SM");
        ck(yajl_gen_number(import_gen.g, "1.5", 3));
        kints3("grid", 132, 1, 1);
        kints3("block", 256, 1, 1);
        close_map();
        close_map();
    }
}

static void flush_out(FILE *f)
{
    if (import_gen.n && fwrite(import_gen.out, 1, import_gen.n, f) != import_gen.n)
        import_gen.bad = 1;
    import_gen.n = 0;
}

static void print_cb(void *ctx, const char *s, size_t len)
{
    if (len > sizeof import_gen.out - import_gen.n) {
        flush_out(ctx);
        if (len > sizeof import_gen.out) {
            if (fwrite(s, 1, len, (FILE *)ctx) != len)
                import_gen.bad = 1;
            return;
        }
    }
    memcpy(import_gen.out + import_gen.n, s, len);
    import_gen.n += len;
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
    if (mb > 0) /* about 500 bytes per kernel (launch + kernel) plus the step's ranges */
        steps = (uint32_t)((mb * 1000000) / (nk * 500ull + 1800) + 1);
    struct k *v = malloc(nk * sizeof *v);
    import_gen.g = yajl_gen_alloc(NULL);
    if (!v || !import_gen.g) {
        free(v);
        return 1;
    }
    yajl_gen_config(import_gen.g, yajl_gen_print_callback, print_cb, stdout);
    yajl_gen_config(import_gen.g, yajl_gen_validate_utf8, 1);
    header(rank);
    for (uint32_t s = 0; s < steps && !import_gen.bad; s++) { /* CPU side */
        step_kernels(s, nk, (int)rank == slow, v);
        cpu_step(s, nk, v);
    }
    for (uint32_t s = 0; s < steps && !import_gen.bad; s++) { /* GPU side */
        step_kernels(s, nk, (int)rank == slow, v);
        gpu_step(s, nk, v);
    }
    ck(yajl_gen_array_close(import_gen.g));
    close_map();
    print_cb(stdout, "\n", 1);
    flush_out(stdout);
    yajl_gen_free(import_gen.g);
    free(v);
    if (import_gen.bad)
        fprintf(stderr, "import_gen: JSON generation or the write failed\n");
    return (fflush(stdout) != 0 || ferror(stdout) || import_gen.bad) ? 1 : 0;
}
