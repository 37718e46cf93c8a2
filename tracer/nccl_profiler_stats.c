/* nccl_profiler_stats.c — libargus.so's side of the NCCL profiler plugin
 * (nccl_profiler_stats.h): the sink the plugin calls, the per-step aggregate, and the
 * hand-over of each communicator's membership to ncclhook.c / commgroups.c.
 * Must not allocate, log or block beyond one short mutex; called from NCCL's threads
 * (the application's and the proxy's).
 */
#include "tracer/nccl_profiler_stats.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/commgroups.h"
#include "tracer/tracer.h"

static struct {
    pthread_mutex_t mu;
    struct argus_nccl_step_stats cur;
} ncclstats_state = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The communicator's slot (creating it with its identity unknown); NULL when full. Under
 * the lock. */
static struct argus_nccl_comm_stats *comm_slot(uint64_t hash)
{
    struct argus_nccl_step_stats *s = &ncclstats_state.cur;
    for (uint32_t i = 0; i < s->n_comms; i++)
        if (s->comm[i].comm_hash == hash)
            return &s->comm[i];
    if (s->n_comms == ARGUS_NCCL_MAX_COMMS) {
        s->comms_dropped++;
        return NULL;
    }
    struct argus_nccl_comm_stats *c = &s->comm[s->n_comms++];
    memset(c, 0, sizeof *c);
    c->comm_hash = hash;
    c->nnodes = c->nranks = c->rank = -1;
    return c;
}

static void sink_comm(const struct argus_nccl_comm_info *ci)
{
    if (!ci)
        return;
    pthread_mutex_lock(&ncclstats_state.mu);
    struct argus_nccl_comm_stats *c = comm_slot(ci->comm_hash);
    if (c) {
        c->nnodes = ci->nnodes;
        c->nranks = ci->nranks;
        c->rank = ci->rank;
        if (ci->name) {
            strncpy(c->name, ci->name, sizeof c->name - 1);
            c->name[sizeof c->name - 1] = '\0';
        }
    }
    pthread_mutex_unlock(&ncclstats_state.mu);
    argus_ncclhook_plugin_comm(ci->comm_hash, ci->name, ci->nnodes, ci->nranks, ci->rank);
}

static void sink_coll(const struct argus_nccl_coll_rec *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&ncclstats_state.mu);
    struct argus_nccl_step_stats *s = &ncclstats_state.cur;
    struct argus_nccl_comm_stats *c = comm_slot(r->comm_hash);
    if (c) {
        if (r->seq == UINT64_MAX)
            c->p2ps++;
        else
            c->colls++;
        c->bytes += r->bytes;
        c->span_ns += r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
        c->kernel_ns += r->kernel_ns; /* the waits come from the proxy records */
    }
    if (r->seq != UINT64_MAX) {
        if (s->n_arrivals < ARGUS_NCCL_MAX_SEQ)
            s->arrival[s->n_arrivals++] = (struct argus_nccl_arrival){
                r->comm_hash, r->seq, r->start_ns, r->end_ns, r->peer_wait_ns, r->xfer_ns,
                r->gpu_wait_ns, r->kernel_ns, r->steps, r->func};
        else
            s->arrivals_dropped++;
    }
    pthread_mutex_unlock(&ncclstats_state.mu);
}

static void sink_proxy(const struct argus_nccl_proxy_rec *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&ncclstats_state.mu);
    struct argus_nccl_comm_stats *c = comm_slot(r->comm_hash);
    if (c) { /* the communicator's totals, exact whenever its collectives are reported */
        c->peer_wait_ns += r->peer_wait_ns;
        c->xfer_ns += r->xfer_ns;
        c->gpu_wait_ns += r->gpu_wait_ns;
        uint32_t i = 0;
        while (i < c->n_peers && c->peer[i].peer != r->peer)
            i++;
        if (i == c->n_peers && c->n_peers < ARGUS_NCCL_MAX_PEERS)
            c->peer[c->n_peers++] = (struct argus_nccl_peer_stats){.peer = r->peer};
        if (i < c->n_peers) {
            struct argus_nccl_peer_stats *p = &c->peer[i];
            p->ops++;
            p->steps += r->steps;
            if (r->is_send)
                p->send_wait_ns += r->peer_wait_ns;
            else
                p->recv_wait_ns += r->peer_wait_ns;
            p->xfer_ns += r->xfer_ns;
            p->gpu_wait_ns += r->gpu_wait_ns;
        } else {
            c->peers_dropped++;
        }
    }
    pthread_mutex_unlock(&ncclstats_state.mu);
}

static void sink_dropped(uint64_t events)
{
    pthread_mutex_lock(&ncclstats_state.mu);
    ncclstats_state.cur.events_dropped += events;
    pthread_mutex_unlock(&ncclstats_state.mu);
}

ARGUS_EXPORT const struct argus_ncclprof_sink *argus_ncclprof_sink(void)
{
    static const struct argus_ncclprof_sink sink = {
        ARGUS_NCCLPROF_SINK_VERSION, sink_comm, sink_coll, sink_proxy, sink_dropped};
    const char *m = getenv("ARGUS_MODE"); /* off unless on, as for the rest of Argus */
    return m && strcmp(m, "on") == 0 ? &sink : NULL;
}

uint32_t argus_nccl_step_stats(struct argus_nccl_step_stats *out)
{
    pthread_mutex_lock(&ncclstats_state.mu);
    struct argus_nccl_step_stats *s = &ncclstats_state.cur;
    if (out)
        memcpy(out, s, sizeof *out);
    /* a new step: the communicators stay, their counters start again */
    for (uint32_t i = 0; i < s->n_comms; i++) {
        struct argus_nccl_comm_stats *c = &s->comm[i];
        const size_t keep = offsetof(struct argus_nccl_comm_stats, colls);
        memset((char *)c + keep, 0, sizeof *c - keep);
    }
    s->comms_dropped = s->n_arrivals = s->arrivals_dropped = 0;
    s->events_dropped = 0;
    const uint32_t n = s->n_comms;
    pthread_mutex_unlock(&ncclstats_state.mu);
    return n;
}

/* Is a ranked before b (more wait + transfer, then more calls, then the lower hash)? */
static int comm_before(const struct argus_nccl_comm_stats *a,
                       const struct argus_nccl_comm_stats *b)
{
    const uint64_t ta = a->peer_wait_ns + a->xfer_ns, tb = b->peer_wait_ns + b->xfer_ns;
    if (ta != tb)
        return ta > tb;
    if (a->colls + a->p2ps != b->colls + b->p2ps)
        return a->colls + a->p2ps > b->colls + b->p2ps;
    return a->comm_hash < b->comm_hash;
}

static void compact_one(const struct argus_nccl_step_stats *st,
                        const struct argus_nccl_comm_stats *c, struct argus_nccl_comm_sum *o)
{
    *o = (struct argus_nccl_comm_sum){.comm_hash = c->comm_hash, .colls = c->colls + c->p2ps,
                                      .peer = -1, .peer_wait_ns = c->peer_wait_ns,
                                      .xfer_ns = c->xfer_ns, .gpu_wait_ns = c->gpu_wait_ns};
    for (uint32_t i = 0; i < c->n_peers && i < ARGUS_NCCL_MAX_PEERS; i++)
        if (o->peer < 0 || c->peer[i].xfer_ns > o->peer_xfer_ns) {
            o->peer = c->peer[i].peer;
            o->peer_xfer_ns = c->peer[i].xfer_ns;
        }
    for (uint32_t i = 0; i < st->n_arrivals && i < ARGUS_NCCL_MAX_SEQ; i++) {
        const struct argus_nccl_arrival *a = &st->arrival[i];
        if (a->comm_hash != c->comm_hash || (o->last_start_ns && a->seq < o->last_seq))
            continue;
        o->last_seq = a->seq;
        o->last_start_ns = a->start_ns ? a->start_ns : 1; /* 0 means "none" */
    }
}

void argus_nccl_compact(const struct argus_nccl_step_stats *st, struct argus_nccl_sum *out)
{
    const struct argus_nccl_comm_stats *top[ARGUS_NCCL_SUM_COMMS];
    uint32_t n = 0, active = 0;

    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; st && i < st->n_comms && i < ARGUS_NCCL_MAX_COMMS; i++) {
        const struct argus_nccl_comm_stats *c = &st->comm[i];
        if (!c->colls && !c->p2ps && !c->peer_wait_ns && !c->xfer_ns && !c->gpu_wait_ns)
            continue; /* known, but idle in this step */
        active++;
        uint32_t j = n < ARGUS_NCCL_SUM_COMMS ? n++ : n;
        if (j == ARGUS_NCCL_SUM_COMMS) { /* full: replace the last if c ranks before it */
            if (!comm_before(c, top[j - 1]))
                continue;
            j--;
        }
        while (j > 0 && comm_before(c, top[j - 1])) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = c;
    }
    for (uint32_t i = 0; i < n; i++) {
        compact_one(st, top[i], &out->comm[i]);
        if (out->comm[i].peer >= ARGUS_NCCL_PEER_LIMIT) /* no room on the wire */
            out->comm[i].peer = -1;
    }
    out->n_comms = n;
    out->comms_dropped = active - n; /* <= ARGUS_NCCL_MAX_COMMS */
}
