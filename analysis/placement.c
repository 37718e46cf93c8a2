/* placement.c — where each rank runs, from the placement its rank info carries, and the
 * misplacement findings (analysis.h, struct argus_placement_map; docs/ALGORITHMS.md,
 * "Placement"): ranks whose bound CPUs are not local to their GPU, and GPUs that several
 * ranks of one host share. A finding says when its ranks are also host_stall sources (a
 * remote or crowded GPU is a classic cause of host stalls). Pure computation over the
 * store; no I/O, no globals; O(R log R) in the ranks that reported.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *argus_misplace_reason_name(int reason)
{
    switch (reason) {
    case ARGUS_MP_CPUS_NOT_LOCAL: return "cpus_not_local";
    case ARGUS_MP_SHARED_GPU: return "shared_gpu";
    default: return "unknown";
    }
}

void argus_placement_map_free(struct argus_placement_map *m)
{
    if (!m)
        return;
    free(m->ranks);
    free(m);
}

/* Is rank a source of some host_stall anomaly of r (r->ranks, ascending rank ids)? */
static int host_stall_source(const struct argus_result *r, uint32_t rank)
{
    size_t lo = 0, hi = r->n_ranks;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->ranks[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n_ranks && r->ranks[lo].rank == rank &&
           (r->ranks[lo].flags & (1u << ARGUS_AK_HOST_STALL));
}

static void add_rank(const struct argus_result *r, struct argus_misplacement *f, uint32_t rank)
{
    if (f->n_ranks < ARGUS_ANOMALY_MAX_RANKS)
        f->ranks[f->n_ranks++] = rank;
    f->n_ranks_total++;
    if (host_stall_source(r, rank))
        f->n_host_stall++;
}

/* The host_stall sentence shared by both kinds of finding (appended to evidence). */
static void tie_host_stall(struct argus_misplacement *f, const struct argus_result *r)
{
    size_t n = strlen(f->evidence);
    uint32_t first = UINT32_MAX;

    if (!f->n_host_stall)
        return;
    for (uint32_t i = 0; i < f->n_ranks && first == UINT32_MAX; i++)
        if (host_stall_source(r, f->ranks[i]))
            first = f->ranks[i];
    if (first == UINT32_MAX) /* only among the ranks past the list */
        snprintf(f->evidence + n, sizeof f->evidence - n, " %u of these ranks are host_stall "
                 "sources; this placement is a likely cause.", f->n_host_stall);
    else
        snprintf(f->evidence + n, sizeof f->evidence - n, " %u of these ranks are host_stall "
                 "sources (rank %u among them); this placement is a likely cause.",
                 f->n_host_stall, first);
}

static void numa_words(char *buf, size_t len, int node)
{
    if (node >= 0)
        snprintf(buf, len, "NUMA node %d", node);
    else
        snprintf(buf, len, "several NUMA nodes");
}

/* One finding for every rank bound away from its GPU. */
static void not_local(const struct argus_placement_map *m, const struct argus_result *r,
                      struct argus_misplacement *f)
{
    const struct argus_place_rank *ex = NULL;
    uint32_t judged = 0;

    memset(f, 0, sizeof *f);
    f->reason = ARGUS_MP_CPUS_NOT_LOCAL;
    for (uint32_t i = 0; i < m->n_ranks; i++) {
        const struct argus_placement *p = &m->ranks[i].place;
        if ((p->flags & (ARGUS_PLACE_GPU | ARGUS_PLACE_CPUS)) !=
            (ARGUS_PLACE_GPU | ARGUS_PLACE_CPUS))
            continue;
        judged++;
        if (p->flags & ARGUS_PLACE_LOCAL)
            continue;
        if (!ex)
            ex = &m->ranks[i];
        add_rank(r, f, m->ranks[i].rank);
    }
    if (!ex)
        return;
    char cpu_w[32], gpu_w[32];
    numa_words(cpu_w, sizeof cpu_w, ex->place.cpu_numa);
    numa_words(gpu_w, sizeof gpu_w, ex->place.gpu_numa);
    snprintf(f->host, sizeof f->host, "%s", ex->host);
    snprintf(f->evidence, sizeof f->evidence,
             "%u of %u ranks run on CPUs that are not local to their GPU: rank %u on %s is "
             "bound to CPUs %s (%s), its GPU %s is on %s, so its launches and host copies "
             "cross the socket link.", f->n_ranks_total, judged, ex->rank, ex->host,
             ex->place.cpuset, cpu_w, ex->place.gpu_bus, gpu_w);
    tie_host_stall(f, r);
}

static int cmp_gpu(const void *a, const void *b)
{
    const struct argus_place_rank *x = *(const struct argus_place_rank *const *)a;
    const struct argus_place_rank *y = *(const struct argus_place_rank *const *)b;
    int c = strcmp(x->host, y->host);

    if (!c)
        c = strcmp(x->place.gpu_bus, y->place.gpu_bus);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* One finding per GPU that several ranks of one host use. */
static int shared(struct argus_placement_map *m, const struct argus_result *r)
{
    const struct argus_place_rank **v = malloc((size_t)m->n_ranks * sizeof *v + 1);
    size_t n = 0;

    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->n_ranks; i++) /* a host without a name is no one host */
        if (m->ranks[i].place.gpu_bus[0] && m->ranks[i].host[0])
            v[n++] = &m->ranks[i];
    qsort(v, n, sizeof *v, cmp_gpu);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && !strcmp(v[b]->host, v[a]->host) &&
                        !strcmp(v[b]->place.gpu_bus, v[a]->place.gpu_bus); b++)
            ;
        if (b - a < 2)
            continue;
        if (m->n_findings == ARGUS_PLACEMENT_MAX_FINDINGS) {
            m->findings_dropped++;
            continue;
        }
        struct argus_misplacement *f = &m->findings[m->n_findings++];
        memset(f, 0, sizeof *f);
        f->reason = ARGUS_MP_SHARED_GPU;
        snprintf(f->host, sizeof f->host, "%s", v[a]->host);
        snprintf(f->gpu_bus, sizeof f->gpu_bus, "%s", v[a]->place.gpu_bus);
        for (size_t k = a; k < b; k++)
            add_rank(r, f, v[k]->rank);
        snprintf(f->evidence, sizeof f->evidence,
                 "%u ranks on %s use one GPU, %s (ranks %u and %u first): they take turns "
                 "on its engines and memory, so each waits for the others.", f->n_ranks_total,
                 v[a]->host, v[a]->place.gpu_bus, v[a]->rank, v[a + 1]->rank);
        tie_host_stall(f, r);
    }
    free(v);
    return 0;
}

int an_placement(const struct argus_jobstore *js, struct argus_result *r)
{
    const uint32_t nr = argus_jobstore_nranks(js);
    uint32_t n = 0;

    r->placement = NULL;
    for (uint32_t k = 0; k < nr; k++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, k);
        n += ri && (ri->place.flags & ARGUS_PLACE_KNOWN);
    }
    if (!n)
        return 0;
    struct argus_placement_map *m = calloc(1, sizeof *m);
    if (!m || !(m->ranks = calloc(n, sizeof *m->ranks))) {
        free(m);
        return -ENOMEM;
    }
    for (uint32_t k = 0; k < nr; k++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(js, k);
        if (!ri || !(ri->place.flags & ARGUS_PLACE_KNOWN))
            continue;
        struct argus_place_rank *e = &m->ranks[m->n_ranks++];
        e->rank = k;
        snprintf(e->host, sizeof e->host, "%.*s", ARGUS_HOST_MAX - 1, ri->host);
        e->place = ri->place;
        /* the strings as plain C strings whatever filled the store */
        e->place.gpu_bus[sizeof e->place.gpu_bus - 1] = '\0';
        e->place.nic[sizeof e->place.nic - 1] = '\0';
        e->place.cpuset[sizeof e->place.cpuset - 1] = '\0';
    }
    not_local(m, r, &m->findings[0]);
    if (m->findings[0].n_ranks_total)
        m->n_findings = 1;
    int rc = shared(m, r);
    if (rc) {
        argus_placement_map_free(m);
        return rc;
    }
    r->placement = m;
    return 0;
}
