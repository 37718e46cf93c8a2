/* tracer_bench.c — the tracer's cost and size figures, printed as one JSON line:
 *   ns_per_record        synthetic CUpti_ActivityKernel10 records (built from the installed
 *                        headers) through the CUPTI adapter (cuptiActivityGetNextRecord
 *                        walk) and the step summariser, step build included, one core
 *                        (thread CPU time; names handed over as stable pointers and
 *                        kernels classed by name in the summariser, as the collector
 *                        does: argus_summarizer_kernel_named);
 *   ns_step_end_per_record the step-end build's share of ns_per_record;
 *   ns_walk_only         the floor: the same adapter walk (argus_cupti_walk: libcupti's
 *                        cuptiActivityGetNextRecord, the record's kind, name, times,
 *                        device, stream and correlation id read and checked, one
 *                        callback per activity) over the same records, freshly rebuilt
 *                        so that they are as cold as for ns_per_record, with a callback
 *                        that does nothing;
 *   x_walk_only          ns_per_record / ns_walk_only (goal <= 2), the median of the
 *                        per-step ratios: each timed step is measured both ways, side by
 *                        side (the floor first on odd steps, the full path first on even
 *                        ones), so that load from other programs falls on both;
 *                        x_walk_only_min / _max their spread;
 *                        the ns figures are the medians over the same steps;
 *   instructions_per_record  user-mode instructions of the ns_per_record part per record
 *                        (perf_event_open, PERF_COUNT_HW_INSTRUCTIONS on this thread), and
 *                        instructions_walk_only the walk's; null when the machine has no
 *                        such counter, and instructions_unavailable then says why (then
 *                        valgrind --tool=callgrind --collect-atstart=no gives the same
 *                        figure, see below);
 *   ns_collect_launch_per_record / ns_collect_time_per_record  the whole collector
 *                        (tracer/collect.c: buffer done, step marks, pump: walk, staging,
 *                        replay into the summariser) with kernels assigned by launch
 *                        (correlation ids at the marks) and by GPU start time, the GPU one
 *                        step behind; launch_added_ns_per_record their difference;
 *   bytes_per_rank_step  what ships per rank and step: the wire summary record
 *                        (common/wire.h, version wire_version) of the realistic step
 *                        (tests/common/realistic_step.h: 50,000 launches over 200 names,
 *                        8 of them NCCL), as the summariser builds it with coverage 0.97;
 *   compression_ratio    raw Kernel10 bytes / bytes_per_rank_step;
 *   kmodes               kernel modes in that summary;
 *   budget_record_bytes  the same step as bench/budget.c's record (never shipped);
 *   rss_kb_*             resident memory after 1,000 and after all small steps of the
 *                        memory run (flat = ring + tables only).
 * Not a test; the line goes through yajl_gen (docs/STYLE.md, "Benchmarks").
 * Usage: tracer_bench [steps [mem_steps]] (defaults 20 and 100000).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "bench/benchline.h"
#include "bench/budget.h"
#include "common/jsongen.h"
#include "common/wire.h"
#include "tests/common/realistic_step.h"
#include "tracer/collect.h"
#include "tracer/cupti_adapter.h"
#include "tracer/ring.h"
#include "tracer/summarizer.h"

/* Under valgrind --tool=callgrind --collect-atstart=no, only the timed part (steps 2..,
 * summariser + adapter walk, step end included) is counted: Ir / ((steps - 1) x KPS) is
 * the load-independent instructions per record. A no-op outside valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT
#endif

#define KPS RS_KPS
#define NAMES RS_NAMES

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* This thread's user-mode instruction counter: an fd, or -1 with why[] filled. */
static int instr_open(char *why, size_t cap)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0)
        snprintf(why, cap, "perf_event_open(PERF_COUNT_HW_INSTRUCTIONS): %s%s", strerror(errno),
                 errno == ENOENT || errno == EOPNOTSUPP ? " (no hardware counter here, e.g. "
                 "a virtual machine without a PMU)" : errno == EACCES || errno == EPERM
                 ? " (perf_event_paranoid or a container policy)" : "");
    return (int)fd;
}

static uint64_t instr_read(int fd)
{
    uint64_t v = 0;
    if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        return 0;
    return v;
}

static long rss_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4;
}

static struct argus_summarizer *sm;
static struct argus_step_summary last;
static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    memcpy(&last, s, offsetof(struct argus_step_summary, kmodes) +
                         s->n_kmodes * sizeof s->kmodes[0]);
}

/* A kernel record as the collector files it (collect.c, replay): classed by its name in
 * the summariser (CUPTI hands the same name pointer for every record of one kernel
 * function, and its text never changes). */
static void feed(void *ctx, const struct argus_act *a)
{
    (void)ctx;
    argus_summarizer_kernel_named(sm, a->name, a->start_ns, a->end_ns, a->device, a->stream);
}

static void feed_none(void *ctx, const struct argus_act *a)
{
    (void)ctx, (void)a;
}

static char names[NAMES][128];

/* Step `step` of the realistic step (KPS Kernel10 records) starting at t; returns the
 * buffer length. */
static size_t build_step(uint8_t *buf, uint64_t *t, int step)
{
    CUpti_ActivityKernel10 k;
    struct rs_gen g;
    size_t len = 0;

    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    rs_begin(&g, step);
    for (int i = 0; i < KPS; i++) {
        int n;
        uint64_t d = rs_next(&g, &n);
        k.name = names[n];
        k.start = *t;
        k.end = *t + d;
        k.streamId = n < RS_NCCL;
        k.correlationId = (uint32_t)((uint64_t)step * (KPS + 2) + 1 + (uint64_t)i);
        memcpy(buf + len, &k, sizeof k);
        len += sizeof k;
        *t += d;
    }
    return len;
}

/* ---- the collector path (by launch vs by start time) ------------------------------- */

static struct argus_summarizer *acquire_sm(void) { return sm; }

/* steps realistic steps through tracer/collect.c, the GPU one step behind (a step's
 * buffer completes during the next host step); by_launch: the step marks carry the
 * correlation ids around the step's launches. Returns CPU ns per record of steps 3.. (the
 * first steps intern names), or -1. */
static double collect_run(int steps, int by_launch, uint64_t *t, int first_step)
{
    struct argus_collect_opts o = {
        .buf_size = ((size_t)KPS * sizeof(CUpti_ActivityKernel10) + 4095) & ~(size_t)4095,
        .n_bufs = 3, .max_stage = (size_t)KPS * 3, .walk = argus_cupti_walk,
        .acquire = acquire_sm};
    struct argus_collect *c = NULL;
    uint64_t work = 0;

    if (argus_collect_create(&o, &c))
        return -1;
    for (int i = 0; i < steps; i++) {
        int s = first_step + i;
        uint64_t b = *t;
        uint8_t *buf;
        size_t sz;
        uint32_t cb = (uint32_t)((uint64_t)s * (KPS + 2));
        if (argus_collect_buf_get(c, &buf, &sz)) {
            argus_collect_free(c);
            return -1;
        }
        size_t len = build_step(buf, t, s); /* the kernels step s launches */
        uint64_t c0 = cpu_ns();
        argus_collect_mark_corr(c, ARGUS_MARK_STEP_BEGIN, (uint64_t)s, b, 0,
                                by_launch ? cb : 0);
        argus_collect_mark_corr(c, ARGUS_MARK_STEP_END, (uint64_t)s, *t + 1000, 0,
                                by_launch ? cb + KPS + 1 : 0);
        argus_collect_pump(c, 0);             /* replays step s - 2 */
        argus_collect_buf_done(c, buf, len); /* ... while the GPU finished step s - 1 */
        uint64_t c1 = cpu_ns();
        if (i >= 2)
            work += c1 - c0;
        *t += 2000;
    }
    argus_collect_free(c);
    return (double)work / ((double)(steps - 2) * KPS);
}

/* ---- the result line (docs/STYLE.md, "File formats and JSON") ---------------------- */

struct figures {
    int steps;
    double ns_rec, ns_end, ns_walk, raw;
    double x_med, x_min, x_max; /* per-step ratios */
    double ins_rec, ins_walk; /* < 0: no counter (ins_why) */
    const char *ins_why;
    double ns_launch, ns_time;
    long wire, budget, mem_steps, rss_1k, rss_end;
    uint32_t kmodes;
};

/* The result object; 0, -EIO or -ENOMEM. */
static int put_result(yajl_gen g, const struct figures *f)
{
    ARGUS_JSON_CK(yajl_gen_map_open(g));
    ARGUS_JSON_TRY(argus_json_key(g, "bench"));
    ARGUS_JSON_TRY(argus_json_str(g, "tracer"));
    ARGUS_JSON_TRY(argus_bench_int(g, "records_per_step", KPS));
    ARGUS_JSON_TRY(argus_bench_int(g, "names", NAMES));
    ARGUS_JSON_TRY(argus_bench_int(g, "steps", f->steps));
    ARGUS_BENCH_PUT_F(g, "ns_per_record", "%.1f", f->ns_rec);
    ARGUS_BENCH_PUT_F(g, "ns_step_end_per_record", "%.1f", f->ns_end);
    ARGUS_BENCH_PUT_F(g, "ns_walk_only", "%.1f", f->ns_walk);
    ARGUS_BENCH_PUT_F(g, "x_walk_only", "%.2f", f->x_med);
    ARGUS_BENCH_PUT_F(g, "x_walk_only_min", "%.2f", f->x_min);
    ARGUS_BENCH_PUT_F(g, "x_walk_only_max", "%.2f", f->x_max);
    ARGUS_JSON_TRY(argus_json_key(g, "instructions_per_record"));
    if (f->ins_rec >= 0)
        ARGUS_JSON_TRY(argus_json_num(g, f->ins_rec, 1));
    else
        ARGUS_JSON_CK(yajl_gen_null(g));
    ARGUS_JSON_TRY(argus_json_key(g, "instructions_walk_only"));
    if (f->ins_walk >= 0)
        ARGUS_JSON_TRY(argus_json_num(g, f->ins_walk, 1));
    else
        ARGUS_JSON_CK(yajl_gen_null(g));
    if (f->ins_rec < 0) {
        ARGUS_JSON_TRY(argus_json_key(g, "instructions_unavailable"));
        ARGUS_JSON_TRY(argus_json_str(g, f->ins_why));
    }
    ARGUS_BENCH_PUT_F(g, "ns_collect_launch_per_record", "%.1f", f->ns_launch);
    ARGUS_BENCH_PUT_F(g, "ns_collect_time_per_record", "%.1f", f->ns_time);
    ARGUS_BENCH_PUT_F(g, "launch_added_ns_per_record", "%.1f", f->ns_launch - f->ns_time);
    ARGUS_JSON_TRY(argus_bench_int(g, "bytes_per_rank_step", f->wire));
    ARGUS_JSON_TRY(argus_bench_int(g, "wire_version", ARGUS_WIRE_VERSION));
    ARGUS_BENCH_PUT_F(g, "raw_bytes_per_step", "%.0f", f->raw);
    ARGUS_BENCH_PUT_F(g, "compression_ratio", "%.0f", f->wire > 0 ? f->raw / (double)f->wire : 0.0);
    ARGUS_JSON_TRY(argus_bench_int(g, "kmodes", f->kmodes));
    ARGUS_JSON_TRY(argus_bench_int(g, "budget_record_bytes", f->budget));
    ARGUS_JSON_TRY(argus_bench_int(g, "mem_steps", f->mem_steps));
    ARGUS_JSON_TRY(argus_bench_int(g, "rss_kb_after_1k", f->rss_1k));
    ARGUS_JSON_TRY(argus_bench_int(g, "rss_kb_end", f->rss_end));
    ARGUS_JSON_CK(yajl_gen_map_close(g));
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_STEPS 1000

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 20;
    long mem_steps = argc > 2 ? atol(argv[2]) : 100000;
    struct argus_summarizer_opts so = {.rank = 0, .max_events = KPS + 1024, .max_names = 4096,
                                       .on_summary = on_summary, .coverage = 0.97};
    struct argus_budget *bud = NULL;
    struct argus_act_stats st;
    static uint8_t enc[1 << 20];
    size_t cap = (size_t)KPS * sizeof(CUpti_ActivityKernel10);
    uint8_t *buf = aligned_alloc(64, cap);
    uint64_t t = 1700000000000000000ull, t1 = t;
    static double v_rec[MAX_STEPS], v_end[MAX_STEPS], v_walk[MAX_STEPS], v_x[MAX_STEPS];
    int nv = 0;
    struct argus_act_stats st_none;
    long budget = 0, wire = 0;
    uint32_t kmodes = 0;
    char ins_why[200] = "";
    int ins_fd = instr_open(ins_why, sizeof ins_why);
    uint64_t ins = 0, ins_walk = 0;

    if (steps < 2 || steps > MAX_STEPS) {
        fprintf(stderr, "tracer_bench: steps must be in [2, %d]\n", MAX_STEPS);
        return 2;
    }
    if (!buf || argus_summarizer_create(&so, &sm) || argus_budget_create(&bud))
        return 1;
    rs_names(names);
    memset(&st, 0, sizeof st);
    memset(&st_none, 0, sizeof st_none);
    for (int s = 1; s <= steps; s++) {
        uint64_t t0 = t, c3 = 0, c4 = 0;
        size_t len;
        /* The floor: the same walk over the same records with a consumer that does
         * nothing (the buffer is as cold as for the full path: rebuilt first); before the
         * full path on odd steps and after it on even ones. */
        if (s % 2) {
            size_t lw = build_step(buf, &t1, s);
            uint64_t iw = instr_read(ins_fd);
            c3 = cpu_ns();
            argus_cupti_walk(buf, lw, &st_none, feed_none, NULL);
            c4 = cpu_ns();
            ins_walk += s > 1 ? instr_read(ins_fd) - iw : 0;
        }
        len = build_step(buf, &t, s);
        if (s > 1)
            CALLGRIND_TOGGLE_COLLECT;
        uint64_t i0 = instr_read(ins_fd);
        uint64_t c0 = cpu_ns();
        argus_summarizer_step_begin(sm, (uint64_t)s, t0);
        argus_cupti_walk(buf, len, &st, feed, NULL);
        uint64_t c1 = cpu_ns();
        argus_summarizer_step_end(sm, (uint64_t)s, t + 1000);
        uint64_t c2 = cpu_ns();
        if (s > 1)
            ins += instr_read(ins_fd) - i0;
        if (s > 1)
            CALLGRIND_TOGGLE_COLLECT;
        if (s % 2 == 0) {
            size_t lw = build_step(buf, &t1, s);
            uint64_t iw = instr_read(ins_fd);
            c3 = cpu_ns();
            argus_cupti_walk(buf, lw, &st_none, feed_none, NULL);
            c4 = cpu_ns();
            ins_walk += instr_read(ins_fd) - iw;
        }
        if (s > 1) { /* the first step interns the names */
            v_rec[nv] = (double)(c2 - c0) / KPS;
            v_end[nv] = (double)(c2 - c1) / KPS;
            v_walk[nv] = (double)(c4 - c3) / KPS;
            v_x[nv] = c4 > c3 ? (double)(c2 - c0) / (double)(c4 - c3) : 0;
            nv++;
        }
        budget = argus_budget_encode(bud, &last, 0.97, 0, enc, sizeof enc);
        wire = argus_summary_encode(&last, enc, sizeof enc); /* what ships */
        kmodes = last.n_kmodes;
        t += 2000;
    }
    double ns_rec = median(v_rec, nv), ns_end = median(v_end, nv);
    double ns_walk = median(v_walk, nv), x_med = median(v_x, nv);
    double raw = (double)KPS * sizeof(CUpti_ActivityKernel10);

    /* The collector, by time and by launch, interleaved in rounds; the best of each. */
    double ns_launch = -1, ns_time = -1;
    int cstep = steps + 1;
    for (int round = 0; round < 6; round++) { /* alternating which goes first */
        double l, m;
        if (round % 2) {
            m = collect_run(12, 0, &t, cstep);
            l = collect_run(12, 1, &t, cstep + 12);
        } else {
            l = collect_run(12, 1, &t, cstep);
            m = collect_run(12, 0, &t, cstep + 12);
        }
        cstep += 24;
        if (l > 0 && (ns_launch < 0 || l < ns_launch))
            ns_launch = l;
        if (m > 0 && (ns_time < 0 || m < ns_time))
            ns_time = m;
    }

    /* Memory over many small steps through the collector path's tables and ring. */
    struct argus_ring *ring = NULL;
    argus_ring_create(196608, 3, &ring);
    long rss_1k = 0;
    struct argus_ring_ev re = {names[9], 0, 0, 0, 0, 0, 0, 0, 0};
    for (long s = 1; s <= mem_steps; s++) {
        argus_summarizer_step_begin(sm, (uint64_t)(steps + s), t);
        for (int i = 0; i < 100; i++, t += 1000) {
            argus_summarizer_kernel(sm, names[i % NAMES], t, t + 900, 0, 0, 0);
            re.step = (uint64_t)s;
            re.start_ns = t;
            re.end_ns = t + 900;
            argus_ring_add(ring, &re);
        }
        argus_summarizer_step_end(sm, (uint64_t)(steps + s), t);
        if (s == 1000)
            rss_1k = rss_kb();
    }
    const struct figures f = {.steps = steps, .ns_rec = ns_rec, .ns_end = ns_end,
                              .ns_walk = ns_walk, .raw = raw, .x_med = x_med,
                              .x_min = v_x[0], .x_max = v_x[nv - 1], /* v_x is sorted */
                              .ins_rec = ins_fd >= 0 ? (double)ins / ((double)nv * KPS) : -1,
                              .ins_walk = ins_fd >= 0 ? (double)ins_walk / ((double)nv * KPS)
                                                      : -1,
                              .ins_why = ins_why, .ns_launch = ns_launch, .ns_time = ns_time,
                              .wire = wire, .budget = budget,
                              .mem_steps = mem_steps, .rss_1k = rss_1k, .rss_end = rss_kb(),
                              .kmodes = kmodes};
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = -ENOMEM;
    if (g && yajl_gen_config(g, yajl_gen_print_callback, argus_bench_print_cb, stdout)) {
        rc = put_result(g, &f);
        putchar('\n');
    }
    if (g)
        yajl_gen_free(g);
    if (rc)
        fprintf(stderr, "tracer_bench: the result line could not be generated\n");
    if (ins_fd >= 0)
        close(ins_fd);
    argus_ring_free(ring);
    argus_budget_free(bud);
    argus_summarizer_free(sm);
    free(buf);
    return rc ? 1 : 0;
}
