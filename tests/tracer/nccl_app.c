/* nccl_app.c — a program linked against the fake libnccl (fake_nccl.c) only, run by
 * t_nccl_preload.sh with libargus.so in LD_PRELOAD: it prints which object its
 * ncclCommInitRank resolves to, makes an init and a split, and checks that the calls
 * still reached the fake library with their results intact. Exit 0 when they did. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    char internal[128];
} nccl_id;

int ncclCommInitRank(void **comm, int nranks, nccl_id id, int rank);
int ncclCommSplit(void *comm, int color, int key, void **newcomm, void *config);
int ncclCommCount(const void *comm, int *count);
extern int fake_nccl_calls;

int main(void)
{
    Dl_info di;
    void *f = dlsym(RTLD_DEFAULT, "ncclCommInitRank"), *c = NULL, *s = NULL;
    nccl_id id;
    int n = 0;

    memset(&id, 0, sizeof id);
    id.internal[0] = 5;
    printf("ncclCommInitRank from %s\n", f && dladdr(f, &di) && di.dli_fname ? di.dli_fname
                                                                         : "?");
    if (ncclCommInitRank(&c, 4, id, 1) != 0 || !c || ncclCommCount(c, &n) != 0 || n != 4)
        return 1;
    if (ncclCommSplit(c, 0, 1, &s, NULL) != 0 || !s || ncclCommInitRank(&c, 99, id, 0) != 4)
        return 1;
    printf("fake calls %d\n", fake_nccl_calls);
    return fake_nccl_calls == 3 ? 0 : 1;
}
