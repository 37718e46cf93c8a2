/* preload_bench.c — what the preload costs a process that is no rank and has nothing to
 * trace (issue 16, item 15: every exec under argus-run or a SPANK job inherits the
 * preload: shells, mpirun, compilers). It runs /bin/true many times, interleaving runs
 * without a preload with runs under each preload, and prints one JSON line: the median
 * exec-to-exit time of each and its ratio to the plain runs (ratios, not absolutes, are
 * what to compare across machines):
 *   full_ms:  LD_PRELOAD=libargus.so (the heavier way: ld.so loads MPI, CUPTI, zstd, yajl);
 *   shim_ms:  LD_PRELOAD=libargus_preload.so with ARGUS_MODE=on, as a rank's child sees
 *             it (the rank's mark, taken from a shell run under the shim: the rank).
 *     preload_bench [-n RUNS] LIBARGUS.so SHIM.so [OTHER.so ...]
 * Each OTHER.so is measured like full_ms (e.g. libmpi.so, libcupti.so: what libargus.so
 * pulls in), as "others": [{"lib", "ms", "ratio"}]. Run by `make bench-preload`.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/benchline.h"

extern char **environ;

/* "NAME=" of the variables the runs set themselves. */
static int ours(const char *kv)
{
    return strncmp(kv, "LD_PRELOAD=", 11) == 0 || strncmp(kv, "ARGUS_MODE=", 11) == 0 ||
           strncmp(kv, "ARGUS_RANK_MARK=", 16) == 0;
}

/* environ without LD_PRELOAD and the Argus variables, plus LD_PRELOAD=lib when lib is
 * given and the NULL-terminated extra "NAME=value" strings (NULL-terminated; free it). */
static char **env_with(const char *lib, char *slot, size_t slotlen, char *const *extra)
{
    size_t n = 0, k = 0, x = 0;
    while (environ[n])
        n++;
    while (extra && extra[x])
        x++;
    char **e = calloc(n + x + 2, sizeof *e);
    if (!e)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!ours(environ[i]))
            e[k++] = environ[i];
    if (lib) {
        snprintf(slot, slotlen, "LD_PRELOAD=%s", lib);
        e[k++] = slot;
    }
    for (size_t i = 0; i < x; i++)
        e[k++] = extra[i];
    return e;
}

/* The mark a rank leaves for its children: a shell run under the shim with Argus on is
 * the rank (preload_shim.c); it prints ARGUS_RANK_MARK. 0, or -1. */
static int rank_mark(const char *shim, char *out, size_t len)
{
    char slot[8192], mode[] = "ARGUS_MODE=on", *extra[] = {mode, NULL};
    char *argv[] = {"/bin/sh", "-c", "printf %s \"$ARGUS_RANK_MARK\"", NULL};
    char **env = env_with(shim, slot, sizeof slot, extra);
    posix_spawn_file_actions_t fa;
    int fd[2], st = 0, rc = -1;
    pid_t pid;

    if (!env || pipe(fd) != 0) {
        free(env);
        return -1;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, env) == 0) {
        close(fd[1]);
        fd[1] = -1;
        ssize_t r = read(fd[0], out, len - 1);
        out[r > 0 ? r : 0] = '\0';
        rc = waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 && r > 0
                 ? 0 : -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fd[0]);
    if (fd[1] >= 0)
        close(fd[1]);
    free(env);
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One spawn of /bin/true under env, to its exit; ms or -1. */
static double one(char **env)
{
    char *argv[] = {"/bin/true", NULL};
    pid_t pid;
    int st;
    double t0 = now_ms();
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, env) != 0 || waitpid(pid, &st, 0) < 0 ||
        !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return now_ms() - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median ms of runs spawns under lib with the extra variables, interleaved with as many
 * plain runs (their median in *plain_med) so that both see the same machine. -1 on error. */
static double median_pair(const char *lib, char *const *extra, int runs, double *plain_med)
{
    char slot[8192];
    char **ep = env_with(NULL, slot, sizeof slot, NULL);
    char **el = env_with(lib, slot, sizeof slot, extra);
    double *a = calloc((size_t)runs, sizeof *a), *b = calloc((size_t)runs, sizeof *b);
    double med = -1;
    if (!ep || !el || !a || !b)
        goto out;
    for (int i = 0; i < runs; i++) {
        a[i] = one(ep);
        b[i] = one(el);
        if (a[i] < 0 || b[i] < 0)
            goto out;
    }
    qsort(a, (size_t)runs, sizeof *a, cmp);
    qsort(b, (size_t)runs, sizeof *b, cmp);
    *plain_med = a[runs / 2];
    med = b[runs / 2];
out:
    free(ep);
    free(el);
    free(a);
    free(b);
    return med;
}

#define USAGE "usage: preload_bench [-n RUNS>=3] LIBARGUS.so SHIM.so [OTHER.so ...]\n"

int main(int argc, char **argv)
{
    int runs = 500, c;
    while ((c = getopt(argc, argv, "n:")) != -1) {
        if (c != 'n' || (runs = atoi(optarg)) < 3) {
            fprintf(stderr, USAGE);
            return 2;
        }
    }
    if (optind + 2 > argc) {
        fprintf(stderr, USAGE);
        return 2;
    }
    const char *full = argv[optind], *shim = argv[optind + 1];
    char markv[128] = "ARGUS_RANK_MARK=", mode[] = "ARGUS_MODE=on";
    const size_t ml = strlen(markv);
    if (rank_mark(shim, markv + ml, sizeof markv - ml) != 0) {
        fprintf(stderr, "preload_bench: no rank mark from a shell under %s\n", shim);
        return 1;
    }
    char *child[] = {mode, markv, NULL};
    double plain = 0, plain2 = 0, pre = median_pair(full, NULL, runs, &plain);
    double sh = median_pair(shim, child, runs, &plain2);
    if (pre < 0 || sh < 0 || plain <= 0 || plain2 <= 0) {
        fprintf(stderr, "preload_bench: cannot run /bin/true under %s or %s\n", full, shim);
        return 1;
    }
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g)
        return 1;
    yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout);
    int rc = yajl_gen_map_open(g) != yajl_gen_status_ok;
    rc |= argus_bench_str(g, "bench", "preload") | argus_bench_str(g, "lib", full);
    rc |= argus_bench_str(g, "shim", shim) | argus_bench_int(g, "runs", runs);
    rc |= argus_bench_fix(g, "plain_ms", plain, 3) | argus_bench_fix(g, "full_ms", pre, 3);
    rc |= argus_bench_fix(g, "full_ratio", pre / plain, 3);
    rc |= argus_bench_fix(g, "shim_ms", sh, 3) | argus_bench_fix(g, "shim_ratio", sh / plain2, 3);
    rc |= argus_json_key(g, "others") | (yajl_gen_array_open(g) != yajl_gen_status_ok);
    for (int i = optind + 2; i < argc && rc == 0; i++) {
        double p0 = 0, m = median_pair(argv[i], NULL, runs, &p0);
        rc |= yajl_gen_map_open(g) != yajl_gen_status_ok;
        rc |= argus_bench_str(g, "lib", argv[i]);
        rc |= argus_bench_fix(g, "ms", m, 3) | argus_bench_fix(g, "ratio", m > 0 ? m / p0 : -1, 3);
        rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
    }
    rc |= yajl_gen_array_close(g) != yajl_gen_status_ok;
    rc |= yajl_gen_map_close(g) != yajl_gen_status_ok;
    yajl_gen_free(g);
    printf("\n");
    return rc ? 1 : 0;
}
