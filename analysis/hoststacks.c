/* hoststacks.c — host call stacks merged per anomaly (hoststacks.h). Groups identical
 * stacks by a hash of their text (then the text), counts samples and distinct ranks, keeps
 * the top ones. Must not allocate, keep globals or do I/O; bounded work per sample.
 */
#include "analysis/hoststacks.h"

#include <string.h>

#include "common/hash.h"

struct grp {
    uint64_t h;
    const struct argus_stackrec *r; /* the first sample of this stack */
    uint32_t samples, nranks;
    uint32_t ranks[ARGUS_ANOMALY_MAX_RANKS];
};

struct side_acc {
    struct grp g[ARGUS_STACKS_GROUPS];
    size_t ng;
    uint32_t ranks[ARGUS_ANOMALY_MAX_RANKS], nranks;
};

static uint64_t text_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return argus_mix64(h);
}

static void add_rank(uint32_t *v, uint32_t *n, uint32_t rank)
{
    for (uint32_t i = 0; i < *n; i++)
        if (v[i] == rank)
            return;
    if (*n < ARGUS_ANOMALY_MAX_RANKS)
        v[(*n)++] = rank;
}

static int is_source(const struct argus_anomaly *a, uint32_t rank)
{
    for (uint32_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i] == rank)
            return 1;
    return 0;
}

int argus_hoststacks_in_steps(const struct argus_anomaly *a, uint64_t step)
{
    if (step < a->step_first || step > a->step_last)
        return 0;
    if (!a->n_hits || a->n_hits_total > a->n_hits)
        return 1; /* no list, or not all of it: the span */
    for (uint32_t i = 0; i < a->n_hits && i < ARGUS_ANOMALY_MAX_HITS; i++)
        if (a->hits[i] == step)
            return 1;
    return 0;
}

int argus_hoststacks_side(const struct argus_anomaly *a, const struct argus_stackrec *r)
{
    if (r->why == ARGUS_STACK_WHY_PEER)
        return is_source(a, r->for_rank) && !is_source(a, r->rank) &&
                       argus_hoststacks_in_steps(a, r->for_step)
                   ? 2
                   : 0;
    if (!argus_hoststacks_in_steps(a, r->step))
        return 0;
    return is_source(a, r->rank) ? 1 : 2;
}

static void acc_add(struct side_acc *acc, struct argus_stack_side *side,
                    const struct argus_stackrec *r)
{
    const uint64_t h = text_hash(r->folded);
    side->samples++;
    add_rank(acc->ranks, &acc->nranks, r->rank);
    side->ranks = acc->nranks;
    for (size_t i = 0; i < acc->ng; i++) {
        struct grp *g = &acc->g[i];
        if (g->h == h && strcmp(g->r->folded, r->folded) == 0) {
            g->samples++;
            add_rank(g->ranks, &g->nranks, r->rank);
            return;
        }
    }
    if (acc->ng == ARGUS_STACKS_GROUPS) {
        side->other++;
        return;
    }
    struct grp *g = &acc->g[acc->ng++];
    g->h = h;
    g->r = r;
    g->samples = 1;
    g->nranks = 0;
    add_rank(g->ranks, &g->nranks, r->rank);
}

/* The top groups, most samples first (then more ranks, then the earlier stack). */
static void acc_top(const struct side_acc *acc, struct argus_stack_side *side)
{
    uint8_t used[ARGUS_STACKS_GROUPS] = {0};
    side->n = 0;
    while (side->n < ARGUS_STACKS_TOP) {
        size_t best = acc->ng;
        for (size_t i = 0; i < acc->ng; i++) {
            if (used[i])
                continue;
            if (best == acc->ng || acc->g[i].samples > acc->g[best].samples ||
                (acc->g[i].samples == acc->g[best].samples &&
                 acc->g[i].nranks > acc->g[best].nranks))
                best = i;
        }
        if (best == acc->ng)
            break;
        used[best] = 1;
        struct argus_stack_top *t = &side->top[side->n++];
        t->folded = acc->g[best].r->folded;
        t->nframes = acc->g[best].r->nframes;
        t->samples = acc->g[best].samples;
        t->ranks = acc->g[best].nranks;
    }
}

int argus_hoststacks_for(const struct argus_stackset *s, const struct argus_anomaly *a,
                         struct argus_anomaly_stacks *out)
{
    struct side_acc acc[2][2]; /* [source, peer][python, native] */

    memset(out, 0, sizeof *out);
    if (!s || !a || a->n_ranks == 0)
        return 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            acc[i][j].ng = 0;
            acc[i][j].nranks = 0;
        }
    for (size_t i = 0; i < s->n; i++) {
        const struct argus_stackrec *r = &s->v[i];
        const int side = argus_hoststacks_side(a, r);
        if (!side || (r->lang != ARGUS_STACK_PYTHON && r->lang != ARGUS_STACK_NATIVE))
            continue;
        const int src = side == 1, k = r->lang == ARGUS_STACK_PYTHON ? 0 : 1;
        acc_add(&acc[src ? 0 : 1][k], src ? &out->src[k] : &out->peer[k], r);
        if (src && k == 1) { /* one native record per signal: its cost */
            out->cost_ns_sum += r->cost_ns;
            out->cost_n++;
            if (r->cost_ns > out->cost_ns_max)
                out->cost_ns_max = r->cost_ns;
        }
    }
    for (int k = 0; k < 2; k++) {
        acc_top(&acc[0][k], &out->src[k]);
        acc_top(&acc[1][k], &out->peer[k]);
    }
    return out->src[0].samples + out->src[1].samples > 0;
}

/* Does folded (';'-separated) hold the frame f[0..n) ? */
static int has_frame(const char *folded, const char *f, size_t n)
{
    for (const char *p = folded; p && *p;) {
        const char *e = strchr(p, ';');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && memcmp(p, f, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

size_t argus_hoststacks_differ(const struct argus_anomaly_stacks *st, int lang, size_t *off,
                               size_t *len, size_t max)
{
    if (lang < 0 || lang > 1 || st->src[lang].n == 0)
        return 0;
    const char *src = st->src[lang].top[0].folded;
    const char *peer = st->peer[lang].n ? st->peer[lang].top[0].folded : NULL;
    size_t k = 0;
    /* innermost first: walk the frames from the end */
    const char *end = src + strlen(src);
    while (end > src && k < max) {
        const char *b = end;
        while (b > src && b[-1] != ';')
            b--;
        const size_t n = (size_t)(end - b);
        if (!peer || !has_frame(peer, b, n)) {
            off[k] = (size_t)(b - src);
            len[k] = n;
            k++;
        }
        end = b > src ? b - 1 : src;
    }
    return k;
}
