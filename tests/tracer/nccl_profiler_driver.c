/* nccl_profiler_driver.c — plays NCCL's side of the profiler-plugin contract against
 * Argus's plugin (libargus_nccl.so), for tests only (t_nccl_profiler.sh runs it):
 *     nccl_profiler_driver PLUGIN MAXVER [pool]
 * loads PLUGIN as NCCL does (dlopen, then ncclProfiler_v6, v5, v4, from MAXVER down),
 * creates two communicators (one through ncclCommInitRank, whose hook in this program,
 * tracer/ncclhook.c, sees the plugin's report on its thread; one as a statically linked
 * NCCL would), runs one collective and one send with proxy ops, proxy steps through their
 * states and kernel channels, and checks what libargus.so's side (linked in here:
 * nccl_profiler_stats.c, exported to the plugin) recorded. With
 * ARGUS_NCCL_PROFILER_CHAIN set, the chained test plugin's counters
 * (nccl_profiler_chaintest.c) must show every call of the types it asked for.
 * ARGUS_MODE=on as under argus-run; otherwise Argus is off and nothing may be recorded.
 * "pool": also overfill the plugin's event pool (drops counted, then reused), cycle the
 * task ring, and run collectives on this thread while a second thread (NCCL's proxy
 * thread) runs their proxy ops, each collective reported exactly once.
 * Built a second time with NCCLP_BARE (nothing of libargus.so linked): the plugin must
 * record nothing, crash nowhere and still chain.
 * Prints one line per failed check and exits 1, or prints "ok ..." and exits 0.
 * This file is the scenario and its checks; NCCL's side of the ABI is
 * nccl_profiler_side.c, the "pool" run nccl_profiler_stress.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/tracer/nccl_profiler_chaintest.h"
#include "tests/tracer/nccl_profiler_check.h"
#include "tests/tracer/nccl_profiler_side.h"
#include "tracer/nccl_profiler_abi.h"
#ifndef NCCLP_BARE
#include "common/types.h"
#include "tests/tracer/nccl_profiler_stress.h"
#include "tracer/commgroups.h"
#include "tracer/nccl_profiler_stats.h"
#endif

#define H1 0x1122334455667788ull
#define H2 0x0badc0ffee000002ull

static int failures;

/* ---- the scenario ---- */

static void *ctx1, *ctx2;
static int mask1, mask2;

#ifndef NCCLP_BARE
static void on_init(int nranks, int rank) /* inside ncclCommInitRank, as NCCL does */
{
    side_init(&ctx1, &mask1, H1, "tp0", 2, nranks, rank);
}
typedef struct {
    char internal[128];
} drv_nccl_id;
extern void (*ncclp_fake_on_init)(int, int);
int ncclCommInitRank(void **comm, int nranks, drv_nccl_id id, int rank);
#endif

static void run_collective(void *ctx, int mask)
{
    ncclp_descr_v6 d = {.type = NCCLP_GROUP, .rank = 1};
    void *g = side_start(ctx, mask, &d);
    if (side_version() >= 5) { /* an API event (v5): no v4 plugin may see it */
        d = (ncclp_descr_v6){.type = NCCLP_COLL_API, .parentObj = g, .rank = 1};
        d.api.collApi.func = "AllReduce";
        d.api.collApi.count = 1024;
        side_stop(side_start(ctx, mask, &d));
    }
    if (side_version() >= 6) { /* a copy-engine collective (v6): no v5 plugin may see it */
        d = (ncclp_descr_v6){.type = NCCLP_CE_COLL, .parentObj = g, .rank = 1};
        d.ceColl.seqNumber = 7;
        side_stop(side_start(ctx, mask, &d));
    }

    d = (ncclp_descr_v6){.type = NCCLP_COLL, .parentObj = g, .rank = 1};
    d.coll = (struct ncclp_coll_v5){.seqNumber = 7, .func = "AllReduce", .count = 1024,
                                    .datatype = "ncclFloat32", .nChannels = 2,
                                    .algo = "Ring", .proto = "Simple", .parentGroup = g};
    void *coll = side_start(ctx, mask, &d);
    /* NCCL stops the host events once the work is enqueued, before the proxy thread
     * starts the collective's proxy ops and kernel channels (which name it as parent) */
    side_stop(coll);
    side_stop(g);

    d = (ncclp_descr_v6){.type = NCCLP_PROXY_OP, .parentObj = coll, .rank = 1};
    d.proxyOp = (struct ncclp_proxy_op){.pid = getpid(), .peer = 2, .nSteps = 1,
                                        .isSend = 1};
    void *send = side_start(ctx, mask, &d);
    d.proxyOp = (struct ncclp_proxy_op){.pid = getpid(), .peer = 0, .nSteps = 1,
                                        .isSend = 0};
    void *recv = side_start(ctx, mask, &d);
    /* a PXN proxy op: another process's, its parent a pointer of that process (which
     * may well look like one of this process's handles) */
    d = (ncclp_descr_v6){.type = NCCLP_PROXY_OP, .parentObj = coll, .rank = 1};
    d.proxyOp = (struct ncclp_proxy_op){.pid = getpid() + 1, .peer = 3, .isSend = 1};
    void *pxn = side_start(ctx, mask, &d);
    static const int ps[] = {NCCLP_STEP_SEND_WAIT};
    static const long pms[] = {1};
    side_proxy_step(ctx, mask, pxn, ps, pms, 1);
    side_stop(pxn);
    side_state(send, NCCLP_PROXY_OP_IN_PROGRESS, 0);

    d = (ncclp_descr_v6){.type = NCCLP_KERNEL_CH, .parentObj = coll, .rank = 1};
    d.kernelCh = (struct ncclp_kernel_ch){.channelId = 0, .pTimer = 1000};
    void *k0 = side_start(ctx, mask, &d);
    d.kernelCh = (struct ncclp_kernel_ch){.channelId = 1, .pTimer = 2000};
    void *k1 = side_start(ctx, mask, &d);

    static const int ss[] = {NCCLP_STEP_SEND_GPU_WAIT, NCCLP_STEP_SEND_PEER_WAIT,
                             NCCLP_STEP_SEND_WAIT};
    static const long sms[] = {3, 12, 5};
    side_proxy_step(ctx, mask, send, ss, sms, 3);
    static const int rs[] = {NCCLP_STEP_RECV_WAIT, NCCLP_STEP_RECV_FLUSH_WAIT,
                             NCCLP_STEP_RECV_GPU_WAIT};
    static const long rms[] = {7, 1, 2};
    side_proxy_step(ctx, mask, recv, rs, rms, 3);

    side_state(k0, NCCLP_KERNEL_CH_STOP, 501000); /* 500 us */
    side_state(k1, NCCLP_KERNEL_CH_STOP, 302000); /* 300 us */
    side_stop(k0);
    side_stop(k1);
    side_stop(send);
    side_stop(recv);

    /* a proxy-control event: only the chained plugin asks for those */
    d = (ncclp_descr_v6){.type = NCCLP_PROXY_CTRL, .rank = 1};
    void *pc = side_start(ctx, mask, &d);
    side_state(pc, NCCLP_CTRL_IDLE, 0);
    side_stop(pc);
}

static void run_send(void *ctx, int mask)
{
    ncclp_descr_v6 d = {.type = NCCLP_GROUP, .rank = 0};
    void *g = side_start(ctx, mask, &d);
    d = (ncclp_descr_v6){.type = NCCLP_P2P, .parentObj = g, .rank = 0};
    d.p2p = (struct ncclp_p2p_v5){.func = "Send", .datatype = "ncclBfloat16", .count = 100,
                                  .peer = 1, .nChannels = 1, .parentGroup = g};
    void *p = side_start(ctx, mask, &d);
    side_stop(g);
    d = (ncclp_descr_v6){.type = NCCLP_PROXY_OP, .parentObj = p, .rank = 0};
    d.proxyOp = (struct ncclp_proxy_op){.pid = getpid(), .peer = 1, .nSteps = 1,
                                        .isSend = 1};
    void *op = side_start(ctx, mask, &d);
    static const int ss[] = {NCCLP_STEP_SEND_PEER_WAIT, NCCLP_STEP_SEND_WAIT};
    static const long sms[] = {4, 1};
    side_proxy_step(ctx, mask, op, ss, sms, 2);
    side_stop(op);
    side_stop(p);
}

#ifndef NCCLP_BARE
#define MS 1000000ull

static void check_recorded(void)
{
    struct argus_nccl_step_stats st;
    const uint32_t n = argus_nccl_step_stats(&st);
    CHECK(n == 2 && st.n_comms == 2, "communicators %u", n);
    const struct argus_nccl_comm_stats *c = &st.comm[0], *c2 = &st.comm[1];
    CHECK(c->comm_hash == H1, "hash %" PRIx64, c->comm_hash);
    CHECK(c->nranks == 4 && c->rank == 1 && c->nnodes == 2, "%d %d %d", c->nranks, c->rank,
          c->nnodes);
    CHECK(strcmp(c->name, "tp0") == 0, "name '%s'", c->name);
    CHECK(c->colls == 1 && c->p2ps == 0, "colls %u p2ps %u", c->colls, c->p2ps);
    CHECK(c->bytes == 4096, "bytes %" PRIu64, c->bytes);
    CHECK(c->kernel_ns == 500000, "kernel_ns %" PRIu64, c->kernel_ns);
    /* send: peer wait 12 ms, transfer 5, gpu 3; recv: peer (data) 7, flush 1, gpu 2 */
    CHECK(c->peer_wait_ns >= 19 * MS && c->peer_wait_ns < 1000 * MS, "peer %" PRIu64,
          c->peer_wait_ns);
    CHECK(c->xfer_ns >= 6 * MS && c->xfer_ns < 1000 * MS, "xfer %" PRIu64, c->xfer_ns);
    CHECK(c->gpu_wait_ns >= 5 * MS && c->gpu_wait_ns < 1000 * MS, "gpu %" PRIu64,
          c->gpu_wait_ns);
    CHECK(c->span_ns >= 30 * MS, "span %" PRIu64, c->span_ns);
    CHECK(c->n_peers == 3, "peers %u", c->n_peers);
    for (uint32_t i = 0; i < c->n_peers && i < 3; i++) {
        const struct argus_nccl_peer_stats *p = &c->peer[i];
        if (p->peer == 3) { /* the PXN op: counted, its step its own */
            CHECK(p->ops == 1 && p->steps == 1 && p->xfer_ns >= MS, "pxn peer ops %u",
                  p->ops);
            continue;
        }
        if (p->peer == 2) { /* we send to 2 */
            CHECK(p->send_wait_ns >= 12 * MS && p->recv_wait_ns == 0, "peer 2 %" PRIu64
                  " %" PRIu64, p->send_wait_ns, p->recv_wait_ns);
            CHECK(p->xfer_ns >= 5 * MS && p->gpu_wait_ns >= 3 * MS, "peer 2 xfer/gpu");
        } else { /* and receive from 0 */
            CHECK(p->peer == 0, "peer %d", p->peer);
            CHECK(p->recv_wait_ns >= 7 * MS && p->send_wait_ns == 0, "peer 0 %" PRIu64
                  " %" PRIu64, p->recv_wait_ns, p->send_wait_ns);
        }
        CHECK(p->ops == 1 && p->steps == 1, "peer %d ops %u steps %u", p->peer, p->ops,
              p->steps);
    }
    CHECK(c2->comm_hash == H2 && c2->p2ps == 1 && c2->colls == 0, "comm 2");
    CHECK(c2->bytes == 200, "p2p bytes %" PRIu64, c2->bytes);
    CHECK(c2->n_peers == 1 && c2->peer[0].peer == 1 && c2->peer[0].send_wait_ns >= 4 * MS,
          "p2p peer");
    CHECK(st.n_arrivals == 1, "arrivals %u", st.n_arrivals);
    if (st.n_arrivals >= 1) {
        const struct argus_nccl_arrival *a = &st.arrival[0];
        CHECK(a->comm_hash == H1 && a->seq == 7 && a->func == ARGUS_NCCL_F_ALLREDUCE,
              "arrival %" PRIx64 " %" PRIu64 " %u", a->comm_hash, a->seq, a->func);
        CHECK(a->end_ns >= a->start_ns + 30 * MS, "arrival lasts %" PRIu64,
              a->end_ns - a->start_ns);
        /* its own two steps (not the PXN op's), its split and its longest channel */
        CHECK(a->steps == 2 && a->kernel_ns == 500000, "arrival steps %u kernel %" PRIu64,
              a->steps, a->kernel_ns);
        CHECK(a->peer_wait_ns >= 19 * MS && a->xfer_ns >= 6 * MS && a->gpu_wait_ns >= 5 * MS,
              "arrival split %" PRIu64 " %" PRIu64 " %" PRIu64, a->peer_wait_ns, a->xfer_ns,
              a->gpu_wait_ns);
    }
    CHECK(st.events_dropped == 0, "dropped %" PRIu64, st.events_dropped);

    /* the next step starts empty, the communicators stay */
    argus_nccl_step_stats(&st);
    CHECK(st.n_comms == 2 && st.comm[0].colls == 0 && st.comm[0].n_peers == 0 &&
              st.n_arrivals == 0 && st.comm[0].nranks == 4,
          "second step");

    /* memberships: NCCL's hash as the id, through the hook and outside it */
    struct argus_comm_group g[ARGUS_MAX_COMM_GROUPS];
    const uint32_t ng = argus_commgroups_get(g, ARGUS_MAX_COMM_GROUPS, NULL);
    CHECK(ng == 2, "groups %u", ng);
    if (ng == 2) {
        CHECK(g[0].id == H1 && g[0].size == 4 && g[0].index == 1 &&
                  g[0].kind == ARGUS_COMM_NCCL,
              "group 0 %" PRIx64 " %u %u", g[0].id, g[0].size, g[0].index);
        CHECK(g[1].id == H2 && g[1].size == 2 && g[1].index == 0, "group 1 %" PRIx64,
              g[1].id);
        CHECK(g[0].family != g[1].family, "families");
    }
}
#endif

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PLUGIN MAXVER [pool]\n", argv[0]);
        return 2;
    }
    if (side_load(argv[1], atoi(argv[2])) != 0)
        return 1;
    const char *chain = getenv("ARGUS_NCCL_PROFILER_CHAIN");
    /* a chained plugin that exists and is not the plugin itself must get every call */
    const int chained = chain && access(chain, R_OK) == 0 && strcmp(chain, argv[1]) != 0;
    const char *name = side_name();

#ifndef NCCLP_BARE
    /* communicator 1 made through the hooked ncclCommInitRank, NCCL calling init inside */
    ncclp_fake_on_init = on_init;
    drv_nccl_id uid = {{42}};
    void *comm = NULL;
    CHECK(ncclCommInitRank(&comm, 4, uid, 1) == 0 && comm, "ncclCommInitRank");
    const int want = NCCLP_COLL | NCCLP_P2P | NCCLP_PROXY_OP | NCCLP_PROXY_STEP |
                     NCCLP_KERNEL_CH;
    const char *mode = getenv("ARGUS_MODE");
    const int on = mode && strcmp(mode, "on") == 0;
    if (on)
        CHECK((mask1 & want) == want, "mask %#x", mask1);
    else /* Argus off: the plugin only chains */
        CHECK(mask1 == (chained ? CHAINTEST_MASK : 0), "off mask %#x", mask1);
#else
    side_init(&ctx1, &mask1, H1, "tp0", 2, 4, 1);
    /* nothing of its own without libargus.so; with libargus.so preloaded (and on), the
     * plugin finds its sink there */
    const char *mode = getenv("ARGUS_MODE");
    const int argus = dlsym(RTLD_DEFAULT, "argus_ncclprof_sink") && mode &&
                      strcmp(mode, "on") == 0;
    const int own = NCCLP_COLL | NCCLP_P2P | NCCLP_PROXY_OP | NCCLP_PROXY_STEP |
                    NCCLP_KERNEL_CH;
    if (strcmp(name, "Argus") == 0)
        CHECK(mask1 == ((chained ? CHAINTEST_MASK : 0) | (argus ? own : 0)), "bare mask %#x",
              mask1);
    if (getenv("DRV_WANT_LIBARGUS"))
        CHECK(argus, "libargus.so's sink not in the process");
#endif
    /* communicator 2 told to the plugin outside any hook */
    side_init(&ctx2, &mask2, H2, NULL, 1, 2, 0);
    CHECK(ctx1 && ctx2, "contexts");

    run_collective(ctx1, mask1);
    run_send(ctx2, mask2);
#ifndef NCCLP_BARE
    if (on) {
        check_recorded();
        if (argc > 3 && strcmp(argv[3], "pool") == 0) {
            failures += nccl_stress_run(ctx1, mask1);
        }
    } else {
        struct argus_nccl_step_stats st;
        CHECK(argus_nccl_step_stats(&st) == 0 && st.n_arrivals == 0, "recorded while off");
    }
#endif
    side_finalize(ctx1);
    side_finalize(ctx2);

    if (chained) {
        void *h = dlopen(chain, RTLD_NOW | RTLD_NOLOAD);
        struct chaintest_counts *(*counts)(void) =
            h ? (struct chaintest_counts * (*)(void)) dlsym(h, "chaintest_counts") : NULL;
        CHECK(counts, "chained plugin %s not loaded by the plugin", chain);
        if (counts) {
            const struct chaintest_counts *k = counts();
            CHECK(k->inits == 2 && k->finalizes == 2 && k->live_ctx == 0,
                  "inits %d finalizes %d", k->inits, k->finalizes);
            CHECK(k->last_hash == H2 && k->last_nranks == 2 && k->last_rank == 0 &&
                      k->last_nnodes == 1,
                  "init args");
            CHECK(k->ops_under_coll == 2, "proxy ops under their collective: %d",
                  k->ops_under_coll);
            CHECK(k->foreign_ops == 1, "PXN proxy ops passed as they came: %d",
                  k->foreign_ops);
            CHECK(k->bad_parent == 0 && k->bad_type == 0 && k->bad_ctx == 0,
                  "bad parent %d type %d ctx %d", k->bad_parent, k->bad_type, k->bad_ctx);
            for (int i = 0; i < 16; i++)
                CHECK(k->starts[i] == (((1 << i) & CHAINTEST_MASK) ? side_started(i) : 0),
                      "type %#x: chained got %d of %d", 1 << i, k->starts[i],
                      side_started(i));
            CHECK(side_started(chaintest_bit_index(NCCLP_PROXY_CTRL)) == 1,
                  "proxy ctrl not asked");
            int total = 0;
            for (int i = 0; i < 16; i++)
                total += k->starts[i];
            CHECK(k->stops == total && k->states > 0 && k->kernel_stops == 2,
                  "stops %d states %d kernel stops %d", k->stops, k->states,
                  k->kernel_stops);
            CHECK(k->last_seq == 7 && k->last_count == 1024 && k->last_peer == 1,
                  "fields seq %" PRIu64 " count %zu peer %d", k->last_seq, k->last_count,
                  k->last_peer);
            printf("chained plugin v%d: %d starts, %d stops, %d states\n", k->version,
                   total, k->stops, k->states);
        }
    }
    if (failures)
        return 1;
    printf("ok: NCCL side v%d, %d events, plugin %s\n", side_version(), side_stopped(), name);
    return 0;
}

