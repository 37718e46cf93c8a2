/* groups.c — communication groups from communicator membership, for jobs that declared
 * no layout (docs/ALGORITHMS.md, Layout, peer classes and groups).
 * Every rank's rank info lists the communicators the program made (struct
 * argus_comm_group: the same (kind, id) on every member, the same (kind, family) for the
 * groups of one creating call). Each family is one partition of (some of) the ranks.
 * Two families get a role, the roles the layout's groups play elsewhere in analysis/:
 *   DP — peers in the same position: a family whose every group lies inside one peer
 *        class (members run the same kernels); of several, the one with the largest
 *        groups (more members make the late-arriver and W1 tests stronger, and at scale
 *        DP is the widest such group), then the one with more groups;
 *   TP — the next such family by the same order.
 * Before the roles are given, the peer classes inferred from kernel sets are joined along
 * the families whose groups mostly lie inside one class (TP/DP-like: a stage's ranks are
 * connected by them, while PP-like families cross stages), so that a rank whose kernels
 * look different for a while (a 3x straggler folds other modes) stays with its stage.
 * A family is ignored when a rank claims two groups in it or members disagree on its size.
 * Groups of one rank and groups of every rank say nothing and are skipped.
 * Reads the store's rank infos; writes c->cls / n_cls (merged) and c->mgrp / mgrp_n /
 * mgrp_max only. When no family takes the DP role, groups_infer.c may still infer it from
 * collective end times.
 */
#include "analysis/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct memb {
    uint64_t fam;  /* kind << 32 | family */
    uint64_t id;
    uint32_t rank, size;
};

static int cmp_memb(const void *x, const void *y)
{
    const struct memb *a = x, *b = y;
    if (a->fam != b->fam)
        return (a->fam > b->fam) - (a->fam < b->fam);
    if (a->id != b->id)
        return (a->id > b->id) - (a->id < b->id);
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* What one family looks like. */
struct fam {
    size_t a, b;        /* its entries [a, b) in the sorted list */
    uint32_t G;         /* groups */
    uint32_t covered;   /* ranks in its groups */
    uint32_t maxsize;   /* largest group (members reported) */
    uint32_t cross;     /* groups whose members are not all of one peer class */
    int ok;             /* consistent (one partition), a group of >= 2 ranks */
};

/* seen[] (one per rank) holds stamp for the ranks met in this family. */
static void fam_judge(const struct an_ctx *c, const struct memb *m, struct fam *f,
                      uint32_t *seen, uint32_t stamp)
{
    f->G = f->covered = f->maxsize = f->cross = 0;
    f->ok = 1;
    for (size_t i = f->a; i < f->b && f->ok;) {
        size_t j = i;
        int cross = 0;
        while (j < f->b && m[j].id == m[i].id) {
            if (m[j].size != m[i].size || seen[m[j].rank] == stamp) /* one rank in two */
                f->ok = 0;                                           /* groups: no partition */
            cross |= c->cls[m[j].rank] != c->cls[m[i].rank];
            seen[m[j].rank] = stamp;
            j++;
        }
        f->cross += (uint32_t)cross;
        if (j - i > m[i].size)
            f->ok = 0; /* more members than the group has: not one communicator */
        f->G++;
        f->covered += (uint32_t)(j - i);
        if (j - i > f->maxsize)
            f->maxsize = (uint32_t)(j - i);
        i = j;
    }
    f->ok &= f->maxsize >= 2;
}

/* Does family x rank before y for a role? Larger groups, then more groups, then key. */
static int fam_before(const struct memb *m, const struct fam *x, const struct fam *y)
{
    const double sx = (double)x->covered / x->G, sy = (double)y->covered / y->G;
    if (sx != sy)
        return sx > sy;
    if (x->G != y->G)
        return x->G > y->G;
    return m[x->a].fam < m[y->a].fam;
}

static int fam_fill(struct an_ctx *c, const struct memb *m, const struct fam *f, int role)
{
    uint32_t *g = malloc((size_t)c->n * sizeof *g);
    if (!g)
        return -ENOMEM;
    for (uint32_t r = 0; r < c->n; r++)
        g[r] = UINT32_MAX;
    uint32_t k = 0;
    for (size_t i = f->a; i < f->b; k++) {
        const uint64_t id = m[i].id;
        for (; i < f->b && m[i].id == id; i++)
            g[m[i].rank] = k;
    }
    c->mgrp[role] = g;
    c->mgrp_n[role] = k;
    c->mgrp_max[role] = f->maxsize;
    return 0;
}

/* Is f the partition g (n groups) already holds? Each of its groups inside one of g's,
 * as many groups and as many ranks. */
static int fam_same(const struct an_ctx *c, const struct memb *m, const struct fam *f,
                    const uint32_t *g, uint32_t n)
{
    uint32_t covered = 0;
    for (uint32_t r = 0; r < c->n; r++)
        covered += g[r] != UINT32_MAX;
    if (f->G != n || f->covered != covered)
        return 0;
    for (size_t i = f->a + 1; i < f->b; i++)
        if (g[m[i].rank] == UINT32_MAX ||
            (m[i].id == m[i - 1].id && g[m[i].rank] != g[m[i - 1].rank]))
            return 0;
    return g[m[f->a].rank] != UINT32_MAX;
}

static uint32_t uf_find(uint32_t *up, uint32_t x)
{
    while (up[x] != x) {
        up[x] = up[up[x]];
        x = up[x];
    }
    return x;
}

static void uf_join(uint32_t *up, uint32_t a, uint32_t b)
{
    a = uf_find(up, a);
    b = uf_find(up, b);
    if (a != b)
        up[a > b ? a : b] = a < b ? a : b;
}

/* Peer classes inferred from kernel sets split a stage when some of its ranks ran other
 * kernels or folded other ones (a 3x straggler does). A family whose groups lie mostly
 * inside one class (at most half of them cross) is a TP- or DP-like family: its groups
 * join their members' classes. Classes are only merged, never split (PP-like families,
 * whose groups cross classes, join nothing); renumbered by lowest rank. buf: n entries. */
static int merge_classes(struct an_ctx *c, const struct memb *m, const struct fam *fv,
                         size_t nf, uint32_t *up)
{
    uint32_t *first = malloc((size_t)c->n_cls * sizeof *first);
    if (!first)
        return -ENOMEM;
    for (uint32_t k = 0; k < c->n_cls; k++)
        first[k] = UINT32_MAX;
    for (uint32_t r = 0; r < c->n; r++) {
        up[r] = r;
        if (first[c->cls[r]] == UINT32_MAX)
            first[c->cls[r]] = r;
        uf_join(up, r, first[c->cls[r]]);
    }
    for (size_t k = 0; k < nf; k++) {
        if (2 * fv[k].cross > fv[k].G)
            continue;
        for (size_t i = fv[k].a + 1; i < fv[k].b; i++)
            if (m[i].id == m[i - 1].id)
                uf_join(up, m[i].rank, m[i - 1].rank);
    }
    /* the lowest rank of a set is its root: renumber in rank order */
    uint32_t n_cls = 0;
    for (uint32_t r = 0; r < c->n; r++) {
        const uint32_t root = uf_find(up, r);
        c->cls[r] = root == r ? n_cls++ : c->cls[root];
    }
    c->n_cls = n_cls;
    for (uint32_t r = 0; r < c->n; r++)
        up[r] = 0; /* back to a stamp table for fam_judge */
    free(first);
    return 0;
}

int an_groups_build(struct an_ctx *c)
{
    size_t M = 0, nf = 0;
    int rc = 0;

    if (c->layout_known)
        return 0;
    for (uint32_t r = 0; r < c->n; r++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(c->js, c->rank_of[r]);
        M += ri ? ri->n_groups : 0;
    }
    if (M == 0)
        return 0;
    struct memb *m = malloc(M * sizeof *m);
    struct fam *fv = malloc(M * sizeof *fv);
    uint32_t *seen = calloc(c->n, sizeof *seen);
    if (!m || !fv || !seen) {
        rc = -ENOMEM;
        goto out;
    }
    M = 0;
    for (uint32_t r = 0; r < c->n; r++) {
        const struct argus_rank_info *ri = argus_jobstore_rankinfo(c->js, c->rank_of[r]);
        for (uint32_t i = 0; ri && i < ri->n_groups && i < ARGUS_MAX_COMM_GROUPS; i++) {
            const struct argus_comm_group *g = &ri->groups[i];
            if (g->size < 2 || g->size >= c->n)
                continue;
            m[M++] = (struct memb){(uint64_t)g->kind << 32 | g->family, g->id, r, g->size};
        }
    }
    qsort(m, M, sizeof *m, cmp_memb);
    uint32_t stamp = 0;
    for (size_t i = 0; i < M;) {
        size_t j = i;
        while (j < M && m[j].fam == m[i].fam)
            j++;
        fv[nf] = (struct fam){.a = i, .b = j};
        fam_judge(c, m, &fv[nf], seen, ++stamp);
        nf += fv[nf].ok;
        i = j;
    }
    if ((rc = merge_classes(c, m, fv, nf, seen)))
        goto out;
    size_t keep = 0; /* the families inside one class, judged on the merged classes */
    for (size_t k = 0; k < nf; k++) {
        fam_judge(c, m, &fv[k], seen, ++stamp);
        if (fv[k].cross == 0)
            fv[keep++] = fv[k];
    }
    nf = keep;
    for (int role = 0; role < 2 && nf; role++) {
        size_t best = 0;
        for (size_t k = 1; k < nf; k++)
            if (fam_before(m, &fv[k], &fv[best]))
                best = k;
        if ((rc = fam_fill(c, m, &fv[best], role)))
            goto out;
        fv[best] = fv[--nf];
        keep = 0; /* the same partition again (an NCCL copy of an MPI communicator) */
        for (size_t k = 0; k < nf; k++)
            if (!fam_same(c, m, &fv[k], c->mgrp[role], c->mgrp_n[role]))
                fv[keep++] = fv[k];
        nf = keep;
    }
out:
    free(m);
    free(fv);
    free(seen);
    return rc;
}

uint32_t an_group_of(const struct an_ctx *c, uint32_t r, int type)
{
    const int role = type == ARGUS_GT_TP ? 1 : 0;
    return c->mgrp[role] ? c->mgrp[role][r] : UINT32_MAX;
}

int an_groups_from_membership(const struct an_ctx *c, int type, struct an_groups *g)
{
    memset(g, 0, sizeof *g);
    g->G = c->mgrp_n[type == ARGUS_GT_TP];
    g->off = calloc(g->G + 1, sizeof *g->off);
    g->mem = calloc(c->n, sizeof *g->mem);
    g->stage = calloc(g->G + 1, sizeof *g->stage);
    uint32_t *fill = calloc(g->G + 1, sizeof *fill);
    int rc = (!g->off || !g->mem || !g->stage || !fill) ? -ENOMEM : 0;
    for (uint32_t r = 0; !rc && r < c->n; r++) {
        const uint32_t k = an_group_of(c, r, type);
        if (k >= g->G)
            continue;
        if (g->off[k + 1]++ == 0)
            g->stage[k] = c->cls[r];
    }
    for (uint32_t k = 0; !rc && k < g->G; k++)
        g->off[k + 1] += g->off[k];
    for (uint32_t r = 0; !rc && r < c->n; r++) {
        const uint32_t k = an_group_of(c, r, type);
        if (k < g->G)
            g->mem[g->off[k] + fill[k]++] = r;
    }
    free(fill);
    return rc;
}
