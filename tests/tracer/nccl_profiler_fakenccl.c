/* nccl_profiler_fakenccl.c — for tests only: an ncclCommInitRank that, like NCCL's, calls
 * the profiler plugin's init from inside itself (through the callback the driver sets),
 * so that tracer/ncclhook.c's hook in front of it meets the plugin's report on the same
 * thread. It makes no communicator beyond a token.
 */
#include <stddef.h>

typedef struct {
    char internal[128];
} fake_id;

void (*ncclp_fake_on_init)(int nranks, int rank);
int ncclCommInitRank(void **comm, int nranks, fake_id id, int rank);

static int fake_token;

int ncclCommInitRank(void **comm, int nranks, fake_id id, int rank)
{
    (void)id;
    if (ncclp_fake_on_init)
        ncclp_fake_on_init(nranks, rank);
    *comm = &fake_token;
    return 0;
}
