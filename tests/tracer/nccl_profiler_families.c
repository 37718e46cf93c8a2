/* nccl_profiler_families.c — tests only: the family of a communicator NCCL's profiler
 * plugin reports must not depend on the order a rank made its communicators in
 * (tracer/ncclhook.c, docs/ALGORITHMS.md, "Layout, peer classes and groups").
 *     nccl_profiler_families PLUGIN MAXVER
 * Four "ranks" (forked children, each loading PLUGIN as NCCL does, ncclProfiler_vMAXVER
 * or older) of a job with tp = 2 and pp = 2 make the same kinds of communicators in four
 * different orders (any two kinds in both orders on some pair of ranks), named as PyTorch names them ("<group_desc>:<group_name>", the name a
 * per-instance counter):
 *   the world, TP pairs {0,1} {2,3}, PP pairs {0,2} {1,3}, embedding pairs (the PP sets),
 *   an unnamed pair set {0,3} {1,2} within a node, a pair set {0,2} {1,3} across nodes
 *   named "undefined:7" (PyTorch's description when none was given) on ranks 0 and 1 and
 *   unnamed on 2 and 3, and on the first stage only (ranks 0 and 1) one more named pair.
 * Some communicators come through the hooked ncclCommInitRank (NCCL calling the plugin
 * inside it, libncclp_fakenccl), the others as a statically linked NCCL tells the plugin
 * (no hook), alternating per rank. Each child sends its memberships back through a
 * pipe; the parent checks that members agree on each group, that every kind has one
 * family on every rank that holds it (one partition), and that the kinds' families
 * differ. Prints one line per failed check and exits 1, or "ok ..." and exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/types.h"
#include "tests/tracer/nccl_profiler_check.h"
#include "tests/tracer/nccl_profiler_side.h"
#include "tracer/commgroups.h"

#define RANKS 4

enum { K_WORLD, K_TP, K_PP, K_EMB, K_NODE, K_UNDEF, K_EXTRA, K_N };

static int failures;

/* One communicator as rank r makes it. */
struct comm {
    uint64_t hash;
    char name[64];
    int has_name, nnodes, nranks, rank;
};

/* Kind k on rank r; 0 when r is not in such a group. */
static int comm_of(int k, int r, struct comm *c)
{
    const int stage = r / 2, t = r % 2;
    memset(c, 0, sizeof *c);
    c->has_name = 1;
    c->nranks = 2;
    switch (k) {
    case K_WORLD:
        snprintf(c->name, sizeof c->name, "default_pg:0");
        c->hash = 0x1000;
        c->nnodes = 2;
        c->nranks = RANKS;
        c->rank = r;
        break;
    case K_TP: /* the instance counter differs between the groups of one partition */
        snprintf(c->name, sizeof c->name, "TENSOR_MODEL_PARALLEL_GROUP:%d", 1 + stage);
        c->hash = 0x2000 + (uint64_t)stage;
        c->nnodes = 1;
        c->rank = t;
        break;
    case K_PP:
        snprintf(c->name, sizeof c->name, "PIPELINE_MODEL_PARALLEL_GROUP:%d", 3 + t);
        c->hash = 0x3000 + (uint64_t)t;
        c->nnodes = 2;
        c->rank = stage;
        break;
    case K_EMB:
        snprintf(c->name, sizeof c->name, "EMBEDDING_GROUP:%d", 5 + t);
        c->hash = 0x4000 + (uint64_t)t;
        c->nnodes = 2;
        c->rank = stage;
        break;
    case K_NODE: /* {0,3} {1,2}, no name */
        c->has_name = 0;
        c->hash = 0x5000 + (uint64_t)(r == 0 || r == 3 ? 0 : 1);
        c->nnodes = 1;
        c->rank = r >= 2;
        break;
    case K_UNDEF: /* {0,2} {1,3}: "undefined:7" on the first stage, no name on the last */
        c->has_name = stage == 0;
        if (c->has_name)
            snprintf(c->name, sizeof c->name, "undefined:7");
        c->hash = 0x6000 + (uint64_t)t;
        c->nnodes = 2;
        c->rank = stage;
        break;
    case K_EXTRA: /* the first stage only */
        if (stage != 0)
            return 0;
        snprintf(c->name, sizeof c->name, "POSITION_EMBEDDING_GROUP:9");
        c->hash = 0x7000;
        c->nnodes = 1;
        c->rank = t;
        break;
    default:
        return 0;
    }
    return 1;
}

typedef struct {
    char internal[128];
} fam_nccl_id;
extern void (*ncclp_fake_on_init)(int, int);
int ncclCommInitRank(void **comm, int nranks, fam_nccl_id id, int rank);

static const struct comm *making; /* the communicator the hooked init is making */
static void *ctx[K_N];
static int mask[K_N], made;

static void on_init(int nranks, int rank) /* inside ncclCommInitRank, as NCCL does */
{
    (void)nranks, (void)rank;
    side_init(&ctx[made], &mask[made], making->hash, making->has_name ? making->name : NULL,
              making->nnodes, making->nranks, making->rank);
}

struct result {
    uint32_t n;
    struct argus_comm_group g[ARGUS_MAX_COMM_GROUPS];
};

/* Rank r: its communicators in its own order (the kinds rotated by r, backwards on odd
 * ranks, the extra one first on rank 0 and last on rank 1), every other one through the
 * hook. */
static int one_rank(int r, const char *plugin, int maxver, struct result *res)
{
    if (side_load(plugin, maxver) != 0)
        return 1;
    ncclp_fake_on_init = on_init;
    int order[K_N], n = 0;
    if (r == 0)
        order[n++] = K_EXTRA;
    for (int i = 0; i < K_EXTRA; i++) /* odd ranks: backwards */
        order[n++] = r % 2 ? (K_EXTRA - 1 - i + r) % K_EXTRA : (i + r) % K_EXTRA;
    if (r != 0)
        order[n++] = K_EXTRA;
    for (int i = 0; i < n; i++) {
        struct comm c;
        if (!comm_of(order[i], r, &c))
            continue;
        if ((i + r) % 2 == 0) {
            fam_nccl_id id;
            memset(&id, 0, sizeof id);
            memcpy(id.internal, &c.hash, sizeof c.hash);
            void *comm = NULL;
            making = &c;
            if (ncclCommInitRank(&comm, c.nranks, id, c.rank) != 0)
                return 1;
        } else {
            side_init(&ctx[made], &mask[made], c.hash, c.has_name ? c.name : NULL, c.nnodes,
                      c.nranks, c.rank);
        }
        made++;
    }
    res->n = argus_commgroups_get(res->g, ARGUS_MAX_COMM_GROUPS, NULL);
    for (int i = 0; i < made; i++)
        side_finalize(ctx[i]);
    return 0;
}

/* The kind behind a membership's id; -1 when none. */
static int kind_of(uint64_t id)
{
    const int k = (int)(id >> 12) - 1;
    return k >= 0 && k < K_N && (id & 0xfff) < 2 ? k : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PLUGIN MAXVER\n", argv[0]);
        return 2;
    }
    setenv("ARGUS_MODE", "on", 1);
    struct result res[RANKS];
    memset(res, 0, sizeof res);
    for (int r = 0; r < RANKS; r++) {
        int fd[2];
        if (pipe(fd) != 0)
            return 1;
        fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            struct result mine;
            memset(&mine, 0, sizeof mine);
            close(fd[0]);
            const int rc = one_rank(r, argv[1], atoi(argv[2]), &mine);
            fflush(stdout);
            _exit(rc == 0 && write(fd[1], &mine, sizeof mine) == (ssize_t)sizeof mine ? 0
                                                                                      : 1);
        }
        close(fd[1]);
        const ssize_t got = read(fd[0], &res[r], sizeof res[r]);
        close(fd[0]);
        int st = 0;
        waitpid(pid, &st, 0);
        CHECK(got == (ssize_t)sizeof res[r] && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "rank %d did not report", r);
    }

    uint32_t fam[K_N] = {0};
    int have[K_N] = {0};
    for (int r = 0; r < RANKS; r++) {
        const int want = r < 2 ? K_N : K_N - 1;
        CHECK(res[r].n == (uint32_t)want, "rank %d: %u memberships, want %d", r, res[r].n,
              want);
        int seen[K_N] = {0};
        for (uint32_t i = 0; i < res[r].n; i++) {
            const struct argus_comm_group *g = &res[r].g[i];
            const int k = kind_of(g->id);
            struct comm c;
            CHECK(k >= 0 && comm_of(k, r, &c) && g->id == c.hash, "rank %d: id %" PRIx64, r,
                  g->id);
            if (k < 0 || !comm_of(k, r, &c))
                continue;
            CHECK(g->size == (uint32_t)c.nranks && g->index == (uint32_t)c.rank &&
                      g->kind == ARGUS_COMM_NCCL,
                  "rank %d kind %d: size %u index %u", r, k, g->size, g->index);
            CHECK(!seen[k]++, "rank %d: kind %d twice", r, k);
            /* one family per kind on every rank, whatever the order and path */
            if (!have[k]) {
                have[k] = 1;
                fam[k] = g->family;
            }
            CHECK(g->family == fam[k], "rank %d kind %d (%s): family %08x, rank 0..%d said "
                  "%08x", r, k, c.has_name ? c.name : "no name", g->family, r, fam[k]);
        }
    }
    for (int a = 0; a < K_N; a++)
        for (int b = a + 1; b < K_N; b++)
            CHECK(!have[a] || !have[b] || fam[a] != fam[b], "kinds %d and %d share family "
                  "%08x", a, b, fam[a]);
    if (failures)
        return 1;
    printf("ok: plugin up to v%s, %d ranks, %d kinds, one family each whatever the order\n",
           argv[2], RANKS, K_N);
    return 0;
}
