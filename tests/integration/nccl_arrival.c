/* nccl_arrival.c — a small real MPI program for tests/integration/t_nccl_arrival.sh that
 * plays NCCL's side of the profiler-plugin contract in real time: each rank dlopens the
 * plugin NCCL_PROFILER_PLUGIN names (libargus_nccl.so under argus-run) exactly as NCCL
 * 2.23+ does (ncclProfiler_v6, else v5, v4: tests/tracer/nccl_profiler_side.c), inits one
 * communicator of all ranks, and every step runs one "all-reduce" on it: a group and a
 * collective event (seqNumber = the step), then a send proxy op to the next rank and a
 * receive proxy op from the previous one, whose proxy steps go through NCCL's states
 * while the ranks really wait for each other (MPI_Barrier):
 *   send: SendGPUWait 0.2 ms, SendPeerWait (barrier: waiting for the others to arrive),
 *         SendWait XFER ms (the transfer);
 *   recv: RecvWait (barrier: waiting for the data of the slowest sender),
 *         RecvFlushWait 0.1 ms.
 * Steps and phases are marked through argus.h (found with dlsym, as a framework would):
 * "forward" (20 ms of work), then the collective in "comm". Injections: rank LATE_RANK
 * sleeps LATE_MS before the collective in steps A..B (it arrives late; the others wait in
 * SendPeerWait), and rank SLOW_RANK's SendWait to its next rank lasts SLOW_MS instead of
 * 2 ms in every step (one slow link; the others wait for its data in RecvWait).
 * Usage: nccl_arrival STEPS LATE_RANK A B LATE_MS SLOW_RANK SLOW_MS
 * Prints "rank R done N steps" and exits 0; 2 on a usage error or when no plugin loads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tests/tracer/nccl_profiler_side.h"

#define COMM_HASH 0x6e63636c61727276ull /* the same on every member */

typedef void (*step_fn)(uint64_t step, uint64_t t_ns);
typedef void (*push_fn)(const char *name, uint64_t t_ns);
typedef void (*pop_fn)(uint64_t t_ns);
typedef uint64_t (*now_fn)(void);

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (long)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* One proxy step of op: `pre` (its state for pre_ms), then `wait` while the ranks meet
 * (MPI_Barrier), then `post` for post_ms. */
static void proxy_step(void *ctx, int mask, void *op, int rank, int pre, double pre_ms,
                       int wait, int post, double post_ms)
{
    ncclp_descr_v6 d = {.type = NCCLP_PROXY_STEP, .parentObj = op, .rank = rank};
    void *s = side_start(ctx, mask, &d);
    if (pre) {
        side_state(s, pre, 0);
        sleep_ms(pre_ms);
    }
    side_state(s, wait, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    side_state(s, post, 0);
    sleep_ms(post_ms);
    side_stop(s);
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: nccl_arrival STEPS LATE_RANK A B LATE_MS SLOW_RANK SLOW_MS\n");
        return 2;
    }
    const int steps = atoi(argv[1]), late_rank = atoi(argv[2]), a = atoi(argv[3]),
              b = atoi(argv[4]), slow_rank = atoi(argv[6]);
    const double late_ms = atof(argv[5]), slow_ms = atof(argv[7]);
    step_fn begin = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_begin");
    step_fn end = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_end");
    push_fn push = (push_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_phase_push");
    pop_fn pop = (pop_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_phase_pop");
    now_fn now = (now_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_now_ns");
    const char *plugin = getenv("NCCL_PROFILER_PLUGIN");
    if (!begin || !end || !push || !pop || !now) {
        fprintf(stderr, "nccl_arrival: libargus.so is not loaded\n");
        return 2;
    }
    if (!plugin || !*plugin || side_load(plugin, 6) != 0) {
        fprintf(stderr, "nccl_arrival: no NCCL profiler plugin (NCCL_PROFILER_PLUGIN)\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    void *ctx = NULL;
    int mask = 0;
    if (side_init(&ctx, &mask, COMM_HASH, "dp", 1, world, rank) != 0) {
        fprintf(stderr, "nccl_arrival: the plugin's init failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < steps; s++) {
        begin((uint64_t)s, now());
        push("forward", now());
        sleep_ms(20);
        pop(now());
        if (rank == late_rank && s >= a && s <= b)
            sleep_ms(late_ms); /* arrives late at the collective */
        push("comm", now());
        ncclp_descr_v6 d = {.type = NCCLP_GROUP, .rank = rank};
        void *g = side_start(ctx, mask, &d);
        d = (ncclp_descr_v6){.type = NCCLP_COLL, .parentObj = g, .rank = rank};
        d.coll = (struct ncclp_coll_v5){.seqNumber = (uint64_t)s, .func = "AllReduce",
                                        .count = 1 << 20, .datatype = "ncclFloat32",
                                        .nChannels = 1, .algo = "Ring", .proto = "Simple",
                                        .parentGroup = g};
        void *coll = side_start(ctx, mask, &d);
        side_stop(coll); /* host events stop once the work is enqueued */
        side_stop(g);
        d = (ncclp_descr_v6){.type = NCCLP_PROXY_OP, .parentObj = coll, .rank = rank};
        d.proxyOp = (struct ncclp_proxy_op){.pid = getpid(), .peer = (rank + 1) % world,
                                            .nSteps = 1, .isSend = 1};
        void *send = side_start(ctx, mask, &d);
        d.proxyOp = (struct ncclp_proxy_op){.pid = getpid(), .peer = (rank + world - 1) % world,
                                            .nSteps = 1, .isSend = 0};
        void *recv = side_start(ctx, mask, &d);
        side_state(send, NCCLP_PROXY_OP_IN_PROGRESS, 0);
        proxy_step(ctx, mask, send, rank, NCCLP_STEP_SEND_GPU_WAIT, 0.2,
                   NCCLP_STEP_SEND_PEER_WAIT, NCCLP_STEP_SEND_WAIT,
                   rank == slow_rank ? slow_ms : 2.0);
        proxy_step(ctx, mask, recv, rank, 0, 0, NCCLP_STEP_RECV_WAIT,
                   NCCLP_STEP_RECV_FLUSH_WAIT, 0.1);
        side_stop(send);
        side_stop(recv);
        pop(now());
        end((uint64_t)s, now());
    }
    side_finalize(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d done %d steps\n", rank, steps);
    MPI_Finalize();
    return 0;
}
