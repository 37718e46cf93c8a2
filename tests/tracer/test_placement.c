/* test_placement.c — the placement (tracer/placement.c) on replayed hwloc topologies
 * (the XML files of tests/tracer/data): a two-socket host with a GPU and an InfiniBand NIC on each
 * socket (and an Ethernet port on socket 0), a one-socket host with neither, and a broken
 * file. Also the rank-info record carrying the placement (common/wire.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "tracer/placement.h"

#define XML_2S ARGUS_PLACEMENT_DATA "/topo-2s-2gpu-2nic.xml"
#define XML_NOGPU ARGUS_PLACEMENT_DATA "/topo-1s-nogpu.xml"
#define XML_BAD ARGUS_PLACEMENT_DATA "/topo-malformed.xml"

static struct argus_placer *load(const char *xml)
{
    struct argus_placer *p = NULL;
    char err[256] = "";

    assert_int_equal(argus_placer_create(xml, &p, err, sizeof err), 0);
    assert_non_null(p);
    return p;
}

static void fill(const struct argus_placer *p, const char *bus, const char *cpus,
                 struct argus_placement *pl)
{
    char err[256] = "";

    assert_int_equal(argus_placer_fill(p, bus, cpus, pl, err, sizeof err), 0);
    assert_true(pl->flags & ARGUS_PLACE_KNOWN);
}

/* Rank bound to socket 0 with the GPU of socket 0: local, NUMA 0, the NIC behind the same
 * PCI switch (mlx5_0, not its ib0 twin nor the nearer-looking eth0). */
static void test_local(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_2S);
    struct argus_placement pl;

    fill(p, "0000:17:00.0", "0-3", &pl);
    assert_true(pl.flags & ARGUS_PLACE_GPU);
    assert_true(pl.flags & ARGUS_PLACE_CPUS);
    assert_true(pl.flags & ARGUS_PLACE_LOCAL);
    assert_string_equal(pl.gpu_bus, "0000:17:00.0");
    assert_int_equal(pl.gpu_numa, 0);
    assert_int_equal(pl.cpu_numa, 0);
    assert_string_equal(pl.nic, "mlx5_0");
    assert_string_equal(pl.cpuset, "0-3");

    /* socket 1: no domain in the id, upper case; its own NIC */
    fill(p, "B1:00.0", "4,5", &pl);
    assert_true(pl.flags & ARGUS_PLACE_LOCAL);
    assert_string_equal(pl.gpu_bus, "0000:b1:00.0");
    assert_int_equal(pl.gpu_numa, 1);
    assert_int_equal(pl.cpu_numa, 1);
    assert_string_equal(pl.nic, "mlx5_1");
    assert_string_equal(pl.cpuset, "4-5");
    argus_placer_free(p);
}

/* Bound to the other socket, or spread over both: not local. */
static void test_not_local(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_2S);
    struct argus_placement pl;

    fill(p, "0000:b1:00.0", "0-3", &pl);
    assert_true(pl.flags & ARGUS_PLACE_GPU);
    assert_true(pl.flags & ARGUS_PLACE_CPUS);
    assert_false(pl.flags & ARGUS_PLACE_LOCAL);
    assert_int_equal(pl.gpu_numa, 1);
    assert_int_equal(pl.cpu_numa, 0);
    assert_string_equal(pl.nic, "mlx5_1"); /* nearest to the GPU, not to the CPUs */

    fill(p, "0000:17:00.0", "0-7", &pl); /* unbound on a two-socket host */
    assert_false(pl.flags & ARGUS_PLACE_LOCAL);
    assert_int_equal(pl.cpu_numa, -1);
    assert_string_equal(pl.cpuset, "0-7");

    fill(p, "0000:17:00.0", "3-4", &pl); /* one CPU over the edge is enough */
    assert_false(pl.flags & ARGUS_PLACE_LOCAL);
    argus_placer_free(p);
}

/* Two ranks given the same GPU get the same record (the analysis finds the sharing). */
static void test_shared_gpu(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_2S);
    struct argus_placement a, b;

    fill(p, "0000:17:00.0", "0-1", &a);
    fill(p, "0000:17:00.0", "2-3", &b);
    assert_string_equal(a.gpu_bus, b.gpu_bus);
    assert_true((a.flags & b.flags) & ARGUS_PLACE_LOCAL);
    argus_placer_free(p);
}

/* A bus id the topology does not have, and no bus id at all: the GPU is unknown, never
 * local; the NIC comes from the CPUs' side. */
static void test_gpu_not_in_topology(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_2S);
    struct argus_placement pl;

    fill(p, "0000:65:00.0", "4-7", &pl);
    assert_false(pl.flags & ARGUS_PLACE_GPU);
    assert_false(pl.flags & ARGUS_PLACE_LOCAL);
    assert_string_equal(pl.gpu_bus, "0000:65:00.0");
    assert_int_equal(pl.gpu_numa, -1);
    assert_string_equal(pl.nic, "mlx5_1");

    fill(p, NULL, "0-3", &pl);
    assert_string_equal(pl.gpu_bus, "");
    assert_false(pl.flags & (ARGUS_PLACE_GPU | ARGUS_PLACE_LOCAL));
    assert_string_equal(pl.nic, "mlx5_0");
    argus_placer_free(p);
}

/* A host with neither GPU nor NIC. A replayed topology is not this machine: without a
 * given CPU set the binding is unknown rather than wrong. */
static void test_no_gpu_no_nic(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_NOGPU);
    struct argus_placement pl;

    fill(p, "0000:17:00.0", "0-1", &pl);
    assert_false(pl.flags & (ARGUS_PLACE_GPU | ARGUS_PLACE_LOCAL));
    assert_true(pl.flags & ARGUS_PLACE_CPUS);
    assert_string_equal(pl.nic, "");
    assert_int_equal(pl.cpu_numa, 0);

    fill(p, NULL, NULL, &pl);
    assert_int_equal(pl.flags, ARGUS_PLACE_KNOWN);
    assert_string_equal(pl.cpuset, "");
    argus_placer_free(p);
}

/* Malformed XML, a missing file: one line naming the file, no placer, no crash. */
static void test_malformed(void **state)
{
    (void)state;
    struct argus_placer *p = (struct argus_placer *)&p;
    char err[256] = "";

    assert_true(argus_placer_create(XML_BAD, &p, err, sizeof err) < 0);
    assert_null(p);
    assert_non_null(strstr(err, "topo-malformed.xml"));
    assert_null(strchr(err, '\n'));
    err[0] = '\0';
    assert_true(argus_placer_create(ARGUS_PLACEMENT_DATA "/absent.xml", &p, err, sizeof err)
                < 0);
    assert_null(p);
    assert_non_null(strstr(err, "absent.xml"));
}

/* Malformed inputs to fill: one line, -EINVAL, the rest still filled. */
static void test_bad_inputs(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_2S);
    struct argus_placement pl;
    char err[256] = "";
    static const char *const bad_bus[] = {"17:00", "0000:17:00:0", "zz:00.0", "0:1:2.3.4",
                                          "0000:17:20.0", "0000:17:00.0x", ":17:00.0"};

    for (size_t i = 0; i < sizeof bad_bus / sizeof *bad_bus; i++) {
        err[0] = '\0';
        assert_int_equal(argus_placer_fill(p, bad_bus[i], "0-3", &pl, err, sizeof err),
                         -EINVAL);
        assert_non_null(strstr(err, "GPU bus id"));
        assert_true(pl.flags & ARGUS_PLACE_CPUS);
        assert_false(pl.flags & ARGUS_PLACE_GPU);
    }
    assert_int_equal(argus_placer_fill(p, "0000:17:00.0", "x-y", &pl, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "CPU set"));
    assert_true(pl.flags & ARGUS_PLACE_GPU);
    assert_false(pl.flags & (ARGUS_PLACE_CPUS | ARGUS_PLACE_LOCAL));
    argus_placer_free(p);
}

/* This machine: loads, and the binding is known (every process has one). Without hwloc's
 * PCI component: it leaks about 136 bytes a load inside libpciaccess, which LeakSanitizer
 * (a --enable-sanitizers build) would report; the binding does not need it. */
static void test_this_machine(void **state)
{
    (void)state;
    struct argus_placer *p = NULL;
    struct argus_placement pl;
    char err[256] = "";

    setenv("HWLOC_COMPONENTS", "-pci", 1);
    if (argus_placer_create(NULL, &p, err, sizeof err) != 0) {
        print_message("this machine's topology: %s\n", err);
        skip();
    }
    fill(p, NULL, NULL, &pl);
    assert_true(pl.flags & ARGUS_PLACE_CPUS);
    assert_true(pl.cpuset[0] != '\0');
    argus_placer_free(p);
}

/* A long CPU list is cut at a whole range and flagged. */
static void test_long_cpuset(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_2S);
    struct argus_placement pl;

    fill(p, "0000:17:00.0", "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38", &pl);
    assert_true(pl.flags & ARGUS_PLACE_CPUS_CUT);
    assert_true(strlen(pl.cpuset) < sizeof pl.cpuset);
    const char *dots = strstr(pl.cpuset, ",...");
    assert_non_null(dots);
    assert_string_equal(dots, ",...");
    argus_placer_free(p);
}

/* The placement travels in the rank-info record and comes back equal; a record without it
 * (not probed) decodes with flags 0; a damaged length is refused with one line. */
static void test_wire(void **state)
{
    (void)state;
    struct argus_placer *p = load(XML_2S);
    struct argus_rank_info ri, ro;
    uint8_t buf[4096];
    char err[256] = "";
    int type;

    memset(&ri, 0, sizeof ri);
    ri.rank = 5;
    ri.world_size = 8;
    ri.device = -1;
    strcpy(ri.host, "gpu-node-a");
    fill(p, "0000:b1:00.0", "0-3", &ri.place);
    long n = argus_rankinfo_encode(&ri, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), 0);
    assert_memory_equal(&ro.place.flags, &ri.place.flags, 1);
    assert_int_equal(ro.place.gpu_numa, 1);
    assert_int_equal(ro.place.cpu_numa, 0);
    assert_string_equal(ro.place.gpu_bus, "0000:b1:00.0");
    assert_string_equal(ro.place.nic, "mlx5_1");
    assert_string_equal(ro.place.cpuset, "0-3");
    assert_int_equal(argus_rankinfo_encode(&ri, buf, (size_t)n - 1), -ENOSPC);

    /* the GPU bus id's length byte: header 12, fixed 40, host 1 + 10, groups 1 + 4, then
     * flags and the two NUMA nodes (5); made too long and checksummed again */
    const size_t at = ARGUS_WIRE_HDR + 40 + 11 + 5 + 5;
    assert_int_equal(buf[at], strlen("0000:b1:00.0"));
    buf[at] = 25;
    uint32_t crc = argus_crc32c(buf, (size_t)n - 4);
    for (int i = 0; i < 4; i++)
        buf[(size_t)n - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    assert_int_equal(argus_record_peek(buf, (size_t)n, 0, &type, err, sizeof err), n);
    err[0] = '\0';
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)n, &ro, err, sizeof err), -EBADMSG);
    assert_non_null(strstr(err, "placement GPU bus id of 25 bytes"));

    struct argus_rank_info bare = ri;
    memset(&bare.place, 0, sizeof bare.place);
    long m = argus_rankinfo_encode(&bare, buf, sizeof buf);
    assert_true(m > 0 && m < n);
    assert_int_equal(argus_rankinfo_decode(buf, (size_t)m, &ro, err, sizeof err), 0);
    assert_int_equal(ro.place.flags, 0);
    argus_placer_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local),
        cmocka_unit_test(test_not_local),
        cmocka_unit_test(test_shared_gpu),
        cmocka_unit_test(test_gpu_not_in_topology),
        cmocka_unit_test(test_no_gpu_no_nic),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_this_machine),
        cmocka_unit_test(test_long_cpuset),
        cmocka_unit_test(test_wire),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
