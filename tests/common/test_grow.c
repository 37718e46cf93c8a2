/* test_grow.c — argus_grow (common/grow.h): growth from empty, doubling, the first
 * capacity, a need past doubling, the overflow refusal leaving the array untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles),
        cmocka_unit_test(test_grow_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
