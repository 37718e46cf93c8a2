/* test_wire_nccl.c — the NCCL block of version-5 summary records (common/wire_nccl.h):
 * exact round trips (random blocks and the edges of every field), a summary without the
 * block is the version-4 record but for the version byte (and older readers' records
 * decode with the block zero), a block in a record that says version 4 is refused, what
 * the encoder refuses, counts out of range named by offset, and what a realistic block
 * costs. */
#include "tests/common/test_wire_util.h"

#include <errno.h>
#include <stdio.h>

static uint8_t buf[1 << 17], again[1 << 17];
static struct argus_step_summary in, out;

static void assert_nccl_equal(const struct argus_nccl_sum *a, const struct argus_nccl_sum *b)
{
    assert_int_equal(a->n_comms, b->n_comms);
    assert_int_equal(a->comms_dropped, b->comms_dropped);
    for (uint32_t i = 0; i < a->n_comms; i++) {
        const struct argus_nccl_comm_sum *x = &a->comm[i], *y = &b->comm[i];
        assert_true(x->comm_hash == y->comm_hash);
        assert_int_equal(x->colls, y->colls);
        assert_int_equal(x->peer, y->peer);
        assert_true(x->peer_wait_ns == y->peer_wait_ns);
        assert_true(x->xfer_ns == y->xfer_ns);
        assert_true(x->gpu_wait_ns == y->gpu_wait_ns);
        assert_true(x->peer_xfer_ns == y->peer_xfer_ns);
        assert_true(x->last_seq == y->last_seq);
        assert_true(x->last_start_ns == y->last_start_ns);
    }
}

static long roundtrip(const struct argus_step_summary *s)
{
    char err[256] = "";
    long n = argus_summary_encode(s, buf, sizeof buf);
    assert_true(n > 0);
    assert_true((size_t)n <= argus_summary_encoded_max(s->n_kmodes));
    assert_int_equal(buf[4], ARGUS_WIRE_VERSION);
    assert_true(argus_record_peek(buf, (size_t)n, 0, NULL, err, sizeof err) == n);
    memset(&out, 0x5a, sizeof out);
    if (argus_summary_decode(buf, (size_t)n, &out, err, sizeof err) != 0)
        fail_msg("decode: %s", err);
    tg_assert_summary_equal(s, &out);
    assert_nccl_equal(&s->nccl, &out.nccl);
    assert_int_equal(argus_summary_encode(&out, again, sizeof again), n);
    assert_memory_equal(buf, again, (size_t)n);
    return n;
}

/* A block like a Megatron rank's step: DP and TP communicators kept (PP dropped), waits
 * and transfers of 1 to 21 ms, the last collective in the step's second half. */
static void realistic_block(struct argus_step_summary *s, uint64_t st)
{
    s->nccl.n_comms = ARGUS_NCCL_SUM_COMMS;
    s->nccl.comms_dropped = 1;
    for (uint32_t i = 0; i < ARGUS_NCCL_SUM_COMMS; i++) {
        struct argus_nccl_comm_sum *c = &s->nccl.comm[i];
        c->comm_hash = tg_rand(&st);
        c->colls = 8 + (uint32_t)(tg_rand(&st) % 40);
        c->peer = (int32_t)(tg_rand(&st) % 8);
        c->peer_wait_ns = 1000000 + tg_rand(&st) % 20000000;
        c->xfer_ns = 1000000 + tg_rand(&st) % 20000000;
        c->gpu_wait_ns = tg_rand(&st) % 2000000;
        c->peer_xfer_ns = c->xfer_ns / 4;
        c->last_seq = 1000 + tg_rand(&st) % 100000;
        c->last_start_ns = s->start_ns + (s->end_ns - s->start_ns) / 2 +
                           tg_rand(&st) % 100000000;
    }
}

static void test_roundtrip(void **state)
{
    uint64_t st = 19;
    (void)state;

    for (int it = 0; it < 300; it++) {
        tg_summary(&st, &in, it % 3 ? (int)(tg_rand(&st) % 20) : 0);
        struct argus_nccl_sum *n = &in.nccl;
        n->n_comms = (uint32_t)(it % (ARGUS_NCCL_SUM_COMMS + 1));
        n->comms_dropped = it % 5 ? (uint32_t)(tg_rand(&st) % (ARGUS_NCCL_DROPPED_MAX + 1)) : 0;
        for (uint32_t i = 0; i < n->n_comms; i++) {
            struct argus_nccl_comm_sum *c = &n->comm[i];
            c->comm_hash = tg_rand(&st);
            c->colls = (uint32_t)tg_rand(&st);
            c->peer = it % 7 == 0 ? -1 : (int32_t)(tg_rand(&st) % ARGUS_NCCL_PEER_LIMIT);
            c->peer_wait_ns = tg_rand(&st);
            c->xfer_ns = tg_rand(&st) >> (tg_rand(&st) % 64);
            c->gpu_wait_ns = it % 2 ? 0 : tg_rand(&st);
            c->peer_xfer_ns = it % 4 ? tg_rand(&st) : 0; /* with peer -1 too */
            if (it % 6) {
                c->last_seq = tg_rand(&st);
                c->last_start_ns = tg_rand(&st) | 1; /* before the step too: exact */
            }
        }
        roundtrip(&in);
    }
    /* Edges: every field at its limits. */
    memset(&in.nccl, 0xff, sizeof in.nccl);
    in.nccl.n_comms = ARGUS_NCCL_SUM_COMMS;
    in.nccl.comms_dropped = ARGUS_NCCL_DROPPED_MAX;
    in.nccl.comm[0].peer = in.nccl.comm[1].peer = ARGUS_NCCL_PEER_LIMIT - 1;
    in.nccl.comm[1].colls = UINT32_MAX;
    roundtrip(&in);
    /* the largest record without kernel modes: every field all ones, within the bound,
     * and the bound within 512 B (tests/reduce/test_condense.c keeps thin records so) */
    const struct argus_nccl_sum keep = in.nccl;
    memset(&in, 0xff, offsetof(struct argus_step_summary, kmodes));
    in.nccl = keep;
    in.n_kmodes = 0;
    long worst = roundtrip(&in);
    assert_true((size_t)worst <= argus_summary_encoded_max(0));
    assert_true(argus_summary_encoded_max(0) <= 512);
    print_message("largest record without kernel modes: %ld bytes, bound %zu\n", worst,
                  argus_summary_encoded_max(0));
    in.nccl.comm[0].peer = -1;
    in.nccl.comm[0].last_start_ns = 1;
    in.nccl.comm[1].last_start_ns = in.start_ns; /* a zero offset */
    roundtrip(&in);
    in.nccl.n_comms = 0; /* dropped communicators only: the block still travels */
    roundtrip(&in);
}

/* No NCCL: the bytes of the previous version but the version byte, so older records
 * (version 4) decode exactly with the block zero; the block in a record that says
 * version 4 is an error at the clock byte. */
static void test_older_versions(void **state)
{
    uint64_t st = 5;
    char err[256] = "";
    (void)state;

    tg_summary(&st, &in, 4);
    long n = roundtrip(&in);
    buf[4] = 4;
    reseal(buf, (size_t)n);
    memset(&out, 0x5a, sizeof out);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), 0);
    tg_assert_summary_equal(&in, &out);
    assert_int_equal(out.nccl.n_comms, 0);
    assert_int_equal(out.nccl.comms_dropped, 0);

    in.n_kmodes = 0;
    in.flags = 0;
    in.idle_long_ns = in.idle_long_end_ns = 0;
    realistic_block(&in, 7);
    long m = roundtrip(&in);
    in.nccl = (struct argus_nccl_sum){0};
    long bare = argus_summary_encode(&in, again, sizeof again);
    assert_true(m > bare);
    /* the clock byte: the first byte that differs from the record without the block */
    size_t clk = ARGUS_WIRE_HDR;
    while (buf[clk] == again[clk])
        clk++;
    assert_true(clk > 8);
    assert_int_equal(buf[clk] & 0x10, 0x10);
    buf[4] = 4;
    reseal(buf, (size_t)m);
    assert_int_equal(argus_summary_decode(buf, (size_t)m, &out, err, sizeof err), -EBADMSG);
    char want[64];
    snprintf(want, sizeof want, "value out of range at offset %zu", clk);
    if (!strstr(err, want))
        fail_msg("'%s' does not contain '%s'", err, want);
}

static void test_refused(void **state)
{
    uint64_t st = 9;
    char err[256] = "";
    (void)state;

    tg_summary(&st, &in, 2);
    realistic_block(&in, 3);
    in.nccl.n_comms = ARGUS_NCCL_SUM_COMMS + 1;
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), -EINVAL);
    in.nccl.n_comms = 1;
    in.nccl.comm[0].peer = -2;
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), -EINVAL);
    in.nccl.comm[0].peer = ARGUS_NCCL_PEER_LIMIT;
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), -EINVAL);
    in.nccl.comm[0].peer = 0;
    in.nccl.comms_dropped = ARGUS_NCCL_DROPPED_MAX + 1;
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), -EINVAL);
    in.nccl.comms_dropped = 1;
    in.nccl.comm[0].peer = 3;
    in.nccl.comm[0].last_start_ns = 0; /* a seq without its start */
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), -EINVAL);
    in.nccl.comm[0].last_seq = 0;
    long n = roundtrip(&in);

    /* the decoder: a count past ARGUS_NCCL_SUM_COMMS at the block's first byte */
    in.nccl = (struct argus_nccl_sum){0};
    in.nccl.comms_dropped = 1; /* block = {0, 1}: its last two payload bytes */
    n = roundtrip(&in);
    const size_t at = (size_t)n - ARGUS_WIRE_TRAILER - 2;
    assert_int_equal(buf[at], 0);
    assert_int_equal(buf[at + 1], 1);
    buf[at] = ARGUS_NCCL_SUM_COMMS + 1;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    char want[64];
    snprintf(want, sizeof want, "value out of range at offset %zu", at);
    if (!strstr(err, want))
        fail_msg("'%s' does not contain '%s'", err, want);
    /* one communicator announced, none there: the payload ends early */
    buf[at] = 1;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "ends early"));
}

/* What the block costs on a realistic step: two communicators, 34 B or less each. */
static void test_realistic_size(void **state)
{
    uint64_t st = 11;
    long worst = 0;
    (void)state;

    for (int it = 0; it < 50; it++) {
        tg_summary(&st, &in, 0);
        in.start_ns = 1700000000000000000ull + tg_rand(&st) % 1000000000000ull;
        in.end_ns = in.start_ns + 300000000;
        in.nccl = (struct argus_nccl_sum){0};
        long bare = argus_summary_encode(&in, buf, sizeof buf);
        realistic_block(&in, tg_rand(&st));
        long with = roundtrip(&in);
        if (with - bare > worst)
            worst = with - bare;
    }
    print_message("NCCL block of %d communicators: at most %ld bytes\n", ARGUS_NCCL_SUM_COMMS,
                  worst);
    assert_true(worst <= ARGUS_NCCL_SUM_COMMS * 34 + 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_older_versions),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_realistic_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
