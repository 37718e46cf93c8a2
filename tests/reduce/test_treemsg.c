/* test_treemsg.c — the reduction tree's message (reduce/treemsg.h): round trip with
 * missing-rank marks, an aggregate and records; damage in the header or the marks is
 * refused; a message too large to send falls back to a header that still parses (window
 * and final flag kept; before treemsg.c the fallback kept the old checksum and the
 * parent dropped it as damaged). */
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "reduce/bytebuf.h"
#include "reduce/treemsg.h"

static void test_round_trip_and_damage(void **state)
{
    (void)state;
    struct argus_treemsg_miss miss[2] = {{.rank = 7, .window = 3}, {.rank = 9, .window = 4}};
    const uint8_t agg[5] = {1, 2, 3, 4, 5}, recs[3] = {9, 8, 7};
    struct argus_treemsg m = {.flags = ARGUS_TREEMSG_FINAL, .window = 42, .miss = miss,
                              .nmissing = 2, .agg = agg, .agg_len = 5, .recs = recs,
                              .recs_len = 3}, g;
    struct argus_bytebuf b = {0};
    assert_int_equal(argus_treemsg_build(&b, &m), 0);
    assert_int_equal(argus_treemsg_parse(b.p, b.len, &g), 0);
    assert_int_equal(g.flags, ARGUS_TREEMSG_FINAL);
    assert_int_equal(g.window, 42);
    assert_int_equal(g.nmissing, 2);
    assert_int_equal(argus_treemsg_miss_at(&g, 1).rank, 9);
    assert_int_equal(argus_treemsg_miss_at(&g, 1).window, 4);
    assert_int_equal(g.agg_len, 5);
    assert_memory_equal(g.agg, agg, 5);
    assert_int_equal(g.recs_len, 3);
    assert_memory_equal(g.recs, recs, 3);
    /* every byte of the header and the marks is covered */
    const size_t covered = b.len - 5 - 3;
    for (size_t i = 0; i < covered; i++) {
        b.p[i] ^= 0x10;
        assert_int_equal(argus_treemsg_parse(b.p, b.len, &g), -EBADMSG);
        b.p[i] ^= 0x10;
    }
    assert_int_equal(argus_treemsg_parse(b.p, covered - 1, &g), -EBADMSG);
    free(b.p);
}

static void test_too_large_falls_back_to_header(void **state)
{
    (void)state;
    struct argus_treemsg_miss miss = {.rank = 7, .window = 3};
    const uint8_t recs[1] = {0};
    struct argus_treemsg m = {.flags = ARGUS_TREEMSG_FINAL, .window = 5, .miss = &miss,
                              .nmissing = 1, .recs = recs, .recs_len = (size_t)INT32_MAX},
                         g;
    struct argus_bytebuf b = {0};
    assert_int_equal(argus_treemsg_build(&b, &m), -E2BIG);
    assert_int_equal(argus_treemsg_parse(b.p, b.len, &g), 0);
    assert_int_equal(g.window, 5);
    assert_int_equal(g.flags, ARGUS_TREEMSG_FINAL);
    assert_int_equal(g.nmissing, 0);
    assert_int_equal(g.agg_len + g.recs_len, 0);
    free(b.p);
}

/* A reservation whose end would pass SIZE_MAX is refused and leaves the buffer as it was
 * (the doubling loop it replaced wrapped len + extra and then wrote past the buffer). */
static void test_bytebuf_refuses_overflow(void **state)
{
    (void)state;
    struct argus_bytebuf b = {0};
    assert_int_equal(argus_bytebuf_append(&b, "abc", 3), 0);
    uint8_t *p = b.p;
    size_t cap = b.cap;
    assert_int_equal(argus_bytebuf_reserve(&b, SIZE_MAX - 1), -ENOMEM);
    assert_ptr_equal(b.p, p);
    assert_int_equal(b.cap, cap);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.p, "abc", 3);
    assert_int_equal(argus_bytebuf_reserve(&b, 10000), 0);
    assert_true(b.cap >= 10003);
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_and_damage),
        cmocka_unit_test(test_too_large_falls_back_to_header),
        cmocka_unit_test(test_bytebuf_refuses_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
