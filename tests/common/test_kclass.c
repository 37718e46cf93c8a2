/* test_kclass.c — the kernel-name classes (common/kclass.h) that the live collector and
 * the Kineto importer share: NCCL/RCCL collectives, their send/receive kernels as
 * point-to-point, everything else (and no name) compute. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/kclass.h"
#include "common/types.h"

static void test_kclass(void **state)
{
    (void)state;
    assert_int_equal(argus_kclass_from_name("ncclDevKernel_AllGather_RING_LL"),
                     ARGUS_KC_COLLECTIVE);
    assert_int_equal(argus_kclass_from_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"),
                     ARGUS_KC_P2P);
    assert_int_equal(argus_kclass_from_name("_ZN4rccl15ncclDevKernel_Recv"), ARGUS_KC_P2P);
    assert_int_equal(argus_kclass_from_name("ampere_sgemm_128x64_tn"), ARGUS_KC_COMPUTE);
    assert_int_equal(argus_kclass_from_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
                     ARGUS_KC_COLLECTIVE);
    assert_int_equal(argus_kclass_from_name("RCCL_allreduce_kernel"), ARGUS_KC_COLLECTIVE);
    assert_int_equal(argus_kclass_from_name(NULL), ARGUS_KC_COMPUTE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kclass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
