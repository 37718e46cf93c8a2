/* test_nccl_cell.c — the job store keeps each held rank-step's NCCL block (struct
 * argus_nccl_sum, common/types.h) in the cell itself: added directly and through a wire
 * record (version 5) it reads back field by field; a replacing summary replaces it; a
 * block given back by eviction and reused by a summary without NCCL data leaves nothing
 * behind; and the block adds a fixed sizeof(struct argus_nccl_sum) to every cell (the
 * trimmed prefix, store/arena.h), nothing allocated per collective.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/wire.h"
#include "store/arena.h"
#include "store/jobstore.h"

static void fill(struct argus_step_summary *s, uint32_t rank, uint64_t step, int nccl)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->step = step;
    s->start_ns = 1790000000000000000ull + step * 100000000ull;
    s->end_ns = s->start_ns + 90000000ull + rank * 1000ull;
    s->clock_offset_ns = -(int64_t)rank * 2500;
    if (!nccl)
        return;
    s->nccl.n_comms = 2;
    s->nccl.comms_dropped = 3;
    for (uint32_t i = 0; i < 2; i++) {
        struct argus_nccl_comm_sum *c = &s->nccl.comm[i];
        c->comm_hash = 0x9e3779b97f4a7c15ull * (i + 1);
        c->colls = 7 + i;
        c->peer = (int32_t)((rank + 1 + i) % 4);
        c->peer_wait_ns = 1000000ull * (rank + 1) + step;
        c->xfer_ns = 3000000ull + step;
        c->gpu_wait_ns = 40000ull + i;
        c->peer_xfer_ns = 1500000ull + rank;
        c->last_seq = 2 * step + 1;
        c->last_start_ns = s->start_ns + 80000000ull + rank * 7000ull;
    }
}

static void same_block(const struct argus_nccl_sum *a, const struct argus_nccl_sum *b)
{
    assert_int_equal(a->n_comms, b->n_comms);
    assert_int_equal(a->comms_dropped, b->comms_dropped);
    for (uint32_t i = 0; i < a->n_comms; i++) {
        const struct argus_nccl_comm_sum *x = &a->comm[i], *y = &b->comm[i];
        assert_int_equal(x->comm_hash, y->comm_hash);
        assert_int_equal(x->colls, y->colls);
        assert_int_equal(x->peer, y->peer);
        assert_int_equal(x->peer_wait_ns, y->peer_wait_ns);
        assert_int_equal(x->xfer_ns, y->xfer_ns);
        assert_int_equal(x->gpu_wait_ns, y->gpu_wait_ns);
        assert_int_equal(x->peer_xfer_ns, y->peer_xfer_ns);
        assert_int_equal(x->last_seq, y->last_seq);
        assert_int_equal(x->last_start_ns, y->last_start_ns);
    }
}

static void test_kept_direct_and_wire(void **state)
{
    (void)state;
    struct argus_jobstore *js = NULL;
    struct argus_step_summary s;
    uint8_t buf[4096];
    char err[256];
    assert_int_equal(argus_jobstore_create(4, &js), 0);
    for (uint64_t step = 0; step < 8; step++)
        for (uint32_t r = 0; r < 4; r++) {
            fill(&s, r, step, 1);
            if (r % 2) { /* odd ranks through a wire record */
                const long n = argus_summary_encode(&s, buf, sizeof buf);
                assert_true(n > 0);
                assert_int_equal(argus_jobstore_ingest(js, ARGUS_REC_SUMMARY, buf, (size_t)n,
                                                       err, sizeof err), 0);
            } else {
                assert_true(argus_jobstore_add_summary(js, &s) >= 0);
            }
        }
    for (uint64_t step = 0; step < 8; step++)
        for (uint32_t r = 0; r < 4; r++) {
            fill(&s, r, step, 1);
            const struct argus_step_summary *g = argus_jobstore_get(js, r, step);
            assert_non_null(g);
            same_block(&g->nccl, &s.nccl);
        }
    /* a replacing summary replaces the block: without one, none is left */
    fill(&s, 2, 5, 0);
    assert_true(argus_jobstore_add_summary(js, &s) >= 0);
    assert_int_equal(argus_jobstore_get(js, 2, 5)->nccl.n_comms, 0);
    argus_jobstore_free(js);
}

static void test_evicted_block_reused(void **state)
{
    (void)state;
    struct argus_jobstore *js = NULL;
    struct argus_step_summary s;
    assert_int_equal(argus_jobstore_create(2, &js), 0);
    assert_int_equal(argus_jobstore_set_retention(js, 2 * 4, 4), 0); /* 4 steps held */
    for (uint64_t step = 0; step < 40; step++)
        for (uint32_t r = 0; r < 2; r++) {
            fill(&s, r, step, step < 20); /* the block stops at step 20 */
            assert_true(argus_jobstore_add_summary(js, &s) >= 0);
        }
    assert_null(argus_jobstore_get(js, 0, 10));
    for (uint64_t step = 36; step < 40; step++)
        for (uint32_t r = 0; r < 2; r++) {
            const struct argus_step_summary *g = argus_jobstore_get(js, r, step);
            assert_non_null(g);
            assert_int_equal(g->nccl.n_comms, 0);
            assert_int_equal(g->nccl.comms_dropped, 0);
            assert_int_equal(g->nccl.comm[0].last_start_ns, 0);
        }
    argus_jobstore_free(js);
}

/* The block is part of a cell's fixed prefix: the bytes it adds per cell. */
static void test_cell_bytes(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct argus_nccl_sum), 136);
    assert_true(offsetof(struct argus_step_summary, nccl) <
                offsetof(struct argus_step_summary, kmodes));
    assert_int_equal(JOBSTORE_BLOCK_SIZE(0) % JOBSTORE_UNIT, 0);
    assert_true(JOBSTORE_BLOCK_SIZE(0) >= offsetof(struct argus_step_summary, kmodes));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_direct_and_wire),
        cmocka_unit_test(test_evicted_block_reused),
        cmocka_unit_test(test_cell_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
