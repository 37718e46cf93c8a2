/* selfinit_app.c — a training-like program for tests/integration/t_selfinit.sh that, like
 * PyTorch with NCCL, does not call MPI (mode "none"), or calls MPI_Init only late, after
 * Argus initialised MPI for it (mode "late": its MPI_Init must succeed without a second
 * initialisation and its own MPI traffic must be right). It marks steps through argus.h,
 * found with dlsym as a framework would (libargus.so is preloaded by argus-run), and
 * reports each step's compute as one kernel. Rank 2 computes twice as long.
 * In mode "none" it also forks a child at step 10 that marks a step and exits: the child
 * must neither finalize MPI nor disturb the parent. Mode "single" is an ordinary MPI
 * program that asks for MPI_THREAD_SINGLE before its first step and all-reduces every
 * step: Argus must not initialise MPI itself, and the program's results must be right.
 * In mode "none", rank 1 also starts a copy of itself at step 20 (fork + exec, like a
 * spawned DataLoader worker: same LD_PRELOAD, same launcher variables) in mode "child",
 * which marks steps for 300 ms without MPI: Argus in the child must stand down (the
 * parent owns the rank) instead of initialising MPI a second time for rank 1.
 * Usage: selfinit_app none|late|single|child STEPS */
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef void (*step_fn)(uint64_t step, uint64_t t_ns);
typedef void (*kernel_fn)(const char *name, uint64_t start_ns, uint64_t end_ns, uint32_t device,
                          uint32_t stream, int cls);
typedef uint64_t (*now_fn)(void);

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (long)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "none") != 0 && strcmp(argv[1], "late") != 0 &&
                      strcmp(argv[1], "single") != 0 && strcmp(argv[1], "child") != 0)) {
        fprintf(stderr, "usage: selfinit_app none|late|single|child STEPS\n");
        return 2;
    }
    int none = strcmp(argv[1], "none") == 0;
    int late = strcmp(argv[1], "late") == 0, single = strcmp(argv[1], "single") == 0;
    int steps = atoi(argv[2]), world = 0;
    step_fn begin = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_begin");
    step_fn end = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_end");
    kernel_fn kernel = (kernel_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_kernel");
    now_fn now = (now_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_now_ns");
    if (!begin || !end || !kernel || !now) {
        fprintf(stderr, "selfinit_app: libargus.so is not loaded\n");
        return 2;
    }
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    int rank = r ? atoi(r) : 0;
    if (strcmp(argv[1], "child") == 0) {
        for (int s = 0; s < atoi(argv[2]); s++) {
            begin((uint64_t)(5000 + s), 0);
            sleep_ms(30);
            end((uint64_t)(5000 + s), 0);
        }
        printf("rank %d: child done\n", rank);
        return 0;
    }
    if (single) {
        int provided = -1;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
            fprintf(stderr, "selfinit_app: MPI_Init_thread failed\n");
            return 1;
        }
        MPI_Comm_size(MPI_COMM_WORLD, &world);
        printf("rank %d: MPI_THREAD_SINGLE asked, provided %d\n", rank, provided);
    }
    for (int s = 0; s < steps; s++) {
        begin((uint64_t)s, 0);
        uint64_t t0 = now();
        sleep_ms(rank == 2 ? 30 : 15);
        kernel("sm90_xmma_gemm_selfinit", t0, now(), 0, 7, 0);
        uint64_t t1 = now();
        sleep_ms(5);
        kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", t1, now(), 0, 8, 1);
        sleep_ms(rank == 2 ? 2 : 17); /* the others "wait" for rank 2 */
        if (single) {
            int sum = -1, want = world * (world - 1) / 2 + world * s;
            int mine = rank + s;
            MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (sum != want) {
                fprintf(stderr, "selfinit_app: step %d allreduce %d, want %d\n", s, sum, want);
                return 1;
            }
        }
        end((uint64_t)s, 0);
        if (!late && s == 10) {
            pid_t c = fork();
            if (c == 0) {
                begin(1000, 0);
                end(1000, 0);
                exit(0); /* runs atexit handlers: they must leave MPI to the parent */
            }
            int st = 0;
            if (c > 0)
                waitpid(c, &st, 0);
        }
        if (none && rank == 1 && s == 20) {
            fflush(stdout);
            pid_t c = fork();
            if (c == 0) {
                execl("/proc/self/exe", argv[0], "child", "10", (char *)NULL);
                _exit(127);
            }
            int st = 0;
            while (c > 0 && waitpid(c, &st, 0) < 0 && errno == EINTR)
                ;
            if (c < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "selfinit_app: the child failed (status %d)\n", st);
                return 1;
            }
        }
        if (late && s == steps / 2) {
            int provided = -1, sum = 0;
            if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
                fprintf(stderr, "selfinit_app: MPI_Init_thread failed\n");
                return 1;
            }
            MPI_Comm_size(MPI_COMM_WORLD, &world);
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (sum != world * (world - 1) / 2 || provided < MPI_THREAD_FUNNELED) {
                fprintf(stderr, "selfinit_app: allreduce %d (want %d), provided %d\n", sum,
                        world * (world - 1) / 2, provided);
                return 1;
            }
            printf("rank %d: late MPI_Init ok, provided %d, allreduce %d\n", rank, provided,
                   sum);
        }
    }
    if ((late || single) && MPI_Finalize() != MPI_SUCCESS)
        return 1;
    printf("rank %d: done %d steps\n", rank, steps);
    return 0;
}
