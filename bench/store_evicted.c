/* store_evicted.c — the job store's memory for what eviction leaves behind against the
 * job's length (store/jobstore.h: the evicted-step list, bounded at
 * ARGUS_JOBSTORE_GONE_MAX entries, store/retain.c): one store of NR ranks with a horizon
 * of 16 steps (rank 0's from 16,384 ranks on) takes every rank's row of 10^3 ... 10^7
 * steps; after each decade it prints the list's bytes and entries, and the CPU per step
 * of the adds (eviction and the list's folds included). A second store with the list
 * unbounded (argus_jobstore_set_evicted_max 0, what the store did before) up to 10^6
 * steps, for the comparison. One JSON line; no file written. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#include "bench/benchline.h"
#include "common/aggregate.h"
#include "store/jobstore.h"

#define NR 4
#define DECADES 5 /* 10^3 .. 10^7 steps */

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct point {
    uint64_t steps;
    size_t bytes, entries;
    double ns_per_step;
};

/* Steps up to 10^(3 + k) for k < decades into js, a point per decade. */
static int run(struct argus_jobstore *js, int decades, struct point *pt)
{
    struct argus_agg_row rows[NR];
    uint64_t step = 0, rng = 88172645463325252ull;
    for (int k = 0; k < decades; k++) {
        uint64_t to = 1000;
        for (int i = 0; i < k; i++)
            to *= 10;
        const double t0 = cpu_s();
        const uint64_t from = step;
        for (; step < to; step++) {
            for (uint32_t r = 0; r < NR; r++) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                const uint32_t wall =
                    900000 + (uint32_t)(rng % 90000) + (step % 500 ? 0 : 2700000);
                rows[r] = (struct argus_agg_row){
                    .step = step, .rank = r, .start_ns = 1000000000ull * step,
                    .us = {wall, 300000, 500000, 20000, 150000, 5000, wall - 160000, 150000}};
            }
            if (argus_jobstore_add_rows(js, rows, NR) != 0)
                return -1;
        }
        pt[k] = (struct point){to, argus_jobstore_evicted_bytes(js),
                               argus_jobstore_evicted(js, NULL),
                               1e9 * (cpu_s() - t0) / (double)(to - from)};
    }
    return 0;
}

static int put_points(yajl_gen g, const char *key, const struct point *pt, int n)
{
    ARGUS_JSON_TRY(argus_json_key(g, key));
    ARGUS_JSON_CK(yajl_gen_array_open(g));
    for (int k = 0; k < n; k++) {
        ARGUS_JSON_CK(yajl_gen_map_open(g));
        ARGUS_JSON_TRY(argus_bench_uint(g, "steps", pt[k].steps));
        ARGUS_JSON_TRY(argus_bench_uint(g, "bytes", pt[k].bytes));
        ARGUS_JSON_TRY(argus_bench_uint(g, "entries", pt[k].entries));
        ARGUS_JSON_TRY(argus_bench_fix(g, "add_ns_per_step", pt[k].ns_per_step, 1));
        ARGUS_JSON_CK(yajl_gen_map_close(g));
    }
    ARGUS_JSON_CK(yajl_gen_array_close(g));
    return 0;
}

static int print_line(const struct point *b, const struct point *u)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = -1;
    if (!g)
        return -1;
    yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout);
    if (yajl_gen_map_open(g) != yajl_gen_status_ok ||
        argus_bench_str(g, "bench", "store_evicted") ||
        argus_bench_int(g, "ranks", NR) || argus_bench_int(g, "horizon_steps", 16) ||
        argus_bench_uint(g, "gone_max_entries", ARGUS_JOBSTORE_GONE_MAX) ||
        put_points(g, "bounded", b, DECADES) || put_points(g, "unbounded", u, DECADES - 1) ||
        argus_bench_str(g, "goal", "bytes independent of the steps") ||
        argus_json_key(g, "goal_met") ||
        yajl_gen_bool(g, b[DECADES - 1].bytes == b[2].bytes) != yajl_gen_status_ok ||
        yajl_gen_map_close(g) != yajl_gen_status_ok)
        goto out;
    printf("\n");
    rc = 0;
out:
    yajl_gen_free(g);
    return rc;
}

int main(void)
{
    struct argus_jobstore *b = NULL, *u = NULL;
    struct point pb[DECADES], pu[DECADES];
    int rc = 1;
    if (argus_jobstore_create(NR, &b) || argus_jobstore_create(NR, &u) ||
        argus_jobstore_set_retention(b, 16 * NR, 16) ||
        argus_jobstore_set_retention(u, 16 * NR, 16) || argus_jobstore_set_evicted_max(u, 0)) {
        fprintf(stderr, "store_evicted: cannot create the stores\n");
        goto out;
    }
    if (run(b, DECADES, pb) || run(u, DECADES - 1, pu)) {
        fprintf(stderr, "store_evicted: out of memory\n");
        goto out;
    }
    rc = print_line(pb, pu) ? 1 : 0;
out:
    argus_jobstore_free(b);
    argus_jobstore_free(u);
    return rc;
}
