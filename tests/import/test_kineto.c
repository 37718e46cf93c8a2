/* test_kineto.c — cmocka units of the Kineto importer: synthetic traces written to a
 * scratch directory (rank from distributedInfo or the file name, steps keeping their N,
 * gpu_user_annotation steps, phases via correlation, old and new NCCL kernel names,
 * case-insensitive categories, unknown types counted, huge integers, JSON array format)
 * and, when ../shared/data is present, the 8-rank DLRM set's exact per-rank counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/import.h"

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

static void test_dlrm(void **state)
{
    (void)state;
    static const int kernels[8] = {245, 310, 246, 315, 251, 245, 246, 246};
    static const int memsets[8] = {0, 0, 0, 6, 6, 0, 0, 0};
    const char *top = getenv("top_srcdir");
    char pat[1024];
    if (!top)
        skip();
    for (int r = 0; r < 8; r++) {
        snprintf(pat, sizeof pat, "ls %s/../shared/data/traces/dlrm-8rank-v100/worker%d_* "
                 "2>/dev/null", top, r);
        FILE *p = popen(pat, "r");
        char path[1024] = "";
        if (!p || !fgets(path, sizeof path, p)) {
            if (p)
                pclose(p);
            skip();
        }
        pclose(p);
        path[strcspn(path, "\n")] = '\0';
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

int main(void)
{
    snprintf(dir, sizeof dir, "%s/argus-tk.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                       : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic),
        cmocka_unit_test(test_rank_from_name_and_array),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_dlrm),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
