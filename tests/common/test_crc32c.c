/* test_crc32c.c — unit tests of common/crc32c.c: the known vectors through every
 * implementation (byte table, slice-by-8, SSE4.2 when the CPU has it, and the dispatched
 * argus_crc32c), and random buffers at every length and alignment up to 300 bytes plus a
 * few large ones give the same value everywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/crc32c.h"
#include "common/wire.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Every implementation gives want for (d, n). */
static void check_all(const void *d, size_t n, uint32_t want)
{
    uint32_t hw = 0;
    assert_int_equal(argus_crc32c_bytewise(d, n), want);
    assert_int_equal(argus_crc32c_slice8(d, n), want);
    assert_int_equal(argus_crc32c(d, n), want);
    if (argus_crc32c_hw(d, n, &hw) == 0)
        assert_int_equal(hw, want);
}

static void test_vectors(void **state)
{
    (void)state;
    check_all("123456789", 9, 0xe3069283u);
    check_all("", 0, 0);
    uint8_t z[32] = { 0 }, ff[32], inc[32], dec[32];
    memset(ff, 0xff, sizeof ff);
    for (int i = 0; i < 32; i++) {
        inc[i] = (uint8_t)i;
        dec[i] = (uint8_t)(31 - i);
    }
    /* RFC 3720 (iSCSI) B.4 */
    check_all(z, sizeof z, 0x8a9136aau);
    check_all(ff, sizeof ff, 0x62a8ab43u);
    check_all(inc, sizeof inc, 0x46dd794eu);
    check_all(dec, sizeof dec, 0x113fdb5cu);
}

static void test_random_lengths_alignments(void **state)
{
    (void)state;
    enum { MAX = 300, BIG = 1 << 20 };
    uint8_t *buf = malloc(BIG + 16);
    assert_non_null(buf);
    for (size_t i = 0; i < BIG + 16; i++)
        buf[i] = (uint8_t)rnd();
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= MAX; n++)
            check_all(buf + off, n, argus_crc32c_bytewise(buf + off, n));
    for (int t = 0; t < 8; t++) {
        size_t off = rnd() % 16, n = BIG - rnd() % 4096;
        check_all(buf + off, n, argus_crc32c_bytewise(buf + off, n));
    }
    free(buf);
}

static void test_impl_named(void **state)
{
    (void)state;
    const char *n = argus_crc32c_impl();
    uint32_t hw;
    assert_true(strcmp(n, "sse4.2") == 0 || strcmp(n, "slice-by-8") == 0);
    if (argus_crc32c_hw("", 0, &hw) == 0)
        assert_string_equal(n, "sse4.2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_random_lengths_alignments),
        cmocka_unit_test(test_impl_named),
    };
    return cmocka_run_group_tests_name("common_crc32c", tests, NULL, NULL);
}
