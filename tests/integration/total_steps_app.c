/* total_steps_app.c — an MPI training-like program for tests/integration/t_total_steps.sh:
 * every step it marks through argus.h (found with dlsym, as a framework would: libargus.so
 * is preloaded by argus-run), reports its compute as one kernel and all-reduces. Only some
 * ranks tell Argus the planned steps (argus_set_total_steps), and only after a few steps
 * (after their first rank info went out): the plan must reach rank 0 in-band.
 * Usage: total_steps_app STEPS RANK:STEP:PLAN...  (rank RANK calls
 * argus_set_total_steps(PLAN) after step STEP) */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*step_fn)(uint64_t step, uint64_t t_ns);
typedef void (*kernel_fn)(const char *name, uint64_t start_ns, uint64_t end_ns, uint32_t device,
                          uint32_t stream, int cls);
typedef uint64_t (*now_fn)(void);
typedef int (*plan_fn)(uint64_t steps);

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (long)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: total_steps_app STEPS RANK:STEP:PLAN...\n");
        return 2;
    }
    step_fn begin = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_begin");
    step_fn end = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_end");
    kernel_fn kernel = (kernel_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_kernel");
    now_fn now = (now_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_now_ns");
    plan_fn plan = (plan_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_set_total_steps");
    if (!begin || !end || !kernel || !now || !plan) {
        fprintf(stderr, "total_steps_app: libargus.so is not loaded\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const int steps = atoi(argv[1]);
    for (int s = 0; s < steps; s++) {
        begin((uint64_t)s, 0);
        uint64_t t0 = now();
        sleep_ms(8);
        kernel("sm90_xmma_gemm_total_steps", t0, now(), 0, 7, 0);
        int mine = rank + s, sum = -1;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (sum != world * (world - 1) / 2 + world * s) {
            fprintf(stderr, "total_steps_app: step %d allreduce %d\n", s, sum);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        end((uint64_t)s, 0);
        for (int a = 2; a < argc; a++) {
            unsigned r = 0, at = 0;
            unsigned long long n = 0;
            if (sscanf(argv[a], "%u:%u:%llu", &r, &at, &n) == 3 && (int)r == rank &&
                (int)at == s) {
                plan((uint64_t)n);
                printf("rank %d: planned %llu after step %d\n", rank, n, s);
            }
        }
    }
    printf("rank %d: done %d steps\n", rank, steps);
    MPI_Finalize();
    return 0;
}
