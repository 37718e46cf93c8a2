/* test_ring.c — cmocka units for tracer/ring.c: the L4 raw ring keeps the newest events
 * in fixed memory and its Chrome-trace dump, parsed back with YAJL's tree API, has one
 * process per rank, one named track per stream, "X" events in microseconds with args. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "common/types.h"
#include "tracer/ring.h"

static yajl_val dump(struct argus_ring *r, uint64_t from, uint64_t to, const char *label)
{
    char *text = NULL, err[256];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(argus_ring_dump_events(r, f, 3, label, from, to, 0, 1000000, 0, NULL), 0);
    fclose(f);
    yajl_val v = yajl_tree_parse(text, err, sizeof err);
    if (!v)
        fail_msg("dump does not parse: %s\n%s", err, text);
    free(text);
    return v;
}

static yajl_val get(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

static void test_dump_parses(void **state)
{
    struct argus_ring *r = NULL;
    (void)state;

    assert_int_equal(argus_ring_create(64, 2, &r), 0);
    /* Steps 1..3, two streams; each event 1.5 us long. */
    for (uint64_t s = 1; s <= 3; s++)
        for (uint32_t i = 0; i < 4; i++)
            argus_ring_add(r, &(struct argus_ring_ev){
                i == 3 ? "ncclDevKernel_AllReduce_Sum_f32" : "gemm \"tn\"\n", s,
                1000000 + s * 100000 + i * 2000, 1000000 + s * 100000 + i * 2000 + 1500,
                i == 3 ? 0 : 64, 0, i == 3 ? 7 : 1, 40 + i,
                i == 3 ? ARGUS_KC_COLLECTIVE : ARGUS_KC_COMPUTE});
    assert_int_equal(argus_ring_count(r), 12);

    yajl_val v = dump(r, 0, UINT64_MAX, "DP 1 PP 0 TP 1");
    yajl_val evs = v;
    assert_true(YAJL_IS_ARRAY(evs));
    size_t nx = 0, nmeta = 0;
    int saw_proc = 0, saw7 = 0, saw1 = 0;
    for (size_t i = 0; i < evs->u.array.len; i++) {
        yajl_val e = evs->u.array.values[i];
        const char *ph = YAJL_GET_STRING(get(e, "ph"));
        assert_int_equal(YAJL_GET_INTEGER(get(e, "pid")), 3);
        if (strcmp(ph, "M") == 0) {
            nmeta++;
            const char *what = YAJL_GET_STRING(get(e, "name"));
            const char *nm = YAJL_GET_STRING(get(get(e, "args"), "name"));
            if (strcmp(what, "process_name") == 0) {
                saw_proc = 1;
                assert_string_equal(nm, "DP 1 PP 0 TP 1");
            } else {
                assert_string_equal(what, "thread_name");
                long long tid = YAJL_GET_INTEGER(get(e, "tid"));
                char want[32];
                snprintf(want, sizeof want, "stream %lld", tid);
                assert_string_equal(nm, want);
            }
            continue;
        }
        assert_string_equal(ph, "X");
        nx++;
        yajl_val args = get(e, "args");
        long long step = YAJL_GET_INTEGER(get(args, "step"));
        assert_true(step == 2 || step == 3); /* only the last keep_steps steps */
        long long tid = YAJL_GET_INTEGER(get(e, "tid"));
        double ts = YAJL_GET_DOUBLE(get(e, "ts")), dur = YAJL_GET_DOUBLE(get(e, "dur"));
        assert_true(dur > 1.499 && dur < 1.501);
        long long corr = YAJL_GET_INTEGER(get(args, "correlation"));
        double want_ts = (double)(step * 100000 + (uint64_t)(corr - 40) * 2000) / 1000.0;
        assert_true(ts > want_ts - 1e-6 && ts < want_ts + 1e-6); /* t0 subtracted, in us */
        if (tid == 7) {
            saw7 = 1;
            assert_string_equal(YAJL_GET_STRING(get(e, "cat")), "collective");
            assert_string_equal(YAJL_GET_STRING(get(e, "name")),
                                "ncclDevKernel_AllReduce_Sum_f32");
        } else {
            saw1 = 1;
            assert_int_equal(tid, 1);
            assert_string_equal(YAJL_GET_STRING(get(e, "name")), "gemm \"tn\"\n");
            assert_int_equal(YAJL_GET_INTEGER(get(args, "bytes")), 64);
        }
    }
    assert_int_equal(nx, 8);
    assert_int_equal(nmeta, 3);
    assert_true(saw_proc && saw7 && saw1);
    yajl_tree_free(v);

    /* A step range; the default label. */
    v = dump(r, 3, 3, NULL);
    evs = v;
    assert_int_equal(evs->u.array.len, 4 + 3);
    assert_string_equal(YAJL_GET_STRING(get(get(evs->u.array.values[0], "args"), "name")),
                        "rank 3");
    yajl_tree_free(v);
    argus_ring_free(r);
}

static void test_fixed_memory_and_bad_names(void **state)
{
    struct argus_ring *r = NULL;
    (void)state;

    assert_int_equal(argus_ring_create(0, 3, &r), -22);
    assert_int_equal(argus_ring_create(5, 100, &r), 0);
    for (uint64_t i = 0; i < 1000; i++)
        argus_ring_add(r, &(struct argus_ring_ev){i % 2 ? "k\xff\xfe" : NULL, 1 + i / 100,
                                                  i * 10, i * 10 + 5, 0, 0, 0, (uint32_t)i,
                                                  ARGUS_KC_COMPUTE});
    assert_int_equal(argus_ring_count(r), 5); /* the newest 5 only */
    yajl_val v = dump(r, 0, UINT64_MAX, "r");
    yajl_val evs = v;
    assert_int_equal(evs->u.array.len, 5 + 2);
    for (size_t i = 2; i < evs->u.array.len; i++) {
        yajl_val e = evs->u.array.values[i];
        long long corr = YAJL_GET_INTEGER(get(get(e, "args"), "correlation"));
        assert_true(corr >= 995);
        const char *nm = YAJL_GET_STRING(get(e, "name"));
        assert_string_equal(nm, corr % 2 ? "[not utf-8]" : "[unnamed]");
    }
    yajl_tree_free(v);
    argus_ring_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_parses),
        cmocka_unit_test(test_fixed_memory_and_bad_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
