/* nccl_profiler_chaintest.c — a tiny NCCL profiler plugin for tests only: the plugin that
 * held NCCL_PROFILER_PLUGIN before Argus (ARGUS_NCCL_PROFILER_CHAIN names it). It counts
 * every call and checks what it is given: parent handles must be its own (or NULL), a
 * collective's parent its group, a proxy step's parent a proxy op, and nothing outside
 * the mask it asked for. Built three times: exporting ncclProfiler_v6
 * (libncclp_chain6.so), with CHAINTEST_V5 only ncclProfiler_v5 (libncclp_chain5.so) and
 * with CHAINTEST_V4 only ncclProfiler_v4 (libncclp_chain4.so). The v4 and v5 builds ask
 * for types their version does not have, as plugins asking for "everything" do.
 * chaintest_counts() gives the counters (the driver dlopen()s the same library).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "tests/tracer/nccl_profiler_chaintest.h"
#include "tracer/nccl_profiler_abi.h"

#define HANDLES 4096

static struct {
    struct chaintest_counts c;
    int ctx_token;
    uint64_t type[HANDLES];
    int n;
} chaintest_state;

__attribute__((visibility("default"))) struct chaintest_counts *chaintest_counts(void);
struct chaintest_counts *chaintest_counts(void)
{
    return &chaintest_state.c;
}

/* The type of one of our handles; 0 when h is not ours. */
static uint64_t type_of(void *h)
{
    uint64_t *p = h;
    if (p < chaintest_state.type || p >= chaintest_state.type + chaintest_state.n)
        return 0;
    return *p;
}

static ncclp_result_t ct_init(void **ctx, int *mask, const char *name, uint64_t hash,
                              int nnodes, int nranks, int rank)
{
    struct chaintest_counts *c = &chaintest_state.c;
    c->inits++;
    c->live_ctx++;
    c->last_hash = hash;
    c->last_nranks = nranks;
    c->last_rank = rank;
    c->last_nnodes = nnodes;
    strncpy(c->last_name, name ? name : "", sizeof c->last_name - 1);
    *ctx = &chaintest_state.ctx_token;
#if defined(CHAINTEST_V4)
    *mask = CHAINTEST_MASK | 0xf00; /* "everything", as some plugins ask: bits v4 lacks */
#elif defined(CHAINTEST_V5)
    *mask = CHAINTEST_MASK | 0x7000; /* copy-engine bits, which v5 lacks */
#else
    *mask = CHAINTEST_MASK;
#endif
    return NCCLP_SUCCESS;
}

static ncclp_result_t ct_start(void *ctx, void **h, uint64_t type, void *parent, int foreign)
{
    struct chaintest_counts *c = &chaintest_state.c;
    *h = NULL;
    if (ctx != &chaintest_state.ctx_token)
        c->bad_ctx++;
    if (!(type & CHAINTEST_MASK))
        c->bad_type++;
    c->starts[chaintest_bit_index(type)]++;
    if (foreign) { /* a PXN proxy op: its parent is another process's, NCCL's own value,
                    * never one of our handles */
        if (parent && !type_of(parent))
            c->foreign_ops++;
        else
            c->bad_parent++;
        parent = NULL;
    }
    const uint64_t pt = parent ? type_of(parent) : 0;
    if (parent && !pt)
        c->bad_parent++;
    if (type == NCCLP_COLL && pt != NCCLP_GROUP)
        c->bad_parent++;
    if (type == NCCLP_PROXY_STEP && pt != NCCLP_PROXY_OP)
        c->bad_parent++;
    if (type == NCCLP_PROXY_OP && pt == NCCLP_COLL)
        c->ops_under_coll++;
    else if (type == NCCLP_PROXY_OP && pt) /* NULL: its p2p was not asked for */
        c->bad_parent++;
    if (chaintest_state.n < HANDLES) {
        chaintest_state.type[chaintest_state.n] = type;
        *h = &chaintest_state.type[chaintest_state.n++];
    }
    return NCCLP_SUCCESS;
}

static ncclp_result_t ct_stop(void *h)
{
    if (!type_of(h))
        chaintest_state.c.bad_parent++;
    chaintest_state.c.stops++;
    return NCCLP_SUCCESS;
}

static void ct_state(void *h, ncclp_state_t s, uint64_t ptimer)
{
    if (!type_of(h))
        chaintest_state.c.bad_parent++;
    chaintest_state.c.states++;
    if (s == NCCLP_KERNEL_CH_STOP && ptimer)
        chaintest_state.c.kernel_stops++;
}

static ncclp_result_t ct_finalize(void *ctx)
{
    if (ctx != &chaintest_state.ctx_token)
        chaintest_state.c.bad_ctx++;
    chaintest_state.c.finalizes++;
    chaintest_state.c.live_ctx--;
    return NCCLP_SUCCESS;
}

#ifdef CHAINTEST_V4
static ncclp_result_t init4(void **ctx, int *mask, const char *name, uint64_t hash, int nn,
                            int nr, int r, ncclp_logger_t log)
{
    (void)log;
    chaintest_state.c.version = 4;
    return ct_init(ctx, mask, name, hash, nn, nr, r);
}
static ncclp_result_t start4(void *ctx, void **h, ncclp_descr_v4 *d)
{
    if (d->type == NCCLP_COLL) {
        chaintest_state.c.last_seq = d->coll.seqNumber;
        chaintest_state.c.last_count = d->coll.count;
    } else if (d->type == NCCLP_PROXY_OP) {
        if (d->proxyOp.pid == getpid())
            chaintest_state.c.last_peer = d->proxyOp.peer;
    }
    return ct_start(ctx, h, d->type, d->parentObj,
                    d->type == NCCLP_PROXY_OP && d->proxyOp.pid != getpid());
}
static ncclp_result_t state4(void *h, ncclp_state_t s, ncclp_state_args_v4 *a)
{
    ct_state(h, s, a ? a->kernelCh.pTimer : 0);
    return NCCLP_SUCCESS;
}
__attribute__((visibility("default"))) const ncclp_profiler_v4 ncclProfiler_v4 = {
    "chaintest4", init4, start4, ct_stop, state4, ct_finalize};
#else
/* v5 and v6 hand the same fields over; only the description's layout and the table's
 * type differ. */
#if defined(CHAINTEST_V5)
#define CT_VERSION 5
typedef ncclp_descr_v5 ct_descr;
#else
#define CT_VERSION 6
typedef ncclp_descr_v6 ct_descr;
#endif
static ncclp_result_t init56(void **ctx, uint64_t hash, int *mask, const char *name, int nn,
                             int nr, int r, ncclp_logger_t log)
{
    (void)log;
    chaintest_state.c.version = CT_VERSION;
    return ct_init(ctx, mask, name, hash, nn, nr, r);
}
static ncclp_result_t start56(void *ctx, void **h, ct_descr *d)
{
    if (d->type == NCCLP_COLL) {
        chaintest_state.c.last_seq = d->coll.seqNumber;
        chaintest_state.c.last_count = d->coll.count;
        if (type_of(d->coll.parentGroup) != NCCLP_GROUP)
            chaintest_state.c.bad_parent++;
    } else if (d->type == NCCLP_PROXY_OP) {
        if (d->proxyOp.pid == getpid())
            chaintest_state.c.last_peer = d->proxyOp.peer;
    }
    return ct_start(ctx, h, d->type, d->parentObj,
                    d->type == NCCLP_PROXY_OP && d->proxyOp.pid != getpid());
}
static ncclp_result_t state56(void *h, ncclp_state_t s, ncclp_state_args_v5 *a)
{
    ct_state(h, s, a ? a->kernelCh.pTimer : 0);
    return NCCLP_SUCCESS;
}
#if defined(CHAINTEST_V5)
__attribute__((visibility("default"))) const ncclp_profiler_v5 ncclProfiler_v5 = {
    "chaintest5", init56, start56, ct_stop, state56, ct_finalize};
#else
__attribute__((visibility("default"))) const ncclp_profiler_v6 ncclProfiler_v6 = {
    "chaintest6", init56, start56, ct_stop, state56, ct_finalize};
#endif
#endif
