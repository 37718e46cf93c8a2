/* test_wire.c — unit tests of common/wire.c, common/wire_summary.c and common/crc32c.c:
 * CRC32C vector, summary (version 4) / name / rank-info round trips (hand-made and
 * random), exact encoded sizes, version-1 records still read, and rejection of every
 * flipped byte, every truncation and out-of-range fields (v2 layout), with the offset
 * named. Version-3 and -4 specifics: tests/common/test_wire_summary.c. */
#include "tests/common/test_wire_util.h"

#include <errno.h>
#include <stdio.h>

static uint8_t buf[1 << 17];
static struct argus_step_summary in, out;

static void test_crc32c_vector(void **state)
{
    (void)state;
    assert_int_equal(argus_crc32c("123456789", 9), 0xe3069283u);
    assert_int_equal(argus_crc32c("", 0), 0);
    /* RFC 3720 B.4: 32 bytes of zeros. */
    uint8_t z[32] = {0};
    assert_int_equal(argus_crc32c(z, sizeof z), 0x8a9136aau);
}

static void test_summary_roundtrip_fixed(void **state)
{
    char err[256] = "";
    (void)state;

    memset(&in, 0, sizeof in);
    in.step = 42;
    in.rank = 7;
    in.flags = ARGUS_SF_PARTIAL;
    in.start_ns = 1700000000000000000ull;
    in.end_ns = UINT64_MAX;
    in.clock_offset_ns = -123456789;
    in.coords = (struct argus_coords){2, 4, 8, 1, 1, 3, 5, 0};
    in.phase_wall_ns[ARGUS_PH_FORWARD] = 1000;
    in.phase_compute_ns[ARGUS_PH_OTHER] = 77;
    in.host_gap_ns = 5;
    in.overhead_ns = 31337;
    in.clock_gpu_ns = 1700000000000000123ull;
    in.clock_real_ns = 1700000000000000456ull;
    in.clock_mono_ns = 98765;
    in.idle_long_ns = 700;
    in.idle_long_end_ns = 1000;
    in.n_kmodes = 2;
    in.kmodes[0].name_hash = argus_name_hash("gemm");
    in.kmodes[0].kclass = ARGUS_KC_COMPUTE;
    in.kmodes[0].count = 3;
    in.kmodes[0].min_ns = 10;
    in.kmodes[0].max_ns = 1000000;
    argus_qsketch_add(&in.kmodes[0].sketch, 10);
    argus_qsketch_add(&in.kmodes[0].sketch, 0);
    argus_qsketch_add(&in.kmodes[0].sketch, 1000000);
    in.kmodes[1].name_hash = 1;
    in.kmodes[1].mode = 1;
    in.kmodes[1].kclass = ARGUS_KC_COLLECTIVE;
    in.kmodes[1].phase = ARGUS_PH_COMM;

    long n = argus_summary_encode(&in, buf, sizeof buf);
    assert_true(n > 0);
    assert_true((size_t)n <= argus_summary_encoded_max(2));
    /* Version 4 (wire_summary.c): varints, each field taking the bytes its value needs;
     * differences (mod 2^64) where a field is predicted by one already sent; only the
     * used sketch span travels. The idle interval: its length, then its start (300, nearer
     * than the step end). */
    const uint64_t wall = UINT64_MAX - in.start_ns;
    size_t expect = ARGUS_WIRE_HDR + uvl(42) + uvl(7) + uvl(ARGUS_SF_PARTIAL) +
                    uvl(in.start_ns) + uvl(wall) + uvl(2 * 123456789 - 1) + 8 +
                    uvl(1000) + uvl(77) + (2 * ARGUS_PH_COUNT - 2) + 5 +
                    uvl(zz((int64_t)(5 - wall))) + 1 + 1 + uvl(31337) + 1 +
                    uvl(zz((int64_t)(in.clock_real_ns - UINT64_MAX))) + uvl(zz(-333)) +
                    uvl(700) + uvl(zz(300)) + uvl(98765) + uvl(2) + ARGUS_WIRE_TRAILER;
    const struct argus_qsketch *q = &in.kmodes[0].sketch;
    assert_int_equal(q->flags, ARGUS_QS_COLLAPSED); /* 10 and 10^6: too wide a span */
    /* kmode 0: key, hash, sketch byte, flags + zeros, min, max - min, base - pred(min),
     * the buckets, no count (3 = zeros + buckets), sum - 3 x min (wraps: 10 bytes). */
    expect += 1 + 8 + 1 + uvl(q->flags) + uvl(1) + uvl(10) + uvl(1000000 - 10) +
              uvl(zz(q->base - v3_pred(10))) + 10;
    for (int b = 0; b < in.kmodes[0].sketch.nbuckets; b++)
        expect += uvl(in.kmodes[0].sketch.counts[b]);
    expect += 1 + 8 + 1 + 1 + 1 + 1 + 1; /* kmode 1: all zero */
    assert_int_equal((size_t)n, expect);
    /* Little-endian header written byte by byte. */
    assert_memory_equal(buf, "ARGS", 4);
    assert_int_equal(buf[4], ARGUS_WIRE_VERSION);
    assert_int_equal(buf[5], 0);
    assert_int_equal(buf[6], ARGUS_REC_SUMMARY);
    assert_int_equal(buf[12], 42); /* step, low byte first */
    const size_t k1 = (size_t)n - ARGUS_WIRE_TRAILER - 14;
    assert_int_equal(buf[k1], (ARGUS_KC_COLLECTIVE * ARGUS_PH_COUNT + ARGUS_PH_COMM) | 1 << 5);
    assert_int_equal(buf[k1 + 9], 0); /* sketch byte: no buckets, count implied */

    int type = 0;
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(type, ARGUS_REC_SUMMARY);
    memset(&out, 0xa5, sizeof out);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), 0);
    tg_assert_summary_equal(&in, &out);
    assert_int_equal(out.kmodes[0].sketch.zeros, 1);
    assert_true(out.clock_offset_ns == -123456789);
}

/* Spools written by a version-1 build still read: same fields, the new ones zero. A
 * version the build does not know is refused with the offset of the version field. */
static void test_summary_v1_still_read(void **state)
{
    uint64_t st = 4242;
    char err[256] = "";
    (void)state;

    tg_summary(&st, &in, 3);
    size_t n1 = encode_v1(&in, buf);
    int type = 0;
    assert_int_equal(argus_record_peek(buf, n1, 0, &type, err, sizeof err), (long)n1);
    memset(&out, 0x5a, sizeof out);
    assert_int_equal(argus_summary_decode(buf, n1, &out, err, sizeof err), 0);
    in.overhead_ns = in.clock_gpu_ns = in.clock_real_ns = in.clock_mono_ns = 0;
    in.idle_long_ns = in.idle_long_end_ns = 0;
    tg_assert_summary_equal(&in, &out);

    /* The version after this build's (a future build): refused by peek and the decoder. */
    long n = argus_summary_encode(&in, buf, sizeof buf);
    buf[4] = ARGUS_WIRE_VERSION + 1;
    uint32_t crc = argus_crc32c(buf, (size_t)n - ARGUS_WIRE_TRAILER);
    for (int i = 0; i < 4; i++)
        buf[n - 4 + i] = (uint8_t)(crc >> 8 * i);
    assert_true(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err) < 0);
    char want[64];
    snprintf(want, sizeof want, "unsupported version %d", ARGUS_WIRE_VERSION + 1);
    assert_non_null(strstr(err, want));
    assert_int_equal(msg_offset(err), 4);
    assert_true(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err) < 0);
}

static void test_summary_roundtrip_random(void **state)
{
    uint64_t st = 0x1234567;
    char err[256];
    (void)state;

    for (int it = 0; it < 300; it++) {
        int n = it == 0 ? 0 : it == 1 ? ARGUS_MAX_KMODES : -1;
        tg_summary(&st, &in, n);
        long len = argus_summary_encode(&in, buf, sizeof buf);
        assert_true(len > 0);
        assert_true((size_t)len <= argus_summary_encoded_max(in.n_kmodes));
        int type = 0;
        assert_int_equal(argus_record_peek(buf, (size_t)len, 0, &type, err, sizeof err), len);
        memset(&out, 0x5a, sizeof out);
        assert_int_equal(argus_summary_decode(buf, (size_t)len, &out, err, sizeof err), 0);
        tg_assert_summary_equal(&in, &out);
        /* Re-encoding the decoded summary gives the same bytes. */
        static uint8_t again[1 << 17];
        assert_int_equal(argus_summary_encode(&out, again, sizeof again), len);
        assert_memory_equal(buf, again, (size_t)len);
    }
}

static void test_summary_encode_limits(void **state)
{
    uint64_t st = 99;
    (void)state;

    tg_summary(&st, &in, 5);
    long n = argus_summary_encode(&in, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(argus_summary_encode(&in, buf, (size_t)n - 1), -ENOSPC);
    assert_int_equal(argus_summary_encode(&in, buf, (size_t)n), n);
    in.n_kmodes = ARGUS_MAX_KMODES + 1;
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), -EINVAL);
    in.n_kmodes = 1;
    in.kmodes[0].sketch.nbuckets = ARGUS_QSKETCH_BUCKETS + 1;
    assert_int_equal(argus_summary_encode(&in, buf, sizeof buf), -EINVAL);
}

/* Flip each byte of a record in turn: peek must reject it, naming an offset within the
 * record (base 1000), and the decoder must not accept garbage either. */
static void test_flipped_byte_rejected(void **state)
{
    uint64_t st = 7;
    char err[256];
    static uint8_t bad[1 << 16];
    (void)state;

    tg_summary(&st, &in, 6);
    long n = argus_summary_encode(&in, buf, sizeof buf);
    assert_true(n > 0);
    for (long i = 0; i < n; i++) {
        for (int f = 0; f < 2; f++) {
            memcpy(bad, buf, (size_t)n);
            bad[i] ^= f ? 0xff : (uint8_t)(1u << (i % 8));
            int type = -1;
            err[0] = '\0';
            long r = argus_record_peek(bad, (size_t)n, 1000, &type, err, sizeof err);
            if (r >= 0)
                fail_msg("flipped byte %ld accepted", i);
            long long off = msg_offset(err);
            if (off < 1000 || off > 1000 + i)
                fail_msg("byte %ld: message without a good offset: '%s'", i, err);
            if (i >= ARGUS_WIRE_HDR) {
                char want[64];
                snprintf(want, sizeof want, "checksum mismatch at offset 1000");
                if (strncmp(err, want, strlen(want)) != 0)
                    fail_msg("byte %ld: '%s'", i, err);
            }
            if (i < 4)
                assert_non_null(strstr(err, "bad magic at offset 1000"));
            /* Decoding an unchecked bad record must fail or stay in bounds (ASan). */
            (void)argus_summary_decode(bad, (size_t)n, &out, err, sizeof err);
        }
    }
}

static void test_truncated_rejected(void **state)
{
    uint64_t st = 8;
    char err[256];
    (void)state;

    tg_summary(&st, &in, 3);
    long n = argus_summary_encode(&in, buf, sizeof buf);
    for (long len = 0; len < n; len++) {
        err[0] = '\0';
        int type = -1;
        assert_true(argus_record_peek(buf, (size_t)len, 4096, &type, err, sizeof err) < 0);
        if (strncmp(err, "truncated record at offset 4096", 31) != 0)
            fail_msg("len %ld: '%s'", len, err);
        assert_true(argus_summary_decode(buf, (size_t)len, &out, err, sizeof err) < 0);
    }
    /* Exact message for a cut in the payload. */
    argus_record_peek(buf, 100, 4096, NULL, err, sizeof err);
    char want[128];
    snprintf(want, sizeof want, "truncated record at offset 4096: 100 of %ld bytes", n);
    assert_string_equal(err, want);
}

/* The version-2 decoder's field checks, on records written in the v2 layout (the v3
 * decoder's are in tests/common/test_wire_summary.c). */
static void test_decoder_field_checks(void **state)
{
    uint64_t st = 9;
    char err[256];
    (void)state;

    tg_summary(&st, &in, 1);
    /* Small values (one varint byte each) so field offsets can be worked out. */
    in.step = 1;
    in.rank = 0;
    struct argus_kmode_stats *k = &in.kmodes[0];
    k->count = 3;
    k->sum_ns = 100;
    k->min_ns = 10;
    k->max_ns = 60;
    k->sketch.base = 5;
    k->sketch.nbuckets = 2;
    k->kclass = ARGUS_KC_COMPUTE;
    k->phase = 0;
    in.n_kmodes = 0;
    long n0 = (long)encode_v2(&in, buf);
    in.n_kmodes = 1;
    /* n_kmodes is the header's last byte, kernel mode 0 starts right after it. */
    const size_t nk_at = (size_t)n0 - ARGUS_WIRE_TRAILER - 1, k0 = nk_at + 1;
    const size_t nb_at = k0 + 8 + 3 + 5; /* hash, mode/class/phase, 4 varints + base */

    long n = (long)encode_v2(&in, buf);
    size_t m = splice(buf, (size_t)n, nk_at, 1, (const uint8_t[]){0xac, 0x02}, 2); /* 300 */
    assert_true(argus_record_peek(buf, m, 0, NULL, err, sizeof err) > 0);
    assert_int_equal(argus_summary_decode(buf, m, &out, err, sizeof err), -EBADMSG);
    char want[128];
    snprintf(want, sizeof want, "summary: 300 kernel modes at offset %zu, at most 256", nk_at);
    assert_string_equal(err, want);

    n = (long)encode_v2(&in, buf);
    assert_int_equal(buf[nb_at], 2);
    buf[nb_at] = 49;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    snprintf(want, sizeof want, "summary: sketch of 49 buckets at offset %zu, at most 48", nb_at);
    assert_string_equal(err, want);

    /* A span that claims more buckets than the payload holds. */
    n = (long)encode_v2(&in, buf);
    buf[nb_at] = 3;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "payload ends early at offset"));

    /* Bad kernel class. */
    n = (long)encode_v2(&in, buf);
    buf[k0 + 9] = ARGUS_KC_COUNT;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    snprintf(want, sizeof want, "at offset %zu", k0);
    assert_non_null(strstr(err, want));

    /* A rank past 32 bits (offset 13: after the one-byte step). */
    n = (long)encode_v2(&in, buf);
    m = splice(buf, (size_t)n, 13, 1, (const uint8_t[]){0x80, 0x80, 0x80, 0x80, 0x10}, 5);
    assert_int_equal(argus_summary_decode(buf, m, &out, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "summary: value out of range at offset 13");

    /* A varint of 11 bytes. */
    n = (long)encode_v2(&in, buf);
    static const uint8_t longv[11] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0x01};
    m = splice(buf, (size_t)n, 12, 1, longv, sizeof longv);
    assert_int_equal(argus_summary_decode(buf, m, &out, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "summary: varint longer than 64 bits at offset 12");

    /* Version and type. */
    n = (long)encode_v2(&in, buf);
    buf[4] = ARGUS_WIRE_VERSION + 1;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 10, NULL, err, sizeof err), -EPROTO);
    snprintf(want, sizeof want, "unsupported version %d at offset 14 (this build reads 1 to %d)",
             ARGUS_WIRE_VERSION + 1, ARGUS_WIRE_VERSION);
    assert_string_equal(err, want);
    buf[4] = 2;
    buf[6] = 9;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 10, NULL, err, sizeof err), -EPROTO);
    assert_string_equal(err, "unknown record type 9 at offset 16");
    /* A summary decoder handed a name record. */
    long nm = argus_name_encode(5, "x", buf, sizeof buf);
    assert_int_equal(argus_summary_decode(buf, (size_t)nm, &out, err, sizeof err), -EINVAL);
    /* A huge length is refused before reading. */
    n = (long)encode_v2(&in, buf);
    buf[11] = 0x7f;
    assert_int_equal(argus_record_peek(buf, sizeof buf, 0, NULL, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "bad record length at offset 8"));
}

static void test_name_roundtrip(void **state)
{
    char err[256], name[ARGUS_NAME_MAX + 1];
    uint64_t h = 0;
    int type = 0;
    (void)state;

    const char *k = "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm>(Params)";
    long n = argus_name_encode(argus_name_hash(k), k, buf, sizeof buf);
    assert_int_equal(n, ARGUS_WIRE_HDR + 10 + (long)strlen(k) + ARGUS_WIRE_TRAILER);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(type, ARGUS_REC_NAME);
    assert_int_equal(argus_name_decode(buf, (size_t)n, &h, name, err, sizeof err), 0);
    assert_string_equal(name, k);
    assert_true(h == argus_name_hash(k));

    /* Longer names are cut at ARGUS_NAME_MAX. */
    char longname[ARGUS_NAME_MAX + 100];
    memset(longname, 'k', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    n = argus_name_encode(1, longname, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(argus_name_decode(buf, (size_t)n, &h, name, err, sizeof err), 0);
    assert_int_equal(strlen(name), ARGUS_NAME_MAX);
    assert_int_equal(argus_name_encode(1, k, buf, 20), -ENOSPC);

    /* An embedded NUL is refused. */
    n = argus_name_encode(1, "abc", buf, sizeof buf);
    buf[ARGUS_WIRE_HDR + 11] = 0;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_name_decode(buf, (size_t)n, &h, name, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "name: NUL byte inside the name at offset 22");
}

static void test_rankinfo_roundtrip(void **state)
{
    struct argus_rank_info ri, ro;
    char err[256];
    int type = 0;
    (void)state;

    memset(&ri, 0, sizeof ri);
    ri.rank = 17;
    ri.world_size = 64;
    ri.device = -1;
    ri.pid = 4242;
    ri.coords = (struct argus_coords){8, 2, 4, 1, 1, 1, 2, 0};
    ri.started_ns = 1764403720123456789ull;
    snprintf(ri.host, sizeof ri.host, "gpu-node-0042");
    long n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(type, ARGUS_REC_JOBINFO);
    memset(&ro, 0x77, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_int_equal(ro.rank, 17);
    assert_int_equal(ro.world_size, 64);
    assert_int_equal(ro.device, -1);
    assert_int_equal(ro.pid, 4242);
    assert_memory_equal(&ro.coords, &ri.coords, sizeof ri.coords);
    assert_true(ro.started_ns == ri.started_ns);
    assert_string_equal(ro.host, "gpu-node-0042");
    /* Wrong decoder for the type. */
    assert_true(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err) < 0);
    /* Every flipped byte is caught by peek. */
    for (long i = 0; i < n; i++) {
        static uint8_t bad[512];
        memcpy(bad, buf, (size_t)n);
        bad[i] ^= 0x10;
        assert_true(argus_record_peek(bad, (size_t)n, 0, &type, err, sizeof err) < 0);
        assert_non_null(strstr(err, "at offset "));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_vector),
        cmocka_unit_test(test_summary_roundtrip_fixed),
        cmocka_unit_test(test_summary_roundtrip_random),
        cmocka_unit_test(test_summary_v1_still_read),
        cmocka_unit_test(test_summary_encode_limits),
        cmocka_unit_test(test_flipped_byte_rejected),
        cmocka_unit_test(test_truncated_rejected),
        cmocka_unit_test(test_decoder_field_checks),
        cmocka_unit_test(test_name_roundtrip),
        cmocka_unit_test(test_rankinfo_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
