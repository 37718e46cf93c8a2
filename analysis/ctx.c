/* ctx.c — the analysis context: a dense view of a job store (the ranks present as dense
 * slots, distinct step ids, a slot × step table of summaries with missing ranks cut off
 * and of the per-cell values the detectors read most, the job-wide kernel-name table, the
 * job step-time series, each class's median step wall), the scratch it lends (tmp1..3)
 * and the slot/rank mapping; the layout and peer classes are layout.c's (an_build_layout),
 * the runs and candidates cands.c's. Reads the store only (its rows, and a summary only
 * for kernel modes and coordinates); the rank × step tables live in the store's scratch,
 * everything else in the context.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rank x step tables (cell, the five value arrays, cflag, kd: 50 bytes per cell, megabytes
 * at scale) in the job store's scratch (argus_jobstore_scratch): rank 0 analyses after
 * every window, and fresh tables each time meant faulting (and zeroing) fresh pages in
 * each time. Not zeroed. 0 or -ENOMEM. */
static int tables_lend(struct an_ctx *c)
{
    const size_t N = (size_t)c->n * c->S, d = (N * sizeof(double) + 63) & ~(size_t)63;
    const size_t f = (N + 63) & ~(size_t)63;
    if (N > SIZE_MAX / 64)
        return -ENOMEM;
    unsigned char *p = argus_jobstore_scratch(c->js, 6 * d + 2 * f);
    if (!p)
        return -ENOMEM;
    c->cell = (const struct argus_step_summary **)(void *)p;
    c->vwall = (double *)(void *)(p + d);
    c->vcomp = (double *)(void *)(p + 2 * d);
    c->vhost = (double *)(void *)(p + 3 * d);
    c->vstart = (double *)(void *)(p + 4 * d);
    c->vcomm = (double *)(void *)(p + 5 * d);
    c->cflag = p + 6 * d;
    c->kd = p + 6 * d + f;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Steps of slot q that count (those before its missing mark): a prefix of its list. *id
 * gets their ids, *v (when not NULL) their summaries. */
static size_t held_steps(const struct an_ctx *c, uint32_t q, const uint64_t **id,
                         const struct argus_step_summary *const **v)
{
    const uint32_t r = c->rank_of[q];
    size_t m = argus_jobstore_rank_step_ids(c->js, r, id);
    if (v)
        argus_jobstore_rank_steps(c->js, r, v);
    const uint64_t miss = argus_jobstore_missing_since(c->js, r);
    while (m && miss != UINT64_MAX && (*id)[m - 1] >= miss)
        m--;
    return m;
}

/* Sorted union of the ranks' (sorted, distinct) step lists into u, without sorting: ranks
 * mostly hold the same steps, so each list is checked against the union so far and merged
 * in only when it adds steps. Returns the union's size, or SIZE_MAX once the merge work
 * passes `budget` (ranks holding unrelated steps; the caller sorts instead). */
static size_t union_steps(const struct an_ctx *c, uint64_t *u, uint64_t *tmp, size_t budget)
{
    size_t nu = 0, work = 0;

    for (uint32_t r = 0; r < c->n; r++) {
        const uint64_t *v;
        size_t m = held_steps(c, r, &v, NULL), i = 0, j = 0;
        while (i < m && j < nu) { /* is v a subset of u? */
            if (v[i] == u[j])
                i++;
            else if (v[i] > u[j])
                j++;
            else
                break;
        }
        work += j + i;
        if (i == m)
            continue;
        size_t k = 0;
        for (i = 0, j = 0; i < m || j < nu;) {
            if (j == nu || (i < m && v[i] < u[j]))
                tmp[k++] = v[i++];
            else if (i == m || u[j] < v[i])
                tmp[k++] = u[j++];
            else {
                tmp[k++] = u[j++];
                i++;
            }
        }
        memcpy(u, tmp, k * sizeof *u);
        nu = k;
        work += k;
        if (work > budget)
            return SIZE_MAX;
    }
    return nu;
}

/* Distinct step ids held by any rank (missing ranks cut off): the store's own list when
 * no rank is marked missing, else the union of the ranks' cut lists. */
static int build_steps(struct an_ctx *c)
{
    int missing = 0;
    for (uint32_t r = 0; r < c->n && !missing; r++)
        missing = argus_jobstore_missing_since(c->js, c->rank_of[r]) != UINT64_MAX;
    if (!missing) {
        const uint64_t *st;
        c->S = argus_jobstore_steps(c->js, &st);
        if (!(c->step_id = malloc((c->S ? c->S : 1) * sizeof *c->step_id)))
            return -ENOMEM;
        if (c->S)
            memcpy(c->step_id, st, c->S * sizeof *st);
        return c->S ? 0 : -ENOENT;
    }
    size_t total = 0;
    for (uint32_t r = 0; r < c->n; r++)
        total += argus_jobstore_rank_step_ids(c->js, c->rank_of[r], NULL);
    c->step_id = malloc((total ? total : 1) * sizeof *c->step_id);
    uint64_t *tmp = malloc((total ? total : 1) * sizeof *tmp);
    if (!c->step_id || !tmp) {
        free(tmp);
        return -ENOMEM;
    }
    size_t u = union_steps(c, c->step_id, tmp, 8 * total + 4096);
    free(tmp);
    if (u == SIZE_MAX) {
        size_t k = 0;
        for (uint32_t r = 0; r < c->n; r++) {
            const uint64_t *v;
            size_t m = held_steps(c, r, &v, NULL);
            if (m)
                memcpy(c->step_id + k, v, m * sizeof *v);
            k += m;
        }
        qsort(c->step_id, k, sizeof *c->step_id, cmp_u64);
        u = 0;
        for (size_t i = 0; i < k; i++)
            if (u == 0 || c->step_id[u - 1] != c->step_id[i])
                c->step_id[u++] = c->step_id[i];
    }
    c->S = u;
    return u ? 0 : -ENOENT;
}

/* A hole of the rank x step table. */
static void cell_none(struct an_ctx *c, size_t at)
{
    c->cell[at] = NULL;
    c->kd[at] = 0;
    c->lv[at] = 0;
    c->vwall[at] = c->vcomp[at] = c->vhost[at] = c->vstart[at] = c->vcomm[at] = NAN;
}

/* The kernel-name table gets s's kernels. It holds kernels only: the folded "[other]"
 * record of a summary (one per class, see ARGUS_OTHER_KERNEL) never gets a verdict. */
static int cell_names(struct an_ctx *c, const struct argus_step_summary *s, uint64_t other)
{
    for (uint32_t k = 0; k < s->n_kmodes && k < ARGUS_MAX_KMODES; k++) {
        const struct argus_kmode_stats *m = &s->kmodes[k];
        if (k && m->name_hash < s->kmodes[k - 1].name_hash)
            c->kmodes_sorted = 0;
        if (m->name_hash == other)
            continue;
        int rc = an_names_add(&c->names, m->name_hash, m->kclass, (double)m->sum_ns);
        if (rc)
            return rc;
    }
    return 0;
}

/* Each rank's rows, ids and summary pointers are a block of their own in the store: the
 * hardware sees a new stream at every rank, and build_cells waited on memory at the start
 * of each. So it asks for them CELLS_AHEAD ranks on. */
#define CELLS_AHEAD 8

static void rank_prefetch(const struct argus_jobstore *js, uint32_t r)
{
    const struct argus_jobstore_row *w;
    const struct argus_step_summary *const *v;
    const uint64_t *id;
    const size_t m = argus_jobstore_rank_rows(js, r, &w);
    argus_jobstore_rank_steps(js, r, &v);
    argus_jobstore_rank_step_ids(js, r, &id);
    for (size_t i = 0; i < m; i++) {
        __builtin_prefetch(&w[i]); /* a row is a cache line */
        if (i % 8 == 0) {
            __builtin_prefetch(&v[i]);
            __builtin_prefetch(&id[i]);
        }
    }
}

/* The rank x step table of summaries and of the values the detectors read most, from the
 * store's rows (store/jobstore.h): a summary itself is read only for its kernel modes and for
 * the first known coordinates of its rank — at scale the summaries fit in no cache. Also
 * the collection totals, whether each rank has kernel modes, and the kernel-name table
 * (in cell order). */
static int build_cells(struct an_ctx *c)
{
    const uint64_t other = argus_name_hash(ARGUS_OTHER_KERNEL);
    const size_t S = c->S;
    int rc;

    if ((rc = tables_lend(c)))
        return rc;
    c->co = calloc(c->n, sizeof *c->co);
    c->co_have = calloc(c->n, 1);
    c->kmr = calloc(c->n, 1);
    const size_t ncell = (size_t)c->n * S;
    c->lv = malloc(ncell > 0 ? ncell : 1);
    if (!c->co || !c->co_have || !c->kmr || !c->lv)
        return -ENOMEM;
    c->kmodes_sorted = 1;
    for (uint32_t r = 0; r < c->n; r++) {
        const uint64_t *id;
        const struct argus_step_summary *const *v;
        const struct argus_jobstore_row *w;
        if (r + CELLS_AHEAD < c->n)
            rank_prefetch(c->js, c->rank_of[r + CELLS_AHEAD]);
        const size_t m = held_steps(c, r, &id, &v), base = (size_t)r * S;
        size_t j = 0;
        argus_jobstore_rank_rows(c->js, c->rank_of[r], &w);
        for (size_t i = 0; i < m; i++, j++) { /* both ascending: one walk */
            while (m < S && c->step_id[j] < id[i]) /* m == S: it holds every step */
                cell_none(c, base + j++);
            const size_t at = base + j;
            c->cell[at] = v[i];
            c->vwall[at] = w[i].wall_ns;
            c->vcomp[at] = w[i].compute_ns;
            c->vhost[at] = w[i].host_ns;
            c->vstart[at] = w[i].start_ns;
            c->vcomm[at] = w[i].comm_ns;
            c->kernels_seen += w[i].kernel_count;
            c->dropped += w[i].dropped;
            if (!c->cupti_why && (v[i]->flags & ARGUS_SF_NO_CUPTI)) /* why no kernels */
                c->cupti_why = ARGUS_SF_CUPTI_WHY(v[i]->flags) ? ARGUS_SF_CUPTI_WHY(v[i]->flags)
                                                               : ARGUS_CUPTI_HELD_OTHER;
            c->kd[at] = !w[i].thin;
            c->lv[at] = (uint8_t)an_cell_level(w[i].kernel_count, v[i]);
            if (c->lv[at] < ARGUS_DL_KERNELS) { /* no kernels: compute unknown, not 0 */
                c->vcomp[at] = NAN;
                c->vhost[at] = c->lv[at] == ARGUS_DL_PHASES ? an_unphased_ns(v[i]) : NAN;
            }
            c->thin_held |= w[i].thin;
            if (!c->co_have[r] && w[i].coords_known) {
                c->co[r] = v[i]->coords;
                c->co_have[r] = 1;
            }
            if (w[i].n_kmodes && !w[i].thin) { /* thin: rows only */
                c->kmr[r] = 1;
                if ((rc = cell_names(c, v[i], other)))
                    return rc;
            }
        }
        c->held += m;
        while (j < S)
            cell_none(c, base + j++);
    }
    an_levels_finish(c);
    return 0;
}

/* X[si]: the longest step wall of any rank at si (NAN when none held it). */
static int build_series(struct an_ctx *c)
{
    const size_t S = c->S;
    c->X = malloc(S * sizeof *c->X);
    if (!c->X)
        return -ENOMEM;
    for (size_t si = 0; si < S; si++)
        c->X[si] = NAN;
    for (uint32_t r = 0; r < c->n; r++) {
        const double *w = c->vwall + (size_t)r * S;
        for (size_t si = 0; si < S; si++)
            if (!isnan(w[si]) && (isnan(c->X[si]) || w[si] > c->X[si]))
                c->X[si] = w[si];
    }
    size_t m = 0;
    for (size_t si = 0; si < S; si++)
        if (!isnan(c->X[si]))
            c->tmp1[m++] = c->X[si];
    c->med_step = m ? argus_stats_median(c->tmp1, m) : 0;
    return 0;
}

static int build_class_walls(struct an_ctx *c)
{
    const size_t S = c->S;
    c->cwall = malloc((size_t)c->n_cls * S * sizeof *c->cwall);
    c->ccomp = malloc((size_t)c->n_cls * S * sizeof *c->ccomp);
    if (!c->cwall || !c->ccomp || an_gather_alloc(c))
        return -ENOMEM;
    for (uint32_t k = 0; k < c->n_cls; k++)
        for (size_t s0 = 0, ns; s0 < S; s0 += ns) {
            ns = an_class_gather(c, c->vwall, k, s0);
            for (size_t j = 0; j < ns; j++) {
                double *col = c->gat + j * c->gat_cap;
                const size_t m = c->gat_n[j];
                c->cwall[(size_t)k * S + s0 + j] = m ? argus_stats_median(col, m) : 0;
            }
        }
    return 0;
}

int an_tmp_reserve(struct an_ctx *c, size_t n)
{
    if (n <= c->tmp_cap)
        return 0;
    double *a = realloc(c->tmp1, n * sizeof *a);
    if (a)
        c->tmp1 = a;
    double *b = realloc(c->tmp2, n * sizeof *b);
    if (b)
        c->tmp2 = b;
    double *d = realloc(c->tmp3, n * sizeof *d);
    if (d)
        c->tmp3 = d;
    if (!a || !b || !d)
        return -ENOMEM;
    c->tmp_cap = n;
    return 0;
}

/* The store knows something of rank r for the analysis: steps held, rank info or a
 * sketch of evicted steps. A missing mark alone is not enough: sealing marks every rank
 * id without steps missing from step 0 (pipeline.c), and such a rank adds nothing to the
 * tables (the report names it missing from the store itself). */
static int rank_present(const struct argus_jobstore *js, uint32_t r)
{
    return argus_jobstore_rank_step_ids(js, r, NULL) || argus_jobstore_rankinfo(js, r) ||
           argus_jobstore_rank_gone(js, r);
}

/* The slots (context.h): every rank id below the store's count when the ids are dense
 * (that count at most twice the ranks present: the view of a job whose ranks
 * all report is the store's own, slot == rank), else only the ranks present, so that a
 * lone rank 65,535 beside four good ranks costs five rows, not 65,536. -ENOENT when the
 * store knows no rank, -ENOMEM. */
static int build_slots(struct an_ctx *c)
{
    const uint32_t N = argus_jobstore_nranks(c->js);
    uint32_t present = 0;
    for (uint32_t r = 0; r < N; r++)
        present += (uint32_t)rank_present(c->js, r);
    if (N == 0)
        return -ENOENT;
    c->dense = (uint64_t)N <= 2 * (uint64_t)present;
    c->n = c->dense ? N : present;
    if (c->n == 0)
        return -ENOENT;
    if (!(c->rank_of = malloc((size_t)c->n * sizeof *c->rank_of)))
        return -ENOMEM;
    for (uint32_t r = 0, q = 0; r < N && q < c->n; r++)
        if (c->dense || rank_present(c->js, r))
            c->rank_of[q++] = r;
    return 0;
}

void an_anomaly_to_slots(const struct an_ctx *c, struct argus_anomaly *a)
{
    uint32_t *const v[3] = { a->ranks, a->victims, a->group };
    uint32_t *const n[3] = { &a->n_ranks, &a->n_victims, &a->n_group };
    for (int k = 0; k < 3; k++) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < *n[k] && i < ARGUS_ANOMALY_MAX_RANKS; i++) {
            const long q = an_slot_of(c, v[k][i]);
            if (q >= 0)
                v[k][m++] = (uint32_t)q;
        }
        *n[k] = m;
    }
}

void an_slots_to_ranks(const struct an_ctx *c, uint32_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        v[i] = v[i] < c->n ? c->rank_of[v[i]] : v[i];
}

int an_ctx_build(struct an_ctx *c, const struct argus_jobstore *js,
                 const struct argus_analysis_opts *o)
{
    int rc;

    memset(c, 0, sizeof *c);
    c->js = js;
    c->o = *o;
    if (c->o.ratio <= 1.0)
        c->o.ratio = 1.15;
    if (c->o.z <= 0)
        c->o.z = 5;
    if (c->o.min_steps == 0)
        c->o.min_steps = 1;
    if ((rc = build_slots(c)) || (rc = build_steps(c)))
        return rc;
    if ((rc = an_tmp_reserve(c, (c->n > c->S ? c->n : c->S) + 16)))
        return rc;
    if ((rc = build_cells(c)) || (rc = an_build_layout(c)) || (rc = build_series(c)) ||
        (rc = build_class_walls(c)))
        return rc;
    memset(c->cflag, 0, (size_t)c->n * c->S);
    return 0;
}

void an_ctx_free(struct an_ctx *c)
{
    free(c->rank_of);
    free(c->step_id);
    free(c->co_have);
    free(c->kmr);
    free(c->lv);
    free(c->co);
    free(c->cls);
    free(c->cls_off);
    free(c->cls_mem);
    free(c->mgrp[0]);
    free(c->mgrp[1]);
    free(c->cwall);
    free(c->ccomp);
    free(c->gat);
    free(c->gat_n);
    free(c->X);
    free(c->names.hash);
    free(c->names.kclass);
    free(c->names.total_ns);
    free(c->names.slot);
    free(c->cand.v);
    free(c->tmp1);
    free(c->tmp2);
    free(c->tmp3);
    memset(c, 0, sizeof *c);
}
