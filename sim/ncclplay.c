/* ncclplay.c — NCCL's side of the profiler-plugin contract, played by argus-simtrain with
 * --nccl-groups (ncclplay.h has the contract). The plugin ABI is declared here from
 * NCCL's public plugin headers (src/include/plugin/profiler/profiler_v{4,5,6}.h): only
 * the members this file fills, in NCCL's layout, with each descriptor union padded to at
 * least NCCL's size. It must not include any Argus header but argus.h (docs/STYLE.md,
 * "Rooms and arrows"), allocate per event, or print: errors go back to simtrain.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim/ncclplay.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the ABI (NCCL 2.26-2.29) ---- */

enum {
    NP_GROUP = 1 << 0,
    NP_COLL = 1 << 1,
    NP_P2P = 1 << 2,
    NP_KERNEL_CH = 1 << 6,
};
#define NP_KERNEL_CH_STOP 22 /* ncclProfilerKernelChStop */
#define NP_SUCCESS 0

typedef void (*np_logger_t)(int level, unsigned long flags, const char *file, int line,
                            const char *fmt, ...);

struct np_coll { /* v4; v5 and v6 add parentGroup */
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
    void *parentGroup; /* v5, v6 only */
};
struct np_p2p {
    const char *func;
    void *buff;
    const char *datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
    void *parentGroup; /* v5, v6 only */
};
struct np_kernel_ch {
    uint8_t channelId;
    uint64_t pTimer;
};

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct {
            uint64_t seqNumber;
            const char *func;
            const void *sendBuff;
            void *recvBuff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t nChannels, nWarps;
            const char *algo, *proto;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
        } p2p;
        struct np_kernel_ch kernelCh;
        unsigned char pad[128];
    };
} np_descr_v4;

/* v5 and v6: v6's union only adds members (copy-engine events, kernelStep); padded past
 * both, one layout serves both tables. */
typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct np_coll coll;
        struct np_p2p p2p;
        struct np_kernel_ch kernelCh;
        unsigned char pad[256];
    };
} np_descr_v5;

typedef union {
    struct {
        uint64_t pTimer;
    } kernelCh;
    unsigned char pad[16];
} np_state_args; /* v4, v5 and v6: a union of one-word members */

typedef struct {
    const char *name;
    int (*init)(void **context, int *eActivationMask, const char *commName,
                uint64_t commHash, int nNodes, int nranks, int rank, np_logger_t logfn);
    int (*startEvent)(void *context, void **eHandle, np_descr_v4 *eDescr);
    int (*stopEvent)(void *eHandle);
    int (*recordEventState)(void *eHandle, int eState, np_state_args *eStateArgs);
    int (*finalize)(void *context);
} np_profiler_v4;

typedef struct { /* ncclProfiler_v5 and ncclProfiler_v6 */
    const char *name;
    int (*init)(void **context, uint64_t commId, int *eActivationMask, const char *commName,
                int nNodes, int nranks, int rank, np_logger_t logfn);
    int (*startEvent)(void *context, void **eHandle, np_descr_v5 *eDescr);
    int (*stopEvent)(void *eHandle);
    int (*recordEventState)(void *eHandle, int eState, np_state_args *eStateArgs);
    int (*finalize)(void *context);
} np_profiler_v5;

/* ---- state ---- */

static struct {
    void *lib;
    int ver; /* 6, 5 or 4; 0 when not loaded */
    const np_profiler_v4 *p4;
    const np_profiler_v5 *p5; /* v5 or v6 */
} ncclplay_state;

static const char *const func_name[SIM_NCCL_NFUNC] = {
    [SIM_NCCL_ALLREDUCE] = "AllReduce", [SIM_NCCL_REDUCESCATTER] = "ReduceScatter",
    [SIM_NCCL_ALLGATHER] = "AllGather", [SIM_NCCL_SEND] = "Send", [SIM_NCCL_RECV] = "Recv"};

/* NCCL's logger for the plugin: the simulator has no NCCL_DEBUG, so it says nothing. */
static void quiet_logger(int level, unsigned long flags, const char *file, int line,
                         const char *fmt, ...)
{
    (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

int sim_ncclplay_load(int *version, char *err, size_t errlen)
{
    const char *name = getenv("NCCL_PROFILER_PLUGIN");
    char alt[4096];

    if (!name || !*name) {
        snprintf(err, errlen, "NCCL_PROFILER_PLUGIN is not set (run under argus-run, or "
                 "name a profiler plugin)");
        return -1;
    }
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) { /* NCCL's second try: the conventional name */
        char first[512];
        snprintf(first, sizeof first, "%s", dlerror());
        snprintf(alt, sizeof alt, "libnccl-profiler-%s.so", name);
        h = dlopen(alt, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(err, errlen, "NCCL_PROFILER_PLUGIN=%s: cannot load it: %s", name, first);
            return -1;
        }
    }
    const void *p;
    if ((p = dlsym(h, "ncclProfiler_v6")))
        ncclplay_state.ver = 6;
    else if ((p = dlsym(h, "ncclProfiler_v5")))
        ncclplay_state.ver = 5;
    else if ((p = dlsym(h, "ncclProfiler_v4")))
        ncclplay_state.ver = 4;
    if (!p) {
        snprintf(err, errlen, "NCCL_PROFILER_PLUGIN=%s: no ncclProfiler_v6, _v5 or _v4 in it",
                 name);
        dlclose(h);
        return -1;
    }
    if (ncclplay_state.ver == 4)
        ncclplay_state.p4 = p;
    else
        ncclplay_state.p5 = p;
    ncclplay_state.lib = h;
    if (version)
        *version = ncclplay_state.ver;
    return 0;
}

/* ---- communicators ---- */

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static int cmp_u64(const void *x, const void *y)
{
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

int sim_ncclplay_comm_prepare(struct sim_nccl_comm *c, MPI_Comm comm, const char *name)
{
    int rank, n, world, hlen = 0, rc = -1;
    char host[MPI_MAX_PROCESSOR_NAME];

    memset(c, 0, sizeof *c);
    if (!ncclplay_state.ver)
        return -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Get_processor_name(host, &hlen);
    /* every member learns every member's world rank and host: the hash of the member set
     * (the same on all of them), and how many nodes it spans */
    const uint64_t mine[2] = {(uint64_t)world,
                              mix64(fnv(0xcbf29ce484222325ull, host, (size_t)hlen))};
    uint64_t *all = malloc(2 * (size_t)n * sizeof *all);
    uint64_t *hosts = malloc((size_t)n * sizeof *hosts);
    if (!all || !hosts) { /* the members wait in the exchange: the caller aborts the job */
        rc = -2;
        goto out;
    }
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, comm);
    uint64_t h = fnv(0xcbf29ce484222325ull, name, strlen(name));
    for (int i = 0; i < n; i++) {
        const uint32_t w = (uint32_t)all[2 * i];
        h = fnv(h, &w, sizeof w);
        hosts[i] = all[2 * i + 1];
    }
    h = mix64(h ^ (uint64_t)n);
    qsort(hosts, (size_t)n, sizeof *hosts, cmp_u64);
    int nnodes = 0;
    for (int i = 0; i < n; i++)
        nnodes += i == 0 || hosts[i] != hosts[i - 1];

    c->hash = h ? h : 1;
    c->rank = rank;
    c->nranks = n;
    c->nnodes = nnodes;
    c->name = name;
    rc = 0;
out:
    free(all);
    free(hosts);
    return rc;
}

int sim_ncclplay_comm_tell(struct sim_nccl_comm *c)
{
    int mask = 0, prc;
    if (!ncclplay_state.ver || !c->hash || c->live)
        return -1;
    if (ncclplay_state.ver == 4)
        prc = ncclplay_state.p4->init(&c->ctx, &mask, c->name, c->hash, c->nnodes, c->nranks,
                                      c->rank, quiet_logger);
    else
        prc = ncclplay_state.p5->init(&c->ctx, c->hash, &mask, c->name, c->nnodes, c->nranks,
                                      c->rank, quiet_logger);
    if (prc != NP_SUCCESS) { /* NCCL disables the plugin for a communicator it refused */
        c->ctx = NULL;
        return -1;
    }
    c->mask = mask;
    c->live = 1;
    return 0;
}

int sim_ncclplay_comm_init(struct sim_nccl_comm *c, MPI_Comm comm, const char *name)
{
    const int rc = sim_ncclplay_comm_prepare(c, comm, name);
    return rc ? rc : sim_ncclplay_comm_tell(c);
}

void sim_ncclplay_comm_fini(struct sim_nccl_comm *c)
{
    if (c->live) {
        if (ncclplay_state.ver == 4)
            ncclplay_state.p4->finalize(c->ctx);
        else
            ncclplay_state.p5->finalize(c->ctx);
    }
    memset(c, 0, sizeof *c);
}

void sim_ncclplay_unload(void)
{
    if (ncclplay_state.lib)
        dlclose(ncclplay_state.lib);
    memset(&ncclplay_state, 0, sizeof ncclplay_state);
}

/* ---- events (no allocation: descriptors on the stack) ---- */

static int wants(const struct sim_nccl_comm *c, int type)
{
    return c->live && (c->mask & type) != 0;
}

/* Start one event; d is v5's layout, translated for a v4 plugin. NULL when not started. */
static void *start(const struct sim_nccl_comm *c, const np_descr_v5 *d)
{
    void *h = NULL;
    if (!wants(c, (int)d->type))
        return NULL;
    if (ncclplay_state.ver != 4) {
        np_descr_v5 e = *d;
        ncclplay_state.p5->startEvent(c->ctx, &h, &e);
        return h;
    }
    np_descr_v4 e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)d->type;
    e.parentObj = d->parentObj;
    e.rank = d->rank;
    if (d->type == NP_COLL) {
        e.coll.seqNumber = d->coll.seqNumber;
        e.coll.func = d->coll.func;
        e.coll.count = d->coll.count;
        e.coll.root = d->coll.root;
        e.coll.datatype = d->coll.datatype;
        e.coll.nChannels = d->coll.nChannels;
        e.coll.nWarps = d->coll.nWarps;
        e.coll.algo = d->coll.algo;
        e.coll.proto = d->coll.proto;
        e.parentObj = d->coll.parentGroup; /* v4: the group is the parent */
    } else if (d->type == NP_P2P) {
        e.p2p.func = d->p2p.func;
        e.p2p.datatype = d->p2p.datatype;
        e.p2p.count = d->p2p.count;
        e.p2p.peer = d->p2p.peer;
        e.p2p.nChannels = d->p2p.nChannels;
        e.parentObj = d->p2p.parentGroup;
    } else if (d->type == NP_KERNEL_CH) {
        e.kernelCh = d->kernelCh;
    }
    ncclplay_state.p4->startEvent(c->ctx, &h, &e);
    return h;
}

static void stop(void *h)
{
    if (!h)
        return;
    if (ncclplay_state.ver == 4)
        ncclplay_state.p4->stopEvent(h);
    else
        ncclplay_state.p5->stopEvent(h);
}

static void state(void *h, int s, uint64_t ptimer)
{
    if (!h)
        return;
    np_state_args a;
    memset(&a, 0, sizeof a);
    a.kernelCh.pTimer = ptimer;
    if (ncclplay_state.ver == 4)
        ncclplay_state.p4->recordEventState(h, s, &a);
    else
        ncclplay_state.p5->recordEventState(h, s, &a);
}

/* The task (collective or p2p) d under a group, stopped at enqueue, then its one kernel
 * channel from gpu_start to gpu_end. */
static void play(const struct sim_nccl_comm *c, np_descr_v5 *d, uint64_t gpu_start,
                 uint64_t gpu_end)
{
    np_descr_v5 g = {.type = NP_GROUP, .rank = c->rank};
    void *group = start(c, &g);
    if (d->type == NP_COLL)
        d->coll.parentGroup = group;
    else
        d->p2p.parentGroup = group;
    void *task = start(c, d);
    /* NCCL stops the host-side events once the work is enqueued; the kernel channel
     * names the task as its parent and starts later */
    stop(task);
    stop(group);
    np_descr_v5 k = {.type = NP_KERNEL_CH, .parentObj = task, .rank = c->rank};
    k.kernelCh = (struct np_kernel_ch){.channelId = 0, .pTimer = gpu_start};
    void *ch = task ? start(c, &k) : NULL;
    state(ch, NP_KERNEL_CH_STOP, gpu_end);
    stop(ch);
}

void sim_ncclplay_coll(struct sim_nccl_comm *c, enum sim_nccl_func func, size_t count,
                       const char *datatype, uint64_t gpu_start, uint64_t gpu_end)
{
    if (!c->live || func >= SIM_NCCL_SEND)
        return;
    np_descr_v5 d = {.type = NP_COLL, .rank = c->rank};
    d.coll = (struct np_coll){.seqNumber = c->seq[func]++, .func = func_name[func],
                              .count = count, .datatype = datatype, .nChannels = 1,
                              .nWarps = 16, .algo = "Ring", .proto = "LL"};
    play(c, &d, gpu_start, gpu_end);
}

void sim_ncclplay_p2p(struct sim_nccl_comm *c, enum sim_nccl_func func, int peer,
                      size_t count, const char *datatype, uint64_t gpu_start,
                      uint64_t gpu_end)
{
    if (!c->live || (func != SIM_NCCL_SEND && func != SIM_NCCL_RECV))
        return;
    np_descr_v5 d = {.type = NP_P2P, .rank = c->rank};
    d.p2p = (struct np_p2p){.func = func_name[func], .datatype = datatype, .count = count,
                            .peer = peer, .nChannels = 1};
    play(c, &d, gpu_start, gpu_end);
}
