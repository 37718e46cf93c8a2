/* test_summarizer_nccl.c — the NCCL profiler plugin's view in step summaries: the compact
 * form (argus_nccl_compact: the two communicators with the most wait + transfer time, the
 * rest counted, each one's busiest peer and its last collective by seqNumber), and the
 * delivery (tracer/api.c): what the plugin's sink recorded during a step reaches that
 * step's summary, and the next step starts from nothing. Links api.c with the sink
 * (nccl_profiler_stats.c) as libargus.so does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tracer/argus.h"
#include "tracer/nccl_profiler_stats.h"
#include "tracer/tracer.h"

static struct argus_step_summary last;
static int n_summaries;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    last = *s;
    n_summaries++;
}

static struct argus_nccl_step_stats st;

static struct argus_nccl_comm_stats *add_comm(uint64_t hash, uint64_t wait, uint64_t xfer)
{
    struct argus_nccl_comm_stats *c = &st.comm[st.n_comms++];
    memset(c, 0, sizeof *c);
    c->comm_hash = hash;
    c->colls = 4;
    c->peer_wait_ns = wait;
    c->xfer_ns = xfer;
    c->gpu_wait_ns = 7;
    return c;
}

static void add_arrival(uint64_t hash, uint64_t seq, uint64_t start)
{
    st.arrival[st.n_arrivals++] =
        (struct argus_nccl_arrival){.comm_hash = hash, .seq = seq, .start_ns = start,
                                    .end_ns = start + 100, .func = ARGUS_NCCL_F_ALLREDUCE};
}

static void test_compact(void **state)
{
    struct argus_nccl_sum out;
    (void)state;

    memset(&st, 0, sizeof st);
    argus_nccl_compact(&st, &out);
    assert_int_equal(out.n_comms, 0);
    assert_int_equal(out.comms_dropped, 0);

    add_comm(0xa, 100, 100);                 /* 200 */
    struct argus_nccl_comm_stats *b = add_comm(0xb, 5000, 1000); /* 6000: first */
    add_comm(0xc, 0, 0)->colls = 0;          /* known, idle this step: not counted */
    st.comm[2].gpu_wait_ns = 0;
    add_comm(0xd, 3000, 0);                  /* 3000: second */
    add_comm(0xe, 150, 50);                  /* 200, tie with 0xa: more calls first */
    st.comm[4].colls = 9;
    b->n_peers = 3;
    b->peer[0] = (struct argus_nccl_peer_stats){.peer = 2, .ops = 1, .xfer_ns = 100};
    b->peer[1] = (struct argus_nccl_peer_stats){.peer = 5, .ops = 1, .xfer_ns = 700};
    b->peer[2] = (struct argus_nccl_peer_stats){.peer = 6, .ops = 1, .xfer_ns = 200};
    add_arrival(0xb, 41, 1000);
    add_arrival(0xd, 7, 1500);
    add_arrival(0xb, 43, 3000); /* the last by seqNumber, though not the latest slot */
    add_arrival(0xb, 42, 2000);
    argus_nccl_compact(&st, &out);
    assert_int_equal(out.n_comms, 2);
    assert_int_equal(out.comms_dropped, 2); /* 0xa and 0xe */
    assert_true(out.comm[0].comm_hash == 0xb);
    assert_int_equal(out.comm[0].colls, 4);
    assert_true(out.comm[0].peer_wait_ns == 5000 && out.comm[0].xfer_ns == 1000);
    assert_true(out.comm[0].gpu_wait_ns == 7);
    assert_int_equal(out.comm[0].peer, 5);
    assert_true(out.comm[0].peer_xfer_ns == 700);
    assert_true(out.comm[0].last_seq == 43 && out.comm[0].last_start_ns == 3000);
    assert_true(out.comm[1].comm_hash == 0xd);
    assert_int_equal(out.comm[1].peer, -1); /* no proxy records: no peer */
    assert_true(out.comm[1].last_seq == 7 && out.comm[1].last_start_ns == 1500);

    /* the third communicator by time replaces a kept one once it ranks before it */
    st.comm[0].peer_wait_ns = 4000;
    argus_nccl_compact(&st, &out);
    assert_true(out.comm[0].comm_hash == 0xb && out.comm[1].comm_hash == 0xa);
    assert_int_equal(out.comms_dropped, 2);
    /* a peer too large for the wire travels as none */
    st.comm[1].peer[1].peer = ARGUS_NCCL_PEER_LIMIT; /* 0xb's busiest */
    argus_nccl_compact(&st, &out);
    assert_int_equal(out.comm[0].peer, -1);
    /* no collective with a seqNumber (p2p only): no last collective */
    st.n_arrivals = 0;
    argus_nccl_compact(&st, &out);
    assert_true(out.comm[0].last_start_ns == 0 && out.comm[0].last_seq == 0);
}

static void test_delivered_with_the_step(void **state)
{
    (void)state;
    setenv("ARGUS_MODE", "on", 1);
    const struct argus_ncclprof_sink *sink = argus_ncclprof_sink();
    assert_non_null(sink);
    struct argus_tracer_opts o = {.rank = 1, .max_events = 256, .on_summary = on_summary};
    assert_int_equal(argus_tracer_start(&o), 0);

    argus_step_begin(1, 0);
    sink->comm(&(struct argus_nccl_comm_info){.comm_hash = 0x77, .nnodes = 1, .nranks = 4,
                                               .rank = 1});
    sink->proxy(&(struct argus_nccl_proxy_rec){.comm_hash = 0x77, .peer = 2, .is_send = 1,
                                               .steps = 4, .peer_wait_ns = 9000,
                                               .xfer_ns = 3000, .gpu_wait_ns = 10});
    sink->coll(&(struct argus_nccl_coll_rec){.comm_hash = 0x77, .seq = 12, .start_ns = 5000,
                                             .end_ns = 20000, .steps = 4});
    argus_step_end(1, 0);
    assert_int_equal(n_summaries, 1);
    assert_int_equal(last.nccl.n_comms, 1);
    const struct argus_nccl_comm_sum *c = &last.nccl.comm[0];
    assert_true(c->comm_hash == 0x77 && c->colls == 1);
    assert_true(c->peer_wait_ns == 9000 && c->xfer_ns == 3000 && c->gpu_wait_ns == 10);
    assert_int_equal(c->peer, 2);
    assert_true(c->peer_xfer_ns == 3000);
    assert_true(c->last_seq == 12 && c->last_start_ns == 5000);

    /* the next step: the communicator is still known, but it did nothing */
    argus_step_begin(2, 0);
    argus_step_end(2, 0);
    assert_int_equal(n_summaries, 2);
    assert_int_equal(last.nccl.n_comms, 0);
    assert_int_equal(last.nccl.comms_dropped, 0);
    argus_tracer_stop();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact),
        cmocka_unit_test(test_delivered_with_the_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
