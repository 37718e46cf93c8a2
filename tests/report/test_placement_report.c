/* test_placement_report.c — where each rank runs, through the analysis (analysis/placement.c)
 * into report.json's "placement" and report.md's "Placement" (report/json.c, markdown.c): a
 * correct placement gives the map and no finding; a rank bound away from its GPU, and two
 * ranks on one GPU, give misplacement findings; a misplaced rank that is also a host_stall
 * source says so; rank infos without a placement give no section at all. On the synthetic
 * job of tests/synth/ (16 ranks, 8 a host).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "analysis/analysis.h"
#include "report/report.h"
#include "tests/report/report_testutil.h"
#include "tests/synth/synth.h"
#include "tests/common/tmpdir.h"

/* Local placement for every rank: GPU q % 8 of its host, NUMA node (q % 8) / 4, bound to
 * that node's CPUs 0-31 or 32-63. */
static void place_all(struct argus_jobstore *js)
{
    for (uint32_t q = 0; q < argus_jobstore_nranks(js); q++) {
        struct argus_rank_info ri = *argus_jobstore_rankinfo(js, q);
        struct argus_placement *p = &ri.place;
        const int g = (int)(q % 8), node = g / 4;
        memset(p, 0, sizeof *p);
        p->flags = ARGUS_PLACE_KNOWN | ARGUS_PLACE_GPU | ARGUS_PLACE_CPUS | ARGUS_PLACE_LOCAL;
        p->gpu_numa = p->cpu_numa = (int16_t)node;
        snprintf(p->gpu_bus, sizeof p->gpu_bus, "0000:%02x:00.0", 0x17 + 0x20 * g);
        snprintf(p->nic, sizeof p->nic, "mlx5_%d", g);
        snprintf(p->cpuset, sizeof p->cpuset, "%d-%d", 32 * node, 32 * node + 31);
        assert_int_equal(argus_jobstore_set_rankinfo(js, &ri), 0);
    }
}

static void edit(struct argus_jobstore *js, uint32_t q, const char *bus, int cpu_numa, int local)
{
    struct argus_rank_info ri = *argus_jobstore_rankinfo(js, q);
    if (bus)
        snprintf(ri.place.gpu_bus, sizeof ri.place.gpu_bus, "%s", bus);
    if (cpu_numa >= 0) {
        ri.place.cpu_numa = (int16_t)cpu_numa;
        snprintf(ri.place.cpuset, sizeof ri.place.cpuset, "%d-%d", 32 * cpu_numa,
                 32 * cpu_numa + 31);
    }
    if (!local)
        ri.place.flags &= (uint8_t)~ARGUS_PLACE_LOCAL;
    assert_int_equal(argus_jobstore_set_rankinfo(js, &ri), 0);
}

struct out {
    char dir[64];
    yajl_val json;
    char *md;
    struct argus_result r;
};

/* dir/name's bytes (asserted readable). */
static char *slurp(const char *dir, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    char *b = rt_slurp(p, NULL);
    assert_non_null(b);
    return b;
}

/* Analyse js, write the report, read report.json and report.md back. */
static void run(struct argus_jobstore *js, struct out *o)
{
    char err[256];

    assert_non_null(argus_test_tmpdir(o->dir, sizeof o->dir, "place"));
    assert_int_equal(argus_analyze(js, NULL, &o->r), 0);
    assert_int_equal(argus_report_write(o->dir, js, &o->r, err, sizeof err), 0);
    char *j = slurp(o->dir, "report.json");
    o->json = yajl_tree_parse(j, err, sizeof err);
    free(j);
    assert_non_null(o->json);
    o->md = slurp(o->dir, "report.md");
}

static void done(struct out *o, struct argus_jobstore *js)
{
    rt_empty_dir(o->dir);
    rmdir(o->dir);
    yajl_tree_free(o->json);
    free(o->md);
    argus_result_free(&o->r);
    argus_jobstore_free(js);
}

/* The string at key k of v (asserted present). */
static const char *str(yajl_val v, const char *k)
{
    const char *path[] = {k, NULL};
    yajl_val x = yajl_tree_get(v, path, yajl_t_string);
    assert_non_null(x);
    return x->u.string;
}

static yajl_val at(yajl_val v, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    return yajl_tree_get(v, path, yajl_t_any);
}

static struct argus_jobstore *job(int host_stall_rank)
{
    struct synth_opts o;
    struct argus_jobstore *js = NULL;

    synth_default(&o, 7);
    if (host_stall_rank >= 0) {
        struct synth_fault *f = synth_add(&o, SY_HOST, 20, 40, 1.0);
        f->ranks[f->nranks++] = host_stall_rank;
        f->ms = 30;
    }
    assert_int_equal(synth_job(&o, &js), 0);
    return js;
}

static void test_correct_placement(void **state)
{
    (void)state;
    struct argus_jobstore *js = job(-1);
    struct out o;

    place_all(js);
    run(js, &o);
    yajl_val ranks = at(o.json, "placement", "ranks");
    assert_true(YAJL_IS_ARRAY(ranks));
    assert_int_equal(ranks->u.array.len, 16);
    yajl_val r5 = ranks->u.array.values[5];
    const char *k_rank[] = {"rank", NULL}, *k_bus[] = {"gpu_bus_id", NULL},
               *k_local[] = {"local", NULL}, *k_nic[] = {"nic", NULL},
               *k_numa[] = {"gpu_numa", NULL}, *k_host[] = {"host", NULL},
               *k_cpus[] = {"cpuset", NULL};
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(r5, k_rank, yajl_t_number)), 5);
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(r5, k_bus, yajl_t_string)),
                        "0000:b7:00.0");
    assert_true(YAJL_IS_TRUE(yajl_tree_get(r5, k_local, yajl_t_any)));
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(r5, k_nic, yajl_t_string)), "mlx5_5");
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(r5, k_numa, yajl_t_number)), 1);
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(r5, k_host, yajl_t_string)), "node000");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(r5, k_cpus, yajl_t_string)), "32-63");
    yajl_val fs = at(o.json, "placement", "findings");
    assert_true(YAJL_IS_ARRAY(fs));
    assert_int_equal(fs->u.array.len, 0);
    assert_non_null(strstr(o.md, "## Placement"));
    assert_non_null(strstr(o.md, "| 5 | node000 | 0000:b7:00.0 | 1 | mlx5_5 | 32-63 | yes |"));
    assert_null(strstr(o.md, "misplacement"));
    assert_non_null(strstr(o.md, "The 16 ranks whose GPU and CPUs are known run on CPUs local"));
    done(&o, js);
}

/* Rank 5 bound to the other socket's CPUs; ranks 10 and 11 (node001) on one GPU. */
static void test_misplaced(void **state)
{
    (void)state;
    struct argus_jobstore *js = job(-1);
    struct out o;

    place_all(js);
    edit(js, 5, NULL, 0, 0);
    edit(js, 11, "0000:57:00.0", -1, 1); /* rank 10's GPU (10 % 8 == 2) */
    for (uint32_t q = 12; q < 14; q++) { /* one bus id, hosts unknown: not one host */
        struct argus_rank_info ri = *argus_jobstore_rankinfo(js, q);
        ri.host[0] = '\0';
        snprintf(ri.place.gpu_bus, sizeof ri.place.gpu_bus, "0000:17:00.0");
        assert_int_equal(argus_jobstore_set_rankinfo(js, &ri), 0);
    }
    run(js, &o);
    yajl_val fs = at(o.json, "placement", "findings");
    assert_true(YAJL_IS_ARRAY(fs));
    assert_int_equal(fs->u.array.len, 2);
    const char *k_kind[] = {"kind", NULL}, *k_reason[] = {"reason", NULL},
               *k_ranks[] = {"ranks", NULL}, *k_bus[] = {"gpu_bus_id", NULL},
               *k_host[] = {"host", NULL},
               *k_hs[] = {"host_stall_sources", NULL}, *k_local[] = {"local", NULL};
    yajl_val a = fs->u.array.values[0], b = fs->u.array.values[1];
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(a, k_kind, yajl_t_string)),
                        "misplacement");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(a, k_reason, yajl_t_string)),
                        "cpus_not_local");
    yajl_val ar = yajl_tree_get(a, k_ranks, yajl_t_array);
    assert_int_equal(ar->u.array.len, 1);
    assert_int_equal(YAJL_GET_INTEGER(ar->u.array.values[0]), 5);
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(a, k_hs, yajl_t_number)), 0);
    assert_non_null(strstr(str(a, "evidence"),
                           "rank 5 on node000 is bound to CPUs 0-31 (NUMA node 0), its GPU "
                           "0000:b7:00.0 is on NUMA node 1"));
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(b, k_kind, yajl_t_string)),
                        "misplacement");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(b, k_reason, yajl_t_string)),
                        "shared_gpu");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(b, k_bus, yajl_t_string)),
                        "0000:57:00.0");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(b, k_host, yajl_t_string)), "node001");
    yajl_val br = yajl_tree_get(b, k_ranks, yajl_t_array);
    assert_int_equal(br->u.array.len, 2);
    assert_int_equal(YAJL_GET_INTEGER(br->u.array.values[0]), 10);
    assert_int_equal(YAJL_GET_INTEGER(br->u.array.values[1]), 11);
    /* the same bus id on another host is another GPU: ranks 2 and 10 share nothing */
    yajl_val r12 = at(o.json, "placement", "ranks")->u.array.values[12];
    assert_string_equal(str(r12, "host"), "unknown");
    yajl_val r5 = at(o.json, "placement", "ranks")->u.array.values[5];
    assert_true(YAJL_IS_FALSE(yajl_tree_get(r5, k_local, yajl_t_any)));
    assert_non_null(strstr(o.md, "**misplacement**: 2 findings"));
    assert_non_null(strstr(o.md, "- **misplacement** (cpus_not_local): "));
    assert_non_null(strstr(o.md, "- **misplacement** (shared_gpu): 2 ranks on node001 use one "
                                 "GPU, 0000:57:00.0"));
    assert_non_null(strstr(o.md, "| 5 | node000 | 0000:b7:00.0 | 1 | mlx5_5 | 0-31 | **no** |"));
    done(&o, js);
}

/* The misplaced rank is the host_stall source: the finding says so. */
static void test_host_stall_tie(void **state)
{
    (void)state;
    struct argus_jobstore *js = job(5);
    struct out o;

    place_all(js);
    edit(js, 5, NULL, 0, 0);
    run(js, &o);
    int stall = 0;
    for (size_t i = 0; i < o.r.n_anomalies; i++)
        for (uint32_t k = 0; k < o.r.anomalies[i].n_ranks; k++)
            stall |= o.r.anomalies[i].kind == ARGUS_AK_HOST_STALL &&
                     o.r.anomalies[i].ranks[k] == 5;
    assert_true(stall);
    yajl_val fs = at(o.json, "placement", "findings");
    assert_int_equal(fs->u.array.len, 1);
    const char *k_hs[] = {"host_stall_sources", NULL};
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(fs->u.array.values[0], k_hs,
                                                    yajl_t_number)), 1);
    assert_non_null(strstr(str(fs->u.array.values[0], "evidence"),
                           "1 of these ranks are host_stall sources (rank 5 among them)"));
    done(&o, js);
}

/* Rank infos without a placement (older builds, no hwloc): no section, no finding. */
static void test_no_placement(void **state)
{
    (void)state;
    struct argus_jobstore *js = job(-1);
    struct out o;

    run(js, &o);
    assert_null(o.r.placement);
    assert_null(at(o.json, "placement", NULL));
    assert_null(strstr(o.md, "## Placement"));
    assert_null(strstr(o.md, "misplacement"));
    done(&o, js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correct_placement),
        cmocka_unit_test(test_misplaced),
        cmocka_unit_test(test_host_stall_tie),
        cmocka_unit_test(test_no_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
