/* import_bench.c — the importer benchmark: argus_kineto_import (YAJL stream
 * parse + summarise) on one decompressed Kineto trace versus
 * `python3 -c 'import json; json.load(open(F))'` on the same file. Prints one JSON line
 * through yajl_gen (docs/STYLE.md, "Benchmarks"; the path escaped by YAJL): MB/s of both,
 * their ratio, and peak RSS of this process (the importer) and of Python.
 * usage: import_bench [--no-python] TRACE[.gz] [MIN_SECONDS]
 *        import_bench --no-python TRACE [MIN_SECONDS [MAX_MEM_BYTES]]
 * --no-python: import TRACE as it is, once (MIN_SECONDS 0 unless given), without the
 * Python side, with the given table limit (default 48 MiB); for the big synthetic trace
 * (make bench-import-big), with the spill counts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <zlib.h>

#include "bench/benchline.h"
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

/* ---- the result line (docs/STYLE.md, "File formats and JSON") ---------------------- */

/* A generator for one line on stdout, its object open with "bench": name and "file":
 * path; NULL when it cannot be made. */
static yajl_gen line_open(const char *name, const char *path)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g)
        return NULL;
    if (!yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout) ||
        !yajl_gen_config(g, yajl_gen_validate_utf8, 1) ||
        yajl_gen_map_open(g) != yajl_gen_status_ok || argus_bench_str(g, "bench", name) ||
        argus_bench_str(g, "file", path)) {
        yajl_gen_free(g);
        return NULL;
    }
    return g;
}

/* Close the line's object (g may be NULL: line_open failed) and end the line; 0, or 1
 * (said on stderr) when any figure or the line could not be generated. */
static int line_close(yajl_gen g, int bad)
{
    if (g) {
        bad = bad || yajl_gen_map_close(g) != yajl_gen_status_ok;
        yajl_gen_free(g);
        fputc('\n', stdout);
    }
    bad = bad || !g;
    if (bad)
        fprintf(stderr, "import_bench: the result line could not be generated\n");
    return bad;
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
    yajl_gen g = line_open("import_kineto_alone", argv[1]);
    int bad = !g || argus_bench_fix(g, "json_mb", in->bytes / 1e6, 1) ||
              argus_bench_uint(g, "kernels", in->kernels) ||
              argus_bench_uint(g, "steps", in->steps) ||
              argus_bench_uint(g, "spilled_runs", in->spilled) ||
              argus_bench_fix(g, "spill_mb", in->spill_bytes / 1e6, 1) ||
              argus_bench_fix(g, "argus_cpu_mb_s", (double)in->bytes * iters / c / 1e6, 1) ||
              argus_bench_fix(g, "argus_wall_mb_s", (double)in->bytes * iters / t / 1e6, 1) ||
              argus_bench_fix(g, "argus_peak_rss_mb", ru.ru_maxrss / 1024.0, 1);
    bad = line_close(g, bad);
    free(in);
    return bad;
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
    yajl_gen g = line_open("import_kineto", argv[1]);
    int bad = !g || argus_bench_fix(g, "json_mb", bytes / 1e6, 1) ||
              argus_bench_uint(g, "kernels", in.kernels) ||
              argus_bench_uint(g, "steps", in.steps) ||
              argus_bench_fix(g, "argus_cpu_mb_s", ours_cpu, 1) ||
              argus_bench_fix(g, "python_json_cpu_mb_s", py_cpu, 1) ||
              argus_bench_fix(g, "ratio_cpu", py_cpu > 0 ? ours_cpu / py_cpu : 0, 2) ||
              argus_bench_fix(g, "argus_wall_mb_s", ours, 1) ||
              argus_bench_fix(g, "python_json_wall_mb_s", py, 1) ||
              argus_bench_fix(g, "ratio_wall", py > 0 ? ours / py : 0, 2) ||
              argus_bench_fix(g, "argus_peak_rss_mb", rss_ours / 1024.0, 1) ||
              argus_bench_fix(g, "python_peak_rss_mb", ru.ru_maxrss / 1024.0, 1);
    return line_close(g, bad);
}
