/* fake_nccl.c — a stand-in libnccl for tests only (NCCL is not installed where the tests
 * run): the communicator calls tracer/ncclhook.c interposes, with NCCL's ABI, doing no
 * communication. A communicator is a small heap record of (nranks, rank). Splits: colour
 * -1 gives no communicator; otherwise the new one has nranks / 2 members (at least 2)
 * and this rank is rank / 2 in it. nranks == 99 fails with ncclInvalidArgument (4), so
 * tests see that errors pass through. fake_nccl_calls counts the calls that reached it.
 * ncclCommInitRankConfig calls ncclCommInitRank by its exported name, so with the hooks
 * in front that call comes back through them (they must note it once).
 */
#include <stdlib.h>
#include <string.h>

typedef struct {
    char internal[128];
} fake_nccl_id;

struct fake_comm {
    int nranks, rank;
    unsigned char id0;
};

int fake_nccl_calls;
int ncclGetUniqueId(fake_nccl_id *id);
int ncclCommInitRank(void **comm, int nranks, fake_nccl_id id, int rank);
int ncclCommInitRankConfig(void **comm, int nranks, fake_nccl_id id, int rank, void *config);
int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config);
int ncclCommCount(const void *comm, int *count);
int ncclCommUserRank(const void *comm, int *rank);
int ncclCommDestroy(void *comm);

int ncclGetUniqueId(fake_nccl_id *id)
{
    static unsigned char next = 1;
    memset(id->internal, 0, sizeof id->internal);
    id->internal[0] = (char)next++;
    return 0;
}

int ncclCommInitRank(void **comm, int nranks, fake_nccl_id id, int rank)
{
    fake_nccl_calls++;
    if (nranks == 99)
        return 4;
    struct fake_comm *c = malloc(sizeof *c);
    if (!c)
        return 2;
    c->nranks = nranks;
    c->rank = rank;
    c->id0 = (unsigned char)id.internal[0];
    *comm = c;
    return 0;
}

int ncclCommInitRankConfig(void **comm, int nranks, fake_nccl_id id, int rank, void *config)
{
    (void)config;
    return ncclCommInitRank(comm, nranks, id, rank);
}

int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config)
{
    const struct fake_comm *p = comm;
    (void)key;
    (void)config;
    fake_nccl_calls++;
    if (color == -1) {
        *newcomm = NULL;
        return 0;
    }
    struct fake_comm *c = malloc(sizeof *c);
    if (!c)
        return 2;
    c->nranks = p->nranks / 2 < 2 ? 2 : p->nranks / 2;
    c->rank = p->rank / 2;
    c->id0 = 0;
    *newcomm = c;
    return 0;
}

int ncclCommCount(const void *comm, int *count)
{
    *count = ((const struct fake_comm *)comm)->nranks;
    return 0;
}

int ncclCommUserRank(const void *comm, int *rank)
{
    *rank = ((const struct fake_comm *)comm)->rank;
    return 0;
}

int ncclCommDestroy(void *comm)
{
    free(comm);
    return 0;
}
