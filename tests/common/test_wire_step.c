/* test_wire_step.c — the size budget on what ships: the realistic step
 * (tests/common/realistic_step.h, the one bench/tracer_bench reports: 50,000 launches over
 * 200 names) goes through the real step summariser with coverage 0.97, and every step's
 * wire summary record (what window.c sends to rank 0 and the spool keeps) must fit in
 * 1,024 bytes, i.e. compress the 216-byte CUPTI Kernel10 records >= 10,000x, and decode
 * to exactly the summary the analysis would have had, with the NCCL profiler plugin's
 * block (two communicators) that the tracer adds at delivery. Links the summariser. */
#include "tests/common/testgen.h"

#include <stdio.h>

#include "common/wire.h"
#include "tests/common/realistic_step.h"
#include "tracer/summarizer.h"

#define BUDGET_BYTES 1024
#define CUPTI_RECORD_BYTES 216 /* sizeof(CUpti_ActivityKernel10) */
#define STEPS 20

static struct argus_step_summary last, out;
static int have;

static void on_summary(void *ctx, const struct argus_step_summary *s)
{
    (void)ctx;
    memcpy(&last, s, offsetof(struct argus_step_summary, kmodes) +
                         s->n_kmodes * sizeof s->kmodes[0]);
    have = 1;
}

/* What tracer/api.c adds from NCCL's profiler plugin on such a step (struct argus_nccl_sum):
 * the DP and TP communicators with the most time (a third, PP, counted), each with 8 to 47
 * calls, waits and transfers of 1 to 21 ms, a busiest peer, and its last collective's
 * arrival in the step's second half. */
static void nccl_block(struct argus_step_summary *s, uint64_t st)
{
    s->nccl = (struct argus_nccl_sum){.n_comms = ARGUS_NCCL_SUM_COMMS, .comms_dropped = 1};
    for (uint32_t i = 0; i < ARGUS_NCCL_SUM_COMMS; i++) {
        struct argus_nccl_comm_sum *c = &s->nccl.comm[i];
        c->comm_hash = tg_rand(&st) | 1ull << 63;
        c->colls = 8 + (uint32_t)(tg_rand(&st) % 40);
        c->peer = (int32_t)(tg_rand(&st) % 8);
        c->peer_wait_ns = 1000000 + tg_rand(&st) % 20000000;
        c->xfer_ns = 1000000 + tg_rand(&st) % 20000000;
        c->gpu_wait_ns = tg_rand(&st) % 2000000;
        c->peer_xfer_ns = c->xfer_ns / 4;
        c->last_seq = 1000 + tg_rand(&st) % 100000;
        c->last_start_ns = s->start_ns + (s->end_ns - s->start_ns) / 2 +
                           tg_rand(&st) % ((s->end_ns - s->start_ns) / 2);
    }
}

static void test_realistic_step_fits(void **state)
{
    static char names[RS_NAMES][128];
    static uint8_t buf[1 << 17];
    struct argus_summarizer_opts so = {.rank = 0, .max_events = RS_KPS + 1024,
                                       .max_names = 4096, .on_summary = on_summary,
                                       .coverage = 0.97};
    struct argus_summarizer *sm = NULL;
    uint64_t t = 1700000000000000000ull;
    long worst = 0;
    char err[256];
    (void)state;

    rs_names(names);
    assert_int_equal(argus_summarizer_create(&so, &sm), 0);
    for (int s = 1; s <= STEPS; s++) {
        struct rs_gen g;
        rs_begin(&g, s);
        argus_summarizer_step_begin(sm, (uint64_t)s, t);
        for (int i = 0; i < RS_KPS; i++) {
            int n;
            uint64_t d = rs_next(&g, &n);
            /* argus_kclass_from_name's classes for these names (tests/tracer/test_cupti.c) */
            argus_summarizer_kernel_static(sm, names[n], t, t + d, 0, n < RS_NCCL,
                                           n < RS_NCCL ? ARGUS_KC_COLLECTIVE : ARGUS_KC_COMPUTE);
            t += d;
        }
        have = 0;
        argus_summarizer_step_end(sm, (uint64_t)s, t + 1000);
        t += 2000;
        assert_true(have);
        assert_true(last.n_kmodes > 8); /* the collectives and the top compute kernels */
        nccl_block(&last, 77u + (uint64_t)s);
        long bytes = argus_summary_encode(&last, buf, sizeof buf);
        assert_true(bytes > 0);
        if (bytes > worst)
            worst = bytes;
        if (bytes > BUDGET_BYTES)
            fail_msg("step %d: %ld bytes shipped (%u kernel modes), budget %d", s, bytes,
                     last.n_kmodes, BUDGET_BYTES);
        assert_true((double)RS_KPS * CUPTI_RECORD_BYTES / (double)bytes >= 10000.0);
        /* What rank 0 decodes is exactly what the summariser built. */
        assert_int_equal(argus_summary_decode(buf, (size_t)bytes, &out, err, sizeof err), 0);
        tg_assert_summary_equal(&last, &out);
        assert_memory_equal(&last.nccl, &out.nccl, sizeof last.nccl);
    }
    print_message("realistic step: at most %ld bytes per rank-step (%u kernel modes), "
                  "%.0fx\n", worst, last.n_kmodes,
                  (double)RS_KPS * CUPTI_RECORD_BYTES / (double)worst);
    argus_summarizer_free(sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_realistic_step_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
