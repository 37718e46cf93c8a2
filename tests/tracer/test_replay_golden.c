/* test_replay_golden.c — the summariser's output pinned byte for byte. A fixed, generated
 * set of steps (tests/common/realistic_step.h's launches, fewer per step, with phase
 * marks, memcpys, caller-buffer names, zero-length kernels, out-of-order starts, kernels
 * running past the step end, a name table and an event buffer too small, three record
 * budgets) goes through the step summariser directly and, with CUPTI headers, as
 * synthesized CUPTI buffers through the adapter's walk and the collector (by launch and
 * by start time, the GPU one step behind). Every summary is encoded as it ships
 * (argus_summary_encode) and every interned name recorded; the FNV-1a hash of those
 * bytes must equal the value recorded before the hot path was last reworked, so that a
 * change meant as a pure speed-up cannot change what goes on the wire. A change meant to
 * change the output (a wire version, a rule of the summary) updates the constants below
 * in the same commit: the failure message prints the new values. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/types.h"
#include "common/wire.h"
#include "tests/common/realistic_step.h"
#include "tracer/summarizer.h"

#ifdef HAVE_CUPTI
#include <cupti.h>

#include "tracer/collect.h"
#include "tracer/cupti_adapter.h"
#endif

/* Recorded from the summariser as of this wire version (see the file comment). */
#define GOLD_WIRE_VERSION 5
#define GOLD_DIRECT UINT64_C(0x9328e0bad0879d36)
#define GOLD_COLLECT UINT64_C(0xe8badfbee65fb43e)

#define KPS 3000 /* launches per step */
#define STEPS 70 /* > 2 x ARGUS_MODES_REFRESH: kept splits reused and refreshed */
#define MK_HTOD 1 /* CUPTI_ACTIVITY_MEMCPY_KIND_HTOD */
#define MK_DTOH 2 /* CUPTI_ACTIVITY_MEMCPY_KIND_DTOH */
#ifdef HAVE_CUPTI
_Static_assert(MK_HTOD == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD &&
               MK_DTOH == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "CUPTI's copy kinds");
#endif

static char names[RS_NAMES][128];

struct digest {
    uint64_t h;
    long summaries, bytes, names;
};

static void fnv(struct digest *d, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ b[i]) * UINT64_C(0x100000001b3);
    d->bytes += (long)n;
}

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    static uint8_t enc[1 << 16];
    struct digest *d = ctx;
    long n = argus_summary_encode(s, enc, sizeof enc);

    assert_true(n > 0);
    fnv(d, enc, (size_t)n);
    d->summaries++;
}

static void on_name(void *ctx, uint64_t hash, const char *name)
{
    struct digest *d = ctx;
    fnv(d, &hash, sizeof hash);
    fnv(d, name, strlen(name) + 1);
    d->names++;
}

/* The summarisers each stream goes through: (max_events, max_names, coverage). */
static const struct {
    size_t max_events, max_names;
    double coverage;
} cfgs[] = {{KPS + 64, 4096, 0.97}, {KPS / 2, 40, 0.0}, {KPS + 64, 4096, 0.5}};
#define N_CFGS (sizeof cfgs / sizeof cfgs[0])

static struct argus_summarizer *make(struct digest *d, size_t c)
{
    struct argus_summarizer_opts o = {.rank = 3, .max_events = cfgs[c].max_events,
                                      .max_names = cfgs[c].max_names,
                                      .on_summary = on_summary, .on_name = on_name, .ctx = d,
                                      .coverage = cfgs[c].coverage};
    struct argus_summarizer *sm = NULL;
    assert_int_equal(argus_summarizer_create(&o, &sm), 0);
    struct argus_coords co = {.tp_size = 2, .dp_size = 4, .tp = 1, .dp = 3};
    argus_summarizer_set_coords(sm, &co);
    return sm;
}

/* One launch as the summariser is handed it. */
struct launch {
    const char *name;
    uint64_t start, end;
    int kclass, stat; /* stat: a stable name (the _static entry point) */
    int copy;         /* 0: a kernel; else a memcpy of this CUPTI copy kind */
};

/* Launch i of step s (begun at t0) at *t (advanced): the realistic step's, with an idle
 * gap before every 53rd, a memcpy now and then, a name in a caller's buffer, a start
 * before the previous end, in some steps one at the step's begin (before the runs since
 * the last gap: the busy union's out-of-order case), a zero length, and in some steps a
 * kernel that runs past the step end followed, after a short gap, by one that starts
 * after it. */
static struct launch next_launch(struct rs_gen *g, int s, int i, uint64_t t0, uint64_t *t,
                                 char *buf)
{
    static uint64_t long_end_v;
    uint64_t *long_end = &long_end_v;
    int n;
    uint64_t d = rs_next(g, &n);
    if (i % 53 == 0)
        *t += d / 4 + 1000;
    struct launch l = {names[n], *t, *t + d,
                       n < RS_NCCL ? ARGUS_KC_COLLECTIVE : ARGUS_KC_COMPUTE, 1, 0};

    if (i % 997 == 5) {
        l = (struct launch){"[memcpy HtoD]", *t, *t + d / 4, ARGUS_KC_MEMCPY, 1, MK_HTOD};
    } else if (i % 1499 == 7) {
        l = (struct launch){"[memcpy DtoH]", *t, *t + d / 4, ARGUS_KC_MEMCPY, 1, MK_DTOH};
    } else if (i % 701 == 3 && s % 3 == 0) {
        snprintf(buf, 128, "%s", names[n]);
        l.name = buf;
        l.stat = 0;
    } else if (i % 1201 == 11 && s % 4 == 1) {
        l.start -= d / 2;
        l.end = l.start + d / 3;
    } else if (i % 1301 == 17 && s % 6 == 1) {
        l.start = t0 + 1000;
        l.end = l.start + d / 3;
    } else if (i == KPS - 2 && s % 5 == 2) {
        l.end = *t + 40 * d;
        *long_end = l.end;
    } else if (i == KPS - 1 && s % 5 == 2) { /* after a short gap, past the step end */
        l.start = *long_end + 1000;
        l.end = l.start + d;
    }
    if (i % 2003 == 13)
        l.end = l.start;
    *t += d;
    return l;
}

/* The step's phase marks: forward from the start, backward from 40 % of the launches,
 * an optimizer range at 85 % with a nested communication range, closed at the end. */
enum { PM_NONE, PM_PUSH, PM_POP };
static int phase_mark(int i, const char **name)
{
    switch (i) {
    case 0: *name = "forward"; return PM_PUSH;
    case KPS * 2 / 5: *name = NULL; return PM_POP;
    case KPS * 2 / 5 + 1: *name = "backward"; return PM_PUSH;
    case KPS * 17 / 20: *name = NULL; return PM_POP;
    case KPS * 17 / 20 + 1: *name = "optimizer"; return PM_PUSH;
    case KPS * 9 / 10: *name = "nccl all_reduce"; return PM_PUSH;
    case KPS * 19 / 20: *name = NULL; return PM_POP;
    default: return PM_NONE;
    }
}

static void check(const struct digest *d, uint64_t gold, const char *what)
{
    if (d->h != gold || ARGUS_WIRE_VERSION != GOLD_WIRE_VERSION)
        fprintf(stderr, "%s: hash 0x%016llx (%ld summaries, %ld bytes, %ld names), wire "
                "version %d; recorded 0x%016llx, version %d\n", what,
                (unsigned long long)d->h, d->summaries, d->bytes, d->names,
                ARGUS_WIRE_VERSION, (unsigned long long)gold, GOLD_WIRE_VERSION);
    assert_int_equal(ARGUS_WIRE_VERSION, GOLD_WIRE_VERSION);
    assert_true(d->h == gold);
}

/* Every stream straight into the summariser, phase marks as they come. */
static void test_direct(void **state)
{
    struct digest d = {.h = UINT64_C(0xcbf29ce484222325)};
    char buf[128];

    (void)state;
    for (size_t c = 0; c < N_CFGS; c++) {
        struct argus_summarizer *sm = make(&d, c);
        uint64_t t = UINT64_C(1700000000000000000) + c * 1000;
        for (int s = 1; s <= STEPS; s++) {
            struct rs_gen g;
            uint64_t t0 = t;
            rs_begin(&g, s);
            argus_summarizer_step_begin(sm, (uint64_t)s, t0);
            for (int i = 0; i < KPS; i++) {
                const char *pn;
                int pm = phase_mark(i, &pn);
                if (pm == PM_PUSH)
                    argus_summarizer_phase_push(sm, pn, t);
                else if (pm == PM_POP)
                    argus_summarizer_phase_pop(sm, t);
                struct launch l = next_launch(&g, s, i, t0, &t, buf);
                if (l.stat)
                    argus_summarizer_kernel_static(sm, l.name, l.start, l.end, 0, 0, l.kclass);
                else
                    argus_summarizer_kernel(sm, l.name, l.start, l.end, 0, 0, l.kclass);
            }
            argus_summarizer_phase_pop(sm, t);
            if (s % 7 == 0)
                argus_summarizer_add_dropped(sm, 3);
            argus_summarizer_step_end(sm, (uint64_t)s, t + 5000);
            argus_summarizer_kernel_static(sm, names[9], t + 6000, t + 7000, 0, 0, 0);
            t += 10000;
        }
        argus_summarizer_free(sm);
    }
    assert_int_equal(d.summaries, (long)(N_CFGS * STEPS));
    check(&d, GOLD_DIRECT, "direct");
}

#ifdef HAVE_CUPTI
static struct argus_summarizer *cur;
static struct argus_summarizer *acquire(void) { return cur; }

static void put(uint8_t *b, size_t *len, size_t cap, const void *rec, size_t size)
{
    assert_true(*len + size <= cap);
    memcpy(b + *len, rec, size);
    *len += (size + 7) & ~(size_t)7;
}

/* The same launches as CUPTI records; the GPU one step behind the host; by_launch: the
 * step marks carry the correlation ids around the step's launches. */
static void test_collect(void **state)
{
    struct digest d = {.h = UINT64_C(0xcbf29ce484222325)};
    static char bufs[KPS][128]; /* caller-buffer names live as long as their records */

    (void)state;
    for (int by_launch = 0; by_launch < 2; by_launch++) {
        for (size_t c = 0; c < N_CFGS; c++) {
            struct argus_collect_opts o = {
                .buf_size = ((size_t)KPS * sizeof(CUpti_ActivityKernel10) + 4095) & ~4095ul,
                .n_bufs = 3, .max_stage = (size_t)KPS * 4, .walk = argus_cupti_walk,
                .acquire = acquire};
            struct argus_collect *col = NULL;
            uint64_t t = UINT64_C(1700000000000000000) + c * 1000;
            cur = make(&d, c);
            assert_int_equal(argus_collect_create(&o, &col), 0);
            for (int s = 1; s <= STEPS; s++) {
                uint32_t cb = (uint32_t)(s * (KPS + 2));
                uint8_t *buf;
                size_t cap, len = 0;
                struct rs_gen g;
                uint64_t t0 = t;
                assert_int_equal(argus_collect_buf_get(col, &buf, &cap), 0);
                rs_begin(&g, s);
                argus_collect_mark_corr(col, ARGUS_MARK_STEP_BEGIN, (uint64_t)s, t0, 0,
                                        by_launch ? cb : 0);
                for (int i = 0; i < KPS; i++) {
                    const char *pn;
                    int pm = phase_mark(i, &pn);
                    if (pm == PM_PUSH)
                        argus_collect_mark(col, ARGUS_MARK_PHASE_PUSH, (uint64_t)s, t,
                                           (unsigned)argus_phase_from_name(pn));
                    else if (pm == PM_POP)
                        argus_collect_mark(col, ARGUS_MARK_PHASE_POP, (uint64_t)s, t, 0);
                    struct launch l = next_launch(&g, s, i, t0, &t, bufs[i]);
                    uint32_t corr = cb + 1 + (uint32_t)i;
                    if (l.copy) {
                        CUpti_ActivityMemcpy6 m;
                        memset(&m, 0, sizeof m);
                        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
                        m.copyKind = (uint8_t)l.copy;
                        m.start = l.start;
                        m.end = l.end;
                        m.bytes = 1u << 20;
                        m.streamId = 3;
                        m.correlationId = corr;
                        put(buf, &len, cap, &m, sizeof m);
                    } else {
                        CUpti_ActivityKernel10 k;
                        memset(&k, 0, sizeof k);
                        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
                        k.name = l.name;
                        k.start = l.start;
                        k.end = l.end;
                        k.streamId = l.kclass == ARGUS_KC_COLLECTIVE;
                        k.correlationId = corr;
                        put(buf, &len, cap, &k, sizeof k);
                    }
                }
                argus_collect_mark(col, ARGUS_MARK_PHASE_POP, (uint64_t)s, t, 0);
                argus_collect_mark_corr(col, ARGUS_MARK_STEP_END, (uint64_t)s, t + 5000, 0,
                                        by_launch ? cb + KPS + 1 : 0);
                argus_collect_pump(col, 0);           /* replays step s - 2 */
                argus_collect_buf_done(col, buf, len); /* the GPU finished step s - 1 */
                t += 10000;
            }
            argus_collect_pump(col, 1);
            argus_collect_free(col);
            argus_summarizer_free(cur);
            cur = NULL;
        }
    }
    assert_true(d.summaries >= (long)(2 * N_CFGS * (STEPS - 1)));
    check(&d, GOLD_COLLECT, "collect");
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct),
#ifdef HAVE_CUPTI
        cmocka_unit_test(test_collect),
#endif
    };
    rs_names(names);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
