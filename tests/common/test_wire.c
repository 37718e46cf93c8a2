/* test_wire.c — unit tests of common/wire.c and common/crc32c.c: CRC32C vector, summary /
 * name / rank-info round trips (hand-made and random), exact encoded sizes, and rejection
 * of every flipped byte, every truncation and out-of-range fields, with the offset named. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/wire.h"

static uint8_t buf[1 << 17];
static struct argus_step_summary in, out;

/* Parse the number after "at offset " in msg; -1 when absent. */
static long long msg_offset(const char *msg)
{
    const char *p = strstr(msg, "at offset ");
    return p ? strtoll(p + 10, NULL, 10) : -1;
}

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
    /* Only the used sketch span travels. */
    size_t expect = ARGUS_WIRE_HDR + 252 + 2 * 52 + 4u * in.kmodes[0].sketch.nbuckets +
                    ARGUS_WIRE_TRAILER;
    assert_int_equal((size_t)n, expect);
    /* Little-endian header written byte by byte. */
    assert_memory_equal(buf, "ARGS", 4);
    assert_int_equal(buf[4], ARGUS_WIRE_VERSION);
    assert_int_equal(buf[5], 0);
    assert_int_equal(buf[6], ARGUS_REC_SUMMARY);
    assert_int_equal(buf[12], 42); /* step, low byte first */

    int type = 0;
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(type, ARGUS_REC_SUMMARY);
    memset(&out, 0xa5, sizeof out);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), 0);
    tg_assert_summary_equal(&in, &out);
    assert_int_equal(out.kmodes[0].sketch.zeros, 1);
    assert_true(out.clock_offset_ns == -123456789);
}

/* Rewrite a version-2 summary record as the version-1 record an older build wrote: no
 * overhead and clock triple (32 bytes after dropped), new length and CRC. */
static size_t summary_as_v1(uint8_t *rec, size_t n)
{
    const size_t extra_at = ARGUS_WIRE_HDR + 220 - 4; /* the v1 fixed part ends in n_kmodes */
    memmove(rec + extra_at, rec + extra_at + 32, n - extra_at - 32);
    n -= 32;
    rec[4] = 1;
    rec[5] = 0;
    uint32_t plen = (uint32_t)(n - ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER);
    for (int i = 0; i < 4; i++)
        rec[8 + i] = (uint8_t)(plen >> 8 * i);
    uint32_t crc = argus_crc32c(rec, n - ARGUS_WIRE_TRAILER);
    for (int i = 0; i < 4; i++)
        rec[n - 4 + i] = (uint8_t)(crc >> 8 * i);
    return n;
}

/* Spools written by a version-1 build still read: same fields, the new ones zero. A
 * version the build does not know is refused with the offset of the version field. */
static void test_summary_v1_still_read(void **state)
{
    uint64_t st = 4242;
    char err[256] = "";
    (void)state;

    tg_summary(&st, &in, 3);
    long n = argus_summary_encode(&in, buf, sizeof buf);
    assert_true(n > 0);
    size_t n1 = summary_as_v1(buf, (size_t)n);
    int type = 0;
    assert_int_equal(argus_record_peek(buf, n1, 0, &type, err, sizeof err), (long)n1);
    memset(&out, 0x5a, sizeof out);
    assert_int_equal(argus_summary_decode(buf, n1, &out, err, sizeof err), 0);
    in.overhead_ns = in.clock_gpu_ns = in.clock_real_ns = in.clock_mono_ns = 0;
    tg_assert_summary_equal(&in, &out);

    /* Version 3 (a future build): refused by peek and by the decoder. */
    n = argus_summary_encode(&in, buf, sizeof buf);
    buf[4] = ARGUS_WIRE_VERSION + 1;
    uint32_t crc = argus_crc32c(buf, (size_t)n - ARGUS_WIRE_TRAILER);
    for (int i = 0; i < 4; i++)
        buf[n - 4 + i] = (uint8_t)(crc >> 8 * i);
    assert_true(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err) < 0);
    assert_non_null(strstr(err, "unsupported version 3"));
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

/* Re-seal a patched record with a correct checksum so the decoder's checks are reached. */
static void reseal(uint8_t *rec, size_t len)
{
    uint32_t c = argus_crc32c(rec, len - 4);
    for (int i = 0; i < 4; i++)
        rec[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
}

static void test_decoder_field_checks(void **state)
{
    uint64_t st = 9;
    char err[256];
    (void)state;

    tg_summary(&st, &in, 1);
    in.kmodes[0].sketch.nbuckets = 2;
    long n = argus_summary_encode(&in, buf, sizeof buf);
    /* n_kmodes lives at record offset 12 + 248 (version 2). */
    buf[260] = 0x2c;
    buf[261] = 0x01; /* 300 */
    reseal(buf, (size_t)n);
    assert_true(argus_record_peek(buf, (size_t)n, 0, NULL, err, sizeof err) > 0);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "summary: 300 kernel modes at offset 260, at most 256");

    /* nbuckets of kmode 0 at 264 + 8+4+4+24+4 = 308. */
    n = argus_summary_encode(&in, buf, sizeof buf);
    buf[308] = 49;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    assert_string_equal(err, "summary: sketch of 49 buckets at offset 308, at most 48");

    /* A span that claims more buckets than the payload holds. */
    n = argus_summary_encode(&in, buf, sizeof buf);
    buf[308] = 3;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "payload ends early at offset"));

    /* Bad kernel class. */
    n = argus_summary_encode(&in, buf, sizeof buf);
    buf[264 + 9] = ARGUS_KC_COUNT;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_summary_decode(buf, (size_t)n, &out, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "at offset 264"));

    /* Version and type. */
    n = argus_summary_encode(&in, buf, sizeof buf);
    buf[4] = 3;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 10, NULL, err, sizeof err), -EPROTO);
    assert_string_equal(err, "unsupported version 3 at offset 14 (this build reads 1 to 2)");
    buf[4] = 2;
    buf[6] = 9;
    reseal(buf, (size_t)n);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 10, NULL, err, sizeof err), -EPROTO);
    assert_string_equal(err, "unknown record type 9 at offset 16");
    /* A summary decoder handed a name record. */
    long m = argus_name_encode(5, "x", buf, sizeof buf);
    assert_int_equal(argus_summary_decode(buf, (size_t)m, &out, err, sizeof err), -EINVAL);
    /* A huge length is refused before reading. */
    n = argus_summary_encode(&in, buf, sizeof buf);
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
