/* test_api.c — cmocka units for tracer/api.c: argus.h is a no-op before start and after
 * stop, layout validation and storage, start/stop semantics, "now" timestamps, totals,
 * start/stop racing an application thread, and the argus.h path's L4 ring (names copied,
 * steps from argus_step_begin, nothing added while stopped). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/argus.h"
#include "tracer/ring.h"
#include "tracer/tracer.h"

static struct argus_step_summary last;
static atomic_int n_summaries;
static atomic_int n_names;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    last = *s;
    atomic_fetch_add(&n_summaries, 1);
}

static void on_name(void *ctx, uint64_t hash, const char *name)
{
    (void)ctx;
    (void)hash;
    (void)name;
    atomic_fetch_add(&n_names, 1);
}

static const struct argus_tracer_opts opts = {
    .rank = 3, .max_events = 256, .on_summary = on_summary, .on_name = on_name,
};

static void one_step(uint64_t step)
{
    argus_step_begin(step, 0);
    argus_phase_push("forward", 0);
    uint64_t t = argus_now_ns();
    argus_kernel("gemm", t, t + 1000, 0, 0, ARGUS_KERNEL_COMPUTE);
    argus_kernel("allreduce", t + 500, t + 800, 0, 1, ARGUS_KERNEL_COLLECTIVE);
    argus_phase_pop(0);
    argus_step_end(step, 0);
}

static void test_noop_before_start(void **state)
{
    (void)state;
    assert_int_equal(argus_active(), 0);
    one_step(1);
    argus_kernel("x", 1, 2, 0, 0, ARGUS_KERNEL_MEMCPY);
    assert_int_equal(atomic_load(&n_summaries), 0);
    assert_int_equal(atomic_load(&n_names), 0);
    assert_int_equal(argus_tracer_kernels(), 0);
    assert_int_equal(argus_tracer_dropped(), 0);
    argus_tracer_stop(); /* stop without start: nothing */
    assert_true(argus_now_ns() > 1500000000ull * 1000000000ull);
}

static void test_layout(void **state)
{
    struct argus_coords c;
    (void)state;

    argus_tracer_coords(&c);
    assert_int_equal(c.tp_size + c.pp_size + c.dp_size + c.ep_size, 0);
    assert_int_equal(argus_set_layout(2, 4, 8, 0, 1, 3, 7, 5), 0); /* ep unknown: any index */
    assert_int_equal(argus_set_layout(2, 4, 8, 1, 2, 0, 0, 0), -EINVAL); /* tp >= tp_size */
    assert_int_equal(argus_set_layout(-1, 4, 8, 1, 0, 0, 0, 0), -EINVAL);
    assert_int_equal(argus_set_layout(2, 4, 8, 1, 0, -1, 0, 0), -EINVAL);
    assert_int_equal(argus_set_layout(70000, 4, 8, 1, 0, 0, 0, 0), -EINVAL);
    argus_tracer_coords(&c);
    assert_int_equal(c.tp_size, 2);
    assert_int_equal(c.pp_size, 4);
    assert_int_equal(c.dp_size, 8);
    assert_int_equal(c.ep_size, 0);
    assert_int_equal(c.tp, 1);
    assert_int_equal(c.pp, 3);
    assert_int_equal(c.dp, 7);
    assert_int_equal(c.ep, 5);
}

static void test_start_stop(void **state)
{
    struct argus_tracer_opts bad = opts;
    (void)state;

    assert_int_equal(argus_tracer_start(NULL), -EINVAL);
    bad.max_events = (size_t)1 << 40;
    assert_int_equal(argus_tracer_start(&bad), -EINVAL);
    assert_int_equal(argus_active(), 0);

    assert_int_equal(argus_tracer_start(&opts), 0);
    assert_int_equal(argus_active(), 1);
    assert_int_equal(argus_tracer_start(&opts), -EALREADY);

    argus_kernel("outside", 1, 2, 0, 0, ARGUS_KERNEL_COMPUTE); /* no step open */
    assert_int_equal(argus_tracer_dropped(), 1);
    one_step(10);
    assert_int_equal(atomic_load(&n_summaries), 1);
    assert_int_equal(last.step, 10);
    assert_int_equal(last.rank, 3);
    assert_int_equal(last.kernel_count, 2);
    assert_int_equal(last.compute_ns, 1000);
    assert_int_equal(last.collective_ns, 300);
    assert_int_equal(last.phase_compute_ns[ARGUS_PH_FORWARD], 1000);
    assert_true(last.end_ns >= last.start_ns);
    assert_true(last.start_ns > 0);
    assert_int_equal(last.coords.dp_size, 8); /* layout given before start */
    assert_int_equal(last.coords.dp, 7);
    assert_int_equal(last.n_kmodes, 2);
    assert_int_equal(atomic_load(&n_names), 2);

    /* Layout changed while running shows in the next summary. */
    assert_int_equal(argus_set_layout(1, 1, 2, 0, 0, 0, 1, 0), 0);
    one_step(11);
    assert_int_equal(last.coords.dp_size, 2);
    assert_int_equal(last.coords.dp, 1);
    assert_int_equal(argus_tracer_kernels(), 5);

    argus_tracer_stop();
    assert_int_equal(argus_active(), 0);
    one_step(12);
    assert_int_equal(atomic_load(&n_summaries), 2);
    assert_int_equal(argus_tracer_kernels(), 5); /* totals of the stopped run */
    assert_int_equal(argus_tracer_dropped(), 1);
    argus_tracer_stop();

    /* A fresh start after stop begins a fresh run. */
    assert_int_equal(argus_tracer_start(&opts), 0);
    assert_int_equal(argus_tracer_kernels(), 0);
    one_step(1);
    assert_int_equal(atomic_load(&n_summaries), 3);
    argus_tracer_stop();
}

/* Without a GPU clock triple the summary carries none; once one is set (the CUPTI adapter
 * does at start and then once a second), every later summary carries the latest. Also:
 * argus_tracer_wanted turns on with the first argus_step_begin. */
static void test_clock_triple_in_summaries(void **state)
{
    (void)state;
    atomic_store(&n_summaries, 0);
    assert_int_equal(argus_tracer_start(&opts), 0);
    one_step(1);
    assert_int_equal(atomic_load(&n_summaries), 1);
    assert_true(last.clock_gpu_ns == 0 && last.clock_real_ns == 0 && last.clock_mono_ns == 0);
    assert_int_equal(argus_tracer_wanted(), 1);
    argus_tracer_set_clock_triple(111, 222, 333);
    one_step(2);
    assert_true(last.step == 2 && last.clock_gpu_ns == 111 && last.clock_real_ns == 222 &&
                last.clock_mono_ns == 333);
    argus_tracer_set_clock_triple(444, 555, 666);
    one_step(3);
    assert_true(last.clock_gpu_ns == 444 && last.clock_real_ns == 555 &&
                last.clock_mono_ns == 666);
    uint64_t t[3];
    argus_tracer_clock_triple(t);
    assert_true(t[0] == 444 && t[1] == 555 && t[2] == 666);
    argus_tracer_stop();
}

static void test_api_ring(void **state)
{
    struct argus_ring *ring = NULL;
    struct argus_tracer_opts o = opts;
    char name[32];
    (void)state;

    assert_int_equal(argus_ring_create(64, 2, &ring), 0);
    o.ring = ring;
    assert_int_equal(argus_tracer_start(&o), 0);
    for (uint64_t step = 7; step <= 9; step++) {
        argus_step_begin(step, 0);
        uint64_t t = argus_now_ns();
        /* a name that does not outlive the call */
        snprintf(name, sizeof name, "gemm_%llu", (unsigned long long)step);
        argus_kernel(name, t, t + 1000, 2, 5, ARGUS_KERNEL_COMPUTE);
        memset(name, 'x', sizeof name - 1);
        argus_kernel("nccl_allreduce", t + 1000, t + 2000, 2, 6, ARGUS_KERNEL_COLLECTIVE);
        argus_step_end(step, 0);
    }
    argus_tracer_stop();
    assert_int_equal(argus_ring_count(ring), 6);
    argus_kernel("after_stop", 1, 2, 0, 0, ARGUS_KERNEL_COMPUTE);
    assert_int_equal(argus_ring_count(ring), 6);

    char *text = NULL;
    size_t len = 0;
    struct argus_ring_dump_info info;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    /* steps 7..9 asked; keep_steps 2 shows the newest two; shift moves every ts by 1 ms */
    assert_int_equal(argus_ring_dump_events(ring, f, 3, NULL, 7, UINT64_MAX, 1000000, 0, 0,
                                            &info),
                     0);
    fclose(f);
    assert_int_equal(info.events, 4);
    assert_true(info.first_step == 8 && info.last_step == 9 && !info.truncated);
    assert_non_null(strstr(text, "\"gemm_8\""));
    assert_non_null(strstr(text, "\"gemm_9\""));
    assert_null(strstr(text, "gemm_7"));
    assert_null(strstr(text, "xxxx")); /* the caller's overwritten buffer: names copied */
    assert_non_null(strstr(text, "\"cat\":\"collective\""));
    free(text);
    argus_ring_free(ring);
}

static atomic_int stop_app;

static void *app_thread(void *arg)
{
    uint64_t step = 0;
    (void)arg;
    while (!atomic_load(&stop_app)) {
        argus_step_begin(++step, 0);
        for (int i = 0; i < 50; i++) {
            uint64_t t = argus_now_ns();
            argus_phase_push("backward", t);
            argus_kernel(i % 2 ? "a" : "b", t, t + 100, 0, 0, ARGUS_KERNEL_COMPUTE);
            argus_phase_pop(t + 50);
        }
        argus_step_end(step, 0);
    }
    return NULL;
}

static void test_start_stop_race(void **state)
{
    pthread_t th;
    (void)state;

    atomic_store(&stop_app, 0);
    assert_int_equal(pthread_create(&th, NULL, app_thread, NULL), 0);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(argus_tracer_start(&opts), 0);
        for (volatile int spin = 0; spin < 20000; spin++)
            ;
        (void)argus_tracer_kernels();
        argus_tracer_stop();
    }
    atomic_store(&stop_app, 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(argus_active(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noop_before_start),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_start_stop),
        cmocka_unit_test(test_start_stop_race),
        cmocka_unit_test(test_clock_triple_in_summaries),
        cmocka_unit_test(test_api_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
