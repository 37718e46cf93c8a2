/* reduce_scale.c — rank 0's cost of the window aggregate at scale, in one process: P
 * virtual ranks (8 per node) each fold a window of W step summaries (K kernel-modes each)
 * into a leaf aggregate; the aggregates merge up the same node-aware tree the runtime
 * builds (reduce/tree.c, fan-in 32), children encoded and decoded as on the wire. Rank 0's
 * inbound bytes are its children's encoded aggregates; rank 0's CPU is decode + merge of
 * those plus L1-L3 analysis of the rows: adding them to the job store as kernel-less
 * summaries ("store"), then argus_analyze ("analyze").
 *
 * Two views of rank 0's analysis:
 *   - first window (rank0_*_ms_per_step): a fresh job store takes one window of P x W
 *     rows and the analysis runs over it; every page is touched for the first time;
 *   - job (rank0_*_steady_ms_per_step): what rank 0 pays per step for the rest of a job.
 *     One job store over a job of windows, each window's rows added and the job analysed
 *     after every window, as reduce/rank0.c does; the store keeps its default retention
 *     (common/jobstore.h), so the analysis covers the horizon and the store's memory is
 *     reused once the horizon is full. The job runs until STEADY (5) windows after that;
 *     the figures are the medians over those windows (robust to a busy machine).
 * The merge is timed into a fresh aggregate and again into the reset one (warm: as every
 * later window of a job runs). Page faults are counted for each part.
 * Prints one JSON line. Usage: reduce_scale [P ...] (default 1024 4096 16384 65536). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "analysis/analysis.h"
#include "common/aggregate.h"
#include "common/jobstore.h"
#include "reduce/tree.h"

#define W 10
#define K 40
#define FANIN 32
#define PER_NODE 8

static struct argus_step_summary *sum;
static int P, *parent, *kid_start, *kids;

static uint64_t rng = 0x853c49e6748fea9bull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill_summary(int rank, int step)
{
    memset(sum, 0, offsetof(struct argus_step_summary, kmodes));
    sum->rank = (uint32_t)rank;
    sum->step = (uint64_t)step;
    sum->start_ns = 1000000000ull * (uint64_t)step;
    sum->end_ns = sum->start_ns + 900000000ull + rnd() % 1000000;
    sum->phase_wall_ns[0] = 300000000 + rnd() % 100000;
    sum->phase_wall_ns[1] = 500000000 + rnd() % 100000;
    sum->compute_ns = 700000000 + rnd() % 100000;
    sum->collective_ns = 150000000 + rnd() % 100000;
    sum->coords.pp = (uint16_t)(rank / (P / 4 ? P / 4 : 1));
    sum->coords.pp_size = 4;
    sum->n_kmodes = K;
    for (int k = 0; k < K; k++) {
        struct argus_kmode_stats *m = &sum->kmodes[k];
        memset(m, 0, sizeof *m);
        m->name_hash = 0xabc000 + (uint64_t)k * 104729;
        m->kclass = k < 32 ? 0 : 1;
        uint64_t base = 20000ull + 5000ull * (uint64_t)k;
        m->min_ns = UINT64_MAX;
        for (int i = 0; i < 8; i++) {
            uint64_t d = base + rnd() % (base / 4);
            m->count++;
            m->sum_ns += d;
            m->min_ns = d < m->min_ns ? d : m->min_ns;
            m->max_ns = d > m->max_ns ? d : m->max_ns;
            argus_qsketch_add(&m->sketch, d);
        }
    }
}

/* Reduce the subtree of r into out (post-order; memory O(depth)). */
static void reduce(int r, struct argus_aggregate *out, struct argus_aggregate *scratch)
{
    char err[128];

    argus_agg_init(out);
    for (int s = 0; s < W; s++) {
        fill_summary(r, s);
        argus_agg_add_summary(out, sum);
    }
    for (int i = kid_start[r]; i < kid_start[r + 1]; i++) {
        struct argus_aggregate sub;
        reduce(kids[i], &sub, scratch);
        size_t n = argus_agg_encoded_size(&sub);
        uint8_t *buf = malloc(n);
        argus_agg_encode(&sub, buf, n);
        argus_agg_free(&sub);
        argus_agg_decode(scratch, buf, n, err, sizeof err);
        argus_agg_merge(out, scratch);
        free(buf);
    }
}

static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Rank 0's window: room for P x W rows (rank 0 knows the job's size), its own rows, then
 * decode + merge of each child's encoding, timed.
 * Rank 0 never encodes, so it never orders the merged rows (argus_agg_sort_rows): the
 * job store takes them in any order. Returns 0, or -1 when a child did not decode. */
static int rank0_window(struct argus_aggregate *root, struct argus_aggregate *scratch,
                        uint8_t **bufs, const size_t *lens, int nkids, double *cpu,
                        long *flt)
{
    char err[128];

    argus_agg_reset(root);
    if (argus_agg_reserve(root, (size_t)P * W, (size_t)nkids + 1) != 0)
        return -1;
    for (int s = 0; s < W; s++) {
        fill_summary(0, s);
        argus_agg_add_summary(root, sum);
    }
    long f0 = minflt();
    double t0 = cpu_s();
    for (int i = 0; i < nkids; i++)
        if (argus_agg_decode(scratch, bufs[i], lens[i], err, sizeof err) != 0 ||
            argus_agg_merge(root, scratch) != 0)
            return -1;
    *cpu = cpu_s() - t0;
    *flt = minflt() - f0;
    return 0;
}

struct an_cost {
    double store, analyze; /* CPU s */
    long flt_store, flt_analyze;
    int rc;
};

/* Add the root's rows, shifted by `shift` steps, to js as kernel-less summaries. */
static void store_rows(struct argus_jobstore *js, const struct argus_aggregate *root,
                       uint64_t shift)
{
    memset(sum, 0, offsetof(struct argus_step_summary, kmodes));
    for (size_t i = 0; i < root->nrows; i++) {
        const struct argus_agg_row *row = &root->rows[i];
        sum->rank = row->rank;
        sum->step = row->step + shift;
        sum->start_ns = row->start_ns + 1000000000ull * shift;
        sum->end_ns = sum->start_ns + 1000ull * row->us[0];
        sum->phase_wall_ns[0] = 1000ull * row->us[1];
        sum->phase_wall_ns[1] = 1000ull * row->us[2];
        sum->phase_wall_ns[2] = 1000ull * row->us[3];
        sum->phase_wall_ns[3] = 1000ull * row->us[4];
        sum->host_gap_ns = 1000ull * row->us[5];
        sum->compute_ns = 1000ull * row->us[6];
        sum->collective_ns = 1000ull * row->us[7];
        argus_jobstore_add_summary(js, sum);
    }
}

/* One window at rank 0: its rows into js (shifted by `shift` steps), then the analysis of
 * everything js holds. */
static void an_window(struct argus_jobstore *js, const struct argus_aggregate *root,
                      uint64_t shift, struct an_cost *c)
{
    struct argus_analysis_opts o;
    struct argus_result res;

    long f0 = minflt();
    double t0 = cpu_s();
    store_rows(js, root, shift);
    double t1 = cpu_s();
    long f1 = minflt();
    argus_analysis_opts_default(&o);
    memset(&res, 0, sizeof res);
    c->rc = argus_analyze(js, &o, &res);
    c->store = t1 - t0;
    c->analyze = cpu_s() - t1;
    c->flt_store = f1 - f0;
    c->flt_analyze = minflt() - f1;
    argus_result_free(&res);
}

#define STEADY 5 /* windows of the job measured after its horizon filled */

struct job_cost {
    struct an_cost first;  /* the first window, fresh store */
    struct an_cost steady; /* medians over the last STEADY windows of the job */
    size_t horizon, windows, held;
};

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median5(double *v)
{
    qsort(v, STEADY, sizeof *v, cmp_d);
    return v[STEADY / 2];
}

/* The first window in a fresh store, then a job of windows in one store until STEADY
 * windows past a full horizon. */
static void an_job(const struct argus_aggregate *root, struct job_cost *jc)
{
    struct argus_jobstore *js;
    double st[STEADY], an[STEADY], fs[STEADY], fa[STEADY];

    memset(jc, 0, sizeof *jc);
    argus_jobstore_create((uint32_t)P, &js);
    an_window(js, root, 0, &jc->first);
    argus_jobstore_free(js);

    argus_jobstore_create((uint32_t)P, &js);
    jc->horizon = argus_jobstore_horizon(js);
    jc->windows = (jc->horizon + W - 1) / W + 1 + STEADY;
    for (size_t w = 0; w < jc->windows; w++) {
        struct an_cost c;
        an_window(js, root, (uint64_t)w * W, &c);
        jc->steady.rc |= c.rc;
        if (w + STEADY < jc->windows)
            continue;
        const size_t k = w + STEADY - jc->windows;
        st[k] = c.store;
        an[k] = c.analyze;
        fs[k] = (double)c.flt_store;
        fa[k] = (double)c.flt_analyze;
    }
    jc->steady.store = median5(st);
    jc->steady.analyze = median5(an);
    jc->steady.flt_store = (long)median5(fs);
    jc->steady.flt_analyze = (long)median5(fa);
    jc->held = argus_jobstore_count(js);
    argus_jobstore_free(js);
}

int main(int argc, char **argv)
{
    static const int defaults[] = {1024, 4096, 16384, 65536};
    int nP = argc > 1 ? argc - 1 : 4;

    sum = malloc(sizeof *sum);
    printf("{\"bench\":\"reduce_scale\",\"window_steps\":%d,\"kmodes_per_rank_step\":%d,"
           "\"fanin\":%d,\"ranks_per_node\":%d,\"runs\":[", W, K, FANIN, PER_NODE);
    for (int pi = 0; pi < nP; pi++) {
        P = argc > 1 ? atoi(argv[pi + 1]) : defaults[pi];
        int *node = malloc((size_t)P * sizeof *node);
        parent = malloc((size_t)P * sizeof *parent);
        kid_start = calloc((size_t)P + 2, sizeof *kid_start);
        kids = malloc((size_t)P * sizeof *kids);
        for (int r = 0; r < P; r++)
            node[r] = r / PER_NODE;
        argus_tree_build_topo(P, node, FANIN, parent);
        for (int r = 1; r < P; r++)
            kid_start[parent[r] + 2]++;
        for (int r = 0; r <= P; r++)
            kid_start[r + 1] += kid_start[r];
        for (int r = 1; r < P; r++)
            kids[kid_start[parent[r] + 1]++] = r;

        struct argus_aggregate root, scratch;
        argus_agg_init(&root);
        argus_agg_init(&scratch);
        int nkids = kid_start[1] - kid_start[0];
        uint8_t **bufs = calloc((size_t)nkids + 1, sizeof *bufs);
        size_t *lens = calloc((size_t)nkids + 1, sizeof *lens), bytes0 = 0;
        for (int i = 0; i < nkids; i++) {
            struct argus_aggregate sub;
            reduce(kids[kid_start[0] + i], &sub, &scratch);
            lens[i] = argus_agg_encoded_size(&sub);
            bufs[i] = malloc(lens[i]);
            argus_agg_encode(&sub, bufs[i], lens[i]);
            argus_agg_free(&sub);
            bytes0 += lens[i];
        }
        /* the first window pays for fresh memory; later windows reuse it (warm) */
        double cpu_merge, cpu_warm;
        long flt_merge, flt_warm;
        argus_agg_free(&scratch);
        argus_agg_init(&scratch);
        if (rank0_window(&root, &scratch, bufs, lens, nkids, &cpu_merge, &flt_merge) ||
            rank0_window(&root, &scratch, bufs, lens, nkids, &cpu_warm, &flt_warm)) {
            fprintf(stderr, "reduce_scale: a child's aggregate did not decode\n");
            return 1;
        }
        for (int i = 0; i < nkids; i++)
            free(bufs[i]);
        free(bufs);
        free(lens);

        /* analysis at rank 0: the first window, then a job */
        struct job_cost jc;
        an_job(&root, &jc);
        const struct an_cost *an = &jc.first, *st = &jc.steady;
        const double cpu_first = cpu_merge + an->store + an->analyze;
        const double cpu_steady = cpu_warm + st->store + st->analyze;

        size_t kpart = argus_agg_encoded_size(&root) - root.nrows * ARGUS_AGG_ROW_BYTES;
        double bps = (double)bytes0 / W;
        printf("%s{\"P\":%d,\"depth\":%d,\"rank0_children\":%d,\"rank0_in_bytes_per_step\":%.0f,"
               "\"bytes_per_rank_step\":%.1f,\"goal_bytes_per_step\":%d,"
               "\"root_kernel_part_bytes\":%zu,\"kmode_entries\":%zu,"
               "\"rank0_merge_ms_per_step\":%.3f,\"rank0_store_ms_per_step\":%.3f,"
               "\"rank0_analyze_ms_per_step\":%.3f,\"rank0_cpu_ms_per_step\":%.3f,"
               "\"job_horizon_steps\":%zu,\"job_windows\":%zu,\"job_held_summaries\":%zu,"
               "\"rank0_merge_warm_ms_per_step\":%.3f,\"rank0_store_steady_ms_per_step\":%.3f,"
               "\"rank0_analyze_steady_ms_per_step\":%.3f,"
               "\"rank0_cpu_steady_ms_per_step\":%.3f,\"goal_cpu_ms_per_step\":5,"
               "\"rank0_page_faults_per_step\":{\"merge\":%.1f,\"merge_warm\":%.1f,"
               "\"store\":%.1f,\"analyze\":%.1f,\"store_steady\":%.1f,"
               "\"analyze_steady\":%.1f},\"analysis_rc\":%d}",
               pi ? "," : "", P, argus_tree_depth_of(parent, P), nkids,
               bps, bps / P, 64 * P + 65536, kpart, root.nkm, 1e3 * cpu_merge / W,
               1e3 * an->store / W, 1e3 * an->analyze / W, 1e3 * cpu_first / W, jc.horizon,
               jc.windows, jc.held, 1e3 * cpu_warm / W, 1e3 * st->store / W,
               1e3 * st->analyze / W, 1e3 * cpu_steady / W, (double)flt_merge / W,
               (double)flt_warm / W, (double)an->flt_store / W, (double)an->flt_analyze / W,
               (double)st->flt_store / W, (double)st->flt_analyze / W, an->rc | st->rc);
        fflush(stdout);
        argus_agg_free(&root);
        argus_agg_free(&scratch);
        free(node);
        free(parent);
        free(kid_start);
        free(kids);
    }
    printf("]}\n");
    free(sum);
    return 0;
}
