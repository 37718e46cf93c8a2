/* nccl_profiler_chain.c — loading and calling the chained NCCL profiler plugin
 * (nccl_profiler_chain.h). Must not allocate per event, must not change what the target
 * is told beyond the version conversion, never exits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tracer/nccl_profiler_chain.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Argus's own tables (nccl_profiler.c): a target that resolves to them is Argus itself. */
extern const ncclp_profiler_v4 ncclProfiler_v4;

static struct {
    pthread_once_t once;
    int version; /* 0: no target */
    const ncclp_profiler_v4 *v4;
    const ncclp_profiler_v5 *v5;
    const ncclp_profiler_v6 *v6;
} ncclchain_state = {.once = PTHREAD_ONCE_INIT};

static void *open_target(const char *v, char *err, size_t errlen)
{
    void *h = dlopen(v, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return h;
    snprintf(err, errlen, "%s", dlerror());
    if (strchr(v, '/'))
        return NULL;
    char name[512];
    snprintf(name, sizeof name, "libnccl-profiler-%s.so", v);
    return dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

static void load_once(void)
{
    const char *v = getenv("ARGUS_NCCL_PROFILER_CHAIN");
    if (!v || !*v || strcmp(v, "none") == 0 || strcasecmp(v, "STATIC_PLUGIN") == 0)
        return;
    char err[512] = "";
    void *h = open_target(v, err, sizeof err);
    if (!h) {
        fprintf(stderr, "argus: NCCL profiler plugin %s (ARGUS_NCCL_PROFILER_CHAIN) not "
                "loaded, it gets no calls: %s\n", v, err);
        return;
    }
    const void *s6 = dlsym(h, "ncclProfiler_v6"), *s5 = dlsym(h, "ncclProfiler_v5");
    const void *s4 = dlsym(h, "ncclProfiler_v4");
    if (s4 == (const void *)&ncclProfiler_v4) { /* Argus's own library again */
        dlclose(h);
        return;
    }
    if (s6) {
        ncclchain_state.v6 = s6;
        ncclchain_state.version = 6;
    } else if (s5) {
        ncclchain_state.v5 = s5;
        ncclchain_state.version = 5;
    } else if (s4) {
        ncclchain_state.v4 = s4;
        ncclchain_state.version = 4;
    } else {
        fprintf(stderr, "argus: NCCL profiler plugin %s has no ncclProfiler_v4/v5/v6; it "
                "gets no calls\n", v);
        dlclose(h);
    }
}

int ncclp_chain_load(void)
{
    pthread_once(&ncclchain_state.once, load_once);
    return ncclchain_state.version;
}

ncclp_result_t ncclp_chain_init(void **cctx, int *cmask, uint64_t comm_hash,
                                const char *name, int nnodes, int nranks, int rank,
                                ncclp_logger_t logfn)
{
    *cctx = NULL;
    *cmask = 0;
    ncclp_result_t rc = NCCLP_SUCCESS;
    switch (ncclp_chain_load()) {
    case 6:
        rc = ncclchain_state.v6->init(cctx, comm_hash, cmask, name, nnodes, nranks, rank,
                                      logfn);
        break;
    case 5:
        rc = ncclchain_state.v5->init(cctx, comm_hash, cmask, name, nnodes, nranks, rank,
                                      logfn);
        *cmask &= (NCCLP_CE_COLL - 1);
        break;
    case 4:
        rc = ncclchain_state.v4->init(cctx, cmask, name, comm_hash, nnodes, nranks, rank,
                                      logfn);
        *cmask &= NCCLP_V4_TYPES;
        break;
    default:
        return NCCLP_SUCCESS;
    }
    if (rc != NCCLP_SUCCESS)
        *cmask = 0; /* NCCL would not call a plugin whose init failed */
    return rc;
}

ncclp_result_t ncclp_chain_start(void *cctx, int cmask, void **ch, const ncclp_descr_v6 *d,
                                 void *parent, void *group)
{
    *ch = NULL;
    if (!(d->type & (uint64_t)(unsigned)cmask))
        return NCCLP_SUCCESS;
    const int is_task = d->type == NCCLP_COLL || d->type == NCCLP_P2P;
    switch (ncclchain_state.version) {
    case 6: {
        ncclp_descr_v6 c = *d;
        c.parentObj = parent;
        if (d->type == NCCLP_COLL)
            c.coll.parentGroup = group;
        else if (d->type == NCCLP_P2P)
            c.p2p.parentGroup = group;
        return ncclchain_state.v6->startEvent(cctx, ch, &c);
    }
    case 5: {
        ncclp_descr_v5 c = {.type = d->type, .parentObj = parent, .rank = d->rank};
        memcpy(&c.coll, &d->coll, sizeof c - offsetof(ncclp_descr_v5, coll));
        if (d->type == NCCLP_COLL)
            c.coll.parentGroup = group;
        else if (d->type == NCCLP_P2P)
            c.p2p.parentGroup = group;
        return ncclchain_state.v5->startEvent(cctx, ch, &c);
    }
    case 4: {
        /* v4 knows coll/p2p as children of the group (v5's parentGroup) */
        ncclp_descr_v4 c = {.type = (uint8_t)d->type, .parentObj = is_task ? group : parent,
                            .rank = d->rank};
        memcpy(&c.coll, &d->coll, sizeof c - offsetof(ncclp_descr_v4, coll));
        return ncclchain_state.v4->startEvent(cctx, ch, &c);
    }
    default:
        return NCCLP_SUCCESS;
    }
}

ncclp_result_t ncclp_chain_stop(void *ch)
{
    if (!ch)
        return NCCLP_SUCCESS;
    switch (ncclchain_state.version) {
    case 6:
        return ncclchain_state.v6->stopEvent(ch);
    case 5:
        return ncclchain_state.v5->stopEvent(ch);
    case 4:
        return ncclchain_state.v4->stopEvent(ch);
    default:
        return NCCLP_SUCCESS;
    }
}

ncclp_result_t ncclp_chain_state(void *ch, ncclp_state_t s, ncclp_state_args_v5 *a)
{
    if (!ch)
        return NCCLP_SUCCESS;
    switch (ncclchain_state.version) {
    case 6:
        return ncclchain_state.v6->recordEventState(ch, s, a);
    case 5:
        return ncclchain_state.v5->recordEventState(ch, s, a);
    case 4: /* the members v4 has sit where v5 has them */
        return ncclchain_state.v4->recordEventState(ch, s, (ncclp_state_args_v4 *)a);
    default:
        return NCCLP_SUCCESS;
    }
}

ncclp_result_t ncclp_chain_finalize(void *cctx)
{
    switch (ncclchain_state.version) {
    case 6:
        return ncclchain_state.v6->finalize(cctx);
    case 5:
        return ncclchain_state.v5->finalize(cctx);
    case 4:
        return ncclchain_state.v4->finalize(cctx);
    default:
        return NCCLP_SUCCESS;
    }
}
