/* test_wire_rankinfo.c — the rank-info record with communicator memberships (wire.c):
 * round trip of a full set, records of older builds (payload ending after the host name)
 * still read with no memberships, bad membership sections rejected with an offset; the
 * planned steps after the placement (round trip, absent in older records, cut short), and
 * ARGUS_TOTAL_STEPS's after them (the same). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/wire.h"

#include <errno.h>

static uint8_t buf[4096];

static void fill(struct argus_rank_info *ri)
{
    memset(ri, 0, sizeof *ri);
    ri->rank = 5;
    ri->world_size = 16;
    ri->device = 3;
    ri->pid = 999;
    ri->started_ns = 1764403720123456789ull;
    snprintf(ri->host, sizeof ri->host, "node-7");
}

static void test_groups_roundtrip(void **state)
{
    struct argus_rank_info ri, ro;
    char err[256];
    int type = 0;
    (void)state;

    fill(&ri);
    ri.n_groups = ARGUS_MAX_COMM_GROUPS;
    ri.groups_dropped = 3;
    for (uint32_t i = 0; i < ri.n_groups; i++)
        ri.groups[i] = (struct argus_comm_group){0x0123456789abcdefull * (i + 1),
                                                 0xfedc0000u + i, 2 + i, i, 1 + i % 2};
    long n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(type, ARGUS_REC_JOBINFO);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_int_equal(ro.n_groups, ARGUS_MAX_COMM_GROUPS);
    assert_int_equal(ro.groups_dropped, 3);
    for (uint32_t i = 0; i < ri.n_groups; i++) {
        assert_true(ro.groups[i].id == ri.groups[i].id);
        assert_int_equal(ro.groups[i].family, ri.groups[i].family);
        assert_int_equal(ro.groups[i].size, ri.groups[i].size);
        assert_int_equal(ro.groups[i].index, ri.groups[i].index);
        assert_int_equal(ro.groups[i].kind, ri.groups[i].kind);
    }
    assert_string_equal(ro.host, "node-7");
    assert_int_equal(ro.rank, 5);
    /* too many memberships: not encoded */
    ri.n_groups = ARGUS_MAX_COMM_GROUPS + 1;
    assert_int_equal(argus_rankinfo_encode(&ri, buf, sizeof buf), -EINVAL);
    /* no room */
    ri.n_groups = 2;
    n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(argus_rankinfo_encode(&ri, buf, (size_t)n - 1), -ENOSPC);
}

/* A rank-info record as builds before memberships wrote it, byte by byte. */
static size_t old_record(uint8_t *p)
{
    size_t k = 0;
#define U8(v) (p[k++] = (uint8_t)(v))
#define U16(v) (U8(v), U8((v) >> 8))
#define U32(v) (U16((v) & 0xffff), U16(((uint32_t)(v)) >> 16))
    U32(ARGUS_WIRE_MAGIC);
    U16(3);                       /* version 3, as written then */
    U16(ARGUS_REC_JOBINFO);
    U32(0);                       /* payload length, below */
    U32(5); U32(16); U32(3); U32(999); /* rank, world, device, pid */
    U16(2); U16(2); U16(4); U16(1);    /* tp, pp, dp, ep sizes */
    U16(1); U16(0); U16(2); U16(0);    /* tp, pp, dp, ep */
    U32(0x89abcdefu); U32(0x01234567u); /* started_ns */
    U8(6);
    memcpy(p + k, "node-7", 6);
    k += 6;
    const uint32_t plen = (uint32_t)(k - ARGUS_WIRE_HDR);
    p[8] = (uint8_t)plen;
    p[9] = (uint8_t)(plen >> 8);
    p[10] = p[11] = 0;
    const uint32_t crc = argus_crc32c(p, k);
    U32(crc);
#undef U32
#undef U16
#undef U8
    return k;
}

static void test_old_record_read(void **state)
{
    struct argus_rank_info ro;
    char err[256];
    int type = 0;
    (void)state;

    const size_t n = old_record(buf);
    assert_int_equal(argus_record_peek(buf, n, 0, &type, err, sizeof err), (long)n);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, n, &ro, err, sizeof err), 0);
    assert_int_equal(ro.rank, 5);
    assert_int_equal(ro.world_size, 16);
    assert_int_equal(ro.device, 3);
    assert_int_equal(ro.coords.dp_size, 4);
    assert_int_equal(ro.coords.dp, 2);
    assert_true(ro.started_ns == 0x0123456789abcdefull);
    assert_string_equal(ro.host, "node-7");
    assert_int_equal(ro.n_groups, 0);
    assert_int_equal(ro.groups_dropped, 0);
}

/* Rewrite the payload length and checksum after editing a record of n bytes. */
static size_t reseal(uint8_t *p, size_t payload)
{
    const size_t n = ARGUS_WIRE_HDR + payload;
    p[8] = (uint8_t)payload;
    p[9] = (uint8_t)(payload >> 8);
    p[10] = p[11] = 0;
    const uint32_t crc = argus_crc32c(p, n);
    for (int i = 0; i < 4; i++)
        p[n + i] = (uint8_t)(crc >> (8 * i));
    return n + ARGUS_WIRE_TRAILER;
}

static void test_bad_groups_rejected(void **state)
{
    struct argus_rank_info ri, ro;
    char err[256];
    (void)state;

    fill(&ri);
    ri.n_groups = 1;
    ri.groups[0] = (struct argus_comm_group){42, 7, 4, 1, ARGUS_COMM_MPI};
    long n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n > 0);
    const size_t payload = (size_t)n - ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER;
    const size_t at = ARGUS_WIRE_HDR + payload - 21 - 4 - 1; /* the group count */
    assert_int_equal(buf[at], 1);
    /* a count past the bound */
    buf[at] = ARGUS_MAX_COMM_GROUPS + 1;
    size_t m = reseal(buf, payload);
    assert_int_equal(argus_rankinfo_decode(buf, m, &ro, err, sizeof err), -EBADMSG);
    char want[128];
    snprintf(want, sizeof want, "rank info: %d communicator groups at offset %zu, at most %d",
             ARGUS_MAX_COMM_GROUPS + 1, at, ARGUS_MAX_COMM_GROUPS);
    assert_string_equal(err, want);
    /* a membership cut short */
    buf[at] = 1;
    m = reseal(buf, payload - 3);
    assert_int_equal(argus_rankinfo_decode(buf, m, &ro, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "payload ends early at offset"));
}

/* The planned steps (argus_set_total_steps on any rank) after the placement: a round trip
 * with and without a placement; a record that has none (never told, or an older build's
 * with a placement) reads as 0 and costs no byte; one cut inside them is rejected. */
static void test_plan_roundtrip(void **state)
{
    struct argus_rank_info ri, ro;
    char err[256];
    (void)state;

    fill(&ri);
    ri.n_groups = 1;
    ri.groups[0] = (struct argus_comm_group){42, 7, 4, 1, ARGUS_COMM_MPI};
    const long n0 = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n0 > 0);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n0, &ro, err, sizeof err), 0);
    assert_true(ro.planned_steps == 0 && ro.planned_at_ns == 0 && ro.place.flags == 0);
    /* told, not probed: an empty placement (8 B) and the plan (16 B) */
    ri.planned_steps = 123456789012ull;
    ri.planned_at_ns = 1764403720987654321ull;
    long n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_int_equal(n, n0 + 8 + 16);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_true(ro.planned_steps == ri.planned_steps && ro.planned_at_ns == ri.planned_at_ns);
    assert_true(ro.place.flags == 0 && ro.place.gpu_numa == 0 && ro.place.gpu_bus[0] == 0);
    assert_int_equal(ro.n_groups, 1);
    assert_int_equal(argus_rankinfo_encode(&ri, buf, (size_t)n - 1), -ENOSPC);
    /* told and probed */
    ri.place.flags = ARGUS_PLACE_KNOWN | ARGUS_PLACE_GPU;
    ri.place.gpu_numa = 1;
    ri.place.cpu_numa = -1;
    snprintf(ri.place.gpu_bus, sizeof ri.place.gpu_bus, "00000000:41:00.0");
    snprintf(ri.place.nic, sizeof ri.place.nic, "mlx5_0");
    n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n > 0);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_true(ro.planned_steps == ri.planned_steps && ro.planned_at_ns == ri.planned_at_ns);
    assert_true(ro.place.flags == ri.place.flags && ro.place.gpu_numa == 1 &&
                ro.place.cpu_numa == -1);
    assert_string_equal(ro.place.gpu_bus, "00000000:41:00.0");
    assert_string_equal(ro.place.nic, "mlx5_0");
    /* a rank told 0 after a plan (taken back): still sent, with its time */
    ri.planned_steps = 0;
    n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_true(ro.planned_steps == 0 && ro.planned_at_ns == ri.planned_at_ns);
    /* as an older build wrote it: placement, no plan */
    ri.planned_at_ns = 0;
    const long n1 = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_int_equal(n1, n - 16);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n1, &ro, err, sizeof err), 0);
    assert_true(ro.planned_steps == 0 && ro.planned_at_ns == 0 && ro.place.flags != 0);
    /* cut inside the plan */
    ri.planned_steps = 7;
    ri.planned_at_ns = 8;
    n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    const size_t m = reseal(buf, (size_t)n - ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER - 5);
    assert_int_equal(argus_rankinfo_decode(buf, m, &ro, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "payload ends early at offset"));
    assert_true(ro.planned_steps == 0 && ro.planned_at_ns == 0);
}

/* ARGUS_TOTAL_STEPS as the rank read it, after the program's plan: with no program plan it
 * brings an empty placement and a zero plan (8 + 16 + 8 B) and round-trips beside a
 * program plan; a record of the build before it (ending after the plan) reads as 0, a
 * record without it is byte for byte what that build wrote, one cut inside it is
 * rejected. */
static void test_env_plan_roundtrip(void **state)
{
    struct argus_rank_info ri, ro;
    char err[256];
    (void)state;

    fill(&ri);
    const long n0 = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n0 > 0);
    ri.env_planned_steps = 400;
    long n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_int_equal(n, n0 + 8 + 16 + 8);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_true(ro.env_planned_steps == 400 && ro.planned_steps == 0 &&
                ro.planned_at_ns == 0 && ro.place.flags == 0);
    assert_int_equal(argus_rankinfo_encode(&ri, buf, (size_t)n - 1), -ENOSPC);
    /* both: the program's and the environment's, each kept */
    ri.planned_steps = 200;
    ri.planned_at_ns = 1764403720987654321ull;
    n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_int_equal(n, n0 + 8 + 16 + 8);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_true(ro.env_planned_steps == 400 && ro.planned_steps == 200 &&
                ro.planned_at_ns == ri.planned_at_ns);
    /* as the build before it wrote it: the plan last, no environment's */
    ri.env_planned_steps = 0;
    const long n1 = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_int_equal(n1, n - 8);
    memset(&ro, 0x55, sizeof ro);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n1, &ro, err, sizeof err), 0);
    assert_true(ro.env_planned_steps == 0 && ro.planned_steps == 200);
    /* cut inside it */
    ri.env_planned_steps = 400;
    n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    const size_t m = reseal(buf, (size_t)n - ARGUS_WIRE_HDR - ARGUS_WIRE_TRAILER - 3);
    assert_int_equal(argus_rankinfo_decode(buf, m, &ro, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "payload ends early at offset"));
    assert_true(ro.env_planned_steps == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_roundtrip),
        cmocka_unit_test(test_env_plan_roundtrip),
        cmocka_unit_test(test_groups_roundtrip),
        cmocka_unit_test(test_old_record_read),
        cmocka_unit_test(test_bad_groups_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
