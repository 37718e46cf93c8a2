/* nccl_profiler_stress.c — tests only: the driver's "pool" run
 * (tests/tracer/nccl_profiler_stress.h): the plugin's event pool overfilled (drops counted,
 * then every event reused), its task ring cycled (childless collectives reported when
 * their slot is reused, a late child touching nobody else's record), and collectives
 * started on this thread while a second thread (NCCL's proxy thread) runs their proxy
 * ops, each collective reported exactly once.
 * Must not leave a thread behind: the proxy thread is joined before the checks.
 */
#include "tests/tracer/nccl_profiler_stress.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/tracer/nccl_profiler_check.h"
#include "tests/tracer/nccl_profiler_side.h"
#include "tracer/nccl_profiler_stats.h"

#define MS 1000000ull

static int failures;
static void *ctx1; /* the communicator the run uses (nccl_stress_run) */
static int mask1;

static void check_pool(void)
{
    enum { N = 9000 };
    static void *h[N];
    int got = 0;
    ncclp_descr_v6 d = {.type = NCCLP_PROXY_STEP, .rank = 1};
    for (int i = 0; i < N; i++)
        got += (h[i] = side_start(ctx1, mask1, &d)) != NULL;
    for (int i = 0; i < N; i++)
        side_stop(h[i]);
    struct argus_nccl_step_stats st;
    argus_nccl_step_stats(&st);
    CHECK(got < N && got >= 8000, "pool held %d of %d", got, N);
    CHECK(st.events_dropped == (uint64_t)(N - got), "dropped %" PRIu64 " of %d",
          st.events_dropped, N - got);
    /* and every event came back */
    got = 0;
    for (int i = 0; i < N; i++)
        got += (h[i] = side_start(ctx1, mask1, &d)) != NULL;
    for (int i = 0; i < N; i++)
        side_stop(h[i]);
    CHECK(got >= 8000, "pool after reuse %d", got);
    argus_nccl_step_stats(&st);

    /* collectives whose children never come are reported when the task ring (2,048)
     * reuses their slot; a child that outlives its collective's slot touches nobody
     * else's record */
    enum { C = 3000, RING = 2048 };
    d = (ncclp_descr_v6){.type = NCCLP_COLL, .rank = 1};
    d.coll = (struct ncclp_coll_v5){.seqNumber = 99, .func = "AllGather", .count = 1,
                                    .datatype = "ncclInt8"};
    void *x = side_start(ctx1, mask1, &d);
    side_stop(x);
    d = (ncclp_descr_v6){.type = NCCLP_PROXY_OP, .parentObj = x, .rank = 1};
    d.proxyOp = (struct ncclp_proxy_op){.pid = getpid(), .peer = 5, .isSend = 1};
    void *op = side_start(ctx1, mask1, &d);
    for (int i = 0; i < C; i++) {
        d = (ncclp_descr_v6){.type = NCCLP_COLL, .rank = 1};
        d.coll = (struct ncclp_coll_v5){.seqNumber = 100 + (uint64_t)i, .func = "AllGather",
                                        .count = 1, .datatype = "ncclInt8"};
        side_stop(side_start(ctx1, mask1, &d));
    }
    static const int ss[] = {NCCLP_STEP_SEND_PEER_WAIT};
    static const long sms[] = {1};
    side_proxy_step(ctx1, mask1, op, ss, sms, 1);
    side_stop(op);
    argus_nccl_step_stats(&st);
    /* slots 0, 1: the first collective and send (reported); x in slot 2; the loop's in
     * 3..3002: x and the loop's first C + 3 - RING - 3 + 1 evicted */
    CHECK(st.comm[0].colls == 1 + (C + 3 - RING) - 3, "evicted collectives reported: %u",
          st.comm[0].colls);
    CHECK(st.comm[0].n_peers == 1 && st.comm[0].peer[0].peer == 5 &&
              st.comm[0].peer[0].send_wait_ns >= MS,
          "late child: peers %u", st.comm[0].n_peers);
    CHECK(st.events_dropped == 0, "dropped %" PRIu64, st.events_dropped);
}

/* The application thread hands each collective to the proxy thread as NCCL does, right
 * before it stops it: the children finish before or after that stop. */
enum { QN = 64, THREADED = 20000 };
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void *h[QN];
    unsigned head, tail;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0};

static void *proxy_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < THREADED; i++) {
        pthread_mutex_lock(&queue.mu);
        while (queue.head == queue.tail)
            pthread_cond_wait(&queue.cv, &queue.mu);
        void *coll = queue.h[queue.tail++ % QN];
        pthread_cond_broadcast(&queue.cv);
        pthread_mutex_unlock(&queue.mu);
        ncclp_descr_v6 d = {.type = NCCLP_PROXY_OP, .parentObj = coll, .rank = 1};
        d.proxyOp = (struct ncclp_proxy_op){.pid = getpid(), .peer = 6, .isSend = 1};
        void *op = side_start(ctx1, mask1, &d);
        d = (ncclp_descr_v6){.type = NCCLP_PROXY_STEP, .parentObj = op, .rank = 1};
        void *st = side_start(ctx1, mask1, &d);
        side_state(st, NCCLP_STEP_SEND_PEER_WAIT, 0);
        side_state(st, NCCLP_STEP_SEND_WAIT, 0);
        side_stop(st);
        side_stop(op);
    }
    return NULL;
}

static void check_threads(void)
{
    struct argus_nccl_step_stats st;
    argus_nccl_step_stats(&st);
    pthread_t t;
    if (pthread_create(&t, NULL, proxy_thread, NULL) != 0) {
        CHECK(0, "pthread_create");
        return;
    }
    for (int i = 0; i < THREADED; i++) {
        ncclp_descr_v6 d = {.type = NCCLP_COLL, .rank = 1};
        d.coll = (struct ncclp_coll_v5){.seqNumber = 10000 + (uint64_t)i,
                                        .func = "ReduceScatter", .count = 8,
                                        .datatype = "ncclFloat64"};
        void *coll = side_start(ctx1, mask1, &d);
        pthread_mutex_lock(&queue.mu);
        while (queue.head - queue.tail == QN)
            pthread_cond_wait(&queue.cv, &queue.mu);
        queue.h[queue.head++ % QN] = coll;
        pthread_cond_broadcast(&queue.cv);
        pthread_mutex_unlock(&queue.mu);
        side_stop(coll);
    }
    pthread_join(t, NULL);
    argus_nccl_step_stats(&st);
    /* and the 2,048 childless collectives check_pool left in the ring, evicted now */
    CHECK(st.comm[0].colls == THREADED + 2048, "threaded collectives reported %u of %d",
          st.comm[0].colls, THREADED + 2048);
    CHECK(st.comm[0].bytes == 64ull * THREADED + 2048, "threaded bytes %" PRIu64,
          st.comm[0].bytes);
    CHECK(st.comm[0].n_peers == 1 && st.comm[0].peer[0].ops == THREADED &&
              st.comm[0].peer[0].steps == THREADED,
          "threaded ops %u steps %u", st.comm[0].peer[0].ops, st.comm[0].peer[0].steps);
    CHECK(st.arrivals_dropped == THREADED + 2048 - ARGUS_NCCL_MAX_SEQ &&
              st.events_dropped == 0,
          "arrivals dropped %u", st.arrivals_dropped);
}

int nccl_stress_run(void *ctx, int mask)
{
    ctx1 = ctx;
    mask1 = mask;
    check_pool();
    check_threads();
    return failures;
}
