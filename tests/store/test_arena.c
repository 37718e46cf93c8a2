/* test_arena.c — unit tests of store/arena.c, the job store's memory: blocks
 * given back are reused last first and by size only, jobstore_arena_reuse_ahead names the
 * blocks the next takes will reuse, carved memory is aligned (64 bytes in huge chunks) and
 * fresh chunks come when one is full, work memory grows only on a larger request, fini
 * empties the arena. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "store/arena.h"

static void test_blocks_reused_last_first_by_size(void **state)
{
    struct jobstore_arena a;
    const size_t thin = JOBSTORE_BLOCK_SIZE(0), big = JOBSTORE_BLOCK_SIZE(3);
    (void)state;
    jobstore_arena_init(&a, 0);
    assert_true(thin % JOBSTORE_UNIT == 0 && big % JOBSTORE_UNIT == 0 && big > thin);
    assert_true(JOBSTORE_BLOCK_SIZE(ARGUS_MAX_KMODES) / JOBSTORE_UNIT < JOBSTORE_N_SIZES);
    assert_null(jobstore_arena_reuse_ahead(&a, thin, 0));

    void *b[3], *o = jobstore_arena_block(&a, big);
    for (int i = 0; i < 3; i++) {
        b[i] = jobstore_arena_block(&a, thin);
        assert_non_null(b[i]);
        assert_int_equal((uintptr_t)b[i] % _Alignof(max_align_t), 0);
        memset(b[i], 0xab, thin); /* the block is the caller's, all of it */
    }
    assert_true(b[0] != b[1] && b[1] != b[2] && b[0] != b[2]);
    for (int i = 0; i < 3; i++)
        jobstore_arena_put(&a, b[i], thin);
    jobstore_arena_put(&a, o, big);
    assert_ptr_equal(jobstore_arena_reuse_ahead(&a, thin, 0), b[2]);
    assert_ptr_equal(jobstore_arena_reuse_ahead(&a, thin, 1), b[1]);
    assert_ptr_equal(jobstore_arena_reuse_ahead(&a, thin, 2), b[0]);
    assert_null(jobstore_arena_reuse_ahead(&a, thin, 3));
    assert_ptr_equal(jobstore_arena_reuse_ahead(&a, big, 0), o);
    assert_ptr_equal(jobstore_arena_block(&a, thin), b[2]);
    assert_ptr_equal(jobstore_arena_block(&a, thin), b[1]);
    assert_ptr_equal(jobstore_arena_reuse_ahead(&a, thin, 0), b[0]);
    assert_ptr_equal(jobstore_arena_block(&a, big), o);
    void *fresh = jobstore_arena_block(&a, big); /* none of that size left: a new one */
    assert_true(fresh != o && fresh != b[0]);
    jobstore_arena_fini(&a);
    assert_null(a.chunks);
    assert_null(a.free_by_size);
}

static void test_carve_across_chunks(void **state)
{
    struct jobstore_arena a;
    unsigned char *prev = NULL;
    size_t chunks = 0;
    (void)state;
    jobstore_arena_init(&a, 0);
    for (int i = 0; i < 4096; i++) { /* 4096 x 256 B = 1 MiB: several chunks */
        unsigned char *p = jobstore_arena_carve(&a, 256);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % _Alignof(max_align_t), 0);
        if (i == 0 || p != prev + 256)
            chunks++;
        prev = p;
    }
    assert_true(chunks >= 2);
    void *large = jobstore_arena_carve(&a, (4u << 20) + 64); /* larger than any chunk */
    assert_non_null(large);
    memset(large, 0, (4u << 20) + 64);
    jobstore_arena_fini(&a);

    jobstore_arena_init(&a, 1); /* huge: 2 MiB chunks from the first, 2 MiB aligned */
    unsigned char *p = jobstore_arena_carve(&a, 64);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 64, 0);
    assert_true((uintptr_t)p % (2u << 20) < 256); /* right after the chunk's header */
    assert_ptr_equal(jobstore_arena_carve(&a, 64), p + 64);
    jobstore_arena_fini(&a);
}

static void test_work_memory(void **state)
{
    struct jobstore_arena a;
    (void)state;
    jobstore_arena_init(&a, 0);
    unsigned char *w = jobstore_arena_work(&a, 100);
    assert_non_null(w);
    assert_int_equal((uintptr_t)w % (2u << 20), 0);
    w[99] = 1;
    assert_ptr_equal(jobstore_arena_work(&a, 2u << 20), w); /* within what it has */
    unsigned char *w2 = jobstore_arena_work(&a, (2u << 20) + 1);
    assert_non_null(w2);
    memset(w2, 0, (2u << 20) + 1);
    assert_true(a.work_cap >= (2u << 20) + 1);
    jobstore_arena_fini(&a);
    assert_null(a.work);
    assert_int_equal(a.work_cap, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_reused_last_first_by_size),
        cmocka_unit_test(test_carve_across_chunks),
        cmocka_unit_test(test_work_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
