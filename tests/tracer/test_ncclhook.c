/* test_ncclhook.c — tracer/ncclhook.c against the fake libnccl (fake_nccl.c): the hooks
 * are linked into this program, so its NCCL calls reach them first and the hooks find
 * the fake through dlsym(RTLD_NEXT), as libargus.so finds the real NCCL when preloaded.
 * Four "ranks" are four forked children making the same calls in the same order (as the
 * ranks of a job do); each sends its memberships back through a pipe:
 *   a world communicator, its TP pair ({0,1},{2,3}) and its DP pair ({0,2},{1,3}) by
 *   ncclCommInitRank(Config), a split of the world by colour r % 2, a split with no
 *   colour, a failing init, then five more inits (past ARGUS_MAX_COMM_GROUPS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tracer/commgroups.h"

#define RANKS 4

typedef struct {
    char internal[128];
} nccl_id;

int ncclCommInitRank(void **comm, int nranks, nccl_id id, int rank);
int ncclCommInitRankConfig(void **comm, int nranks, nccl_id id, int rank, void *config);
int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config);
extern int fake_nccl_calls;

struct result {
    uint32_t n, dropped;
    int calls, bad_rc;
    struct argus_comm_group g[ARGUS_MAX_COMM_GROUPS];
};

static nccl_id uid(int k)
{
    nccl_id id;
    memset(&id, 0, sizeof id);
    id.internal[0] = (char)k;
    id.internal[127] = (char)(k * 7);
    return id;
}

static void one_rank(int r, struct result *res)
{
    void *world = NULL, *tp = NULL, *dp = NULL, *half = NULL, *none = (void *)1, *bad = NULL;
    memset(res, 0, sizeof *res);
    ncclCommInitRank(&world, RANKS, uid(1), r);
    ncclCommInitRank(&tp, 2, uid(10 + r / 2), r % 2);
    ncclCommInitRankConfig(&dp, 2, uid(20 + r % 2), r / 2, NULL);
    ncclCommSplit(world, r % 2, r, &half, NULL);
    ncclCommSplit(world, -1, r, &none, NULL);
    res->bad_rc = ncclCommInitRank(&bad, 99, uid(30), r);
    for (int k = 0; k < 5; k++) {
        void *x = NULL;
        ncclCommInitRank(&x, 2, uid(40 + k), r % 2);
    }
    res->calls = fake_nccl_calls;
    res->n = argus_commgroups_get(res->g, ARGUS_MAX_COMM_GROUPS, &res->dropped);
}

static void run_ranks(struct result *res)
{
    for (int r = 0; r < RANKS; r++) {
        int fd[2];
        assert_int_equal(pipe(fd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            struct result mine;
            close(fd[0]);
            one_rank(r, &mine);
            _exit(write(fd[1], &mine, sizeof mine) == (ssize_t)sizeof mine ? 0 : 1);
        }
        close(fd[1]);
        assert_int_equal(read(fd[0], &res[r], sizeof res[r]), (ssize_t)sizeof res[r]);
        close(fd[0]);
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
}

static void test_memberships(void **state)
{
    struct result res[RANKS];
    (void)state;
    run_ranks(res);
    for (int r = 0; r < RANKS; r++) {
        const struct argus_comm_group *g = res[r].g;
        assert_int_equal(res[r].calls, 11);      /* every call reached the real NCCL */
        assert_int_equal(res[r].bad_rc, 4);      /* its errors pass through */
        assert_int_equal(res[r].n, ARGUS_MAX_COMM_GROUPS);
        assert_int_equal(res[r].dropped, 1);     /* 4 + 5 memberships, 8 kept */
        for (uint32_t i = 0; i < res[r].n; i++)
            assert_int_equal(g[i].kind, ARGUS_COMM_NCCL);
        /* world: one group, same id and family everywhere */
        assert_int_equal(g[0].size, RANKS);
        assert_int_equal(g[0].index, r);
        assert_true(g[0].id == res[0].g[0].id && g[0].family == res[0].g[0].family);
        /* TP pairs and DP pairs: members agree, other pairs differ, one family each */
        for (int q = 0; q < RANKS; q++) {
            assert_int_equal(g[1].family, res[q].g[1].family);
            assert_int_equal(g[2].family, res[q].g[2].family);
            assert_int_equal(g[3].family, res[q].g[3].family);
            assert_int_equal(g[1].id == res[q].g[1].id, r / 2 == q / 2);
            assert_int_equal(g[2].id == res[q].g[2].id, r % 2 == q % 2);
            assert_int_equal(g[3].id == res[q].g[3].id, r % 2 == q % 2);
        }
        assert_int_equal(g[1].size, 2);
        assert_int_equal(g[1].index, r % 2);
        assert_int_equal(g[2].index, r / 2);
        assert_true(g[0].family != g[1].family && g[1].family != g[2].family);
        assert_true(g[3].family != g[0].family && g[3].family != g[2].family);
        /* the split: size and rank from ncclCommCount / ncclCommUserRank */
        assert_int_equal(g[3].size, 2);
        assert_int_equal(g[3].index, r / 2);
        /* after the split without colour and the failed init: the next inits follow */
        assert_true(g[4].id != g[1].id && g[4].family != g[2].family);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memberships),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
