/* test_pystacks.c — argus-analyze's host stacks from Kineto python_function events
 * (import/pystacks.c, through import/kineto.c's reader): the innermost Python call of at
 * least ARGUS_STACKS_MIN_MS inside one step is a stall sample with its whole chain, in the
 * live sampler's frame format; calls spanning steps or shorter are not; threads are told
 * apart (numeric and string tids); healthy peers give their stack at the middle of the
 * same step, of the same peer class (TP/PP position, another DP replica) when the traces
 * state a layout, else the nearest ranks; a discarded trace leaves nothing; bounds hold.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/stackrec.h"
#include "import/import.h"
#include "import/pystacks.h"

static void sum_cb(void *ctx, const struct argus_step_summary *s) { (void)ctx; (void)s; }
static void name_cb(void *ctx, uint64_t h, const char *n) { (void)ctx; (void)h; (void)n; }

/* A trace of 6 steps of 100 ms from t=1 s (µs in the JSON): <module> and main span them
 * all on thread tid; a call of stall_ms in each step of stall_steps (bit mask) on tid, and
 * one of 300 ms on thread 77 at step 1 that is not the step loop ("loader" spans step
 * ends: no stall). tp: the TP position in a layout of TP 2 x DP 2 (-1: no layout). */
static void write_trace(const char *path, int rank, const char *tid, unsigned stall_steps,
                        int stall_ms, int tp)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"traceEvents\": [\n");
    const double t0 = 1e6;
    double t = t0;
    for (int s = 0; s < 6; s++) {
        double len = 100000 + ((stall_steps >> s & 1) ? stall_ms * 1000.0 : 0);
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
                "\"tid\":%s,\"ts\":%.3f,\"dur\":%.3f},\n", s, tid, t, len);
        if (stall_steps >> s & 1) {
            fprintf(f, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"app.py(7): "
                    "stall_here\",\"tid\":%s,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"Python id\""
                    ":9}},\n", tid, t + 10, stall_ms * 1000.0);
            fprintf(f, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"<built-in "
                    "method sleep of module object at 0x7f>\",\"tid\":%s,\"ts\":%.3f,\"dur\":"
                    "%.3f},\n", tid, t + 20, 30000.0); /* short: not a frame of the stall */
        }
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"model.py(12): "
                "forward\",\"tid\":%s,\"ts\":%.3f,\"dur\":%.3f},\n", tid, t + len - 90000,
                80000.0);
        t += len;
    }
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"loader.py(3): fetch\","
            "\"tid\":77,\"ts\":%.3f,\"dur\":300000},\n", t0 + 50000);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"app.py(40): <module>\","
            "\"tid\":%s,\"ts\":%.3f,\"dur\":%.3f},\n", tid, t0 - 500, t - t0 + 1000);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"app.py(30): main\","
            "\"tid\":%s,\"ts\":%.3f,\"dur\":%.3f}\n", tid, t0 - 400, t - t0 + 800);
    fprintf(f, "], \"distributedInfo\": {\"rank\": %d, \"world_size\": 4", rank);
    if (tp >= 0) /* TP groups {0,1} {2,3}; DP groups {0,2} {1,3} */
        fprintf(f, ", \"pg_config\": [{\"pg_desc\": \"TENSOR_MODEL_PARALLEL_GROUP\", "
                "\"pg_size\": 2, \"ranks\": [%d, %d]}, {\"pg_desc\": "
                "\"DATA_PARALLEL_GROUP\", \"pg_size\": 2, \"ranks\": [%d, %d]}]",
                rank & ~1, rank | 1, rank & 1, (rank & 1) + 2);
    fprintf(f, "}}\n");
    fclose(f);
}

/* Import path as it is accepted (commit) or refused (discard). */
static void import(struct argus_pystacks *ps, const char *path, int commit)
{
    struct argus_import_sink sink = {sum_cb, name_cb, NULL};
    struct argus_kineto_opts o = {0};
    struct argus_kineto_info in;
    char err[512];
    o.pystacks = ps;
    assert_int_equal(argus_kineto_import(path, &o, &sink, &in, err, sizeof err), 0);
    if (commit)
        argus_pystacks_commit(ps, (uint32_t)in.rank, in.pg_kinds != 0, &in.coords);
    else
        argus_pystacks_discard(ps);
}

static char dir[64];

static const char *at(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void test_stall_and_peers(void **state)
{
    (void)state;
    struct argus_pystacks *ps = argus_pystacks_new(200);
    struct argus_stackset set;
    assert_non_null(ps);
    write_trace(at("r0.json"), 0, "100", 0, 0, -1);
    write_trace(at("r1.json"), 1, "\"101\"", 1u << 2 | 1u << 4, 450, -1);
    write_trace(at("r2.json"), 2, "102", 0, 0, -1);
    write_trace(at("r3.json"), 3, "103", 1u << 4, 150, -1); /* shorter than 200 ms */
    import(ps, at("r0.json"), 1);
    import(ps, at("r3.json"), 1);
    import(ps, at("r1.json"), 1);
    import(ps, at("r2.json"), 0); /* refused: nothing of it stays */
    assert_int_equal(argus_pystacks_stalls(ps), 2);
    assert_int_equal(argus_stackset_init(&set, 64), 0);
    /* 2 stalls of rank 1, each with its 2 peers (ranks 0 and 3: 2 was discarded) */
    assert_int_equal(argus_pystacks_fill(ps, &set), 6);
    int stalls = 0, peers = 0, peer_of[4] = {0};
    for (size_t i = 0; i < set.n; i++) {
        const struct argus_stackrec *r = &set.v[i];
        assert_int_equal(r->lang, ARGUS_STACK_PYTHON);
        if (r->why == ARGUS_STACK_WHY_STALL) {
            stalls++;
            assert_int_equal(r->rank, 1);
            assert_true(r->step == 2 || r->step == 4);
            assert_string_equal(r->folded,
                                "<module> (app.py:40);main (app.py:30);stall_here (app.py:7)");
            assert_int_equal(r->nframes, 3);
            assert_int_equal(r->stalled_ms, 450);
        } else {
            assert_int_equal(r->why, ARGUS_STACK_WHY_PEER);
            peers++;
            assert_true(r->rank == 0 || r->rank == 3);
            peer_of[r->rank]++;
            assert_int_equal(r->for_rank, 1);
            assert_int_equal(r->for_step, r->step);
            assert_string_equal(r->folded, "<module> (app.py:40);main (app.py:30)");
        }
    }
    assert_int_equal(stalls, 2);
    assert_int_equal(peers, 4);
    assert_int_equal(peer_of[0], 2);
    assert_int_equal(peer_of[3], 2);
    argus_stackset_free(&set);
    argus_pystacks_free(ps);
}

/* With a layout (TP 2 x DP 2), rank 1's peer class is rank 3 (TP position 1, the other
 * DP replica), not its neighbours 0 and 2. */
static void test_peer_class(void **state)
{
    (void)state;
    struct argus_pystacks *ps = argus_pystacks_new(200);
    struct argus_stackset set;
    assert_non_null(ps);
    for (int r = 0; r < 4; r++) {
        char name[16];
        snprintf(name, sizeof name, "l%d.json", r);
        char tid[8];
        snprintf(tid, sizeof tid, "%d", 200 + r);
        write_trace(at(name), r, tid, r == 1 ? 1u << 3 : 0, 300, r);
        import(ps, at(name), 1);
    }
    assert_int_equal(argus_stackset_init(&set, 64), 0);
    assert_int_equal(argus_pystacks_fill(ps, &set), 2);
    assert_int_equal(set.v[0].why, ARGUS_STACK_WHY_STALL);
    assert_int_equal(set.v[0].step, 3);
    assert_int_equal(set.v[1].why, ARGUS_STACK_WHY_PEER);
    assert_int_equal(set.v[1].rank, 3);
    argus_stackset_free(&set);
    argus_pystacks_free(ps);
}

/* Names in the frame format; a ';' in a name cannot split a frame; the span bound. */
static void test_bounds(void **state)
{
    (void)state;
    struct argus_pystacks *ps = argus_pystacks_new(10);
    struct argus_stackset set;
    assert_non_null(ps);
    assert_int_equal(argus_pystacks_span(ps, 0, 1000, 1, "x.py(1): short"), 0); /* < 10 ms */
    for (size_t i = 0; i < ARGUS_PYSTACKS_MAX_SPANS; i++)
        assert_int_equal(argus_pystacks_span(ps, 1000000000ull + i * 20000000ull, 15000000,
                                             1, "a;b.py(3): f"), 0);
    assert_int_equal(argus_pystacks_span(ps, 0, 20000000, 1, "late.py(1): g"), -ENOSPC);
    assert_int_equal(argus_pystacks_dropped(ps), 1);
    struct argus_pystacks_step st = {0, 1000000000ull, 1000000000ull + 30000000ull};
    argus_pystacks_steps(ps, &st, 1);
    argus_pystacks_commit(ps, 0, 0, NULL);
    assert_int_equal(argus_pystacks_stalls(ps), 1); /* only the first span is in step 0 */
    assert_int_equal(argus_stackset_init(&set, 4), 0);
    assert_int_equal(argus_pystacks_fill(ps, &set), 1);
    assert_string_equal(set.v[0].folded, "f (a,b.py:3)");
    argus_stackset_free(&set);
    argus_pystacks_free(ps);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_pystacks.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stall_and_peers),
        cmocka_unit_test(test_peer_class),
        cmocka_unit_test(test_bounds),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    const char *names[] = {"r0.json", "r1.json", "r2.json", "r3.json", "l0.json",
                           "l1.json", "l2.json", "l3.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(at(names[i]));
    rmdir(dir);
    return rc;
}
