/* test_kineto.c — cmocka units of the Kineto importer: synthetic traces written to a
 * scratch directory (rank from distributedInfo or the file name, steps keeping their N,
 * gpu_user_annotation steps, phases via correlation, old and new NCCL kernel names,
 * case-insensitive categories, unknown types counted, huge integers, JSON array format)
 * and the 8-rank DLRM set's exact per-rank counts (tests/data/dlrm-8rank-v100, whose
 * absence fails the test: the data is part of the repository).
 * Phase marks without kernels (a CPU job): the ranges' walls, clipped to each step.
 * Process groups: pg_config groups named TP/PP/DP/EP give the rank's coordinates.
 * Bounded memory: traces far over a small table limit (spilled to a temporary file and
 * summarised from it) give byte-identical summaries and the same counts as in memory —
 * a generated 40-step trace written the way Kineto writes (all CPU events, then all GPU
 * events), the same with the GPU side first, and the DLRM ranks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <glob.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "import/import.h"

struct got {
    int n;
    struct argus_step_summary s[4];
};

static void on_sum(void *ctx, const struct argus_step_summary *s)
{
    struct got *g = ctx;
    if (g->n < 4)
        memcpy(&g->s[g->n], s, sizeof *s);
    g->n++;
}

static char dir[256];

static int import_text(const char *name, const char *json, struct got *g,
                       struct argus_kineto_info *in, char *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(json, f);
    fclose(f);
    memset(g, 0, sizeof *g);
    struct argus_import_sink sink = {on_sum, NULL, g};
    return argus_kineto_import(path, NULL, &sink, in, err, 512);
}

#define K(cat, name, ts, dur, corr) \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"ts\":" #ts ",\"dur\":" #dur \
    ",\"args\":{\"stream\":7,\"device\":1,\"correlation\":" #corr "}}"

static void test_synthetic(void **state)
{
    (void)state;
    struct got g;
    struct argus_kineto_info in;
    char err[512] = "";
    const char *json =
        "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":4,"
        "\"pg_config\":[{\"pg_name\":\"0\",\"ranks\":[0,1,2,3]},{\"pg_name\":\"1\"}]},"
        "\"bigint\":10159970886766084423,\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"User_Annotation\",\"name\":\"ProfilerStep#42\",\"ts\":1000,"
        "\"dur\":1000},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: X\","
        "\"ts\":1300,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":1310,"
        "\"dur\":5,\"args\":{\"correlation\":11}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":1100,"
        "\"dur\":5,\"args\":{\"correlation\":10}},"
        K("Kernel", "gemm_fwd", 1200, 50, 10) "," K("kernel", "gemm_b", 1500, 60, 11) ","
        K("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 1600, 100, 0) ","
        K("kernel", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 1700, 10, 0)
        "," K("GPU_MEMCPY", "Memcpy HtoD", 1800, 5, 0) ","
        "{\"ph\":\"X\",\"cat\":\"mystery\",\"name\":\"m\",\"ts\":1,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"bad\",\"ts\":\"oops\",\"dur\":1},"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"x\"}}]}";
    assert_int_equal(import_text("t.json", json, &g, &in, err), 0);
    assert_int_equal(in.rank, 3);
    assert_int_equal(in.world_size, 4);
    assert_int_equal(in.pg_count, 2);
    assert_int_equal(in.kernels, 5);
    assert_int_equal(in.nccl_kernels, 2);
    assert_int_equal(in.skipped, 1);
    assert_int_equal(in.unknown_types, 1);
    assert_int_equal(in.malformed, 1);
    assert_int_equal(g.n, 1);
    const struct argus_step_summary *s = &g.s[0];
    assert_int_equal(s->step, 42);
    assert_int_equal(s->rank, 3);
    assert_int_equal(s->kernel_count, 5);
    assert_int_equal(s->collective_ns, 100000);
    assert_int_equal(s->p2p_ns, 10000);
    assert_int_equal(s->memcpy_ns, 5000);
    assert_int_equal(s->compute_ns, 110000);
    /* gemm_b was launched inside an autograd op: backward, by correlation */
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_BACKWARD], 60000);
    assert_int_equal(s->start_ns, 1000000);
    assert_int_equal(s->end_ns, 2000000);
    assert_int_equal(in.n_coll, 2);
}

#define A(name, ts, dur) \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"" name "\",\"ts\":" #ts \
    ",\"dur\":" #dur "}"

/* Phase marks only, no GPU events (a CPU job with gloo): each step's phase walls are its
 * ranges' (gloo ranges are communication, taken out of the enclosing phase, and kept as
 * the step's communication wall since no kernel says otherwise; a range past the step's
 * end counts up to the end), no kernels, no compute. */
static void test_phases_only(void **state)
{
    (void)state;
    struct got g;
    struct argus_kineto_info in;
    char err[512] = "";
    const char *json =
        "{\"distributedInfo\":{\"backend\":\"gloo\",\"rank\":1,\"world_size\":2},"
        "\"traceEvents\":["
        A("ProfilerStep#0", 1000, 1000) "," A("enumerate(DataLoader)#_Iter.__next__", 1000, 50)
        "," A("gloo:recv", 1060, 40) "," A("## forward ##", 1100, 300) ","
        A("gloo:all_reduce", 1200, 100) "," A("## backward ##", 1450, 400) ","
        A("Optimizer.step#AdamW.step", 1900, 50) "," A("ProfilerStep#1", 2000, 500) ","
        A("## forward ##", 2100, 200) "," A("## backward ##", 2400, 300) "]}";
    assert_int_equal(import_text("ph.json", json, &g, &in, err), 0);
    assert_int_equal(in.kernels, 0);
    assert_int_equal(g.n, 2);
    const struct argus_step_summary *s = &g.s[0];
    assert_int_equal(s->step, 0);
    assert_int_equal(s->kernel_count, 0);
    assert_int_equal(s->compute_ns, 0);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 200000); /* less the all-reduce */
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_BACKWARD], 400000);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OPTIMIZER], 50000);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_COMM], 140000); /* gloo:recv + all_reduce */
    s = &g.s[1];
    assert_int_equal(s->step, 1);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 200000);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_BACKWARD], 100000); /* clipped at 2500 */
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_OPTIMIZER], 0);
}

static void test_rank_from_name_and_array(void **state)
{
    (void)state;
    struct got g;
    struct argus_kineto_info in;
    char err[512] = "";
    /* JSON array format, float µs, gpu_user_annotation step, no rank inside */
    const char *json =
        "[{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#7\","
        "\"ts\":10.5,\"dur\":100.25},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#7\",\"ts\":1,"
        "\"dur\":20}," K("kernel", "k", 20.001, 30, 0) "]";
    assert_int_equal(import_text("sampled_rank-5.json", json, &g, &in, err), 0);
    assert_int_equal(in.rank, 5);
    assert_int_equal(in.rank_from_name, 1);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.s[0].step, 7);
    assert_int_equal(g.s[0].start_ns, 10500);   /* the GPU range wins */
    assert_int_equal(g.s[0].end_ns, 110750);
    /* no rank anywhere: a clear error naming the file */
    assert_int_not_equal(import_text("trace.json", json, &g, &in, err), 0);
    assert_non_null(strstr(err, "trace.json: no rank"));
    /* no ProfilerStep: one inferred step 0 */
    assert_int_equal(import_text("rank0.json", "{\"traceEvents\":[" K("kernel", "k", 5, 5, 0)
                                 "]}", &g, &in, err), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.s[0].step, 0);
    assert_true(g.s[0].flags & ARGUS_SF_STEP_INFERRED);
}

static void test_bad(void **state)
{
    (void)state;
    struct got g;
    struct argus_kineto_info in;
    char err[512];
    static const char *const bad[] = {
        "", "{", "[", "{\"traceEvents\":", "{\"traceEvents\":{}}", "nope", "{\"a\":1}",
        "{\"traceEvents\":[{\"ph\":\"X\"", "{\"traceEvents\":[]}", "{\"traceEvents\":[],}",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_not_equal(import_text("rank-1.json", bad[i], &g, &in, err), 0);
        assert_non_null(strstr(err, "rank-1.json: "));
        assert_null(strchr(err, '\n'));
    }
}

/* The DLRM trace of rank R (tests/data/dlrm-8rank-v100/workerR_*): exactly one file, or
 * the test fails naming the pattern. ARGUS_TEST_DATA comes from tests/import/Makefile.inc. */
static void dlrm_path(int r, char *path, size_t n)
{
    char pat[1024];
    glob_t g;
    snprintf(pat, sizeof pat, "%s/dlrm-8rank-v100/worker%d_*", ARGUS_TEST_DATA, r);
    int rc = glob(pat, 0, NULL, &g);
    if (rc != 0 || g.gl_pathc != 1) {
        if (rc == 0)
            globfree(&g);
        fail_msg("%s: want exactly one file (tests/data/README.md)", pat);
    }
    snprintf(path, n, "%s", g.gl_pathv[0]);
    globfree(&g);
}

static void test_dlrm(void **state)
{
    (void)state;
    static const int kernels[8] = {245, 310, 246, 315, 251, 245, 246, 246};
    static const int memsets[8] = {0, 0, 0, 6, 6, 0, 0, 0};
    for (int r = 0; r < 8; r++) {
        char path[1024];
        dlrm_path(r, path, sizeof path);
        struct got g = {0};
        struct argus_kineto_info in;
        char err[512] = "";
        struct argus_import_sink sink = {on_sum, NULL, &g};
        assert_int_equal(argus_kineto_import(path, NULL, &sink, &in, err, sizeof err), 0);
        assert_int_equal(in.rank, r);
        assert_int_equal(in.world_size, 8);
        assert_int_equal(in.rank_from_name, 0);
        assert_int_equal(g.n, 1);
        assert_int_equal(g.s[0].step, 10);
        /* + 16 gpu_memcpy + the gpu_memsets */
        assert_int_equal(in.kernels, kernels[r] + 16 + memsets[r]);
        assert_int_equal(g.s[0].kernel_count, kernels[r] + 16 + memsets[r]);
        assert_int_equal(in.nccl_kernels, 8);
        assert_int_equal(in.n_coll, 8);
        assert_int_equal(in.skipped, 0);
        /* 5 SendRecv (p2p class) + 3 AllReduce (collective), all on stream 84 */
        uint32_t sr = 0, ar = 0;
        for (uint32_t i = 0; i < g.s[0].n_kmodes; i++) {
            const struct argus_kmode_stats *k = &g.s[0].kmodes[i];
            if (k->kclass == ARGUS_KC_P2P)
                sr += k->count;
            else if (k->kclass == ARGUS_KC_COLLECTIVE)
                ar += k->count;
        }
        assert_int_equal(sr, 5);
        assert_int_equal(ar, 3);
        assert_true(g.s[0].phase_compute_ns[ARGUS_PH_BACKWARD] > 0);
        assert_true(g.s[0].phase_compute_ns[ARGUS_PH_FORWARD] > 0);
        assert_true(g.s[0].phase_compute_ns[ARGUS_PH_OPTIMIZER] > 0);
    }
}

/* pg_config groups named by kind (Megatron descriptions, mesh names) give the rank's
 * coordinates; default_pg and unnamed groups give none; the first group of a kind holding
 * the rank wins; groups without the rank are ignored. */
static void test_pg_config(void **state)
{
    (void)state;
    struct got g;
    struct argus_kineto_info in;
    char err[512] = "";
    const char *json =
        "{\"distributedInfo\":{\"rank\":5,\"world_size\":16,\"pg_config\":["
        "{\"pg_name\":\"0\",\"pg_desc\":\"default_pg\",\"pg_size\":16,\"ranks\":[0,5]},"
        "{\"pg_name\":\"1\",\"pg_desc\":\"TENSOR_MODEL_PARALLEL_GROUP\",\"pg_size\":2,"
        "\"ranks\":[4,5]},"
        "{\"pg_name\":\"2\",\"pg_desc\":\"PIPELINE_MODEL_PARALLEL_GROUP\",\"ranks\":[1,5,9,13],"
        "\"pg_size\":4},"
        "{\"pg_name\":\"3\",\"pg_desc\":\"DATA_PARALLEL_GROUP\",\"pg_size\":2,\"ranks\":[0,2]},"
        "{\"pg_name\":\"4\",\"pg_desc\":\"dp\",\"pg_size\":2,\"ranks\":[7,5]},"
        "{\"pg_name\":\"5\",\"pg_desc\":\"DATA_PARALLEL_GROUP\",\"pg_size\":2,\"ranks\":[5,7]},"
        "{\"pg_desc\":\"TENSOR_MODEL_PARALLEL_GROUP\",\"ranks\":[5,6,7,8]}]},"
        "\"traceEvents\":[" K("kernel", "gemm", 1200, 50, 0) "]}";
    assert_int_equal(import_text("pg.json", json, &g, &in, err), 0);
    assert_int_equal(in.pg_count, 7);
    assert_int_equal(in.pg_kinds, (1u << 1) | (1u << 2) | (1u << 3));
    assert_int_equal(in.coords.tp_size, 2);
    assert_int_equal(in.coords.tp, 1);
    assert_int_equal(in.coords.pp_size, 4);
    assert_int_equal(in.coords.pp, 1);
    assert_int_equal(in.coords.dp_size, 2);
    assert_int_equal(in.coords.dp, 1); /* "dp" [7,5]: the first DP group holding rank 5 */
    assert_int_equal(in.coords.ep_size, 0);
    assert_int_equal(g.n, 1);
    assert_memory_equal(&g.s[0].coords, &in.coords, sizeof in.coords);
    /* no kind named: no coordinates */
    const char *plain = "{\"distributedInfo\":{\"rank\":1,\"pg_config\":[{\"pg_desc\":"
                        "\"default_pg\",\"ranks\":[0,1]}]},\"traceEvents\":["
                        K("kernel", "gemm", 1200, 50, 0) "]}";
    assert_int_equal(import_text("pg2.json", plain, &g, &in, err), 0);
    assert_int_equal(in.pg_kinds, 0);
    assert_int_equal(g.s[0].coords.tp_size, 0);
}

/* ---- bounded memory: spilled import == in-memory import -------------------------- */

struct all {
    size_t n;
    struct argus_step_summary *s[256];
};

static void on_all(void *ctx, const struct argus_step_summary *s)
{
    struct all *a = ctx;
    size_t sz = offsetof(struct argus_step_summary, kmodes) + s->n_kmodes * sizeof s->kmodes[0];
    if (a->n < 256) {
        a->s[a->n] = malloc(sz);
        assert_non_null(a->s[a->n]);
        memcpy(a->s[a->n++], s, sz);
    }
}

static void import_all(const char *path, size_t max_mem, struct all *a,
                       struct argus_kineto_info *in)
{
    struct argus_kineto_opts o = {.max_events = 0, .max_mem = max_mem};
    struct argus_import_sink sink = {on_all, NULL, a};
    char err[512] = "";
    memset(a, 0, sizeof *a);
    int rc = argus_kineto_import(path, &o, &sink, in, err, sizeof err);
    if (rc)
        fprintf(stderr, "max_mem %zu: %s\n", max_mem, err);
    assert_int_equal(rc, 0);
}

static void all_free(struct all *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->s[i]);
}

/* Import path with the default limit and with each small one; everything must match. */
static void same_at_budgets(const char *path, size_t smallest)
{
    static struct argus_kineto_info ref, in;
    const size_t budgets[] = {smallest, 96 << 10, 512 << 10};
    struct all a, b;

    import_all(path, 0, &a, &ref);
    assert_int_equal(ref.spilled, 0);
    for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
        import_all(path, budgets[k], &b, &in);
        if (k == 0)
            assert_true(in.spilled > 1);
        assert_int_equal(b.n, a.n);
        assert_int_equal(in.steps, ref.steps);
        assert_int_equal(in.kernels, ref.kernels);
        assert_int_equal(in.outside, ref.outside);
        assert_int_equal(in.device, ref.device);
        assert_int_equal(in.n_coll, ref.n_coll);
        assert_memory_equal(in.coll_end, ref.coll_end, ref.n_coll * sizeof ref.coll_end[0]);
        for (size_t i = 0; i < a.n; i++) {
            assert_int_equal(b.s[i]->step, a.s[i]->step);
            assert_int_equal(b.s[i]->n_kmodes, a.s[i]->n_kmodes);
            assert_memory_equal(b.s[i], a.s[i], offsetof(struct argus_step_summary, kmodes) +
                                a.s[i]->n_kmodes * sizeof a.s[i]->kmodes[0]);
        }
        all_free(&b);
    }
    all_free(&a);
}

/* A trace of steps x nk kernels: CPU events (steps, phases, launches) then GPU events, or
 * the GPU side first. */
static void write_trace(const char *path, int steps, int nk, int gpu_first)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"distributedInfo\":{\"rank\":2,\"world_size\":4},\"traceEvents\":[", f);
    const char *sep = "";
    for (int side = 0; side < 2; side++) {
        int gpu = side ^ !gpu_first;
        for (int s = 0; s < steps; s++) {
            long base = 100000L + s * 5000L;
            if (!gpu) {
                fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                        "\"ProfilerStep#%d\",\"ts\":%ld,\"dur\":%d}", sep, s + 3, base,
                        nk * 10 + 20);
                sep = ",";
                fprintf(f, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::"
                        "evaluate_function: MmBackward0\",\"ts\":%ld,\"dur\":%d}",
                        base + nk * 5, nk * 3);
                fprintf(f, ",{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                        "\"## forward ##\",\"ts\":%ld,\"dur\":%d}", base + 1, nk * 4);
            }
            for (int i = 0; i < nk; i++) {
                long corr = (long)s * nk + i + 1, ts = base + 5 + i * 10;
                if (!gpu)
                    fprintf(f, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
                            "\"cudaLaunchKernel\",\"ts\":%ld,\"dur\":2,\"args\":"
                            "{\"correlation\":%ld}}", ts, corr);
                else
                    fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"%s\","
                            "\"ts\":%ld,\"dur\":%d,\"args\":{\"stream\":7,\"device\":1,"
                            "\"correlation\":%ld}}", sep,
                            i == nk - 1 ? "ncclDevKernel_AllReduce_Sum_f32" :
                            i % 3 ? "gemm_a" : "elementwise_b",
                            ts + 1500 + (i % 3 ? 0 : 3), 4 + (i * 7 + s) % 11, corr);
                sep = ",";
            }
        }
    }
    fputs("]}", f);
    fclose(f);
}

static void test_spill(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/rank-2.json", dir);
    write_trace(path, 40, 120, 0);
    same_at_budgets(path, 32 << 10);
    write_trace(path, 40, 120, 1);
    same_at_budgets(path, 32 << 10);
    for (int r = 0; r < 8; r++) {
        dlrm_path(r, path, sizeof path);
        same_at_budgets(path, 64 << 10); /* long kernel names: 32 KiB is too little */
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/argus-tk.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                       : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic),
        cmocka_unit_test(test_phases_only),
        cmocka_unit_test(test_rank_from_name_and_array),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_dlrm),
        cmocka_unit_test(test_spill),
        cmocka_unit_test(test_pg_config),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
