/* test_carry.c — cmocka units for pipeline/carry.c: an anomaly whose steps the job store
 * evicted stays in later results, one that continues keeps its first step, one the
 * analysis dropped inside the held steps is not resurrected, and separate episodes of
 * the same identity stay separate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipeline/carry.h"

static struct argus_anomaly an(int kind, uint32_t rank, uint64_t first, uint64_t last)
{
    struct argus_anomaly a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.n_ranks = 1;
    a.ranks[0] = rank;
    a.step_first = first;
    a.step_last = last;
    a.phase = -1;
    return a;
}

/* A result owning a copy of v[0..n). */
static struct argus_result result(const struct argus_anomaly *v, size_t n)
{
    struct argus_result r;
    memset(&r, 0, sizeof r);
    r.anomalies = malloc((n ? n : 1) * sizeof *v);
    assert_non_null(r.anomalies);
    memcpy(r.anomalies, v, n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        r.anomalies[i].id = (int)i + 1;
    r.n_anomalies = n;
    return r;
}

static void test_carry(void **state)
{
    struct argus_carry c;
    (void)state;
    argus_carry_init(&c);

    /* window 1: a host stall on rank 7 at 100-102 and a straggler on rank 5 from 90 */
    struct argus_anomaly w1[] = {an(ARGUS_AK_HOST_STALL, 7, 100, 102),
                                 an(ARGUS_AK_COMPUTE_STRAGGLER, 5, 90, 110),
                                 an(ARGUS_AK_ITERATION_JITTER, 3, 104, 104)};
    struct argus_result r = result(w1, 3);
    assert_int_equal(argus_carry_apply(&c, &r, 0), 0);
    assert_int_equal(r.n_anomalies, 3);
    free(r.anomalies);

    /* later: steps up to 150 evicted; the straggler goes on (seen from 151 only), the
     * stall and the jitter are gone with their steps; a new stall of rank 7 at 300 */
    struct argus_anomaly w2[] = {an(ARGUS_AK_COMPUTE_STRAGGLER, 5, 151, 320),
                                 an(ARGUS_AK_HOST_STALL, 7, 300, 301)};
    r = result(w2, 2);
    assert_int_equal(argus_carry_apply(&c, &r, 151), 2);
    assert_int_equal(r.n_anomalies, 4);
    assert_int_equal(r.anomalies[0].step_first, 90); /* since when survives */
    assert_int_equal(r.anomalies[0].step_last, 320);
    assert_int_equal(r.anomalies[1].step_first, 300); /* a separate episode */
    int stall = 0, jitter = 0;
    for (size_t i = 2; i < 4; i++) {
        assert_int_equal(r.anomalies[i].id, (int)i + 1);
        if (r.anomalies[i].kind == ARGUS_AK_HOST_STALL) {
            stall = 1;
            assert_int_equal(r.anomalies[i].step_first, 100);
            assert_int_equal(r.anomalies[i].step_last, 102);
        }
        jitter |= r.anomalies[i].kind == ARGUS_AK_ITERATION_JITTER;
    }
    assert_true(stall && jitter);
    free(r.anomalies);

    /* the analysis drops the rank-7 stall at 300 while step 300 is still held: not
     * resurrected; the old ones stay */
    struct argus_anomaly w3[] = {an(ARGUS_AK_COMPUTE_STRAGGLER, 5, 200, 330)};
    r = result(w3, 1);
    assert_int_equal(argus_carry_apply(&c, &r, 200), 2);
    assert_int_equal(r.n_anomalies, 3);
    assert_int_equal(r.anomalies[0].step_first, 90);
    for (size_t i = 1; i < 3; i++)
        assert_true(r.anomalies[i].step_last < 200);
    free(r.anomalies);
    argus_carry_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_carry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
