/* test_cupti.c — cmocka units for the CUPTI adapter (tracer/cupti_adapter.c) and the
 * collector (tracer/collect.c) on synthesized CUPTI buffers built from the installed
 * CUDA 13 headers and walked by libcupti's own cuptiActivityGetNextRecord (no GPU):
 * every kind, unknown kinds, zero and bad timestamps, incomplete records, records
 * straddling buffers and steps, the buffer pool, steps replayed one behind the host,
 * phases, dropped counts, the raw ring, steps inferred by period detection, and kernels
 * assigned to the step that launched them while the GPU runs one and two steps behind
 * the host (correlation-id markers; time-based fallback). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cupti.h>

#include "common/types.h"
#include "tracer/collect.h"
#include "tracer/cupti_adapter.h"
#include "tracer/period.h"
#include "tracer/ring.h"
#include "tracer/summarizer.h"

/* ---- synthesized buffers ----------------------------------------------------------- */

struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void put(struct buf *b, const void *rec, size_t size)
{
    assert_true(b->len + size <= b->cap);
    memcpy(b->p + b->len, rec, size);
    b->len += (size + 7) & ~(size_t)7;
}

static void kernel(struct buf *b, const char *name, uint64_t s, uint64_t e, uint32_t stream,
                   uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.start = s;
    k.end = e;
    k.deviceId = 1;
    k.streamId = stream;
    k.correlationId = corr;
    k.gridX = 128;
    put(b, &k, sizeof k);
}

static void memcpy_rec(struct buf *b, unsigned kind, uint64_t s, uint64_t e, uint64_t bytes)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)kind;
    m.start = s;
    m.end = e;
    m.bytes = bytes;
    m.streamId = 3;
    m.correlationId = 77;
    put(b, &m, sizeof m);
}

static void memset_rec(struct buf *b, uint64_t s, uint64_t e, uint64_t bytes)
{
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.start = s;
    m.end = e;
    m.bytes = bytes;
    m.streamId = 4;
    put(b, &m, sizeof m);
}

static void overhead(struct buf *b, uint64_t s, uint64_t e)
{
    CUpti_ActivityOverhead3 o;
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.start = s;
    o.end = e;
    put(b, &o, sizeof o);
}

static void graph(struct buf *b, uint64_t s, uint64_t e)
{
    CUpti_ActivityGraphTrace2 g;
    memset(&g, 0, sizeof g);
    g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    g.start = s;
    g.end = e;
    g.streamId = 9;
    g.graphId = 5;
    put(b, &g, sizeof g);
}

static void marker(struct buf *b)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    m.timestamp = 5;
    m.name = "marker";
    put(b, &m, sizeof m);
}

struct got {
    struct argus_act a[64];
    int n;
};

static void collect_cb(void *ctx, const struct argus_act *a)
{
    struct got *g = ctx;
    if (g->n < 64)
        g->a[g->n++] = *a;
}

static _Alignas(64) uint8_t mem[1 << 16];

/* ---- the adapter -------------------------------------------------------------------- */

static void test_every_kind(void **state)
{
    struct buf b = {mem, 0, sizeof mem};
    struct argus_act_stats st;
    struct got g = {.n = 0};
    (void)state;

    memset(&st, 0, sizeof st);
    kernel(&b, "gemm", 1000, 2000, 7, 11);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 2100, 2300, 4096);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 2400, 2500, 16);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, 2400, 2500, 16); /* unnamed kind */
    memset_rec(&b, 2600, 2650, 512);
    graph(&b, 3000, 9000);
    overhead(&b, 100, 350);
    overhead(&b, 400, 400);
    marker(&b);                       /* a kind Argus does not use */
    kernel(&b, "nodata", 0, 0, 7, 12); /* no timing: device buffer was short */
    kernel(&b, "backwards", 5000, 4000, 7, 13);
    kernel(&b, "half", 0, 4000, 7, 14);
    kernel(&b, NULL, 6000, 6001, 8, 15);
    assert_int_equal(argus_cupti_walk(mem, b.len, &st, collect_cb, &g), 7);
    assert_int_equal(g.n, 7);
    assert_string_equal(g.a[0].name, "gemm");
    assert_int_equal(g.a[0].kind, ARGUS_ACT_KERNEL);
    assert_int_equal(g.a[0].start_ns, 1000);
    assert_int_equal(g.a[0].end_ns, 2000);
    assert_int_equal(g.a[0].device, 1);
    assert_int_equal(g.a[0].stream, 7);
    assert_int_equal(g.a[0].corr, 11);
    assert_string_equal(g.a[1].name, "[memcpy HtoD]");
    assert_int_equal(g.a[1].kind, ARGUS_ACT_MEMCPY);
    assert_int_equal(g.a[1].bytes, 4096);
    assert_int_equal(g.a[1].corr, 77);
    assert_string_equal(g.a[2].name, "[memcpy DtoH]");
    assert_string_equal(g.a[3].name, "[memcpy]");
    assert_string_equal(g.a[4].name, "[memset]");
    assert_int_equal(g.a[4].kind, ARGUS_ACT_MEMSET);
    assert_int_equal(g.a[4].bytes, 512);
    assert_int_equal(g.a[5].kind, ARGUS_ACT_GRAPH);
    assert_int_equal(g.a[5].stream, 9);
    assert_string_equal(g.a[6].name, "[unnamed kernel]");
    assert_int_equal(st.records, 13);
    assert_int_equal(st.delivered, 7);
    assert_int_equal(st.overhead, 2);
    assert_int_equal(st.overhead_ns, 250);
    assert_int_equal(st.unknown, 1);
    assert_int_equal(st.zero_ts, 1);
    assert_int_equal(st.bad_ts, 2);
    assert_int_equal(st.invalid, 0);
}

static void test_incomplete_and_invalid(void **state)
{
    struct buf b = {mem, 0, sizeof mem};
    struct argus_act_stats st;
    struct got g = {.n = 0};
    (void)state;

    memset(&st, 0, sizeof st);
    kernel(&b, "a", 10, 20, 0, 1);
    kernel(&b, "b", 30, 40, 0, 2);
    /* valid ends inside the second record: it is never read */
    assert_int_equal(argus_cupti_walk(mem, b.len - 8, &st, collect_cb, &g), 1);
    assert_int_equal(g.n, 1);
    assert_int_equal(st.invalid, 0); /* a short tail is just the end of the buffer */
    /* an undecodable kind stops the walk and is counted */
    uint32_t bogus = 9999;
    memcpy(mem + b.len, &bogus, sizeof bogus);
    memset(mem + b.len + 4, 0, 64);
    g.n = 0;
    assert_int_equal(argus_cupti_walk(mem, b.len + 64, &st, collect_cb, &g), 2);
    assert_int_equal(st.invalid, 1);
    /* empty and NULL buffers */
    assert_int_equal(argus_cupti_walk(mem, 0, &st, collect_cb, &g), 0);
    assert_int_equal(argus_cupti_walk(NULL, 100, &st, collect_cb, &g), 0);
}

/* ---- the collector ------------------------------------------------------------------ */

#define B0 1700000000000000000ull

static struct argus_summarizer *g_sm;
static struct argus_step_summary sums[64];
static int n_sums;
static uint64_t fake_dropped;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    if (n_sums < 64)
        memcpy(&sums[n_sums++], s, sizeof *s);
}

static struct argus_summarizer *acquire(void) { return g_sm; }
static void release(void) {}
static uint64_t dropped(void)
{
    uint64_t d = fake_dropped;
    fake_dropped = 0;
    return d;
}
static int flushes;
static int flush(int forced)
{
    (void)forced;
    flushes++;
    return 0;
}

static struct argus_collect *make(size_t nbufs, struct argus_ring *ring,
                                  struct argus_period *per)
{
    struct argus_summarizer_opts so = {.rank = 2, .max_events = 65536, .max_names = 1024,
                                       .on_summary = on_summary};
    struct argus_collect_opts o = {.buf_size = 1 << 16, .n_bufs = nbufs, .max_stage = 100000,
                                   .walk = argus_cupti_walk, .flush = flush,
                                   .dropped = dropped, .acquire = acquire, .release = release,
                                   .ring = ring, .period = per};
    struct argus_collect *c = NULL;
    assert_int_equal(argus_summarizer_create(&so, &g_sm), 0);
    assert_int_equal(argus_collect_create(&o, &c), 0);
    n_sums = 0;
    flushes = 0;
    return c;
}

static void done(struct argus_collect *c)
{
    argus_collect_free(c);
    argus_summarizer_free(g_sm);
    g_sm = NULL;
}

static const struct argus_kmode_stats *find(const struct argus_step_summary *s,
                                            const char *name)
{
    uint64_t h = argus_name_hash(name);
    for (uint32_t i = 0; i < s->n_kmodes; i++)
        if (s->kmodes[i].name_hash == h)
            return &s->kmodes[i];
    return NULL;
}

static void test_straddling_buffers_and_steps(void **state)
{
    struct argus_ring *ring = NULL;
    struct argus_collect *c;
    uint8_t *ba, *bb;
    size_t sa, sb;
    (void)state;

    assert_int_equal(argus_ring_create(1000, 3, &ring), 0);
    c = make(4, ring, NULL);
    /* Host: step 1 = [B0, B0+10us), forward phase inside; step 2 = [B0+10us, B0+20us). */
    argus_collect_mark(c, ARGUS_MARK_STEP_BEGIN, 1, B0, 0);
    argus_collect_mark(c, ARGUS_MARK_PHASE_PUSH, 0, B0 + 100, ARGUS_PH_FORWARD);
    assert_int_equal(argus_collect_buf_get(c, &ba, &sa), 0);
    assert_int_equal(argus_collect_buf_get(c, &bb, &sb), 0);
    assert_int_equal(sa, 1 << 16);
    struct buf A = {ba, 0, sa}, Bf = {bb, 0, sb};
    /* Step 1's kernels arrive in two buffers; the second completes first (per-thread
     * buffers). The last one starts in step 1 and ends after the host's step end. */
    kernel(&A, "gemm", B0 + 1000, B0 + 3000, 7, 1);
    overhead(&A, B0 + 500, B0 + 750); /* CUPTI's own time: into step 1's summary */
    kernel(&A, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", B0 + 3000, B0 + 6000, 8, 2);
    kernel(&Bf, "gemm", B0 + 6000, B0 + 8000, 7, 3);
    memcpy_rec(&Bf, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, B0 + 8000, B0 + 8500, 64);
    kernel(&Bf, "ncclDevKernel_SendRecv", B0 + 9000, B0 + 12000, 9, 4); /* straddles */
    kernel(&Bf, "late", B0 + 10500, B0 + 11000, 7, 5);                    /* step 2 */
    argus_collect_mark(c, ARGUS_MARK_PHASE_POP, 0, B0 + 8800, 0);
    argus_collect_mark(c, ARGUS_MARK_STEP_END, 1, B0 + 10000, 0);
    argus_collect_buf_done(c, bb, Bf.len);
    argus_collect_pump(c, 0);
    assert_int_equal(flushes, 1);
    assert_int_equal(n_sums, 0); /* one step behind: step 1 waits for a later end */
    argus_collect_buf_done(c, ba, A.len);
    argus_collect_mark(c, ARGUS_MARK_STEP_BEGIN, 2, B0 + 10000, 0);
    fake_dropped = 3;
    argus_collect_mark(c, ARGUS_MARK_STEP_END, 2, B0 + 20000, 0);
    argus_collect_pump(c, 0);
    assert_int_equal(n_sums, 1);
    const struct argus_step_summary *s = &sums[0];
    assert_int_equal(s->step, 1);
    assert_int_equal(s->rank, 2);
    assert_int_equal(s->start_ns, B0);
    assert_int_equal(s->end_ns, B0 + 10000);
    assert_int_equal(s->kernel_count, 5);
    assert_int_equal(s->compute_ns, 4000);
    assert_int_equal(s->collective_ns, 3000);
    assert_int_equal(s->p2p_ns, 3000);
    assert_int_equal(s->memcpy_ns, 500);
    assert_int_equal(s->dropped, 3);
    assert_int_equal(s->overhead_ns, 250);
    assert_true(s->flags & ARGUS_SF_PARTIAL);
    assert_false(s->flags & ARGUS_SF_STEP_INFERRED);
    assert_int_equal(s->phase_compute_ns[ARGUS_PH_FORWARD], 4000);
    assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 8700);
    const struct argus_kmode_stats *k = find(s, "gemm");
    assert_non_null(k);
    assert_int_equal(k->count, 2);
    assert_int_equal(find(s, "ncclDevKernel_SendRecv")->kclass, ARGUS_KC_P2P);
    assert_int_equal(find(s, "[memcpy DtoH]")->kclass, ARGUS_KC_MEMCPY);
    assert_null(find(s, "late"));
    /* Stop: a forced flush and the last step. */
    argus_collect_stop(c);
    assert_int_equal(n_sums, 2);
    assert_int_equal(sums[1].step, 2);
    assert_int_equal(sums[1].kernel_count, 1);
    assert_int_equal(sums[1].dropped, 0);
    assert_int_equal(sums[1].overhead_ns, 0);
    assert_int_equal(argus_ring_count(ring), 6);
    struct argus_collect_stats cs;
    argus_collect_get_stats(c, &cs);
    assert_int_equal(cs.steps, 2);
    assert_int_equal(cs.act.delivered, 6);
    assert_int_equal(cs.act.dropped, 3);
    assert_int_equal(cs.outside, 0);
    done(c);
    argus_ring_free(ring);
}

static void test_pool_and_outside(void **state)
{
    struct argus_collect *c = make(2, NULL, NULL);
    uint8_t *b1, *b2, *b3;
    size_t s1, s2, s3;
    (void)state;

    assert_int_equal(argus_collect_buf_get(c, &b1, &s1), 0);
    assert_int_equal(argus_collect_buf_get(c, &b2, &s2), 0);
    assert_int_equal(argus_collect_buf_get(c, &b3, &s3), -ENOBUFS);
    assert_null(b3);
    assert_int_equal(s3, 0);
    argus_collect_buf_done(c, mem, 100); /* not ours: ignored */
    struct buf A = {b1, 0, s1};
    kernel(&A, "before", B0 - 500, B0 - 100, 0, 1); /* before any step */
    kernel(&A, "in", B0 + 10, B0 + 20, 0, 2);
    argus_collect_buf_done(c, b1, A.len);
    argus_collect_buf_done(c, b2, 0);
    argus_collect_mark(c, ARGUS_MARK_STEP_BEGIN, 1, B0, 0);
    argus_collect_mark(c, ARGUS_MARK_STEP_END, 1, B0 + 1000, 0);
    argus_collect_mark(c, ARGUS_MARK_STEP_END, 1, B0 + 2000, 0); /* unmatched: ignored */
    argus_collect_stop(c);
    assert_int_equal(n_sums, 1);
    assert_int_equal(sums[0].kernel_count, 1);
    struct argus_collect_stats cs;
    argus_collect_get_stats(c, &cs);
    assert_int_equal(cs.buf_requests, 3);
    assert_int_equal(cs.buf_empty, 1);
    assert_int_equal(cs.outside, 1);
    /* buffers came back: two can be lent again */
    assert_int_equal(argus_collect_buf_get(c, &b1, &s1), 0);
    assert_int_equal(argus_collect_buf_get(c, &b2, &s2), 0);
    done(c);
}

static void test_inferred_steps(void **state)
{
    static const char *names[37];
    static char text[37][32];
    struct argus_period *per = NULL;
    struct argus_collect *c;
    uint64_t t = B0;
    (void)state;

    for (int i = 0; i < 37; i++) {
        snprintf(text[i], sizeof text[i], i == 30 ? "ncclDevKernel_AllReduce_%d" : "k%d",
                 i % 20);
        names[i] = text[i];
    }
    assert_int_equal(argus_period_create(1024, &per), 0);
    c = make(8, NULL, per);
    for (int round = 0; round < 40; round++) {
        uint8_t *b;
        size_t sz;
        assert_int_equal(argus_collect_buf_get(c, &b, &sz), 0);
        struct buf A = {b, 0, sz};
        for (int i = 0; i < 37 * 3; i++, t += 1000)
            kernel(&A, names[i % 37], t, t + 800, 0, (uint32_t)i);
        argus_collect_buf_done(c, b, A.len);
        argus_collect_pump(c, 0);
    }
    argus_collect_stop(c);
    assert_int_equal(argus_period_get(per), 37);
    assert_true(n_sums > 60);
    for (int i = 0; i + 1 < n_sums; i++) { /* the last one ends where the data ends */
        assert_true(sums[i].flags & ARGUS_SF_STEP_INFERRED);
        assert_int_equal(sums[i].kernel_count, 37);
        assert_non_null(find(&sums[i], "ncclDevKernel_AllReduce_10"));
    }
    done(c);
    argus_period_free(per);
}

/* ---- steps by launch ----------------------------------------------------------------- */

#define LT 10000ull /* host step length */

/* Six host steps of LT each; step k launches k "gemm" and one all-reduce (correlation ids
 * between its begin and end markers, from corr0 on: they wrap past 2^32 when corr0 is
 * near it), which the GPU runs `lag` steps later. At each host step end the buffer of the
 * kernels that finished by then completes. Every kernel must land in the step that
 * launched it, and no step may be replayed before its kernels have arrived. */
static void launch_behind(int lag, uint32_t corr0)
{
    struct argus_collect *c = make(16, NULL, NULL);
    const int K = 6;
    (void)0;

    for (int k = 1; k <= K + lag; k++) {
        uint64_t b = B0 + (uint64_t)(k - 1) * LT;
        uint32_t cb = corr0 + 1000u * (uint32_t)k;
        if (k <= K) {
            argus_collect_mark_corr(c, ARGUS_MARK_STEP_BEGIN, (uint64_t)k, b, 0, cb);
            argus_collect_mark(c, ARGUS_MARK_PHASE_PUSH, 0, b + 1000, ARGUS_PH_FORWARD);
            argus_collect_mark(c, ARGUS_MARK_PHASE_POP, 0, b + 6000, 0);
        }
        /* The GPU now runs the kernels step k - lag launched. */
        int j = k - lag;
        if (j >= 1) {
            uint8_t *p;
            size_t sz;
            assert_int_equal(argus_collect_buf_get(c, &p, &sz), 0);
            struct buf A = {p, 0, sz};
            uint64_t t = b + 100;
            uint32_t cj = corr0 + 1000u * (uint32_t)j;
            for (int i = 0; i < j; i++, t += 500)
                kernel(&A, "gemm", t, t + 400, 7, cj + 1u + (uint32_t)i);
            kernel(&A, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", t, t + 400, 8,
                   cj + 1u + (uint32_t)j);
            argus_collect_buf_done(c, p, A.len);
        }
        if (k <= K)
            argus_collect_mark_corr(c, ARGUS_MARK_STEP_END, (uint64_t)k, b + LT, 0, cb + 999u);
        argus_collect_pump(c, 0);
        /* Step k - lag - 1 has finished and a later launch was walked: replayed; step
         * k - lag had no later launch walked yet: waits. */
        int want = k - lag - 1 < 0 ? 0 : k - lag - 1 > K ? K : k - lag - 1;
        assert_int_equal(n_sums, want);
    }
    argus_collect_stop(c);
    assert_int_equal(n_sums, K);
    uint64_t prev_end = 0;
    for (int k = 1; k <= K; k++) {
        const struct argus_step_summary *s = &sums[k - 1];
        assert_int_equal(s->step, (uint64_t)k);
        assert_int_equal(s->kernel_count, (uint64_t)k + 1);
        assert_int_equal(find(s, "gemm")->count, (uint64_t)k);
        assert_int_equal(s->compute_ns, 400ull * (uint64_t)k);
        assert_int_equal(s->collective_ns, 400);
        assert_int_equal(s->busy_ns, 400ull * ((uint64_t)k + 1));
        /* The windows tile the GPU's time and hold the step's kernels. */
        assert_true(s->start_ns >= B0 + (uint64_t)(k - 1) * LT);
        assert_true(s->start_ns >= prev_end);
        assert_true(s->end_ns >= B0 + (uint64_t)(k - 1 + lag) * LT + 100 + 500ull * (uint64_t)k);
        assert_int_equal(s->host_gap_ns, s->end_ns - s->start_ns - s->busy_ns);
        /* The host's phase moved with the window, whole. */
        assert_int_equal(s->phase_wall_ns[ARGUS_PH_FORWARD], 5000);
        prev_end = s->end_ns;
    }
    struct argus_collect_stats cs;
    argus_collect_get_stats(c, &cs);
    assert_int_equal(cs.steps_by_launch, (uint64_t)K);
    assert_int_equal(cs.steps_by_time, 0);
    assert_int_equal(cs.acts_min, 2);
    assert_int_equal(cs.acts_max, (uint64_t)K + 1);
    assert_int_equal(cs.outside, 0);
    done(c);
}

static void test_launch_one_behind(void **state)
{
    (void)state;
    launch_behind(1, 5);
}

static void test_launch_two_behind(void **state)
{
    (void)state;
    launch_behind(2, 5);
    launch_behind(2, UINT32_MAX - 2500u); /* the ids wrap inside step 2 */
}

/* The GPU keeps up (lag 0) and one step's marks carry no id: that step falls back to
 * start times, the others stay by launch; a kernel launched before any step is outside. */
static void test_launch_fallback(void **state)
{
    struct argus_collect *c = make(4, NULL, NULL);
    uint8_t *p;
    size_t sz;
    (void)state;

    assert_int_equal(argus_collect_buf_get(c, &p, &sz), 0);
    struct buf A = {p, 0, sz};
    kernel(&A, "early", B0 - 50, B0 - 10, 0, 90);           /* launched before step 1 */
    kernel(&A, "a", B0 + 100, B0 + 200, 0, 101);            /* step 1 by launch */
    kernel(&A, "b", B0 + LT + 100, B0 + LT + 200, 0, 0);    /* no id: step 2 by time */
    kernel(&A, "c", B0 + LT + 300, B0 + LT + 400, 0, 205);  /* step 2 (time) */
    kernel(&A, "d", B0 + 2 * LT + 10, B0 + 2 * LT + 20, 0, 301); /* step 3 by launch */
    argus_collect_buf_done(c, p, A.len);
    argus_collect_mark_corr(c, ARGUS_MARK_STEP_BEGIN, 1, B0, 0, 100);
    argus_collect_mark_corr(c, ARGUS_MARK_STEP_END, 1, B0 + LT, 0, 199);
    argus_collect_mark(c, ARGUS_MARK_STEP_BEGIN, 2, B0 + LT, 0);
    argus_collect_mark(c, ARGUS_MARK_STEP_END, 2, B0 + 2 * LT, 0);
    argus_collect_mark_corr(c, ARGUS_MARK_STEP_BEGIN, 3, B0 + 2 * LT, 0, 300);
    argus_collect_mark_corr(c, ARGUS_MARK_STEP_END, 3, B0 + 3 * LT, 0, 399);
    argus_collect_stop(c);
    assert_int_equal(n_sums, 3);
    assert_non_null(find(&sums[0], "a"));
    assert_int_equal(sums[0].kernel_count, 1);
    assert_int_equal(sums[0].start_ns, B0);
    assert_int_equal(sums[0].end_ns, B0 + LT);
    assert_int_equal(sums[1].kernel_count, 2);
    assert_non_null(find(&sums[1], "b"));
    assert_int_equal(sums[2].kernel_count, 1);
    assert_non_null(find(&sums[2], "d"));
    struct argus_collect_stats cs;
    argus_collect_get_stats(c, &cs);
    assert_int_equal(cs.steps_by_launch, 2);
    assert_int_equal(cs.steps_by_time, 1);
    assert_int_equal(cs.outside, 1);
    done(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_incomplete_and_invalid),
        cmocka_unit_test(test_straddling_buffers_and_steps),
        cmocka_unit_test(test_pool_and_outside),
        cmocka_unit_test(test_inferred_steps),
        cmocka_unit_test(test_launch_one_behind),
        cmocka_unit_test(test_launch_two_behind),
        cmocka_unit_test(test_launch_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
