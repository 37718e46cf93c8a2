/* test_nvtx.c — cmocka units for tracer/nvtx_map.c: PyTorch/Megatron range names to
 * phases, ProfilerStep#N and configured step ranges to steps, ARGUS_PHASE_MAP parsing,
 * the shadow stack that pairs pops with ignored pushes, registered strings. No GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/types.h"
#include "tracer/nvtx_map.h"

struct log {
    char ev[64][24];
    int n;
};

static void on_step(void *ctx, int begin, uint64_t step)
{
    struct log *l = ctx;
    snprintf(l->ev[l->n++], sizeof l->ev[0], "%s%llu", begin ? "S" : "E",
             (unsigned long long)step);
}

static void on_phase(void *ctx, int push, unsigned phase)
{
    struct log *l = ctx;
    snprintf(l->ev[l->n++], sizeof l->ev[0], "%s%s", push ? "+" : "-",
             push ? argus_phase_name((enum argus_phase)phase) : "");
}

static struct argus_nvtx_map map; /* large: keep it off the stack */

static void init(struct log *l, const char *pm, const char *sr)
{
    memset(l, 0, sizeof *l);
    map.on_step = on_step;
    map.on_phase = on_phase;
    map.ctx = l;
    assert_int_equal(argus_nvtx_map_init(&map, pm, sr, NULL, 0), 0);
}

static unsigned phase_of(const char *name)
{
    uint64_t step = 0;
    unsigned ph = 99;
    enum argus_nvtx_kind k = argus_nvtx_classify(&map, name, &step, &ph);
    return k == ARGUS_NVTX_PHASE ? ph : k == ARGUS_NVTX_STEP ? 100 : 200;
}

static void test_default_names(void **state)
{
    struct log l;
    uint64_t step = 0;
    unsigned ph;
    (void)state;

    init(&l, NULL, NULL);
    /* PyTorch record_function / autograd names. */
    assert_int_equal(phase_of("## forward ##"), ARGUS_PH_FORWARD);
    assert_int_equal(phase_of("MmBackward0"), ARGUS_PH_BACKWARD);
    assert_int_equal(phase_of("Optimizer.step#AdamW.step"), ARGUS_PH_OPTIMIZER);
    assert_int_equal(phase_of("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
                     ARGUS_PH_HOST);
    /* Megatron timers. */
    assert_int_equal(phase_of("forward-compute"), ARGUS_PH_FORWARD);
    assert_int_equal(phase_of("backward-compute"), ARGUS_PH_BACKWARD);
    assert_int_equal(phase_of("optimizer"), ARGUS_PH_OPTIMIZER);
    assert_int_equal(phase_of("batch-generator"), ARGUS_PH_HOST);
    /* Everything else is ignored (aten ops, user ranges). */
    assert_int_equal(phase_of("aten::mm"), 200);
    assert_int_equal(phase_of(""), 200);
    assert_int_equal(argus_nvtx_classify(&map, NULL, &step, &ph), ARGUS_NVTX_IGNORE);
    /* Steps. */
    assert_int_equal(argus_nvtx_classify(&map, "ProfilerStep#41", &step, &ph), ARGUS_NVTX_STEP);
    assert_int_equal(step, 41);
    assert_int_equal(argus_nvtx_classify(&map, "ProfilerStep#", &step, &ph), ARGUS_NVTX_STEP);
    assert_int_equal(step, 42); /* no number: the counter goes on */
    assert_int_equal(phase_of("profilerstep#3"), 200); /* the prefix is case-sensitive */
}

static void test_user_rules(void **state)
{
    struct log l;
    char err[256] = "";
    (void)state;

    init(&l, "fwd_bwd:other,attn:forward,allreduce:comm", "train_step");
    assert_int_equal(phase_of("fwd_bwd_pass"), ARGUS_PH_OTHER); /* before the defaults */
    assert_int_equal(phase_of("flash_attn"), ARGUS_PH_FORWARD);
    assert_int_equal(phase_of("grad ALLREDUCE"), ARGUS_PH_COMM);
    assert_int_equal(phase_of("backward"), ARGUS_PH_BACKWARD); /* defaults still apply */
    assert_int_equal(phase_of("train_step 7"), 100);
    assert_int_equal(phase_of("ProfilerStep#1"), 200);
    /* Bad maps: error, and the defaults alone. */
    const char *bad[] = {"noColon", ":forward", "x:sideways", "x:forward,,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(argus_nvtx_map_init(&map, bad[i], NULL, err, sizeof err), -22);
        assert_non_null(strstr(err, "ARGUS_PHASE_MAP"));
        assert_int_equal(phase_of("forward"), ARGUS_PH_FORWARD);
        assert_int_equal(phase_of("x"), 200);
    }
}

static void test_shadow_stack(void **state)
{
    struct log l;
    (void)state;

    init(&l, NULL, NULL);
    argus_nvtx_push(&map, "ProfilerStep#5");
    argus_nvtx_push(&map, "## forward ##");
    argus_nvtx_push(&map, "aten::linear");   /* ignored ... */
    argus_nvtx_push(&map, "aten::mm");
    argus_nvtx_pop(&map);                    /* ... and so are their pops */
    argus_nvtx_pop(&map);
    argus_nvtx_pop(&map);                    /* forward */
    argus_nvtx_push(&map, "Optimizer.step#SGD.step");
    argus_nvtx_pop(&map);
    argus_nvtx_pop(&map);                    /* step 5 */
    argus_nvtx_pop(&map);                    /* unbalanced: ignored */
    argus_nvtx_push(&map, NULL);             /* unicode / unknown message: ignored */
    argus_nvtx_pop(&map);
    const char *want[] = {"S5", "+forward", "-", "+optimizer", "-", "E5"};
    assert_int_equal(l.n, 6);
    for (int i = 0; i < 6; i++)
        assert_string_equal(l.ev[i], want[i]);
    /* Deeper than the shadow stack: pushes beyond it are ignored, pairs stay right. */
    l.n = 0;
    for (int i = 0; i < 100; i++)
        argus_nvtx_push(&map, i == 0 ? "forward" : "aten::x");
    for (int i = 0; i < 100; i++)
        argus_nvtx_pop(&map);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.ev[1], "-");
}

static void test_registered_strings(void **state)
{
    struct log l;
    char big[300];
    (void)state;

    init(&l, NULL, NULL);
    int h1, h2, h3;
    argus_nvtx_string_put(&map, &h1, "ProfilerStep#9");
    argus_nvtx_string_put(&map, &h2, "backward");
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    argus_nvtx_string_put(&map, &h3, big);
    assert_string_equal(argus_nvtx_string_get(&map, &h1), "ProfilerStep#9");
    assert_string_equal(argus_nvtx_string_get(&map, &h2), "backward");
    assert_int_equal(strlen(argus_nvtx_string_get(&map, &h3)), ARGUS_NVTX_STRING_MAX - 1);
    assert_null(argus_nvtx_string_get(&map, &l));
    assert_null(argus_nvtx_string_get(&map, NULL));
    argus_nvtx_string_put(&map, &h2, "forward"); /* re-registration replaces */
    assert_string_equal(argus_nvtx_string_get(&map, &h2), "forward");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_names),
        cmocka_unit_test(test_user_rules),
        cmocka_unit_test(test_shadow_stack),
        cmocka_unit_test(test_registered_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
