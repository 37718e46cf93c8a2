/* test_grow.c — argus_grow (common/grow.h): growth from empty, doubling, the first
 * capacity, a need past doubling, the overflow refusal leaving the array untouched; and
 * the kernel-name classes (common/kclass.h) the collector and the importer share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "common/kclass.h"
#include "common/types.h"

static void test_grow_doubles(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    assert_int_equal(argus_grow(&v, &cap, 1, sizeof *v, 16), 0);
    assert_int_equal(cap, 16);
    for (int i = 0; i < 16; i++)
        v[i] = i;
    assert_int_equal(argus_grow(&v, &cap, 16, sizeof *v, 16), 0); /* fits: no change */
    assert_int_equal(cap, 16);
    assert_int_equal(argus_grow(&v, &cap, 17, sizeof *v, 16), 0);
    assert_int_equal(cap, 32);
    assert_int_equal(argus_grow(&v, &cap, 1000, sizeof *v, 16), 0); /* past doubling */
    assert_int_equal(cap, 1000);
    for (int i = 0; i < 16; i++)
        assert_int_equal(v[i], i);
    free(v);
}

static void test_grow_overflow(void **state)
{
    (void)state;
    double *v = NULL;
    size_t cap = 0;
    assert_int_equal(argus_grow(&v, &cap, 4, sizeof *v, 4), 0);
    double *was = v;
    assert_int_equal(argus_grow(&v, &cap, SIZE_MAX / 4, sizeof *v, 4), -ENOMEM);
    assert_ptr_equal(v, was);
    assert_int_equal(cap, 4);
    free(v);
}

static void test_kclass(void **state)
{
    (void)state;
    assert_int_equal(argus_kclass_from_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
                     ARGUS_KC_COLLECTIVE);
    assert_int_equal(argus_kclass_from_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"),
                     ARGUS_KC_P2P);
    assert_int_equal(argus_kclass_from_name("_ZN4rccl15ncclDevKernel_Recv"), ARGUS_KC_P2P);
    assert_int_equal(argus_kclass_from_name("ampere_sgemm_128x64_tn"), ARGUS_KC_COMPUTE);
    assert_int_equal(argus_kclass_from_name(NULL), ARGUS_KC_COMPUTE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles),
        cmocka_unit_test(test_grow_overflow),
        cmocka_unit_test(test_kclass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
