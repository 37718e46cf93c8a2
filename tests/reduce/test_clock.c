/* test_clock.c — clock alignment arithmetic (reduce/clocksync.h): the ping-pong offset
 * formula with an asymmetric-free path, and the collective-end refinement tracking a
 * +-5 ms offset with 20 ppm drift to within 20 us after 50 steps (docs/ALGORITHMS.md, "Clock
 * alignment"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "reduce/clocksync.h"

static void test_sample(void **state)
{
    (void)state;
    /* server is 5 ms ahead, one-way delay 30 us each way */
    uint64_t t1 = 1000000000ull, ts = t1 + 30000 + 5000000, t2 = t1 + 60000;
    assert_int_equal(argus_clock_offset_sample(t1, ts, t2), 5000000);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double noise_us(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng % 20001) / 1000.0 - 10.0; /* +-10 us */
}

static void run_drift(double off0_ns, double ppm)
{
    struct argus_clock_refiner cr;
    uint64_t ref[16], loc[16];
    int64_t scratch[16];
    double err = 0;

    argus_clock_refiner_init(&cr, 0, 0.3, 0.1); /* start knowing nothing (ping-pong failed) */
    for (int step = 0; step < 60; step++) {
        for (int i = 0; i < 16; i++) {
            double t_ref = 1e12 + step * 1e9 + i * 5e7; /* 1 s steps, 16 collectives */
            double true_off = off0_ns + ppm * 1e-6 * (t_ref - 1e12);
            ref[i] = (uint64_t)t_ref;
            loc[i] = (uint64_t)(t_ref - true_off + noise_us() * 1000.0);
        }
        argus_clock_refine(&cr, ref, loc, 16, scratch);
        if (step >= 50) {
            double t_ref = 1e12 + step * 1e9 + 8 * 5e7;
            double true_off = off0_ns + ppm * 1e-6 * (t_ref - 1e12);
            double est = argus_clock_refiner_at(&cr, (uint64_t)(t_ref - true_off));
            if (fabs(est - true_off) > err)
                err = fabs(est - true_off);
        }
    }
    print_message("offset %.0f ns drift %.0f ppm: max error after 50 steps %.1f us\n", off0_ns,
                  ppm, err / 1000.0);
    assert_true(err <= 20000.0);
}

static void test_refine_drift(void **state)
{
    (void)state;
    run_drift(5e6, 20);
    run_drift(-5e6, -20);
    run_drift(5e6, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample),
        cmocka_unit_test(test_refine_drift),
    };
    return cmocka_run_group_tests_name("reduce_clock", tests, NULL, NULL);
}
