/* nccl_profiler_side.c — tests only: NCCL's side of the profiler-plugin contract
 * (tests/tracer/nccl_profiler_side.h), as NCCL plays it: the plugin loaded by dlopen and
 * its newest table up to a version (v6, v5, v4), every event handed over in that
 * version's own layout (a v6 description translated down), and counts of what was
 * handed over.
 * Must not call the plugin outside the calls NCCL makes; never exits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/tracer/nccl_profiler_side.h"

#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#include "tests/tracer/nccl_profiler_chaintest.h"

static struct {
    int ver;
    const ncclp_profiler_v4 *p4;
    const ncclp_profiler_v5 *p5;
    const ncclp_profiler_v6 *p6;
    _Atomic int started[16], stopped, states; /* what was handed over (any thread) */
} side;

int side_load(const char *path, int maxver)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL dlopen %s: %s\n", path, dlerror());
        return -1;
    }
    if (maxver >= 6 && (side.p6 = dlsym(h, "ncclProfiler_v6")))
        side.ver = 6;
    else if (maxver >= 5 && (side.p5 = dlsym(h, "ncclProfiler_v5")))
        side.ver = 5;
    else if (maxver >= 4 && (side.p4 = dlsym(h, "ncclProfiler_v4")))
        side.ver = 4;
    else {
        printf("FAIL %s: no profiler for version <= %d\n", path, maxver);
        return -1;
    }
    return 0;
}

int side_init(void **ctx, int *mask, uint64_t hash, const char *name, int nnodes,
                     int nranks, int rank)
{
    *mask = 0;
    switch (side.ver) {
    case 6:
        return side.p6->init(ctx, hash, mask, name, nnodes, nranks, rank, NULL);
    case 5:
        return side.p5->init(ctx, hash, mask, name, nnodes, nranks, rank, NULL);
    default:
        return side.p4->init(ctx, mask, name, hash, nnodes, nranks, rank, NULL);
    }
}

/* Start d (v6 layout, coll/p2p parent = their group) when its type is in mask. */
void *side_start(void *ctx, int mask, const ncclp_descr_v6 *d)
{
    void *h = NULL;
    if (!(d->type & (uint64_t)(unsigned)mask))
        return NULL;
    side.started[chaintest_bit_index(d->type)]++;
    if (side.ver == 6) {
        ncclp_descr_v6 c = *d;
        side.p6->startEvent(ctx, &h, &c);
    } else if (side.ver == 5) {
        ncclp_descr_v5 c = {.type = d->type, .parentObj = d->parentObj, .rank = d->rank};
        if (d->type == NCCLP_COLL)
            c.coll = d->coll;
        else if (d->type == NCCLP_P2P)
            c.p2p = d->p2p;
        else if (d->type == NCCLP_PROXY_OP)
            c.proxyOp = d->proxyOp;
        else if (d->type == NCCLP_PROXY_STEP)
            c.proxyStep = d->proxyStep;
        else if (d->type == NCCLP_KERNEL_CH)
            c.kernelCh = d->kernelCh;
        else if (d->type == NCCLP_COLL_API)
            c.api = d->api;
        side.p5->startEvent(ctx, &h, &c);
    } else {
        ncclp_descr_v4 c = {.type = (uint8_t)d->type, .parentObj = d->parentObj,
                            .rank = d->rank};
        if (d->type == NCCLP_COLL) {
            c.coll.seqNumber = d->coll.seqNumber;
            c.coll.func = d->coll.func;
            c.coll.count = d->coll.count;
            c.coll.datatype = d->coll.datatype;
            c.coll.nChannels = d->coll.nChannels;
            c.coll.algo = d->coll.algo;
            c.coll.proto = d->coll.proto;
        } else if (d->type == NCCLP_P2P) {
            c.p2p.func = d->p2p.func;
            c.p2p.datatype = d->p2p.datatype;
            c.p2p.count = d->p2p.count;
            c.p2p.peer = d->p2p.peer;
            c.p2p.nChannels = d->p2p.nChannels;
        } else if (d->type == NCCLP_PROXY_OP) {
            c.proxyOp = d->proxyOp;
        } else if (d->type == NCCLP_PROXY_STEP) {
            c.proxyStep = d->proxyStep;
        } else if (d->type == NCCLP_KERNEL_CH) {
            c.kernelCh = d->kernelCh;
        }
        side.p4->startEvent(ctx, &h, &c);
    }
    return h;
}

void side_state(void *h, int s, uint64_t ptimer)
{
    if (!h)
        return;
    side.states++;
    if (side.ver == 4) {
        ncclp_state_args_v4 a = {.kernelCh.pTimer = ptimer};
        side.p4->recordEventState(h, s, &a);
    } else {
        ncclp_state_args_v5 a = {.kernelCh.pTimer = ptimer};
        if (side.ver == 6)
            side.p6->recordEventState(h, s, &a);
        else
            side.p5->recordEventState(h, s, &a);
    }
}

void side_stop(void *h)
{
    if (!h)
        return;
    side.stopped++;
    if (side.ver == 6)
        side.p6->stopEvent(h);
    else if (side.ver == 5)
        side.p5->stopEvent(h);
    else
        side.p4->stopEvent(h);
}

void side_finalize(void *ctx)
{
    if (side.ver == 6)
        side.p6->finalize(ctx);
    else if (side.ver == 5)
        side.p5->finalize(ctx);
    else
        side.p4->finalize(ctx);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void side_proxy_step(void *ctx, int mask, void *op, const int *states, const long *ms,
                     int n)
{
    ncclp_descr_v6 d = {.type = NCCLP_PROXY_STEP, .parentObj = op, .rank = 1};
    void *s = side_start(ctx, mask, &d);
    for (int i = 0; i < n; i++) {
        side_state(s, states[i], 0);
        sleep_ms(ms[i]);
    }
    side_stop(s);
}

int side_version(void)
{
    return side.ver;
}

const char *side_name(void)
{
    return side.ver == 6 ? side.p6->name : side.ver == 5 ? side.p5->name : side.p4->name;
}

int side_started(int i)
{
    return side.started[i];
}

int side_stopped(void)
{
    return side.stopped;
}
