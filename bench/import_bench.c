/* import_bench.c — the importer benchmark: argus_kineto_import (YAJL stream
 * parse + summarise) on one decompressed Kineto trace versus
 * `python3 -c 'import json; json.load(open(F))'` on the same file. Prints one JSON line:
 * MB/s of both, their ratio, and peak RSS of this process (the importer) and of Python.
 * usage: import_bench [--no-python] TRACE[.gz] [MIN_SECONDS]
 *        import_bench --no-python TRACE [MIN_SECONDS [MAX_MEM_BYTES]]
 * --no-python: import TRACE as it is, once (MIN_SECONDS 0 unless given), without the
 * Python side, with the given table limit (default 48 MiB); for the big synthetic trace
 * (make bench-import-big), with the spill counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "import/import.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_self(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_children(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void on_sum(void *ctx, const struct argus_step_summary *s)
{
    (void)s;
    ++*(long *)ctx;
}

/* The importer alone on TRACE as it is (no copy, no Python). */
static int bench_alone(int argc, char **argv)
{
    struct argus_kineto_info *in = malloc(sizeof *in);
    double min_s = argc > 2 ? atof(argv[2]) : 0.0, t, c;
    long sums = 0, iters = 0;
    struct rusage ru;
    char err[1024];

    if (argc < 2 || !in) {
        fprintf(stderr, "usage: import_bench --no-python TRACE [MIN_SECONDS]\n");
        return 2;
    }
    struct argus_import_sink sink = {on_sum, NULL, &sums};
    struct argus_kineto_opts o = {0, argc > 3 ? (size_t)atoll(argv[3]) : 0};
    double t0 = now(), c0 = cpu_self();
    do {
        if (argus_kineto_import(argv[1], &o, &sink, in, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        iters++;
    } while ((t = now() - t0) < min_s);
    c = cpu_self() - c0;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"bench\":\"import_kineto_alone\",\"file\":\"%s\",\"json_mb\":%.1f,"
           "\"kernels\":%llu,\"steps\":%llu,\"spilled_runs\":%llu,\"spill_mb\":%.1f,"
           "\"argus_cpu_mb_s\":%.1f,\"argus_wall_mb_s\":%.1f,\"argus_peak_rss_mb\":%.1f}\n",
           argv[1], in->bytes / 1e6, (unsigned long long)in->kernels,
           (unsigned long long)in->steps, (unsigned long long)in->spilled,
           in->spill_bytes / 1e6, (double)in->bytes * iters / c / 1e6,
           (double)in->bytes * iters / t / 1e6, ru.ru_maxrss / 1024.0);
    free(in);
    return 0;
}

int main(int argc, char **argv)
{
    char tmp[] = "/tmp/argus-bench-XXXXXX", err[1024], buf[65536], cmd[512];
    double min_s = argc > 2 ? atof(argv[2]) : 2.0;
    long sums = 0, iters = 0, bytes = 0;
    struct argus_kineto_info in;
    struct rusage ru;
    int n, fd;

    if (argc > 1 && strcmp(argv[1], "--no-python") == 0)
        return bench_alone(argc - 1, argv + 1);
    if (argc < 2) {
        fprintf(stderr, "usage: import_bench [--no-python] TRACE[.gz] [MIN_SECONDS]\n");
        return 2;
    }
    /* decompress once, so both sides read the same plain JSON from the page cache */
    gzFile gz = gzopen(argv[1], "rb");
    if (!gz || (fd = mkstemp(tmp)) < 0)
        return 1;
    while ((n = gzread(gz, buf, sizeof buf)) > 0) {
        if (write(fd, buf, (size_t)n) != n)
            return 1;
        bytes += n;
    }
    gzclose(gz);
    close(fd);
    struct argus_import_sink sink = {on_sum, NULL, &sums};
    double t0 = now(), c0 = cpu_self(), t;
    do {
        if (argus_kineto_import(tmp, NULL, &sink, &in, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            unlink(tmp);
            return 1;
        }
        iters++;
    } while ((t = now() - t0) < min_s);
    double ours = (double)bytes * iters / t / 1e6;
    double ours_cpu = (double)bytes * iters / (cpu_self() - c0) / 1e6;
    getrusage(RUSAGE_SELF, &ru);
    long rss_ours = ru.ru_maxrss;
    snprintf(cmd, sizeof cmd, "python3 -c 'import json; json.load(open(\"%s\"))'", tmp);
    int piters = 0;
    t0 = now();
    c0 = cpu_children();
    do {
        if (system(cmd) != 0)
            break;
        piters++;
    } while ((t = now() - t0) < min_s);
    double py = piters ? (double)bytes * piters / t / 1e6 : 0;
    double py_cpu = piters ? (double)bytes * piters / (cpu_children() - c0) / 1e6 : 0;
    getrusage(RUSAGE_CHILDREN, &ru);
    unlink(tmp);
    /* CPU-time rates are the per-core figures (robust on a shared machine); wall rates
     * are given too. Python's figure includes interpreter start-up (~20 ms). */
    printf("{\"bench\":\"import_kineto\",\"file\":\"%s\",\"json_mb\":%.1f,\"kernels\":%llu,"
           "\"steps\":%llu,\"argus_cpu_mb_s\":%.1f,\"python_json_cpu_mb_s\":%.1f,"
           "\"ratio_cpu\":%.2f,\"argus_wall_mb_s\":%.1f,\"python_json_wall_mb_s\":%.1f,"
           "\"ratio_wall\":%.2f,\"argus_peak_rss_mb\":%.1f,\"python_peak_rss_mb\":%.1f}\n",
           argv[1], bytes / 1e6, (unsigned long long)in.kernels,
           (unsigned long long)in.steps, ours_cpu, py_cpu, py_cpu > 0 ? ours_cpu / py_cpu : 0,
           ours, py, py > 0 ? ours / py : 0, rss_ours / 1024.0, ru.ru_maxrss / 1024.0);
    return 0;
}
