/* traceplan.c — rank 0's plan of L4 trace dumps (pipeline/traceplan.h). */
#include "pipeline/traceplan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int argus_traceplan_init(struct argus_traceplan *tp, size_t max, uint32_t nranks)
{
    memset(tp, 0, sizeof *tp);
    tp->nranks = nranks;
    if (max == 0)
        return 0;
    tp->v = calloc(max, sizeof *tp->v);
    if (!tp->v)
        return -ENOMEM;
    tp->max = max;
    return 0;
}

void argus_traceplan_free(struct argus_traceplan *tp)
{
    free(tp->v);
    memset(tp, 0, sizeof *tp);
}

static int has(const struct argus_trace_plan *p, uint32_t rank)
{
    for (uint32_t i = 0; i < p->ntargets; i++)
        if (p->targets[i] == rank)
            return 1;
    return 0;
}

static void add_target(struct argus_trace_plan *p, uint32_t rank, uint32_t nranks,
                       uint32_t limit)
{
    if (rank < nranks && p->ntargets < limit && !has(p, rank))
        p->targets[p->ntargets++] = rank;
}

/* The ranks in src's position (same TP, PP, EP index), nearest DP replica first. */
static void add_position_peers(struct argus_trace_plan *p, const struct argus_jobstore *js,
                               uint32_t src, uint32_t nranks, uint32_t limit)
{
    const struct argus_rank_info *s = js ? argus_jobstore_rankinfo(js, src) : NULL;
    if (!s || s->coords.dp_size < 2)
        return;
    for (uint32_t d = 1; d < s->coords.dp_size && p->ntargets < limit; d++)
        for (uint32_t r = 0; r < nranks && p->ntargets < limit; r++) {
            const struct argus_rank_info *o = argus_jobstore_rankinfo(js, r);
            if (!o || o->coords.tp != s->coords.tp || o->coords.pp != s->coords.pp ||
                o->coords.ep != s->coords.ep)
                continue;
            uint32_t dist = o->coords.dp > s->coords.dp ? o->coords.dp - s->coords.dp
                                                          : s->coords.dp - o->coords.dp;
            if (dist == d)
                add_target(p, r, nranks, limit);
        }
}

/* Sources first, then healthy peers (see pipeline/traceplan.h). */
static void pick_targets(struct argus_trace_plan *p, const struct argus_jobstore *js,
                         const struct argus_anomaly *a, uint32_t nranks)
{
    for (uint32_t i = 0; i < a->n_ranks; i++)
        add_target(p, a->ranks[i], nranks, ARGUS_TRACE_SOURCES);
    if (p->ntargets == 0) { /* no sources: a sample of the job */
        add_target(p, 0, nranks, ARGUS_TRACE_SOURCES);
        add_target(p, nranks - 1, nranks, ARGUS_TRACE_SOURCES);
        p->nsources = 0;
        return;
    }
    p->nsources = p->ntargets;
    const uint32_t limit = p->nsources + ARGUS_TRACE_PEERS;
    add_position_peers(p, js, p->targets[0], nranks, limit);
    for (uint32_t i = 0; i < a->n_victims; i++)
        add_target(p, a->victims[i], nranks, limit);
    for (uint32_t i = 0; i < a->n_group; i++)
        add_target(p, a->group[i], nranks, limit);
    /* still room: the ranks after the first source (its neighbours in the layout) */
    for (uint32_t k = 1; k < nranks && p->ntargets < limit; k++)
        add_target(p, (p->targets[0] + k) % nranks, nranks, limit);
}

static struct argus_trace_plan *find(struct argus_traceplan *tp, int kind, uint64_t h)
{
    for (size_t i = 0; i < tp->n; i++)
        if (tp->v[i].kind == kind && tp->v[i].sources_hash == h)
            return &tp->v[i];
    return NULL;
}

size_t argus_traceplan_update(struct argus_traceplan *tp, const struct argus_jobstore *js,
                              struct argus_result *r, int plan)
{
    size_t added = 0;

    for (size_t i = 0; i < r->n_anomalies; i++) {
        struct argus_anomaly *a = &r->anomalies[i];
        uint64_t h = argus_anomaly_sources_hash(a);
        struct argus_trace_plan *p = find(tp, a->kind, h);
        if (p) {
            if (p->state == ARGUS_TRACE_WRITTEN)
                snprintf(a->trace, sizeof a->trace, "%s", p->path);
            continue;
        }
        if (!plan || tp->n == tp->max || tp->nranks == 0)
            continue;
        p = &tp->v[tp->n++];
        memset(p, 0, sizeof *p);
        p->kind = a->kind;
        p->sources_hash = h;
        p->from = a->step_first;
        p->to = a->step_last;
        p->state = ARGUS_TRACE_WANTED;
        pick_targets(p, js, a, tp->nranks);
        added++;
    }
    return added;
}
