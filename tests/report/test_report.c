/* test_report.c — the report writers: report.json parses and has every field of
 * docs/REPORT_SCHEMA.md with the right types, steps.csv has its header and one row per
 * (step, rank), report.md is written, anomalies.jsonl gets each anomaly once across
 * repeated analyses, the one-line anomaly JSON and the printed summary; symlinks planted
 * in the output directory are not written through, and the summary says exactly what was
 * and was not written.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "analysis/analysis.h"
#include "common/outdir.h"
#include "report/report.h"
#include "tests/report/report_testutil.h"
#include "tests/synth/synth.h"
#include "tests/common/tmpdir.h"

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static yajl_val get(yajl_val v, const char *a, const char *b)
{
    const char *path[] = { a, b, NULL };
    if (!b)
        path[1] = NULL;
    return yajl_tree_get(v, path, yajl_t_any);
}

struct fixture {
    char dir[256];
    struct argus_jobstore *js;
    struct argus_result r;
    struct argus_outdir od; /* dir, opened */
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    struct synth_opts o;
    if (!argus_test_tmpdir(fx->dir, sizeof fx->dir, "report"))
        return -1;
    synth_default(&o, 21);
    struct synth_fault *f = synth_add(&o, SY_STRAGGLER, 20, 40, 1.5);
    f->ranks[f->nranks++] = 5;
    if (synth_job(&o, &fx->js))
        return -1;
    struct argus_job_meta *m = argus_jobstore_meta(fx->js);
    snprintf(m->id, sizeof m->id, "1234");
    if (argus_analyze(fx->js, NULL, &fx->r))
        return -1;
    argus_outdir_init(&fx->od);
    snprintf(fx->od.path, sizeof fx->od.path, "%s", fx->dir);
    fx->od.fd = open(fx->dir, O_RDONLY | O_DIRECTORY);
    if (fx->od.fd < 0)
        return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    rt_empty_dir(fx->dir);
    argus_outdir_close(&fx->od);
    assert_int_equal(rmdir(fx->dir), 0);
    argus_result_free(&fx->r);
    argus_jobstore_free(fx->js);
    free(fx);
    return 0;
}

/* report.md leads with the incident (what, where, since when, how sure, next) and embeds
 * the heatmaps; metrics.prom counts the anomaly by kind; the SVGs start as XML. */
static void test_md_prom_svg(void **state)
{
    struct fixture *fx = *state;
    char err[256], p[512];
    assert_int_equal(argus_report_write(fx->dir, fx->js, &fx->r, err, sizeof err), 0);
    assert_int_equal(fx->r.n_anomalies, 1);
    snprintf(p, sizeof p, "%s/report.md", fx->dir);
    char *md = rt_slurp(p, NULL);
    assert_non_null(md);
    assert_non_null(strstr(md, "**compute_straggler on rank 5 since step"));
    assert_non_null(strstr(md, "confidence"));
    assert_non_null(strstr(md, "### What to look at next"));
    assert_non_null(strstr(md, "](heatmap.svg)"));
    assert_non_null(strstr(md, "](heatmap-1.svg)"));
    free(md);
    snprintf(p, sizeof p, "%s/metrics.prom", fx->dir);
    char *prom = rt_slurp(p, NULL);
    assert_non_null(prom);
    assert_non_null(strstr(prom, "# TYPE argus_anomalies gauge\n"));
    assert_non_null(
        strstr(prom, "argus_anomalies{job=\"1234\",step=\"0\",kind=\"compute_straggler\"} 1\n"));
    assert_non_null(strstr(prom, "argus_rank_flagged{job=\"1234\",step=\"0\",rank=\"5\","));
    assert_null(strstr(prom, ".partial"));
    free(prom);
    const char *svgs[] = { "heatmap.svg", "heatmap-1.svg" };
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", fx->dir, svgs[i]);
        char *svg = rt_slurp(p, NULL);
        assert_non_null(svg);
        assert_true(strncmp(svg, "<?xml", 5) == 0);
        assert_non_null(strstr(svg, "</svg>\n"));
        free(svg);
    }
}

static void test_json(void **state)
{
    struct fixture *fx = *state;
    char err[256], p[512], perr[256];
    assert_int_equal(argus_report_write(fx->dir, fx->js, &fx->r, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/report.json", fx->dir);
    char *txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    yajl_val root = yajl_tree_parse(txt, perr, sizeof perr);
    if (!root)
        fprintf(stderr, "parse: %s\n", perr);
    assert_non_null(root);
    assert_true(YAJL_IS_INTEGER(get(root, "argus_report_version", NULL)));
    assert_int_equal(YAJL_GET_INTEGER(get(root, "argus_report_version", NULL)), 1);
    assert_string_equal(YAJL_GET_STRING(get(root, "job", "id")), "1234");
    assert_true(YAJL_IS_STRING(get(root, "job", "step")));
    assert_int_equal(YAJL_GET_INTEGER(get(root, "job", "ranks")), 16);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "job", "nodes")), 2);
    assert_string_equal(YAJL_GET_STRING(get(root, "job", "source")), "replay");
    assert_true(YAJL_IS_STRING(get(root, "job", "started_at")));
    const char *ended = YAJL_GET_STRING(get(root, "job", "ended_at"));
    assert_non_null(ended);
    assert_non_null(strchr(ended, 'T'));
    assert_true(YAJL_IS_TRUE(get(root, "job", "complete")));
    assert_int_equal(YAJL_GET_INTEGER(get(root, "layout", "tp")), 2);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "layout", "pp")), 2);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "layout", "dp")), 4);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "layout", "ep")), 1);
    assert_true(YAJL_IS_FALSE(get(root, "layout", "inferred")));
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps", "count")), 60);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps", "first")), 0);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps", "last")), 59);
    assert_true(YAJL_IS_NUMBER(get(root, "steps", "median_ms")));
    assert_true(YAJL_IS_NUMBER(get(root, "steps", "p99_ms")));
    assert_true(YAJL_IS_NUMBER(get(root, "steps", "cv")));
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps", "unjudged")), 0);
    assert_true(YAJL_IS_NULL(get(root, "steps", "unjudged_first")));
    assert_true(YAJL_IS_INTEGER(get(root, "collection", "kernels_seen")));
    assert_true(YAJL_IS_INTEGER(get(root, "collection", "summary_bytes_per_rank_step")));
    assert_true(YAJL_IS_INTEGER(get(root, "collection", "raw_bytes_per_rank_step")));
    assert_true(YAJL_IS_INTEGER(get(root, "collection", "dropped_events")));
    assert_true(YAJL_IS_NULL(get(root, "collection", "cupti_unavailable")));

    yajl_val an = get(root, "anomalies", NULL);
    assert_true(YAJL_IS_ARRAY(an));
    assert_int_equal(an->u.array.len, fx->r.n_anomalies);
    assert_true(an->u.array.len >= 1);
    yajl_val a = an->u.array.values[0];
    assert_true(YAJL_IS_INTEGER(get(a, "id", NULL)));
    assert_string_equal(YAJL_GET_STRING(get(a, "level", NULL)), "L2");
    assert_string_equal(YAJL_GET_STRING(get(a, "kind", NULL)), "compute_straggler");
    yajl_val steps = get(a, "steps", NULL);
    assert_true(YAJL_IS_ARRAY(steps) && steps->u.array.len == 2);
    yajl_val ranks = get(a, "ranks", NULL);
    assert_true(YAJL_IS_ARRAY(ranks) && ranks->u.array.len == 1);
    assert_int_equal(YAJL_GET_INTEGER(ranks->u.array.values[0]), 5);
    assert_true(YAJL_IS_ARRAY(get(a, "victims", NULL)));
    yajl_val grp = get(a, "group", NULL);
    assert_true(grp == NULL || YAJL_IS_NULL(grp) || YAJL_IS_OBJECT(grp));
    assert_true(YAJL_IS_STRING(get(a, "phase", NULL)));
    yajl_val kern = get(a, "kernels", NULL);
    assert_true(YAJL_IS_ARRAY(kern) && kern->u.array.len >= 1);
    assert_true(YAJL_IS_STRING(kern->u.array.values[0]));
    assert_true(YAJL_IS_NUMBER(get(a, "slowdown", NULL)));
    assert_true(YAJL_IS_NUMBER(get(a, "score", NULL)));
    assert_true(YAJL_IS_INTEGER(get(a, "detected_at_step", NULL)));
    assert_true(YAJL_IS_STRING(get(a, "evidence", NULL)));
    assert_null(get(a, "trace", NULL));

    yajl_val rk = get(root, "ranks", NULL);
    assert_true(YAJL_IS_ARRAY(rk) && rk->u.array.len == 16);
    yajl_val r5 = rk->u.array.values[5];
    assert_int_equal(YAJL_GET_INTEGER(get(r5, "rank", NULL)), 5);
    assert_string_equal(YAJL_GET_STRING(get(r5, "host", NULL)), "node000");
    assert_int_equal(YAJL_GET_INTEGER(get(r5, "device", NULL)), 5);
    assert_true(YAJL_IS_NUMBER(get(r5, "median_step_ms", NULL)));
    yajl_val fl = get(r5, "flags", NULL);
    assert_true(YAJL_IS_ARRAY(fl) && fl->u.array.len == 1);
    assert_string_equal(YAJL_GET_STRING(fl->u.array.values[0]), "compute_straggler");
    yajl_tree_free(root);
    free(txt);

    snprintf(p, sizeof p, "%s/report.md", fx->dir);
    txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    assert_non_null(strstr(txt, "compute_straggler"));
    assert_non_null(strstr(txt, "## Step time"));
    free(txt);
    snprintf(p, sizeof p, "%s/report.json.partial", fx->dir);
    assert_int_not_equal(access(p, F_OK), 0);
}

/* Steps the analysis held but did not judge (missing data) are named in steps. */
static void test_json_unjudged(void **state)
{
    struct fixture *fx = *state;
    char err[256], p[512], perr[256];
    const uint64_t n = fx->r.incomplete_steps, first = fx->r.incomplete_first;

    fx->r.incomplete_steps = 7;
    fx->r.incomplete_first = 53;
    int rc = argus_report_write(fx->dir, fx->js, &fx->r, err, sizeof err);
    fx->r.incomplete_steps = n;
    fx->r.incomplete_first = first;
    assert_int_equal(rc, 0);
    snprintf(p, sizeof p, "%s/report.json", fx->dir);
    char *txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    yajl_val root = yajl_tree_parse(txt, perr, sizeof perr);
    assert_non_null(root);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps", "unjudged")), 7);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps", "unjudged_first")), 53);
    yajl_tree_free(root);
    free(txt);
    snprintf(p, sizeof p, "%s/report.md", fx->dir);
    txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    assert_non_null(strstr(txt, "7 steps (the first: step 53) were not judged"));
    free(txt);
}

static void test_csv(void **state)
{
    struct fixture *fx = *state;
    char err[256], p[512];
    assert_int_equal(argus_report_write(fx->dir, fx->js, &fx->r, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/steps.csv", fx->dir);
    char *txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    const char *hdr =
        "step,rank,start_ns,end_ns,forward_ms,backward_ms,optimizer_ms,comm_ms,host_gap_ms\n";
    assert_memory_equal(txt, hdr, strlen(hdr));
    assert_int_equal(count_lines(txt), 1 + 60 * 16);
    assert_non_null(strstr(txt, "\n0,0,"));
    assert_non_null(strstr(txt, "\n59,15,"));
    free(txt);
}

static void test_jsonl_once(void **state)
{
    struct fixture *fx = *state;
    char err[256], p[512];
    struct argus_anomaly_log log;
    argus_anomaly_log_init(&log);
    snprintf(p, sizeof p, "%s/anomalies.jsonl", fx->dir);
    unlink(p);
    assert_int_equal(argus_anomaly_log_append(&log, &fx->od, fx->js, &fx->r, err, sizeof err), 0);
    /* a second, later analysis that sees the same anomaly grown by a step */
    struct argus_result r2 = fx->r;
    struct argus_anomaly grown[8];
    memcpy(grown, fx->r.anomalies, fx->r.n_anomalies * sizeof grown[0]);
    grown[0].step_last += 1;
    r2.anomalies = grown;
    assert_int_equal(argus_anomaly_log_append(&log, &fx->od, fx->js, &r2, err, sizeof err), 0);
    assert_int_equal(argus_anomaly_log_append(&log, &fx->od, fx->js, &fx->r, err, sizeof err), 0);
    char *txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    assert_int_equal(count_lines(txt), (int)fx->r.n_anomalies);
    char *nl = strchr(txt, '\n');
    *nl = '\0';
    char perr[128];
    yajl_val v = yajl_tree_parse(txt, perr, sizeof perr);
    assert_non_null(v);
    assert_string_equal(YAJL_GET_STRING(get(v, "kind", NULL)), "compute_straggler");
    yajl_tree_free(v);
    free(txt);
    /* a different anomaly (other rank) is appended */
    grown[0].ranks[0] = 6;
    assert_int_equal(argus_anomaly_log_append(&log, &fx->od, fx->js, &r2, err, sizeof err), 0);
    txt = rt_slurp(p, NULL);
    assert_int_equal(count_lines(txt), (int)fx->r.n_anomalies + 1);
    free(txt);
    argus_anomaly_log_free(&log);
}

static void test_line_and_summary(void **state)
{
    struct fixture *fx = *state;
    char line[8192], small[16];
    long n = argus_report_anomaly_json(fx->js, &fx->r.anomalies[0], line, sizeof line);
    assert_true(n > 0 && (size_t)n == strlen(line));
    assert_null(strchr(line, '\n'));
    assert_int_equal(argus_report_anomaly_json(fx->js, &fx->r.anomalies[0], small, sizeof small),
                     -ENOSPC);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    argus_report_print_summary(f, "/out", fx->js, &fx->r, NULL);
    fclose(f);
    assert_non_null(strstr(buf, "argus: report written to /out/report.json\n"));
    assert_non_null(strstr(buf, "argus: anomaly 1: compute_straggler on rank 5 (steps "));
    free(buf);
    struct argus_result empty = fx->r;
    empty.n_anomalies = 0;
    f = open_memstream(&buf, &len);
    argus_report_print_summary(f, "/out", fx->js, &empty, NULL);
    fclose(f);
    assert_non_null(strstr(buf, "argus: no anomalies in 60 steps of 16 ranks\n"));
    free(buf);
}

/* A symlink planted at anomalies.jsonl, or at a report file's .partial name, in the output
 * directory is never written through: the victim keeps its bytes; the report files are
 * written all the same (a planted .partial of ours is replaced, never followed). */
static void test_planted_links(void **state)
{
    struct fixture *fx = *state;
    char err[512], victim[300], p[512];
    struct argus_anomaly_log log;

    snprintf(victim, sizeof victim, "%s.victim", fx->dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    const char *names[] = {"anomalies.jsonl", "report.json.partial", "report.md.partial",
                           "steps.csv.partial"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", fx->dir, names[i]);
        assert_int_equal(symlink(victim, p), 0);
    }
    argus_anomaly_log_init(&log);
    assert_int_equal(argus_anomaly_log_append(&log, &fx->od, fx->js, &fx->r, err, sizeof err),
                     -ELOOP);
    assert_non_null(strstr(err, "anomalies.jsonl"));
    argus_anomaly_log_free(&log);
    unsigned written = 0;
    const struct argus_report rep = {.res = fx->r};
    assert_int_equal(argus_report_write_at(&fx->od, fx->js, &rep, &written, err, sizeof err),
                     0);
    assert_int_equal(written, ARGUS_REPORT_F_ALL);
    char *v = rt_slurp(victim, NULL);
    assert_string_equal(v, "precious\n");
    free(v);
    struct stat st;
    snprintf(p, sizeof p, "%s/report.json", fx->dir);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0640);
    snprintf(p, sizeof p, "%s/report.json.partial", fx->dir);
    assert_int_equal(lstat(p, &st), -1);
    snprintf(p, sizeof p, "%s/anomalies.jsonl", fx->dir);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* left as planted, not followed */
    unlink(p);
    unlink(victim);
}

static char *summary_of(struct fixture *fx, const struct argus_report_outcome *oc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    argus_report_print_summary(f, fx->dir, fx->js, &fx->r, oc);
    fclose(f);
    return buf;
}

/* The summary claims only what was written (issue 16, item 11). */
static void test_summary_says_what_was_written(void **state)
{
    struct fixture *fx = *state;
    char want[600];

    /* all written, and the trace named is there */
    char tdir[300], tfile[400];
    snprintf(tdir, sizeof tdir, "%s/traces", fx->dir);
    assert_int_equal(mkdir(tdir, 0750), 0);
    snprintf(tfile, sizeof tfile, "%s/t.json", tdir);
    FILE *f = fopen(tfile, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(fx->r.anomalies[0].trace, sizeof fx->r.anomalies[0].trace, "traces/t.json");
    struct argus_report_outcome oc = {.written = ARGUS_REPORT_F_ALL, .dirfd = fx->od.fd};
    char *s = summary_of(fx, &oc);
    snprintf(want, sizeof want, "argus: report written to %s/report.json\n", fx->dir);
    assert_non_null(strstr(s, want));
    assert_non_null(strstr(s, "; trace traces/t.json\n"));
    free(s);

    /* the trace file went away: not named as if it were there */
    unlink(tfile);
    s = summary_of(fx, &oc);
    assert_null(strstr(s, "; trace traces/t.json\n"));
    assert_non_null(strstr(s, "traces/t.json is not there"));
    free(s);
    rmdir(tdir);

    /* a full disk at report.md: what was written, what was not, and why */
    oc = (struct argus_report_outcome){
        .written = ARGUS_REPORT_F_JSON | ARGUS_REPORT_F_SVG,
        .err = "x/report.md.partial: write: No space left on device", .earlier = 1,
        .alog_err = "x/anomalies.jsonl: append: No space left on device", .dirfd = fx->od.fd};
    s = summary_of(fx, &oc);
    assert_null(strstr(s, "report written to"));
    snprintf(want, sizeof want, "argus: the report was not written to %s: x/report.md.partial: "
             "write: No space left on device\n", fx->dir);
    assert_non_null(strstr(s, want));
    assert_non_null(strstr(s, "argus: written: report.json, the SVG pictures; not written: "
                              "report.md, metrics.prom, steps.csv, report.html (what is there "
                              "of them is an "
                              "earlier, provisional report)\n"));
    assert_non_null(strstr(s, "anomalies.jsonl misses anomalies: x/anomalies.jsonl: append"));
    free(s);

    /* nothing written */
    oc = (struct argus_report_outcome){.err = "x/report.json.partial: write: File too large",
                                       .dirfd = -1};
    s = summary_of(fx, &oc);
    assert_null(strstr(s, "report written to"));
    assert_non_null(strstr(s, "argus: not written: report.json, the SVG pictures, report.md, "
                              "metrics.prom, steps.csv, report.html\n"));
    free(s);
    fx->r.anomalies[0].trace[0] = '\0';
}

static void test_empty_store(void **state)
{
    (void)state;
    struct argus_jobstore *js;
    struct argus_result r;
    assert_int_equal(argus_jobstore_create(4, &js), 0);
    assert_int_equal(argus_analyze(js, NULL, &r), -ENOENT);
    assert_int_equal(r.n_anomalies, 0);
    argus_result_free(&r);
    argus_jobstore_free(js);
}

/* A rank whose CUPTI another tool held (issue 19): both files say why. */
static void test_cupti_unavailable(void **state)
{
    struct fixture *fx = *state;
    char err[256], p[512], ebuf[256];
    fx->r.cupti_unavailable = ARGUS_CUPTI_HELD_KINETO;
    assert_int_equal(argus_report_write(fx->dir, fx->js, &fx->r, err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/report.json", fx->dir);
    char *txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    yajl_val root = yajl_tree_parse(txt, ebuf, sizeof ebuf);
    assert_non_null(root);
    assert_string_equal(YAJL_GET_STRING(get(root, "collection", "cupti_unavailable")),
                        "held by the PyTorch profiler (Kineto)");
    yajl_tree_free(root);
    free(txt);
    snprintf(p, sizeof p, "%s/report.md", fx->dir);
    txt = rt_slurp(p, NULL);
    assert_non_null(txt);
    assert_non_null(strstr(txt, "CUPTI held by the PyTorch profiler (Kineto)"));
    free(txt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_unjudged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_md_prom_svg, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jsonl_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_line_and_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_planted_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_says_what_was_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cupti_unavailable, setup, teardown),
        cmocka_unit_test(test_empty_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
