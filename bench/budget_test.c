/* budget_test.c — cmocka unit of the benchmark's budgeted step record (bench/budget.c),
 * built and run by `make bench` before tracer_bench, never by `make check`: the record is
 * only a figure of the benchmark (budget_record_bytes), nothing ships or reads it. A
 * realistic step (50,000 kernels over 200 names) fits 1 KB in steady state, the first
 * record carries the key dictionary, corruption and a short buffer are refused, and the
 * u16 log codes keep 0.07 % resolution.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench/budget.h"
#include "tracer/summarizer.h"

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Standard normal (Box-Muller). */
static double gauss(uint32_t *s)
{
    double u = ((double)(rnd(s) >> 8) + 0.5) / (double)(1u << 24);
    double v = ((double)(rnd(s) >> 8) + 0.5) / (double)(1u << 24);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static struct argus_step_summary last;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    memcpy(&last, s, sizeof *s);
}

/* A realistic step: 50,000 launches over 200 names (Zipf-like time), 8 NCCL names. */
static void realistic_step(struct argus_summarizer *sm, uint64_t step, uint64_t *t)
{
    static char names[200][96];
    uint32_t seed = 42 + (uint32_t)step;

    for (int i = 0; i < 200; i++)
        snprintf(names[i], sizeof names[i], i < 8 ? "ncclDevKernel_AllReduce_%d" :
                 "_ZN7cutlass6KernelINS_4gemm6kernel%dEEEvNT_6ParamsE", i);
    argus_summarizer_step_begin(sm, step, *t);
    uint32_t pick = 7;
    for (int i = 0; i < 50000; i++) {
        /* name: Zipf-ish via the square of a uniform */
        double u = (double)(rnd(&pick) >> 8) / (double)(1u << 24);
        int k = (int)(u * u * u * 200);
        double us = 400.0 / (1 + k) * (1 + (k % 3 == 0 && i % 2));
        uint64_t d = (uint64_t)(us * 1000 * exp(0.03 * gauss(&seed))) + 1000;
        argus_summarizer_kernel(sm, names[k], *t, *t + d, 0, k < 8, k < 8 ? 1 : 0);
        *t += d;
    }
    argus_summarizer_step_end(sm, step, *t + 1000);
    *t += 2000;
}

static void test_budget_realistic(void **state)
{
    struct argus_summarizer_opts o = {.rank = 0, .max_events = 65536, .max_names = 1024,
                                      .on_summary = on_summary};
    struct argus_summarizer *sm = NULL;
    struct argus_budget *b = NULL;
    static uint8_t buf[8192];
    uint64_t t = 1000000000;
    (void)state;

    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    assert_int_equal(argus_budget_create(&b), 0);
    realistic_step(sm, 1, &t);
    long first = argus_budget_encode(b, &last, 0.97, 12345, buf, sizeof buf);
    assert_true(first > 0);
    int n1 = argus_budget_check(buf, (size_t)first);
    assert_true(n1 > 8);
    realistic_step(sm, 2, &t);
    long second = argus_budget_encode(b, &last, 0.97, 0, buf, sizeof buf);
    assert_true(second > 0);
    int n2 = argus_budget_check(buf, (size_t)second);
    /* steady state: no dictionary, header + 16 B per mode + CRC */
    assert_int_equal(second, ARGUS_BUDGET_HDR + 16 * n2 + 4);
    assert_true(second <= 1024);
    assert_true(first > second);
    print_message("budget: first %ld B, steady %ld B (%d modes of %u), ratio %.0fx\n", first,
                  second, n2, last.n_kmodes, 50000.0 * 216 / (double)second);
    /* corruption is caught */
    buf[20] ^= 1;
    assert_int_equal(argus_budget_check(buf, (size_t)second), -EINVAL);
    assert_int_equal(argus_budget_check(buf, 10), -EINVAL);
    assert_int_equal(argus_budget_encode(b, &last, 0.97, 0, buf, 50), -ENOSPC);
    assert_int_equal(argus_budget_encode(b, &last, 0, 0, buf, sizeof buf), -EINVAL);
    /* log codes: 0.07 % resolution */
    for (uint64_t ns = 2; ns < UINT64_C(1) << 40; ns = ns * 3 + 1) {
        double back = argus_budget_uncode(argus_budget_code(ns));
        assert_true(fabs(back / (double)ns - 1) < 0.0004);
    }
    argus_budget_free(b);
    argus_summarizer_free(sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_realistic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
