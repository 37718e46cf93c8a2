/* native_app.c — a native program for the host-stack tests (tests/stacks/t_native.sh): it
 * marks steps and phases through argus.h (found with dlsym, as a framework would; argus-run
 * preloads libargus.so) and never calls MPI (Argus initialises it). Rank STALL_RANK spends
 * STALL_MS in stall_here() — a busy loop outside any phase — at the steps listed; every
 * step is otherwise 2 x 15 ms of busy work. stall_here is static: no dynamic symbol, so
 * dladdr cannot name it and the report names it from the ELF symbol table (libdw);
 * busy_work is a dynamic symbol (-rdynamic), named by dladdr.
 * usage: native_app STEPS STALL_RANK STALL_STEPS(a,b,c) STALL_MS
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*step_fn)(uint64_t step, uint64_t t_ns);
typedef void (*push_fn)(const char *name, uint64_t t_ns);
typedef void (*pop_fn)(uint64_t t_ns);

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

volatile uint64_t native_app_sink;
void busy_work(double ms);
static void stall_here(double ms);

__attribute__((noinline)) void busy_work(double ms)
{
    const double end = now_ms() + ms;
    while (now_ms() < end)
        native_app_sink++;
}

/* The stalling function the report must name. */
__attribute__((noinline)) static void stall_here(double ms)
{
    const double end = now_ms() + ms;
    while (now_ms() < end)
        for (int i = 0; i < 1000; i++)
            native_app_sink += (uint64_t)i;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: native_app STEPS STALL_RANK STALL_STEPS STALL_MS\n");
        return 2;
    }
    const long steps = atol(argv[1]), stall_rank = atol(argv[2]);
    const double stall_ms = atof(argv[4]);
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    const long rank = r ? atol(r) : 0;
    step_fn begin = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_begin");
    step_fn end = (step_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_step_end");
    push_fn push = (push_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_phase_push");
    pop_fn pop = (pop_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "argus_phase_pop");
    if (!begin || !end || !push || !pop) {
        fprintf(stderr, "native_app: libargus.so is not loaded\n");
        return 1;
    }
    for (long it = 0; it < steps; it++) {
        int stall = 0;
        char key[32], list[256];
        snprintf(key, sizeof key, ",%ld,", it);
        snprintf(list, sizeof list, ",%s,", argv[3]);
        stall = rank == stall_rank && strstr(list, key) != NULL;
        begin((uint64_t)it, 0);
        if (stall)
            stall_here(stall_ms);
        push("forward", 0);
        busy_work(15);
        pop(0);
        push("backward", 0);
        busy_work(15);
        pop(0);
        end((uint64_t)it, 0);
    }
    printf("rank %ld: done %ld steps\n", rank, steps);
    return 0;
}
