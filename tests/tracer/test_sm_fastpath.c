/* test_sm_fastpath.c — cmocka units for the summariser's fast path
 * (argus_summarizer_kernel_static, tracer/summarizer.c): an empty pointer-cache entry is
 * never a trusted hit (a NULL name goes to "[unnamed]", not to the name with index 0), a
 * pointer first seen through the comparing entry point becomes trusted only for the same
 * text, and the fast path's busy-time union (no clip: its starts are inside the step)
 * matches the general one for zero-length, back-to-back, gapped and overlapping kernels.
 */
#include "tests/tracer/sm_testutil.h"

#include <stdio.h>

/* Kernel count of a name's mode 0 in the last summary (0: absent). */
static uint32_t count_of(const struct sink *k, const char *name)
{
    const struct argus_kmode_stats *m = find(&k->last, name, 0);
    return m ? m->count : 0;
}

static void test_null_name_not_cached(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1024, 64);
    static const char first[] = "gemm_first"; /* interned first: name index 0 */
    (void)state;

    for (uint64_t s = 1; s <= 2; s++) {
        argus_summarizer_step_begin(sm, s, B * s);
        for (int i = 0; i < 4; i++)
            argus_summarizer_kernel_static(sm, first, B * s + 10 * i, B * s + 10 * i + 5, 0, 0,
                                           ARGUS_KC_COMPUTE);
        for (int i = 0; i < 3; i++)
            argus_summarizer_kernel_static(sm, NULL, B * s + 100 + 10 * i,
                                           B * s + 105 + 10 * i, 0, 0, ARGUS_KC_COMPUTE);
        argus_summarizer_step_end(sm, s, B * s + 1000);
        assert_int_equal(count_of(&k, first), 4);
        assert_int_equal(count_of(&k, "[unnamed]"), 3);
        assert_int_equal(k.last.kernel_count, 7);
    }
    argus_summarizer_free(sm);
}

static void test_untrusted_then_trusted(void **state)
{
    struct sink k;
    struct argus_summarizer *sm = make(&k, 1024, 64);
    char buf[32];
    (void)state;

    /* A caller's buffer through the comparing entry point: cached, not trusted. */
    snprintf(buf, sizeof buf, "%s", "kern_a");
    argus_summarizer_step_begin(sm, 1, B);
    argus_summarizer_kernel(sm, buf, B + 10, B + 20, 0, 0, ARGUS_KC_COMPUTE);
    argus_summarizer_kernel(sm, buf, B + 20, B + 30, 0, 0, ARGUS_KC_COMPUTE);
    /* The same pointer with new text: the comparing path notices. */
    snprintf(buf, sizeof buf, "%s", "kern_b");
    argus_summarizer_kernel(sm, buf, B + 30, B + 40, 0, 0, ARGUS_KC_COMPUTE);
    /* Now declared immutable: trusted from here on, and counted as kern_b. */
    for (int i = 0; i < 5; i++)
        argus_summarizer_kernel_static(sm, buf, B + 40 + 10 * i, B + 50 + 10 * i, 0, 0,
                                       ARGUS_KC_COMPUTE);
    argus_summarizer_step_end(sm, 1, B + 1000);
    assert_int_equal(count_of(&k, "kern_a"), 2);
    assert_int_equal(count_of(&k, "kern_b"), 6);
    assert_int_equal(k.n_names, 2);
    argus_summarizer_free(sm);
}

/* Busy time and the longest gap from the fast path equal those of the comparing path. */
static void test_fast_busy_matches(void **state)
{
    static const uint64_t iv[][2] = {
        {0, 0}, {0, 10}, {10, 10}, {10, 25}, {25, 40}, {60, 70}, {65, 68}, {70, 90},
        {200, 200}, {200, 260}, {250, 300}, {500, 510},
    };
    struct sink ka, kb;
    struct argus_summarizer *a = make(&ka, 1024, 64), *b = make(&kb, 1024, 64);
    static const char name[] = "kern_busy";
    (void)state;

    for (uint64_t s = 1; s <= 3; s++) { /* step 1 interns; 2 and 3 take the fast path */
        uint64_t t0 = B * s;
        argus_summarizer_step_begin(a, s, t0);
        argus_summarizer_step_begin(b, s, t0);
        for (size_t i = 0; i < sizeof iv / sizeof iv[0]; i++) {
            argus_summarizer_kernel_static(a, name, t0 + iv[i][0], t0 + iv[i][1], 0, 0,
                                           ARGUS_KC_COMPUTE);
            argus_summarizer_kernel(b, name, t0 + iv[i][0], t0 + iv[i][1], 0, 0,
                                    ARGUS_KC_COMPUTE);
        }
        argus_summarizer_step_end(a, s, t0 + 1000);
        argus_summarizer_step_end(b, s, t0 + 1000);
        assert_int_equal(ka.last.busy_ns, 40 + 30 + 100 + 10);
        assert_int_equal(ka.last.busy_ns, kb.last.busy_ns);
        assert_int_equal(ka.last.idle_long_ns, kb.last.idle_long_ns);
        assert_int_equal(ka.last.kernel_count, kb.last.kernel_count);
        assert_int_equal(count_of(&ka, name), sizeof iv / sizeof iv[0]);
    }
    argus_summarizer_free(a);
    argus_summarizer_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_name_not_cached),
        cmocka_unit_test(test_untrusted_then_trusted),
        cmocka_unit_test(test_fast_busy_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
