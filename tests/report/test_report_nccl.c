/* test_report_nccl.c — NCCL's in-band view in the reports (report/nccl.c;
 * docs/REPORT_SCHEMA.md, "nccl"): on a synthetic job whose rank 5 arrives 15 ms late at
 * the DP all-gather in steps 20-35 (tests/synth: SY_NCCL_LATE), report.json carries the
 * anomaly's `nccl` object (last_arriver 5, its lateness, per-rank split) and the whole
 * run's `nccl.communicators`, and report.md its line and its "NCCL in-band view" section;
 * the same job without the NCCL block writes no `nccl` key and no such section.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "analysis/analysis.h"
#include "report/report.h"
#include "tests/synth/synth.h"
#include "tests/synth/synth_run.h"
#include "tests/common/tmpdir.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static char *slurp(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static void write_job(int nccl, char *dir) /* dir: 512 bytes */
{
    struct synth_opts o;
    struct argus_result r;
    char err[256];
    synth_default(&o, 71);
    o.comm_groups = 2;
    o.nccl = nccl;
    struct synth_fault *f = synth_add(&o, SY_NCCL_LATE, 20, 35, 1.0);
    f->ranks[0] = 5;
    f->nranks = 1;
    f->ms = 15;
    struct argus_jobstore *js = synth_run(&o, &r);
    assert_non_null(argus_test_tmpdir(dir, 512, "report-nccl"));
    assert_int_equal(argus_report_write(dir, js, &r, err, sizeof err), 0);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

static double num(yajl_val v, const char **path)
{
    yajl_val x = yajl_tree_get(v, path, yajl_t_number);
    assert_non_null(x);
    return YAJL_GET_DOUBLE(x);
}

static void test_nccl_in_reports(void **state)
{
    (void)state;
    char dir[512], ebuf[256];
    write_job(1, dir);
    char *js = slurp(dir, "report.json"), *md = slurp(dir, "report.md");
    yajl_val t = yajl_tree_parse(js, ebuf, sizeof ebuf);
    assert_non_null(t);
    const char *an[] = {"anomalies", NULL};
    yajl_val arr = yajl_tree_get(t, an, yajl_t_array);
    assert_non_null(arr);
    assert_true(YAJL_GET_ARRAY(arr)->len >= 1);
    yajl_val a0 = YAJL_GET_ARRAY(arr)->values[0];
    const char *last[] = {"nccl", "last_arriver", NULL}, *lat[] = {"nccl", "median_lateness_ms", NULL};
    assert_int_equal((int)num(a0, last), 5);
    const double ms = num(a0, lat);
    assert_true(ms > 13.5 && ms < 16.5);
    const char *late[] = {"nccl", "late", NULL};
    assert_true(YAJL_IS_TRUE(yajl_tree_get(a0, late, yajl_t_true)));
    const char *rk[] = {"nccl", "ranks", NULL};
    yajl_val ranks = yajl_tree_get(a0, rk, yajl_t_array);
    assert_non_null(ranks);
    assert_int_equal(YAJL_GET_ARRAY(ranks)->len, 4);
    const char *cm[] = {"nccl", "communicators", NULL};
    yajl_val comms = yajl_tree_get(t, cm, yajl_t_array);
    assert_non_null(comms);
    assert_int_equal(YAJL_GET_ARRAY(comms)->len, 4);
    assert_non_null(strstr(md, "## NCCL in-band view"));
    assert_non_null(strstr(md, "- NCCL communicator 0x"));
    assert_non_null(strstr(md, "rank 5 arrived last in 16 steps"));
    yajl_tree_free(t);
    free(js);
    free(md);
    /* without the block: nothing of it */
    char dir0[512];
    write_job(0, dir0);
    js = slurp(dir0, "report.json");
    md = slurp(dir0, "report.md");
    assert_null(strstr(js, "\"nccl\""));
    assert_null(strstr(md, "NCCL"));
    free(js);
    free(md);
    rm_tree(dir);
    rm_tree(dir0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_in_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
