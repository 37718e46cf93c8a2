/* test_trace_merge.c — cmocka units for report/trace_merge.c: the merged L4 events parse,
 * a rank sharing collectives with the reference is moved by its residual offset (found on
 * the consistent collective, not on a same-named collective of another group), a rank
 * sharing none keeps its timestamps, a damaged part is refused before the caller's yajl_gen
 * sees a token, and a token the generator refuses fails the merge. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "report/trace_merge.h"

/* A part's JSON: per step 1..4 two "ReduceScatter" (shared) ending at base + shift and
 * two "AllReduce" (group-local) ending at times of its own (jitter by seed). */
static char *part_json(uint32_t pid, double shift_us, unsigned seed, int shared)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
               "\"args\":{\"name\":\"rank %u\"}}", pid, pid);
    for (int step = 1; step <= 4; step++)
        for (int i = 0; i < 2; i++) {
            double base = step * 100000.0 + i * 20000.0;
            if (shared)
                fprintf(f, ",{\"name\":\"ncclDevKernel_ReduceScatter\",\"cat\":\"collective\","
                           "\"ph\":\"X\",\"pid\":%u,\"tid\":7,\"ts\":%.3f,\"dur\":%.3f,"
                           "\"args\":{\"step\":%d}}",
                        pid, base + shift_us - 500.0 - seed * 37.0, 500.0 + seed * 37.0, step);
            uint64_t h = (uint64_t)seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)(step * 2 + i);
            h ^= h >> 29;
            h *= 0xbf58476d1ce4e5b9ull;
            h ^= h >> 32;
            double own = base + 10000.0 + (double)(h % 5000u);
            fprintf(f, ",{\"name\":\"ncclDevKernel_AllReduce\",\"cat\":\"collective\","
                       "\"ph\":\"X\",\"pid\":%u,\"tid\":7,\"ts\":%.3f,\"dur\":100,"
                       "\"args\":{\"step\":%d,\"bytes\":0}}", pid, own, step);
            fprintf(f, ",{\"name\":\"gemm\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":%u,"
                       "\"tid\":1,\"ts\":%.3f,\"dur\":50,\"args\":{\"step\":%d}}",
                    pid, base - 9000.0, step);
        }
    fputs("]\n", f);
    fclose(f);
    return text;
}

/* A generator with an array open, as pipeline/tracefile.c hands it over ("traceEvents"). */
static yajl_gen open_gen(void)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    assert_non_null(g);
    assert_true(yajl_gen_config(g, yajl_gen_validate_utf8, 1));
    assert_int_equal(yajl_gen_array_open(g), yajl_gen_status_ok);
    return g;
}

static yajl_val merged(struct argus_trace_part *parts, size_t n)
{
    char err[256];
    const unsigned char *text;
    size_t len = 0;
    int wrote = 0;
    yajl_gen g = open_gen();
    assert_int_equal(argus_trace_merge(g, parts, n, &wrote), 0);
    assert_int_equal(yajl_gen_array_close(g), yajl_gen_status_ok);
    assert_int_equal(yajl_gen_get_buf(g, &text, &len), yajl_gen_status_ok);
    assert_true(wrote);
    yajl_val v = yajl_tree_parse((const char *)text, err, sizeof err);
    if (!v)
        fail_msg("merged events do not parse: %s", err);
    yajl_gen_free(g);
    return v;
}

static yajl_val get(yajl_val obj, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

static const char *str(yajl_val obj, const char *key)
{
    const char *s = YAJL_GET_STRING(get(obj, key));
    assert_non_null(s);
    return s;
}

static void test_refine_on_shared_collectives(void **state)
{
    (void)state;
    char *a = part_json(5, 0, 1, 1);     /* the reference */
    char *b = part_json(3, 250.0, 2, 1); /* ping-pong left it 250 us late */
    char *c = part_json(9, 900.0, 3, 0); /* shares no collective with rank 5 */
    struct argus_trace_part parts[3] = {{.rank = 5, .json = a, .len = strlen(a)},
                                        {.rank = 3, .json = b, .len = strlen(b)},
                                        {.rank = 9, .json = c, .len = strlen(c)}};
    yajl_val v = merged(parts, 3);
    assert_int_equal(parts[0].refine_ns, 0);
    assert_true(parts[1].refine_ns > -250001 && parts[1].refine_ns < -249999);
    assert_int_equal(parts[1].matched, 8);
    assert_int_equal(parts[2].matched, 0);
    assert_int_equal(parts[2].refine_ns, 0);

    /* every event kept; rank 3's events moved by -250 us, so shared ends coincide */
    size_t nx = 0;
    double end5[5][2] = {{0}}, end3[5][2] = {{0}};
    int occ5[5] = {0}, occ3[5] = {0};
    for (size_t i = 0; i < v->u.array.len; i++) {
        yajl_val e = v->u.array.values[i];
        if (strcmp(str(e, "ph"), "X") != 0)
            continue;
        nx++;
        if (strcmp(str(e, "name"), "ncclDevKernel_ReduceScatter") != 0)
            continue;
        long long pid = YAJL_GET_INTEGER(get(e, "pid"));
        long long step = YAJL_GET_INTEGER(get(get(e, "args"), "step"));
        double end = YAJL_GET_DOUBLE(get(e, "ts")) + YAJL_GET_DOUBLE(get(e, "dur"));
        if (pid == 5)
            end5[step][occ5[step]++] = end;
        else if (pid == 3)
            end3[step][occ3[step]++] = end;
    }
    assert_int_equal(nx, 24 + 24 + 16);
    for (int s = 1; s <= 4; s++)
        for (int i = 0; i < 2; i++)
            assert_true(end5[s][i] - end3[s][i] < 0.01 && end3[s][i] - end5[s][i] < 0.01);
    yajl_tree_free(v);
    free(a);
    free(b);
    free(c);
}

static void test_bad_part(void **state)
{
    (void)state;
    const char *bad = "{\"not\": \"an array\"}";
    const char *cut = "[{\"name\":\"x\"";
    struct argus_trace_part p[1] = {{.rank = 1, .json = bad, .len = strlen(bad)}};
    const unsigned char *text;
    size_t len = 0;
    int wrote = 1;
    yajl_gen g = open_gen();
    assert_int_equal(argus_trace_merge(g, p, 1, &wrote), -EINVAL);
    assert_int_equal(wrote, 0);
    p[0].json = cut;
    p[0].len = strlen(cut);
    assert_int_equal(argus_trace_merge(g, p, 1, &wrote), -EINVAL);
    /* refused before the first token: g holds only the caller's "[" */
    assert_int_equal(yajl_gen_get_buf(g, &text, &len), yajl_gen_status_ok);
    assert_int_equal(len, 1);
    yajl_gen_free(g);
}

/* An event g refuses (nested past the generator's maximum depth, YAJL_MAX_DEPTH 128, though
 * it parses) is an error, not a truncated event. */
static void test_gen_refused(void **state)
{
    (void)state;
    char deep[2 * 200 + 3];
    size_t n = 0;
    deep[n++] = '[';
    for (int i = 0; i < 200; i++)
        deep[n++] = '[';
    for (int i = 0; i < 200; i++)
        deep[n++] = ']';
    deep[n++] = ']';
    deep[n] = '\0';
    struct argus_trace_part p[1] = {{.rank = 1, .json = deep, .len = n}};
    int wrote = 1;
    yajl_gen g = open_gen();
    assert_int_equal(argus_trace_merge(g, p, 1, &wrote), -EIO);
    assert_int_equal(wrote, 0);
    yajl_gen_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refine_on_shared_collectives),
        cmocka_unit_test(test_bad_part),
        cmocka_unit_test(test_gen_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
