/* test_wire_summary.c — unit tests of the compact summary record (common/wire_summary.c),
 * written as version 4: exact round trips (it is lossless: every field comes back bit for
 * bit) of tracer-like and edge-case summaries, the byte savings it is made of (shared name
 * hash, implied count), the idle interval of version 4 (its bytes, the end counted from the
 * nearer side), rejection of corrupted fields with the offset named, random re-sealed
 * mutations decoded in bounds, and version-3 records (the previous build's) and version-2
 * records still read exactly, the idle interval as 0. */
#include "tests/common/test_wire_util.h"

#include <errno.h>
#include <stdio.h>

static uint8_t buf[1 << 17], again[1 << 17], v3rec[1 << 17];
static struct argus_step_summary in, out, out2;

/* Encode s, check peek, decode, exact equality and byte-identical re-encoding. */
static long roundtrip(const struct argus_step_summary *s)
{
    char err[256] = "";
    int type = 0;

    long n = argus_summary_encode(s, buf, sizeof buf);
    assert_true(n > 0);
    assert_true((size_t)n <= argus_summary_encoded_max(s->n_kmodes));
    assert_int_equal(buf[4], ARGUS_WIRE_VERSION);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(type, ARGUS_REC_SUMMARY);
    memset(&out, 0x5a, sizeof out);
    if (argus_summary_decode(buf, (size_t)n, &out, err, sizeof err) != 0)
        fail_msg("decode: %s", err);
    tg_assert_summary_equal(s, &out);
    assert_int_equal(argus_summary_encode(&out, again, sizeof again), n);
    assert_memory_equal(buf, again, (size_t)n);
    return n;
}

/* A summary shaped like the tracer's: wall-clock times, class totals, kernels with one to
 * three modes sharing their hash (sorted by hash), sketches of real durations, a folded
 * "[other]" record whose sketch collapsed, and the clock triple. */
static void tracer_like(uint64_t *st, struct argus_step_summary *s)
{
    memset(s, 0, sizeof *s);
    s->step = 1000 + tg_rand(st) % 100000;
    s->rank = (uint32_t)(tg_rand(st) % 4096);
    s->flags = (uint32_t)(tg_rand(st) % 4);
    s->start_ns = 1700000000000000000ull + tg_rand(st) % 1000000000000ull;
    s->end_ns = s->start_ns + 100000000 + tg_rand(st) % 10000000000ull;
    s->clock_offset_ns = (int64_t)(tg_rand(st) % 2000001) - 1000000;
    s->coords = (struct argus_coords){8, 4, 16, 1, (uint16_t)(s->rank % 8),
                                      (uint16_t)(s->rank / 128 % 4),
                                      (uint16_t)(s->rank / 8 % 16), 0};
    const uint64_t wall = s->end_ns - s->start_ns;
    for (int p = 0; p < ARGUS_PH_COUNT; p++) {
        s->phase_wall_ns[p] = tg_rand(st) % 2 ? tg_rand(st) % wall : 0;
        s->phase_compute_ns[p] = tg_rand(st) % 2 ? tg_rand(st) % wall : 0;
    }
    s->busy_ns = wall - wall / (2 + tg_rand(st) % 20);
    s->host_gap_ns = wall - s->busy_ns;
    s->compute_ns = s->busy_ns / 2;
    s->collective_ns = s->busy_ns / 3;
    s->p2p_ns = tg_rand(st) % 1000000;
    s->memcpy_ns = tg_rand(st) % 1000000;
    s->kernel_count = 10000 + tg_rand(st) % 100000;
    s->dropped = tg_rand(st) % 3 ? 0 : tg_rand(st) % 100;
    s->overhead_ns = tg_rand(st) % 5000000;
    s->clock_real_ns = s->end_ns + tg_rand(st) % 1000000;
    s->clock_gpu_ns = s->clock_real_ns - 5000 + tg_rand(st) % 10000;
    s->clock_mono_ns = 86400000000000ull + tg_rand(st) % 1000000000000ull;
    s->idle_long_ns = s->host_gap_ns / (1 + tg_rand(st) % 4);
    s->idle_long_end_ns = s->idle_long_ns + tg_rand(st) % (wall - s->idle_long_ns + 1);
    uint64_t h = 0;
    uint32_t n = 0;
    while (n < 60) {
        h += 1 + tg_rand(st) % (UINT64_MAX / 64);
        int modes = 1 + (int)(tg_rand(st) % 3);
        for (int m = 0; m < modes && n < 60; m++, n++) {
            struct argus_kmode_stats *k = &s->kmodes[n];
            k->name_hash = h;
            k->mode = (uint8_t)m;
            k->kclass = (uint8_t)(tg_rand(st) % ARGUS_KC_COUNT);
            k->phase = (uint8_t)(tg_rand(st) % ARGUS_PH_COUNT);
            double mean = 2000.0 * (1 + tg_rand(st) % 400) * (1 + m);
            k->count = 1 + (uint32_t)(tg_rand(st) % 5000);
            k->min_ns = UINT64_MAX;
            for (uint32_t c = 0; c < k->count; c++) {
                uint64_t d = (uint64_t)(mean * (0.97 + 0.06 * tg_unif(st)));
                argus_qsketch_add(&k->sketch, d);
                k->sum_ns += d;
                k->min_ns = d < k->min_ns ? d : k->min_ns;
                k->max_ns = d > k->max_ns ? d : k->max_ns;
            }
            if (k->kclass == ARGUS_KC_COLLECTIVE) /* every mode: the name's last end */
                k->last_end_ns = s->end_ns - tg_rand(st) % 5000000;
        }
    }
    /* The fold: many unlike kernels in one record. */
    struct argus_kmode_stats *f = &s->kmodes[n++];
    f->name_hash = argus_name_hash(ARGUS_OTHER_KERNEL);
    f->min_ns = 1000;
    for (uint64_t d = 1000; d < 50000000; d = d * 11 / 10, f->count++) {
        argus_qsketch_add_n(&f->sketch, d, 3);
        f->count += 2;
        f->sum_ns += 3 * d;
        f->max_ns = d;
    }
    assert_true(f->sketch.flags & ARGUS_QS_COLLAPSED);
    s->n_kmodes = n;
}

static void test_v3_exact_tracer_like(void **state)
{
    uint64_t st = 0xfeed;
    (void)state;

    for (int it = 0; it < 50; it++) {
        tracer_like(&st, &in);
        roundtrip(&in);
    }
}

/* Values the differences and predictors must carry exactly whatever they are. */
static void test_v3_exact_edges(void **state)
{
    uint64_t st = 77;
    (void)state;

    tracer_like(&st, &in);
    struct argus_kmode_stats *k = in.kmodes;
    const uint64_t big[] = {0, 1, 127, 128, INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX - 1,
                            UINT64_MAX};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        for (size_t j = 0; j < sizeof big / sizeof big[0]; j++) {
            in.start_ns = big[i];
            in.end_ns = big[j];             /* end before start too */
            in.busy_ns = big[(i + j) % 8];  /* host gap unrelated to wall - busy */
            in.host_gap_ns = big[(i + 3) % 8];
            in.clock_real_ns = big[j];      /* 0 with a non-zero gpu clock, and back */
            in.clock_gpu_ns = big[i];
            in.clock_offset_ns = (int64_t)big[(i + j + 1) % 8];
            in.idle_long_ns = big[(i + 5) % 8];   /* longer than the wall, ends before */
            in.idle_long_end_ns = big[(j + 6) % 8]; /* it starts, past the end, ... */
            k[0].min_ns = big[i];           /* min > max, sum < count x min, ... */
            k[0].max_ns = big[j];
            k[0].sum_ns = big[(i * 3 + j) % 8];
            k[0].count = (uint32_t)big[(j + 5) % 8];
            k[1].sketch.base = i % 2 ? INT32_MIN : INT32_MAX;
            k[1].min_ns = big[j];
            k[2].mode = (uint8_t)(3 + i * 30 + j); /* escaped modes */
            k[3].sketch.zeros = (uint32_t)big[i];
            k[3].sketch.flags = (uint16_t)big[j];
            k[4].kclass = ARGUS_KC_COLLECTIVE; /* last ends far from end_ns, and 0 */
            k[4].last_end_ns = big[(i + 2 * j) % 8];
            k[5].kclass = ARGUS_KC_COLLECTIVE;
            k[5].last_end_ns = big[(j + 1) % 8];
            roundtrip(&in);
        }
    }
    /* Coordinates at their limits, an empty summary, and all-ones fields. */
    in.coords = (struct argus_coords){65535, 65535, 65535, 65535, 65535, 0, 128, 127};
    in.n_kmodes = 0;
    roundtrip(&in);
    memset(&in, 0xff, sizeof in);
    in.n_kmodes = 2;
    in.nccl.n_comms = ARGUS_NCCL_SUM_COMMS; /* peer -1, every other NCCL field all ones */
    in.nccl.comms_dropped = ARGUS_NCCL_DROPPED_MAX;
    for (int i = 0; i < 2; i++) {
        in.kmodes[i].kclass = ARGUS_KC_COUNT - 1;
        in.kmodes[i].phase = ARGUS_PH_COUNT - 1;
        in.kmodes[i].sketch.nbuckets = ARGUS_QSKETCH_BUCKETS;
        in.kmodes[i].last_end_ns = 0; /* not a collective: it does not travel */
    }
    roundtrip(&in);
    in.kmodes[1].kclass = ARGUS_KC_COLLECTIVE; /* the one code next to last_end_ns = 0's */
    roundtrip(&in);
    in.kmodes[1].last_end_ns = 1;
    roundtrip(&in);
    in.end_ns = 0; /* last_end_ns = end_ns + 2^63 and the values around 0 */
    for (uint64_t v = UINT64_MAX - 2; v != 3; v++) {
        in.kmodes[1].last_end_ns = v;
        roundtrip(&in);
    }
    in.kmodes[1].last_end_ns = (uint64_t)INT64_MAX + 1;
    roundtrip(&in);
    /* Random summaries (random bits in every field) too. */
    for (int it = 0; it < 200; it++) {
        tg_summary(&st, &in, it == 0 ? ARGUS_MAX_KMODES : -1);
        for (uint32_t i = 0; it % 2 && i < in.n_kmodes; i++) /* last ends: collectives */
            if (in.kmodes[i].kclass == ARGUS_KC_COLLECTIVE)
                in.kmodes[i].last_end_ns = i % 7 ? tg_rand(&st) : 0;
        roundtrip(&in);
    }
}

/* Where the bytes go: a kernel's second mode carries no hash, a count equal to the
 * sketch's total does not travel, class/phase/mode take one byte. */
static void test_v3_savings(void **state)
{
    uint64_t st = 5;
    (void)state;

    tracer_like(&st, &in);
    in.n_kmodes = 2;
    in.kmodes[1] = in.kmodes[0];
    in.kmodes[1].mode = 1;
    long same = roundtrip(&in);
    in.kmodes[1].name_hash++;
    long other = roundtrip(&in);
    assert_int_equal(other - same, 8);
    in.kmodes[1].count++; /* no longer zeros + bucket counts: it travels */
    long counted = roundtrip(&in);
    assert_int_equal(counted - other, (long)uvl(in.kmodes[1].count) -
                     (long)(uvl(in.kmodes[1].sum_ns - (in.kmodes[1].count - 1) *
                                in.kmodes[1].min_ns) -
                            uvl(in.kmodes[1].sum_ns - in.kmodes[1].count *
                                in.kmodes[1].min_ns)));
    /* The base predictor hits within a byte on real sketches. */
    for (uint32_t i = 0; i < in.n_kmodes; i++) {
        const struct argus_kmode_stats *k = &in.kmodes[i];
        if (!(k->sketch.flags & ARGUS_QS_COLLAPSED))
            assert_int_equal(uvl(zz(k->sketch.base - v3_pred(k->min_ns))), 1);
    }
}

/* A small v3 record whose field offsets can be worked out: every header value one byte,
 * one kernel mode with 2 buckets. */
static long small_record(size_t *k0)
{
    memset(&in, 0, sizeof in);
    in.step = 1;
    in.n_kmodes = 0;
    long n0 = argus_summary_encode(&in, buf, sizeof buf);
    *k0 = (size_t)n0 - ARGUS_WIRE_TRAILER; /* n_kmodes was the last byte */
    struct argus_kmode_stats *k = &in.kmodes[0];
    k->name_hash = 0x1122334455667788ull;
    k->min_ns = 10;
    k->max_ns = 60;
    k->sketch.base = (int32_t)v3_pred(10);
    k->sketch.nbuckets = 2;
    k->sketch.counts[0] = 1;
    k->sketch.counts[1] = 2;
    k->count = 3;
    k->sum_ns = 100;
    in.n_kmodes = 1;
    return argus_summary_encode(&in, buf, sizeof buf);
}

static void expect_bad(long n, const char *want)
{
    char err[256] = "";
    assert_true(argus_record_peek(buf, (size_t)n, 0, NULL, err, sizeof err) > 0);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    if (!strstr(err, want))
        fail_msg("'%s' does not contain '%s'", err, want);
}

/* last_end_ns travels for collective modes only and only when one of them knows it (clk
 * bit 1): a record without it (all written before the field existed) is byte for byte
 * what it was and decodes with last_end_ns = 0. */
static void test_v3_last_end(void **state)
{
    char err[256] = "";
    size_t k0;
    (void)state;

    long n = small_record(&k0);
    in.kmodes[0].kclass = ARGUS_KC_COLLECTIVE;
    in.kmodes[0].last_end_ns = 0;
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), n); /* no bit, no code */
    assert_int_equal(buf[k0 - 3], 0);
    memset(&out, 0x5a, sizeof out);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), 0);
    assert_true(out.kmodes[0].last_end_ns == 0);
    assert_int_equal(out.kmodes[0].kclass, ARGUS_KC_COLLECTIVE);
    in.kmodes[0].last_end_ns = 7; /* end_ns is 0: code zz(7) = 14, one byte */
    long m = roundtrip(&in);
    assert_int_equal(buf[k0 - 3], 2); /* clk bit 1 */
    assert_int_equal(buf[k0 + 16], 14);
    assert_int_equal(m, n + 1);
    in.kmodes[0].kclass = ARGUS_KC_COMPUTE; /* other classes never carry it */
    in.kmodes[0].last_end_ns = 0;
    long c = roundtrip(&in);
    assert_int_equal(c, m - 1);
}

static void test_v3_field_checks(void **state)
{
    char want[160];
    size_t k0;
    (void)state;

    /* Layout: ... clk (0), mono, n_kmodes | key, hash x 8, sk, min, max - min,
     * base - pred, 2 buckets, sum - count x min. */
    long n = small_record(&k0);
    assert_int_equal(n, (long)(k0 + 1 + 8 + 1 + 1 + 1 + 1 + 2 + 1 + ARGUS_WIRE_TRAILER));
    assert_int_equal(buf[k0], 0);
    assert_int_equal(buf[k0 + 9], 2);
    assert_int_equal(buf[k0 + 12], 0); /* the base predicted exactly */

    /* class x phase code 30 (class 5): no such class. */
    small_record(&k0);
    buf[k0] = 30;
    reseal(buf, (size_t)n);
    snprintf(want, sizeof want, "kernel mode 0 at offset %zu has class 5, phase 0", k0);
    expect_bad(n, want);
    /* "Same hash as the previous mode" on the first mode. */
    small_record(&k0);
    buf[k0] |= 0x80;
    reseal(buf, (size_t)n);
    snprintf(want, sizeof want, "kernel mode 0 at offset %zu repeats", k0);
    expect_bad(n, want);
    /* 49 buckets; then more buckets than the payload holds. */
    small_record(&k0);
    buf[k0 + 9] = 49;
    reseal(buf, (size_t)n);
    snprintf(want, sizeof want, "sketch of 49 buckets at offset %zu, at most 48", k0 + 9);
    expect_bad(n, want);
    small_record(&k0);
    buf[k0 + 9] = 5;
    reseal(buf, (size_t)n);
    expect_bad(n, "payload ends early at offset");
    /* An implied count past 32 bits: buckets of 2^32 - 1 each. */
    small_record(&k0);
    const uint8_t ffs[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f};
    size_t m = splice(buf, (size_t)n, k0 + 13, 2, ffs, sizeof ffs);
    snprintf(want, sizeof want, "value out of range at offset %zu", k0 + 13 + sizeof ffs);
    expect_bad((long)m, want);
    /* A bucket count past 32 bits. */
    small_record(&k0);
    m = splice(buf, (size_t)n, k0 + 13, 1, (const uint8_t[]){0x80, 0x80, 0x80, 0x80, 0x10}, 5);
    snprintf(want, sizeof want, "value out of range at offset %zu", k0 + 13);
    expect_bad((long)m, want);
    /* A base that leaves 32 bits. */
    small_record(&k0);
    m = splice(buf, (size_t)n, k0 + 12, 1, (const uint8_t[]){0x80, 0x80, 0x80, 0x80, 0x20}, 5);
    snprintf(want, sizeof want, "value out of range at offset %zu", k0 + 12);
    expect_bad((long)m, want);
    /* The clock byte has bits 0 to 4 only (bit 4, the NCCL block, from version 5), bit 3
     * only with bit 2; coords fit 16 bits (tp_size is at offset 18). */
    snprintf(want, sizeof want, "value out of range at offset %zu", k0 - 3);
    small_record(&k0);
    buf[k0 - 3] = 16;
    buf[4] = 4;
    reseal(buf, (size_t)n);
    expect_bad(n, want);
    for (unsigned bad = 32; bad <= 128; bad <<= 1) {
        small_record(&k0);
        buf[k0 - 3] = (uint8_t)bad;
        reseal(buf, (size_t)n);
        expect_bad(n, want);
    }
    small_record(&k0);
    buf[k0 - 3] = 8;
    reseal(buf, (size_t)n);
    expect_bad(n, want);
    small_record(&k0);
    m = splice(buf, (size_t)n, 18, 1, (const uint8_t[]){0x80, 0x80, 0x04}, 3);
    expect_bad((long)m, "value out of range at offset 18");
    /* Too many kernel modes; a cut payload; trailing bytes. */
    small_record(&k0);
    m = splice(buf, (size_t)n, k0 - 1, 1, (const uint8_t[]){0x81, 0x02}, 2);
    snprintf(want, sizeof want, "257 kernel modes at offset %zu, at most 256", k0 - 1);
    expect_bad((long)m, want);
    small_record(&k0);
    m = splice(buf, (size_t)n, k0 + 15, 1, (const uint8_t[]){0}, 0);
    expect_bad((long)m, "payload ends early at offset");
    small_record(&k0);
    m = splice(buf, (size_t)n, k0 + 16, 0, (const uint8_t[]){0}, 1);
    snprintf(want, sizeof want, "1 trailing payload bytes at offset %zu", k0 + 16);
    expect_bad((long)m, want);
}

/* Random bytes changed and the record re-sealed (so the CRC passes): the decoder must stay
 * in bounds (ASan builds), and whatever it accepts must encode and decode to itself. */
static void test_v3_mutations(void **state)
{
    uint64_t st = 31;
    static uint8_t rec[1 << 16], bad[1 << 16];
    char err[256];
    (void)state;

    tracer_like(&st, &in);
    in.n_kmodes = 6;
    long n = argus_summary_encode(&in, rec, sizeof rec);
    assert_true(n > 0);
    int accepted = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(bad, rec, (size_t)n);
        int flips = 1 + (int)(tg_rand(&st) % 3);
        for (int f = 0; f < flips; f++) {
            size_t at = ARGUS_WIRE_HDR + tg_rand(&st) % ((size_t)n - ARGUS_WIRE_HDR - 4);
            bad[at] = (uint8_t)tg_rand(&st);
        }
        reseal(bad, (size_t)n);
        if (argus_summary_decode(bad, (size_t)n, &out, err, sizeof err) != 0) {
            assert_true(msg_offset(err) >= 0);
            continue;
        }
        accepted++;
        long m = argus_summary_encode(&out, again, sizeof again);
        assert_true(m > 0);
        assert_int_equal(argus_summary_decode(again, (size_t)m, &out2, err, sizeof err), 0);
        tg_assert_summary_equal(&out, &out2);
    }
    assert_true(accepted > 0);
}

/* The idle interval (clk bit 2): nothing when both fields are 0; else the length and the
 * end's code, the interval's start (end - length) or, when nearer, its distance to the
 * step end (clk bit 3); a version-3 record may not set either bit. */
static void test_v4_idle(void **state)
{
    char err[256] = "", want[160];
    size_t k0;
    (void)state;

    long n = small_record(&k0); /* start = end = 0, no idle: clk at k0 - 3 is 0 */
    const size_t clk = k0 - 3;
    assert_int_equal(buf[clk], 0);
    in.idle_long_ns = 5;
    in.idle_long_end_ns = 7; /* starts at 2: zz(2) = 4, vs zz(0 - 7) = 13 from the end */
    long m = roundtrip(&in);
    assert_int_equal(m, n + 2);
    assert_int_equal(buf[clk], 4);
    assert_int_equal(buf[clk + 1], 5);
    assert_int_equal(buf[clk + 2], 4);
    in.end_ns = 100;
    in.host_gap_ns = 100; /* = wall - busy: its code stays one byte */
    in.idle_long_ns = 10;
    in.idle_long_end_ns = 98; /* 2 before the end: zz(2) = 4 (from the start: zz(88)) */
    m = roundtrip(&in);
    assert_int_equal(buf[clk], 4 | 8);
    assert_int_equal(buf[clk + 1], 10);
    assert_int_equal(buf[clk + 2], 4);
    in.idle_long_end_ns = 55; /* starts 45 in, ends 45 before the end: the start */
    m = roundtrip(&in);
    assert_int_equal(buf[clk], 4);
    assert_int_equal(buf[clk + 2], 90);
    in.idle_long_ns = 0; /* the end alone travels too */
    in.idle_long_end_ns = 100;
    m = roundtrip(&in);
    assert_int_equal(buf[clk], 4 | 8);
    assert_int_equal(buf[clk + 1], 0);
    assert_int_equal(buf[clk + 2], 0);
    /* A record that says it is version 3 may not carry it. */
    buf[4] = 3;
    reseal(buf, (size_t)m);
    assert_true(argus_record_peek(buf, (size_t)m, 0, NULL, err, sizeof err) > 0);
    assert_int_equal(argus_summary_decode(buf, (size_t)m, &out, err, sizeof err), -EBADMSG);
    snprintf(want, sizeof want, "value out of range at offset %zu", clk);
    assert_string_equal(err + strlen("summary: "), want);
}

/* Records of the previous build (version 3, written here from its layout) still decode,
 * exactly, with the idle interval 0; with the idle interval 0 version 4 is the same bytes
 * but the version. */
static void test_v3_still_read(void **state)
{
    uint64_t st = 3;
    char err[256];
    (void)state;

    for (int it = 0; it < 200; it++) {
        if (it % 2)
            tracer_like(&st, &in);
        else
            tg_summary(&st, &in, it == 0 ? ARGUS_MAX_KMODES : -1);
        for (uint32_t i = 0; i < in.n_kmodes; i++) /* only collectives carry a last end */
            if (in.kmodes[i].kclass != ARGUS_KC_COLLECTIVE || it % 4 == 0)
                in.kmodes[i].last_end_ns = 0;
        if (it % 3 == 0) /* clocks absent, then present */
            in.clock_real_ns = in.clock_gpu_ns = 0;
        assert_true(in.idle_long_ns || in.idle_long_end_ns);
        size_t n = encode_v3(&in, buf);
        int type = 0;
        assert_int_equal(buf[4], 3);
        assert_int_equal(argus_record_peek(buf, n, 0, &type, err, sizeof err), (long)n);
        memset(&out, 0x5a, sizeof out);
        if (argus_summary_decode(buf, n, &out, err, sizeof err) != 0)
            fail_msg("decode v3: %s", err);
        assert_true(out.idle_long_ns == 0 && out.idle_long_end_ns == 0);
        in.idle_long_ns = in.idle_long_end_ns = 0;
        tg_assert_summary_equal(&in, &out);
        long n4 = roundtrip(&out);
        assert_int_equal((size_t)n4, n);
        buf[4] = 3;
        reseal(buf, n);
        assert_int_equal(encode_v3(&in, v3rec), n);
        assert_memory_equal(buf, v3rec, n);
    }
}

/* Records of the build before (version 2) still decode, exactly. */
static void test_v2_still_read(void **state)
{
    uint64_t st = 2;
    char err[256];
    (void)state;

    for (int it = 0; it < 100; it++) {
        if (it % 2)
            tracer_like(&st, &in);
        else
            tg_summary(&st, &in, it == 0 ? ARGUS_MAX_KMODES : -1);
        for (uint32_t i = 0; i < in.n_kmodes; i++)
            in.kmodes[i].last_end_ns = 0; /* version 2 had no last ends: they read as 0 */
        in.idle_long_ns = in.idle_long_end_ns = 0; /* nor the idle interval */
        size_t n = encode_v2(&in, buf);
        int type = 0;
        assert_int_equal(argus_record_peek(buf, n, 0, &type, err, sizeof err), (long)n);
        memset(&out, 0x5a, sizeof out);
        assert_int_equal(argus_summary_decode(buf, n, &out, err, sizeof err), 0);
        tg_assert_summary_equal(&in, &out);
        /* Written again it is version 4, and smaller on tracer-like steps. */
        long n3 = roundtrip(&out);
        if (it % 2)
            assert_true((size_t)n3 < n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v3_exact_tracer_like),
        cmocka_unit_test(test_v3_exact_edges),
        cmocka_unit_test(test_v3_savings),
        cmocka_unit_test(test_v3_last_end),
        cmocka_unit_test(test_v3_field_checks),
        cmocka_unit_test(test_v3_mutations),
        cmocka_unit_test(test_v4_idle),
        cmocka_unit_test(test_v3_still_read),
        cmocka_unit_test(test_v2_still_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
