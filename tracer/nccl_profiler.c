/* nccl_profiler.c — Argus's NCCL profiler plugin, libargus_nccl.so (NCCL_PROFILER_PLUGIN
 * names it; NCCL dlopen()s it whether NCCL itself is linked dynamically or statically).
 * It exports ncclProfiler_v6, _v5 and _v4 (nccl_profiler_abi.h); NCCL takes the highest
 * it knows. Per communicator (init) it tells libargus.so commHash/commId, commName,
 * nNodes, nranks and rank; per collective it times the call from its start to the end of
 * its last proxy operation or kernel channel, and splits the proxy steps' time into
 * waiting for peers, transfer and waiting for the local GPU, per peer
 * (nccl_profiler_stats.h has the split). Every call is also passed to the plugin that
 * held the slot before (nccl_profiler_chain.h).
 *
 * libargus.so (preloaded in the rank) is found with dlsym(RTLD_DEFAULT); without it the
 * plugin records nothing and only chains, and with neither it asks NCCL for no events.
 * Events live in fixed arrays: proxy ops, steps and kernel channels in a pool
 * (ARGUS_NCCLP_EVENTS, reference counted: an op stays until its last step is done),
 * collectives, p2p calls, groups and API events in a ring (ARGUS_NCCLP_TASKS) reused
 * oldest first, because NCCL stops them at enqueue and still names them as the parent of
 * proxy ops and kernel channels that start later; a collective is reported when NCCL has
 * stopped it and its last child is done, or when its slot is reused. About 2.4 MB of
 * static arrays, touched as used. Must not allocate after load, log per event, or block
 * beyond the pool's short mutex; called from NCCL's application and proxy threads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracer/nccl_profiler_abi.h"
#include "tracer/nccl_profiler_chain.h"
#include "tracer/nccl_profiler_stats.h"

#define NCCLP_EXPORT __attribute__((visibility("default")))
#define ARGUS_NCCLP_EVENTS 8192 /* events alive at once (proxy steps dominate) */
#define ARGUS_NCCLP_TASKS 2048  /* collectives, p2p calls, groups, API events in flight */
#define ARGUS_NCCLP_COMMS 256   /* communicators alive at once */

/* The events Argus itself asks for. */
#define ARGUS_NCCLP_MASK \
    (NCCLP_COLL | NCCLP_P2P | NCCLP_PROXY_OP | NCCLP_PROXY_STEP | NCCLP_KERNEL_CH)
/* Short-lived events, under their parent's lifetime (reference counted, free list); every
 * other type (group, API, collective, p2p, CE events) is a task event, kept in a ring. */
#define POOL_TYPES \
    (NCCLP_PROXY_OP | NCCLP_PROXY_STEP | NCCLP_PROXY_CTRL | NCCLP_KERNEL_CH | \
     NCCLP_NET_PLUGIN | NCCLP_CE_SYNC | NCCLP_CE_BATCH)

enum { B_PEER, B_XFER, B_GPU, B_N };

struct pctx {
    uint64_t hash;
    void *cctx;  /* the chained plugin's context */
    int cmask;   /* what it asked for */
    int own;     /* 1 when Argus records this communicator */
    int chained; /* the chained plugin's init succeeded: it gets finalize */
    int used;
};

/* One event. Task events (ring = 1) are stopped by NCCL when the work is enqueued, before
 * their proxy operations and kernel channels even start, and NCCL keeps passing their
 * handle as those children's parent: so they stay valid until ARGUS_NCCLP_TASKS newer
 * task events have started (the ring is reused oldest first, as NCCL's own example plugin
 * does), and children check the generation they saw before touching one. */
struct pev {
    struct pev *next_free; /* pool */
    struct pev *parent;    /* a pool parent, holding a reference; NULL when none */
    struct pev *task;      /* the collective / p2p this event accounts to, or NULL */
    unsigned task_gen;     /* its generation when this event started */
    int holds_task;        /* a direct child of task: counted in its refs */
    void *ch;              /* the chained plugin's handle */
    uint64_t type;
    int ring;
    int mine;   /* Argus records it (type in ARGUS_NCCLP_MASK, ctx->own) */
    int state;  /* proxy step: the last state, -1 none */
    uint64_t t_state, gpu_start;
    atomic_uint gen;      /* ring: bumped at every reuse */
    atomic_uint refs;     /* pool: 1 until stopped + live children; ring: live children */
    atomic_int stopped;   /* ring */
    atomic_int reported;  /* ring: reported once (complete or evicted) */
    atomic_int had_children; /* ring: a proxy op or kernel channel started under it */
    atomic_uint_fast64_t acc[B_N];  /* coll/p2p and proxy op: their steps' time */
    atomic_uint_fast64_t kernel_ns; /* coll/p2p: the longest kernel channel */
    atomic_uint_fast64_t end_ns;    /* coll/p2p: the latest child's end */
    atomic_uint steps;
    union {
        struct argus_nccl_coll_rec coll; /* filled at start, times at the end */
        struct argus_nccl_proxy_rec op;
    } rec;
};

static struct {
    pthread_once_t once;
    const struct argus_ncclprof_sink *sink;
    pid_t pid;
    pthread_mutex_t mu;
    struct pev *free;
    size_t unused;       /* ev[unused..] never handed out yet (not touched: no page cost) */
    uint64_t ring_next;  /* task ring: the next slot (mod ARGUS_NCCLP_TASKS) */
    struct pev ev[ARGUS_NCCLP_EVENTS];
    struct pev task[ARGUS_NCCLP_TASKS];
    struct pctx ctx[ARGUS_NCCLP_COMMS];
} ncclprof_state = {.once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void load_once(void)
{
    typedef const struct argus_ncclprof_sink *(*sink_fn)(void);
    sink_fn f = (sink_fn)(uintptr_t)dlsym(RTLD_DEFAULT, ARGUS_NCCLPROF_SINK_SYMBOL);
    const struct argus_ncclprof_sink *s = f ? f() : NULL;
    if (s && s->version == ARGUS_NCCLPROF_SINK_VERSION)
        ncclprof_state.sink = s;
    ncclprof_state.pid = getpid();
    ncclp_chain_load();
}

/* The function named s (NCCL's "AllReduce", ...); ARGUS_NCCL_F_OTHER when unknown. */
static enum argus_nccl_func func_of(const char *s)
{
    static const char *const names[ARGUS_NCCL_F_N] = {
        [ARGUS_NCCL_F_BROADCAST] = "Broadcast", [ARGUS_NCCL_F_REDUCE] = "Reduce",
        [ARGUS_NCCL_F_ALLGATHER] = "AllGather", [ARGUS_NCCL_F_REDUCESCATTER] = "ReduceScatter",
        [ARGUS_NCCL_F_ALLREDUCE] = "AllReduce", [ARGUS_NCCL_F_SEND] = "Send",
        [ARGUS_NCCL_F_RECV] = "Recv"};
    if (s)
        for (int i = 1; i < ARGUS_NCCL_F_N; i++)
            if (strcmp(s, names[i]) == 0)
                return (enum argus_nccl_func)i;
    return ARGUS_NCCL_F_OTHER;
}

/* The element size of NCCL's datatype name ("ncclFloat32" 4, "ncclBfloat16" 2, fp8 1);
 * 0 when unknown. */
static unsigned dtype_size(const char *s)
{
    if (!s)
        return 0;
    const size_t n = strlen(s);
    if (n >= 4 && (strcmp(s + n - 4, "e4m3") == 0 || strcmp(s + n - 4, "e5m2") == 0))
        return 1;
    if (n >= 2 && strcmp(s + n - 2, "64") == 0)
        return 8;
    if (n >= 2 && strcmp(s + n - 2, "32") == 0)
        return 4;
    if (n >= 2 && strcmp(s + n - 2, "16") == 0)
        return 2;
    if (n >= 1 && s[n - 1] == '8')
        return 1;
    return 0;
}

/* ---- events ---- */

static void atomic_max(atomic_uint_fast64_t *a, uint64_t v)
{
    uint_fast64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while (cur < v &&
           !atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* e's task when it is still the one e started under; NULL otherwise. */
static struct pev *task_of(const struct pev *e)
{
    struct pev *t = e->task;
    return t && atomic_load_explicit(&t->gen, memory_order_acquire) == e->task_gen ? t
                                                                                   : NULL;
}

/* What a finished (or evicted) event tells libargus.so. */
static void report(struct pev *e)
{
    const struct argus_ncclprof_sink *s = ncclprof_state.sink;
    if (!e->mine || !s)
        return;
    if (e->type == NCCLP_COLL || e->type == NCCLP_P2P) {
        struct argus_nccl_coll_rec *r = &e->rec.coll;
        const uint64_t end = atomic_load(&e->end_ns);
        r->end_ns = end > r->start_ns ? end : r->start_ns;
        r->peer_wait_ns = atomic_load(&e->acc[B_PEER]);
        r->xfer_ns = atomic_load(&e->acc[B_XFER]);
        r->gpu_wait_ns = atomic_load(&e->acc[B_GPU]);
        r->kernel_ns = atomic_load(&e->kernel_ns);
        r->steps = atomic_load(&e->steps);
        s->coll(r);
    } else if (e->type == NCCLP_PROXY_OP) {
        struct argus_nccl_proxy_rec *r = &e->rec.op;
        r->peer_wait_ns = atomic_load(&e->acc[B_PEER]);
        r->xfer_ns = atomic_load(&e->acc[B_XFER]);
        r->gpu_wait_ns = atomic_load(&e->acc[B_GPU]);
        r->steps = atomic_load(&e->steps);
        s->proxy(r);
    }
}

static void task_report_once(struct pev *t)
{
    if (atomic_exchange(&t->reported, 1) == 0)
        report(t);
}

/* A task event is complete once NCCL stopped it and its last child finished. */
static void task_child_done(struct pev *t)
{
    if (atomic_fetch_sub(&t->refs, 1) == 1 && atomic_load(&t->stopped))
        task_report_once(t);
}

/* A pool event, or NULL when the pool is full. */
static struct pev *pool_get(void)
{
    pthread_mutex_lock(&ncclprof_state.mu);
    struct pev *e = ncclprof_state.free;
    if (e)
        ncclprof_state.free = e->next_free;
    else if (ncclprof_state.unused < ARGUS_NCCLP_EVENTS)
        e = &ncclprof_state.ev[ncclprof_state.unused++];
    pthread_mutex_unlock(&ncclprof_state.mu);
    return e;
}

static void pool_put(struct pev *e)
{
    pthread_mutex_lock(&ncclprof_state.mu);
    e->next_free = ncclprof_state.free;
    ncclprof_state.free = e;
    pthread_mutex_unlock(&ncclprof_state.mu);
}

/* The oldest task slot, its previous event reported first if it never completed. */
static struct pev *ring_get(void)
{
    pthread_mutex_lock(&ncclprof_state.mu);
    struct pev *e = &ncclprof_state.task[ncclprof_state.ring_next++ % ARGUS_NCCLP_TASKS];
    const unsigned gen = atomic_load(&e->gen);
    pthread_mutex_unlock(&ncclprof_state.mu);
    if (gen) /* used before: evicted */
        task_report_once(e);
    atomic_store_explicit(&e->gen, gen + 1, memory_order_release);
    return e;
}

/* Drop one reference of a pool event; the last one reports it, tells its task, returns
 * it to the pool and drops the reference it held on its parent (a chain is at most
 * three deep: step, op; kernel channel). */
static void pool_unref(struct pev *e)
{
    while (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) {
        struct pev *parent = e->parent, *t = task_of(e);
        report(e);
        if (t) {
            atomic_max(&t->end_ns, now_ns());
            if (e->holds_task)
                task_child_done(t);
        }
        pool_put(e);
        e = parent;
    }
}

/* Time of a proxy step's state, added to its proxy op and that op's collective. */
static void credit(struct pev *step, int bucket, uint64_t ns)
{
    if (step->parent)
        atomic_fetch_add_explicit(&step->parent->acc[bucket], ns, memory_order_relaxed);
    struct pev *t = task_of(step);
    if (t)
        atomic_fetch_add_explicit(&t->acc[bucket], ns, memory_order_relaxed);
}

static int bucket_of(int state)
{
    switch (state) {
    case NCCLP_STEP_SEND_PEER_WAIT:
    case NCCLP_STEP_RECV_WAIT:
        return B_PEER;
    case NCCLP_STEP_SEND_WAIT:
    case NCCLP_STEP_RECV_FLUSH_WAIT:
        return B_XFER;
    case NCCLP_STEP_SEND_GPU_WAIT:
    case NCCLP_STEP_RECV_GPU_WAIT:
        return B_GPU;
    default:
        return -1;
    }
}

static void step_close(struct pev *e, uint64_t t)
{
    const int b = bucket_of(e->state);
    if (b >= 0 && t > e->t_state)
        credit(e, b, t - e->t_state);
    e->t_state = t;
}

/* ---- the contract, in v6's layout ---- */

static ncclp_result_t init_common(void **context, int *mask, uint64_t hash,
                                  const char *name, int nnodes, int nranks, int rank,
                                  ncclp_logger_t logfn)
{
    pthread_once(&ncclprof_state.once, load_once);
    *context = NULL;
    struct pctx *c = NULL;
    pthread_mutex_lock(&ncclprof_state.mu);
    for (size_t i = 0; i < ARGUS_NCCLP_COMMS && !c; i++)
        if (!ncclprof_state.ctx[i].used) {
            c = &ncclprof_state.ctx[i];
            memset(c, 0, sizeof *c);
            c->used = 1;
        }
    pthread_mutex_unlock(&ncclprof_state.mu);
    if (!c) { /* more live communicators than contexts: this one goes unprofiled */
        *mask = 0;
        return NCCLP_SUCCESS;
    }
    c->hash = hash;
    c->own = ncclprof_state.sink != NULL;
    const ncclp_result_t rc =
        ncclp_chain_init(&c->cctx, &c->cmask, hash, name, nnodes, nranks, rank, logfn);
    c->chained = ncclp_chain_load() > 0 && rc == NCCLP_SUCCESS;
    if (!c->chained) /* no chained plugin, or it declined this communicator */
        c->cmask = 0;
    if (c->own) {
        const struct argus_nccl_comm_info ci = {hash, name, nnodes, nranks, rank};
        ncclprof_state.sink->comm(&ci);
    }
    *mask = (c->own ? ARGUS_NCCLP_MASK : 0) | c->cmask;
    *context = c;
    return NCCLP_SUCCESS;
}

/* Our event behind a handle NCCL passes as a parent: NULL unless it is one of ours (a
 * proxy op of another process, PXN, carries that process's pointer). */
static struct pev *ours(void *h)
{
    struct pev *e = h;
    const struct pev *pe = ncclprof_state.ev, *te = ncclprof_state.task;
    if ((e >= pe && e < pe + ARGUS_NCCLP_EVENTS) || (e >= te && e < te + ARGUS_NCCLP_TASKS))
        return e;
    return NULL;
}

static void fill_record(struct pev *e, const struct pctx *c, const ncclp_descr_v6 *d,
                        uint64_t t)
{
    switch (d->type) {
    case NCCLP_COLL:
        e->rec.coll = (struct argus_nccl_coll_rec){
            .comm_hash = c->hash, .seq = d->coll.seqNumber, .start_ns = t,
            .bytes = (uint64_t)d->coll.count * dtype_size(d->coll.datatype),
            .func = (uint8_t)func_of(d->coll.func),
            .algo_ring = d->coll.algo && strcmp(d->coll.algo, "Ring") == 0,
            .nchannels = d->coll.nChannels};
        break;
    case NCCLP_P2P:
        e->rec.coll = (struct argus_nccl_coll_rec){
            .comm_hash = c->hash, .seq = UINT64_MAX, .start_ns = t,
            .bytes = (uint64_t)d->p2p.count * dtype_size(d->p2p.datatype),
            .func = (uint8_t)func_of(d->p2p.func), .nchannels = d->p2p.nChannels};
        break;
    case NCCLP_PROXY_OP:
        e->rec.op = (struct argus_nccl_proxy_rec){
            .comm_hash = c->hash, .peer = d->proxyOp.peer, .is_send = d->proxyOp.isSend != 0};
        break;
    case NCCLP_KERNEL_CH:
        e->gpu_start = d->kernelCh.pTimer;
        break;
    default:
        break;
    }
}

static ncclp_result_t start_common(void *context, void **handle, const ncclp_descr_v6 *d)
{
    struct pctx *c = context;
    *handle = NULL;
    if (!c)
        return NCCLP_SUCCESS;
    const int mine = c->own && (d->type & ARGUS_NCCLP_MASK);
    const int theirs = (d->type & (uint64_t)(unsigned)c->cmask) != 0;
    if (!mine && !theirs)
        return NCCLP_SUCCESS;
    const int pooled = (d->type & POOL_TYPES) != 0;
    struct pev *e = pooled ? pool_get() : ring_get();
    if (!e) {
        if (ncclprof_state.sink)
            ncclprof_state.sink->dropped(1);
        return NCCLP_SUCCESS;
    }
    /* a PXN proxy op's parent lives in another process: not ours to read */
    const int foreign = d->type == NCCLP_PROXY_OP && d->proxyOp.pid != ncclprof_state.pid;
    struct pev *parent = foreign ? NULL : ours(d->parentObj);
    struct pev *group = NULL;
    if (d->type == NCCLP_COLL)
        group = ours(d->coll.parentGroup);
    else if (d->type == NCCLP_P2P)
        group = ours(d->p2p.parentGroup);
    e->type = d->type;
    e->ring = !pooled;
    e->mine = mine;
    e->state = -1;
    e->parent = NULL;
    e->task = NULL;
    e->holds_task = 0;
    e->gpu_start = 0;
    e->t_state = now_ns();
    atomic_store(&e->refs, pooled ? 1 : 0);
    atomic_store(&e->stopped, 0);
    atomic_store(&e->reported, 0);
    atomic_store(&e->had_children, 0);
    for (int b = 0; b < B_N; b++)
        atomic_store(&e->acc[b], 0);
    atomic_store(&e->kernel_ns, 0);
    atomic_store(&e->end_ns, 0);
    atomic_store(&e->steps, 0);
    if (parent && pooled) {
        if (parent->ring) { /* a proxy op or kernel channel of a collective */
            e->task = parent;
            e->task_gen = atomic_load(&parent->gen);
            e->holds_task = 1;
            atomic_fetch_add(&parent->refs, 1);
            atomic_store(&parent->had_children, 1);
        } else { /* a step of a proxy op: the op stays until the step is done */
            e->parent = parent;
            atomic_fetch_add_explicit(&parent->refs, 1, memory_order_relaxed);
            e->task = parent->task;
            e->task_gen = parent->task_gen;
        }
    }
    if (mine) {
        fill_record(e, c, d, e->t_state);
        if (d->type == NCCLP_PROXY_STEP) {
            struct pev *t = task_of(e);
            if (e->parent)
                atomic_fetch_add_explicit(&e->parent->steps, 1, memory_order_relaxed);
            if (t)
                atomic_fetch_add_explicit(&t->steps, 1, memory_order_relaxed);
        }
    }
    e->ch = NULL;
    if (theirs) {
        /* the chained plugin's handles for the parents; a foreign parent goes through as
         * NCCL gave it (the plugin checks the pid, as it would without Argus) */
        void *cp = foreign ? d->parentObj : parent ? parent->ch : NULL;
        ncclp_chain_start(c->cctx, c->cmask, &e->ch, d, cp, group ? group->ch : NULL);
    }
    *handle = e;
    return NCCLP_SUCCESS;
}

static ncclp_result_t stop_event(void *handle)
{
    struct pev *e = ours(handle);
    if (!e)
        return NCCLP_SUCCESS;
    if (e->mine && e->type == NCCLP_PROXY_STEP)
        step_close(e, now_ns());
    ncclp_chain_stop(e->ch);
    if (!e->ring) {
        pool_unref(e);
    } else if (atomic_exchange(&e->stopped, 1) == 0) {
        /* enqueued, not done: complete when its last child is, or at its eviction */
        atomic_max(&e->end_ns, now_ns());
        if (atomic_load(&e->refs) == 0 && atomic_load(&e->had_children))
            task_report_once(e); /* its children were all done before NCCL stopped it */
    }
    return NCCLP_SUCCESS;
}

static ncclp_result_t record_state(void *handle, ncclp_state_t s, ncclp_state_args_v5 *a)
{
    struct pev *e = ours(handle);
    if (!e)
        return NCCLP_SUCCESS;
    if (e->mine) {
        if (e->type == NCCLP_PROXY_STEP) {
            step_close(e, now_ns());
            e->state = s;
        } else if (e->type == NCCLP_KERNEL_CH && s == NCCLP_KERNEL_CH_STOP && a &&
                   e->gpu_start && a->kernelCh.pTimer > e->gpu_start) {
            struct pev *t = task_of(e);
            if (t)
                atomic_max(&t->kernel_ns, a->kernelCh.pTimer - e->gpu_start);
        }
    }
    return ncclp_chain_state(e->ch, s, a);
}

static ncclp_result_t finalize(void *context)
{
    struct pctx *c = context;
    if (!c)
        return NCCLP_SUCCESS;
    const ncclp_result_t rc = c->chained ? ncclp_chain_finalize(c->cctx) : NCCLP_SUCCESS;
    pthread_mutex_lock(&ncclprof_state.mu);
    c->used = 0;
    pthread_mutex_unlock(&ncclprof_state.mu);
    return rc;
}

/* ---- v6 and v5 (the same init; v5's descriptor is v6's without the CE members) ---- */

static ncclp_result_t init_v5(void **context, uint64_t comm_id, int *mask,
                              const char *name, int nnodes, int nranks, int rank,
                              ncclp_logger_t logfn)
{
    return init_common(context, mask, comm_id, name, nnodes, nranks, rank, logfn);
}

static ncclp_result_t start_v6(void *context, void **handle, ncclp_descr_v6 *d)
{
    return start_common(context, handle, d);
}

static ncclp_result_t start_v5(void *context, void **handle, ncclp_descr_v5 *d)
{
    ncclp_descr_v6 c;
    memset(&c, 0, sizeof c);
    c.type = d->type;
    c.parentObj = d->parentObj;
    c.rank = d->rank;
    memcpy(&c.coll, &d->coll, sizeof *d - offsetof(ncclp_descr_v5, coll));
    return start_common(context, handle, &c);
}

/* ---- v4: commHash after the name; a uint8_t type; coll/p2p under the group ---- */

static ncclp_result_t init_v4(void **context, int *mask, const char *name,
                              uint64_t comm_hash, int nnodes, int nranks, int rank,
                              ncclp_logger_t logfn)
{
    return init_common(context, mask, comm_hash, name, nnodes, nranks, rank, logfn);
}

static ncclp_result_t start_v4(void *context, void **handle, ncclp_descr_v4 *d)
{
    ncclp_descr_v6 c;
    memset(&c, 0, sizeof c);
    c.type = d->type;
    c.parentObj = d->parentObj;
    c.rank = d->rank;
    memcpy(&c.coll, &d->coll, sizeof *d - offsetof(ncclp_descr_v4, coll));
    if (d->type == NCCLP_COLL) /* in v5's terms the group is the parentGroup */
        c.coll.parentGroup = d->parentObj;
    else if (d->type == NCCLP_P2P)
        c.p2p.parentGroup = d->parentObj;
    return start_common(context, handle, &c);
}

static ncclp_result_t state_v4(void *handle, ncclp_state_t s, ncclp_state_args_v4 *a)
{
    ncclp_state_args_v5 c;
    memset(&c, 0, sizeof c);
    if (a)
        memcpy(&c, a, sizeof *a);
    return record_state(handle, s, a ? &c : NULL);
}

NCCLP_EXPORT const ncclp_profiler_v6 ncclProfiler_v6 = {
    "Argus", init_v5, start_v6, stop_event, record_state, finalize};
NCCLP_EXPORT const ncclp_profiler_v5 ncclProfiler_v5 = {
    "Argus", init_v5, start_v5, stop_event, record_state, finalize};
NCCLP_EXPORT const ncclp_profiler_v4 ncclProfiler_v4 = {
    "Argus", init_v4, start_v4, stop_event, state_v4, finalize};
