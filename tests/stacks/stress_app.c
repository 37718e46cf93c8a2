/* stress_app.c — signal safety of the host stack sampler under load (tests/stacks/
 * t_stress.sh): the main thread allocates and frees, forks short-lived children that
 * allocate too (DataLoader-like workers) and starts short threads, while three threads
 * allocate all along; a sampler thread takes SAMPLES stacks of the main thread through
 * tracer/hoststack.c. No crash, no deadlock (an alarm ends a stuck run), nearly every
 * sample answered and naming stress_work; prints one JSON line with the handler's cost on
 * the main thread (the training thread's cost of a sample). Last, the program installs its
 * own handler of the signal: the sampler must stand down and never send it again.
 * usage: stress_app [SAMPLES]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer/hoststack.h"
#include "tracer/tracer.h"

/* The watcher is not started here (argus_hoststack_start(0)): no step loop to look at. */
void argus_tracer_activity(struct argus_tracer_activity *out)
{
    memset(out, 0, sizeof *out);
}

static atomic_int stop, own_signals;

static void on_own_signal(int sig)
{
    (void)sig;
    atomic_fetch_add(&own_signals, 1);
}
static atomic_uint_fast64_t forks, allocs;

static void churn(unsigned *seed, int n)
{
    void *keep[16] = {0};
    for (int i = 0; i < n; i++) {
        const int k = (int)(rand_r(seed) % 16);
        free(keep[k]);
        const size_t sz = 64 + rand_r(seed) % 65536;
        keep[k] = malloc(sz);
        if (keep[k])
            memset(keep[k], i, 64);
    }
    for (int k = 0; k < 16; k++)
        free(keep[k]);
    atomic_fetch_add(&allocs, (unsigned)n);
}

static void *short_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    churn(&seed, 50);
    return NULL;
}

static void *allocator(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    while (!atomic_load(&stop))
        churn(&seed, 100);
    return NULL;
}

/* The main thread's work, the frame every sample must show (exported: -rdynamic). */
void stress_work(void);
__attribute__((noinline)) void stress_work(void)
{
    unsigned seed = 7;
    for (unsigned long it = 0; !atomic_load(&stop); it++) {
        churn(&seed, 200);
        if (it % 10 == 0) {
            pid_t c = fork();
            if (c == 0) { /* a worker: allocate, then leave without atexit handlers */
                churn(&seed, 500);
                _exit(0);
            }
            if (c > 0) {
                while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
                    ;
                atomic_fetch_add(&forks, 1);
            }
        }
        if (it % 7 == 0) {
            pthread_t t;
            if (pthread_create(&t, NULL, short_thread, (void *)(uintptr_t)it) == 0)
                pthread_join(t, NULL);
        }
    }
}

struct sampler_arg {
    pid_t tid;
    int n, ok, timeouts, named;
    uint64_t cost_max;
    double cost_sum;
};

static void *sampler(void *p)
{
    struct sampler_arg *a = p;
    static struct argus_hoststack_sample s;
    const struct timespec gap = {0, 1000000};
    for (int i = 0; i < a->n; i++) {
        int rc = argus_hoststack_sample_tid(a->tid, (uint64_t)i, 0, ARGUS_HOSTSTACK_STALL, 200);
        if (rc == 0)
            a->ok++;
        else if (rc == -ETIMEDOUT)
            a->timeouts++;
        while (argus_hoststack_take(&s)) {
            if (s.lang != ARGUS_HOSTSTACK_NATIVE)
                continue;
            if (strstr(s.folded, "stress_work ("))
                a->named++;
            a->cost_sum += s.cost_ns;
            if (s.cost_ns > a->cost_max)
                a->cost_max = s.cost_ns;
        }
        nanosleep(&gap, NULL);
    }
    atomic_store(&stop, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    struct sampler_arg a = {.tid = (pid_t)syscall(SYS_gettid),
                            .n = argc > 1 ? atoi(argv[1]) : 1000};
    pthread_t th[3], st;
    struct timespec t0, t1;

    alarm(120); /* a deadlock ends the run (SIGALRM), and the test fails */
    int rc = argus_hoststack_start(0);
    if (rc != 0) {
        fprintf(stderr, "stress_app: sampler did not start: %s\n", strerror(-rc));
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, allocator, (void *)(uintptr_t)(i + 1));
    pthread_create(&st, NULL, sampler, &a);
    stress_work();
    pthread_join(st, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double mean_us = a.ok ? a.cost_sum / a.ok / 1e3 : 0;
    printf("{\"bench\":\"hoststack_sample\",\"samples\":%d,\"answered\":%d,\"timeouts\":%d,"
           "\"named\":%d,\"forks\":%llu,\"cost_us_mean\":%.1f,\"cost_us_max\":%.1f,"
           "\"wall_s\":%.2f}\n",
           a.n, a.ok, a.timeouts, a.named, (unsigned long long)atomic_load(&forks), mean_us,
           (double)a.cost_max / 1e3,
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    /* the program takes the signal over: the sampler stands down and never fires it */
    struct sigaction mine = {.sa_handler = on_own_signal};
    sigemptyset(&mine.sa_mask);
    sigaction(SIGRTMAX - 3, &mine, NULL);
    rc = argus_hoststack_sample_tid(a.tid, 0, 0, ARGUS_HOSTSTACK_STALL, 200);
    if (rc != -ENOTCONN || atomic_load(&own_signals) != 0) {
        fprintf(stderr, "stress_app: after the program took the signal: rc %d, %d signals\n",
                rc, atomic_load(&own_signals));
        return 1;
    }
    /* every sample answered but a few the scheduler kept from the main thread for 200 ms */
    if (a.ok < a.n * 95 / 100 || a.named < a.ok * 95 / 100 || mean_us > 1000.0) {
        fprintf(stderr, "stress_app: %d of %d answered, %d named stress_work, mean %.1f us\n",
                a.ok, a.n, a.named, mean_us);
        return 1;
    }
    return 0;
}
