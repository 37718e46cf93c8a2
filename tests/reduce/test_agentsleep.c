/* test_agentsleep.c — the idle Argus thread's sleep (reduce/agentsleep.h): the idle cap
 * (250 ms, two sign-of-life periods, a quarter of the deadline, at least 16 ms); the
 * backoff doubling from 1 ms up to the cap, 16 ms while busy or within 200 ms of news;
 * news starting it again; and the sleep cut at the earliest deadline (a poll when it is
 * now or past, else the time left plus a quarter poll). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "reduce/agentsleep.h"

#define MS 1000000L

static void test_idle_cap(void **state)
{
    (void)state;
    struct argus_agentsleep s;

    argus_agentsleep_init(&s, 4000, 5000); /* 2 x 500 ms, 1250 ms: IDLE_MAX */
    assert_int_equal(argus_agentsleep_idle_cap_ns(&s), ARGUS_AGENTSLEEP_IDLE_MAX_NS);
    argus_agentsleep_init(&s, 100, 5000); /* 2 x 12.5 ms */
    assert_int_equal(argus_agentsleep_idle_cap_ns(&s), 25 * MS);
    argus_agentsleep_init(&s, 4000, 80); /* a quarter of 80 ms */
    assert_int_equal(argus_agentsleep_idle_cap_ns(&s), 20 * MS);
    argus_agentsleep_init(&s, 4000, 40); /* 10 ms, raised to POLL_MAX */
    assert_int_equal(argus_agentsleep_idle_cap_ns(&s), ARGUS_AGENTSLEEP_POLL_MAX_NS);
    argus_agentsleep_init(&s, 0, 5000); /* the sign-of-life period is at least 1 ms */
    assert_int_equal(argus_agentsleep_idle_cap_ns(&s), ARGUS_AGENTSLEEP_POLL_MAX_NS);
}

static void test_backoff(void **state)
{
    (void)state;
    struct argus_agentsleep s;
    const uint64_t t = 10000 * (uint64_t)MS;
    const long idle[] = {1, 2, 4, 8, 16, 32, 64, 128, 250, 250};
    const long busy[] = {1, 2, 4, 8, 16, 16};

    argus_agentsleep_init(&s, 4000, 5000);
    for (size_t i = 0; i < sizeof idle / sizeof *idle; i++)
        assert_int_equal(argus_agentsleep_next_ns(&s, t, 0, UINT64_MAX), idle[i] * MS);
    argus_agentsleep_restart(&s);
    for (size_t i = 0; i < sizeof busy / sizeof *busy; i++)
        assert_int_equal(argus_agentsleep_next_ns(&s, t, 1, UINT64_MAX), busy[i] * MS);
    /* a busy round caps the backoff it leaves: idle again, it doubles from there */
    assert_int_equal(argus_agentsleep_next_ns(&s, t, 0, UINT64_MAX), 32 * MS);

    /* news: fast again, and held at POLL_MAX for LINGER after it, though idle */
    argus_agentsleep_news(&s, t);
    assert_true(s.news_at == t);
    for (size_t i = 0; i < sizeof busy / sizeof *busy; i++)
        assert_int_equal(argus_agentsleep_next_ns(&s, t + (uint64_t)i * MS, 0, UINT64_MAX),
                         busy[i] * MS);
    assert_int_equal(argus_agentsleep_next_ns(&s, t + ARGUS_AGENTSLEEP_LINGER_NS - 1, 0,
                                              UINT64_MAX), 16 * MS);
    assert_int_equal(argus_agentsleep_next_ns(&s, t + ARGUS_AGENTSLEEP_LINGER_NS, 0,
                                              UINT64_MAX), 32 * MS);
    /* a restart keeps when the news came */
    argus_agentsleep_restart(&s);
    assert_true(s.news_at == t);
    assert_int_equal(argus_agentsleep_next_ns(&s, t + MS, 0, UINT64_MAX), 1 * MS);
}

static void test_due(void **state)
{
    (void)state;
    struct argus_agentsleep s;
    const uint64_t t = 10000 * (uint64_t)MS;

    argus_agentsleep_init(&s, 4000, 5000);
    for (int i = 0; i < 6; i++) /* backoff at 32 ms */
        (void)argus_agentsleep_next_ns(&s, t, 0, UINT64_MAX);
    /* due past or now: a poll, and the backoff still doubles */
    assert_int_equal(argus_agentsleep_next_ns(&s, t, 0, t), ARGUS_AGENTSLEEP_POLL_NS);
    assert_int_equal(argus_agentsleep_next_ns(&s, t, 0, t - 1), ARGUS_AGENTSLEEP_POLL_NS);
    assert_int_equal(s.backoff_ns, 128 * MS);
    /* due sooner than the sleep: the time left and a quarter poll */
    assert_int_equal(argus_agentsleep_next_ns(&s, t, 0, t + 3 * MS),
                     3 * MS + ARGUS_AGENTSLEEP_POLL_NS / 4);
    /* due later: the sleep itself */
    assert_int_equal(argus_agentsleep_next_ns(&s, t, 0, t + 400 * MS), 250 * MS);
    assert_int_equal(argus_agentsleep_next_ns(&s, t, 0, t + 250 * MS), 250 * MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_cap),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_due),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
