/* test_period.c — cmocka units for tracer/period.c (automatic step detection): synthetic
 * kernel-id sequences with periods 37, 1,000 and 50,000, 1 % inserted noise kernels,
 * an exact period, lock kept through 10 drifted steps (more noise, a changed noise mix),
 * and no lock on an aperiodic sequence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tracer/period.h"

#define ANCHOR 7u

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

struct gen {
    uint64_t *pat;
    size_t p, pos;
    uint32_t seed;
    unsigned noise_permille, noise_base;
};

/* A step of p kernels from a pool of min(p / 2, 200) compute names and one gradient
 * all-reduce (ANCHOR) three quarters in. */
static void gen_init(struct gen *g, size_t p, uint32_t seed)
{
    size_t pool = p / 2 < 200 ? p / 2 : 200;
    g->pat = calloc(p, sizeof *g->pat);
    assert_non_null(g->pat);
    g->p = p;
    g->pos = 0;
    g->seed = seed;
    g->noise_permille = 10;
    g->noise_base = 5000;
    for (size_t i = 0; i < p; i++)
        g->pat[i] = 1000 + rnd(&g->seed) % pool;
    g->pat[p * 3 / 4] = ANCHOR;
}

/* Next id: with probability noise_permille / 1000 an inserted noise kernel. */
static uint64_t gen_next(struct gen *g, int *coll)
{
    if (rnd(&g->seed) % 1000 < g->noise_permille) {
        *coll = 0;
        return g->noise_base + rnd(&g->seed) % 50;
    }
    uint64_t id = g->pat[g->pos];
    g->pos = (g->pos + 1) % g->p;
    *coll = id == ANCHOR;
    return id;
}

static void run_period(size_t p)
{
    struct argus_period *d = NULL;
    struct gen g;
    uint64_t n = 0, limit = 6 * p + 300000;
    int coll;

    assert_int_equal(argus_period_create(65536, &d), 0);
    gen_init(&g, p, 0x1234567u + (uint32_t)p);
    while (!argus_period_get(d) && n < limit) {
        uint64_t id = gen_next(&g, &coll);
        argus_period_push(d, id, coll);
        n++;
    }
    assert_int_equal(argus_period_get(d), p); /* exact, noise excluded */
    assert_int_equal(argus_period_locks(d), 1);

    /* 10 drifted steps: twice the noise, from a different noise mix. The boundary falls
     * right after each gradient all-reduce. */
    g.noise_permille = 20;
    g.noise_base = 9000;
    unsigned boundaries = 0;
    int prev_anchor = 0;
    for (uint64_t i = 0; i < 10 * (uint64_t)p + p / 2; i++) {
        uint64_t id = gen_next(&g, &coll);
        int b = argus_period_push(d, id, coll);
        if (b) {
            boundaries++;
            assert_true(prev_anchor); /* the kernel after the all-reduce */
        }
        prev_anchor = id == ANCHOR;
    }
    assert_true(boundaries == 10 || boundaries == 11);
    assert_int_equal(argus_period_get(d), p);
    assert_int_equal(argus_period_locks(d), 1); /* never lost */
    free(g.pat);
    argus_period_free(d);
}

static void test_period_37(void **state) { (void)state; run_period(37); }
static void test_period_1000(void **state) { (void)state; run_period(1000); }
static void test_period_50000(void **state) { (void)state; run_period(50000); }

static void test_aperiodic(void **state)
{
    struct argus_period *d = NULL;
    uint32_t seed = 99;
    (void)state;

    assert_int_equal(argus_period_create(4096, &d), 0);
    for (int i = 0; i < 200000; i++)
        assert_int_equal(argus_period_push(d, 1 + rnd(&seed) % 300, 0), 0);
    assert_int_equal(argus_period_get(d), 0);
    argus_period_free(d);
}

static void test_lose_lock(void **state)
{
    struct argus_period *d = NULL;
    struct gen g;
    int coll;
    (void)state;

    assert_int_equal(argus_period_create(4096, &d), 0);
    gen_init(&g, 100, 5);
    for (int i = 0; i < 20000; i++) {
        uint64_t id = gen_next(&g, &coll);
        argus_period_push(d, id, coll);
    }
    assert_int_equal(argus_period_get(d), 100);
    /* The program changes: the anchor never comes back, the lock goes. */
    for (int i = 0; i < 1000; i++)
        argus_period_push(d, 1000, 0);
    assert_int_equal(argus_period_get(d), 0);
    argus_period_free(d);
    assert_int_equal(argus_period_create(1, &d), -22);
    free(g.pat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_period_37),
        cmocka_unit_test(test_period_1000),
        cmocka_unit_test(test_period_50000),
        cmocka_unit_test(test_aperiodic),
        cmocka_unit_test(test_lose_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
