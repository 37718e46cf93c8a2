/* test_pipeline.c — cmocka units for pipeline/pipeline.c and tracefile.c:
 * argus-analyze's inputs reach report.json ("inputs") and report.md ("Inputs skipped")
 * from the one in-memory report, in one pass; the offline store is sealed (missing ranks,
 * span from the data, parents of the output directory made); a live final report after a
 * provisional one settles late marks and completes the job; nothing is written before an
 * analysis; a collected L4 plan becomes one parseable trace file, or fails with why; every
 * file lands in the directory made even when its path is swapped, planted symlinks are not
 * written through, -o refuses a symlink, and the summary never claims a report that a
 * full disk or a removed directory kept from being written (issue 16). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "common/wire.h"
#include "pipeline/pipeline.h"
#include "tests/common/tmpdir.h"

struct fixture {
    char base[128], dir[256];
    struct argus_pipeline pl;
    int open;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    if (!argus_test_tmpdir(fx->base, sizeof fx->base, "pipeline"))
        return -1;
    snprintf(fx->dir, sizeof fx->dir, "%s/out/deeper", fx->base); /* parents made too */
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    char cmd[300];

    if (fx->open)
        argus_pipeline_close(&fx->pl);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fx->base);
    free(fx);
    return 0;
}

static char *slurp(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    char *b = calloc(1, 1 << 20);
    if (f && b)
        b[fread(b, 1, (1 << 20) - 1, f)] = '\0';
    if (f)
        fclose(f);
    if (!f) {
        free(b);
        return NULL;
    }
    return b;
}

static yajl_val parse(const char *dir, const char *name)
{
    char err[256];
    char *text = slurp(dir, name);
    assert_non_null(text);
    yajl_val v = yajl_tree_parse(text, err, sizeof err);
    if (!v)
        fprintf(stderr, "%s: %s\n", name, err);
    free(text);
    assert_non_null(v);
    return v;
}

static yajl_val get(yajl_val v, const char *k1, const char *k2, yajl_type t)
{
    const char *p[] = {k1, k2, NULL};
    yajl_val x = yajl_tree_get(v, p, t);
    if (!x)
        fprintf(stderr, "no %s.%s of the type wanted\n", k1, k2 ? k2 : "");
    assert_non_null(x);
    return x;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void summary(struct argus_step_summary *s, uint32_t rank, uint64_t step)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->step = step;
    s->start_ns = 1000000000ull * (step + 1);
    s->end_ns = s->start_ns + 900000000ull + 1000ull * rank;
    s->compute_ns = 700000000ull;
}

/* An offline pipeline over nranks whose first `filled` ranks have steps 0..9. */
static void open_offline(struct fixture *fx, uint32_t nranks, uint32_t filled)
{
    const struct argus_pipeline_opts o = {
        .nranks = nranks, .dir = fx->dir, .jobid = "offline", .keep_all = 1,
        .prog = "test_pipeline"};
    char err[512];
    assert_int_equal(argus_pipeline_open(&fx->pl, &o, err, sizeof err), 0);
    fx->open = 1;
    struct argus_step_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    for (uint32_t r = 0; r < filled; r++)
        for (uint64_t st = 0; st < 10; st++) {
            summary(s, r, st);
            assert_int_equal(argus_pipeline_add_summary(&fx->pl, s), 0);
        }
    free(s);
    argus_pipeline_seal(&fx->pl);
}

static void test_inputs_reach_every_writer(void **state)
{
    struct fixture *fx = *state;
    char err[512];
    const char *skipped[] = {"in/a.json: not valid JSON at byte 3", "in/b`q.json: truncated",
                             "in/c\"d.json: empty rank 4: no step could be built"};
    const struct argus_report_inputs in = {.files = 5, .analysed = 2, .skipped = skipped,
                                           .n_skipped = 3};

    open_offline(fx, 3, 2);
    struct argus_job_meta *m = argus_jobstore_meta(fx->pl.js);
    assert_int_equal(argus_jobstore_missing_since(fx->pl.js, 2), 0); /* no step: missing */
    assert_int_equal(argus_jobstore_missing_since(fx->pl.js, 1), UINT64_MAX);
    assert_true(m->started_ns == 1000000000ull);                 /* the data's span */
    assert_true(m->ended_ns == 10000000000ull + 900000000ull + 1000ull);
    argus_pipeline_set_inputs(&fx->pl, &in);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 1), 0);
    assert_true(m->ended_ns == 10000000000ull + 900000000ull + 1000ull); /* no clock */
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);

    struct stat st;
    char traces[300];
    snprintf(traces, sizeof traces, "%s/traces", fx->dir);
    assert_int_equal(stat(traces, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    yajl_val v = parse(fx->dir, "report.json");
    assert_true(YAJL_IS_FALSE(get(v, "job", "complete", yajl_t_false)));
    assert_int_equal(YAJL_GET_INTEGER(get(v, "inputs", "files", yajl_t_number)), 5);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "inputs", "analysed", yajl_t_number)), 2);
    yajl_val sk = get(v, "inputs", "skipped", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(sk)->len, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(YAJL_GET_STRING(YAJL_GET_ARRAY(sk)->values[i]), skipped[i]);
    yajl_tree_free(v);

    char *md = slurp(fx->dir, "report.md");
    assert_non_null(md);
    const char *want =
        "\n## Inputs skipped\n\n3 of 5 input files could not be used and were left out of this "
        "analysis:\n\n- `in/a.json` — not valid JSON at byte 3\n- `in/b'q.json` — truncated\n"
        "- `in/c\"d.json` — empty rank 4: no step could be built\n\n2 inputs analysed.\n"
        "\n## Step time\n";
    if (!strstr(md, want))
        fprintf(stderr, "report.md:\n%s\n", md ? md : "(none)");
    assert_non_null(strstr(md, want));
    assert_int_equal(count(md, "## Inputs skipped"), 1);
    free(md);

    /* written again from the same result: still one section, the same "inputs" */
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);
    md = slurp(fx->dir, "report.md");
    assert_non_null(md);
    assert_int_equal(count(md, "## Inputs skipped"), 1);
    free(md);
    char *json = slurp(fx->dir, "report.json");
    assert_non_null(json);
    assert_int_equal(count(json, "\"inputs\""), 1);
    free(json);
}

static void test_no_input_skipped(void **state)
{
    struct fixture *fx = *state;
    char err[512];
    const struct argus_report_inputs in = {.files = 2, .analysed = 2};

    open_offline(fx, 2, 2);
    argus_pipeline_set_inputs(&fx->pl, &in);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 1), 0);
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);
    yajl_val v = parse(fx->dir, "report.json");
    assert_true(YAJL_IS_TRUE(get(v, "job", "complete", yajl_t_true)));
    assert_int_equal(YAJL_GET_INTEGER(get(v, "inputs", "files", yajl_t_number)), 2);
    assert_int_equal(YAJL_GET_ARRAY(get(v, "inputs", "skipped", yajl_t_array))->len, 0);
    yajl_tree_free(v);
    char *md = slurp(fx->dir, "report.md");
    assert_non_null(md);
    assert_null(strstr(md, "Inputs skipped"));
    free(md);
}

/* Steps [from, to) of every rank as one buffer of wire records. */
static uint8_t *window(uint32_t nranks, uint64_t from, uint64_t to, size_t *len)
{
    struct argus_step_summary *s = malloc(sizeof *s);
    size_t cap = (size_t)nranks * (to - from) * argus_summary_encoded_max(0);
    uint8_t *buf = malloc(cap);
    assert_non_null(s);
    assert_non_null(buf);
    *len = 0;
    for (uint32_t r = 0; r < nranks; r++)
        for (uint64_t st = from; st < to; st++) {
            summary(s, r, st);
            long n = argus_summary_encode(s, buf + *len, cap - *len);
            assert_true(n > 0);
            *len += (size_t)n;
        }
    free(s);
    return buf;
}

static void test_final_after_provisional(void **state)
{
    struct fixture *fx = *state;
    char err[512], dir[600];
    size_t len;
    const struct argus_pipeline_opts o = {
        .nranks = 2, .base = fx->base, .jobid = "t", .stepid = "0", .window = 5};

    assert_int_equal(argus_pipeline_open(&fx->pl, &o, err, sizeof err), 0);
    fx->open = 1;
    snprintf(dir, sizeof dir, "%s/argus-t", fx->base);
    assert_string_equal(fx->pl.dir, dir);
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), -ENOENT);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 0), -ENOENT); /* nothing yet */

    uint8_t *w = window(2, 0, 5, &len);
    argus_pipeline_ingest(&fx->pl, w, len, NULL, 0);
    free(w);
    assert_int_equal(fx->pl.windows, 1);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 0), 0);
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);
    yajl_val v = parse(dir, "report.json");
    assert_true(YAJL_IS_FALSE(get(v, "job", "complete", yajl_t_false)));
    assert_int_equal(YAJL_GET_INTEGER(get(v, "steps", "count", yajl_t_number)), 5);
    const char *p[] = {"inputs", NULL};
    assert_null(yajl_tree_get(v, p, yajl_t_any)); /* live: no inputs */
    yajl_tree_free(v);

    w = window(2, 5, 10, &len);
    argus_pipeline_ingest(&fx->pl, w, len, NULL, 0);
    free(w);
    argus_pipeline_mark_missing(&fx->pl, 1, 10, 2); /* the last, empty flush only */
    argus_pipeline_mark_missing(&fx->pl, 1, 10, 2); /* once per rank */
    assert_int_equal(fx->pl.nmiss, 1);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 1), 0);
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);
    assert_int_equal(fx->pl.nmiss, 0);
    assert_int_equal(fx->pl.nlate, 1);
    assert_int_equal(fx->pl.late[0], 1);
    v = parse(dir, "report.json");
    assert_true(YAJL_IS_TRUE(get(v, "job", "complete", yajl_t_true)));
    assert_int_equal(YAJL_GET_INTEGER(get(v, "steps", "count", yajl_t_number)), 10);
    yajl_tree_free(v);
    char *md = slurp(dir, "report.md");
    assert_non_null(md);
    assert_non_null(strstr(md, "complete data"));
    free(md);
}

/* A rank marked missing (a silence mark on a busy node, a deadline missed) that then
 * delivers every step from its mark on was late, not missing: the mark is taken back at
 * the next analysis; one with a hole keeps its mark. */
static void test_late_mark_taken_back(void **state)
{
    struct fixture *fx = *state;
    char err[512];
    size_t len;
    const struct argus_pipeline_opts o = {
        .nranks = 3, .base = fx->base, .jobid = "late", .stepid = "0", .window = 5};

    assert_int_equal(argus_pipeline_open(&fx->pl, &o, err, sizeof err), 0);
    fx->open = 1;
    uint8_t *w = window(3, 0, 10, &len);
    argus_pipeline_ingest(&fx->pl, w, len, NULL, 0);
    free(w);
    argus_pipeline_mark_missing(&fx->pl, 1, 10, 2);
    argus_pipeline_mark_missing(&fx->pl, 2, 10, 2);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 0), 0);
    assert_int_equal(fx->pl.nmiss, 2); /* nothing after the marks yet */
    /* ranks 0 and 1 deliver steps 10..19; rank 2 only 15..19 (a hole) */
    w = window(2, 10, 20, &len);
    argus_pipeline_ingest(&fx->pl, w, len, NULL, 0);
    free(w);
    struct argus_step_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    for (uint64_t st = 15; st < 20; st++) {
        summary(s, 2, st);
        assert_int_equal(argus_pipeline_add_summary(&fx->pl, s), 0);
    }
    free(s);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 0), 0);
    assert_int_equal(fx->pl.nmiss, 1);
    assert_int_equal(fx->pl.miss[0].rank, 2);
    assert_int_equal(fx->pl.nlate, 1);
    assert_int_equal(fx->pl.late[0], 1);
    assert_int_equal(argus_jobstore_missing_since(fx->pl.js, 1), UINT64_MAX);
    assert_int_equal(argus_jobstore_missing_since(fx->pl.js, 2), 10);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 1), 0);
    assert_int_equal(argus_jobstore_meta(fx->pl.js)->complete, 0);
}

static void test_trace_file(void **state)
{
    struct fixture *fx = *state;
    struct argus_traceplan tp;
    char traces[300];

    snprintf(traces, sizeof traces, "%s/traces", fx->base);
    assert_int_equal(mkdir(traces, 0750), 0);
    assert_int_equal(argus_traceplan_init(&tp, 3, 8), 0);
    for (int i = 0; i < 3; i++) {
        struct argus_trace_plan *p = &tp.v[tp.n++];
        memset(p, 0, sizeof *p);
        p->kind = ARGUS_AK_COMPUTE_STRAGGLER;
        p->from = 5;
        p->to = 6;
        p->ntargets = 3;
        p->nsources = 1;
        p->targets[0] = 1;
        p->targets[1] = 2;
        p->targets[2] = 3;
        p->state = ARGUS_TRACE_ASKED;
    }
    static const char ev[] =
        "[{\"name\":\"gemm\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10.0,"
        "\"dur\":5,\"args\":{\"step\":5}},{\"name\":\"gemm\",\"cat\":\"compute\",\"ph\":\"X\","
        "\"pid\":1,\"tid\":1,\"ts\":30.0,\"dur\":5,\"args\":{\"step\":6}}]";
    struct argus_pipeline_trace_reply rep[ARGUS_TRACE_TARGETS] = {
        {.got = 1, .json = ev, .len = sizeof ev - 1, .events = 2, .first_step = 5,
         .last_step = 6},
        {.got = 1, .json = "[]", .len = 2},
    };
    assert_int_equal(argus_pipeline_write_trace(&tp, 0, fx->base, rep), 1);
    assert_int_equal(tp.v[0].state, ARGUS_TRACE_WRITTEN);
    assert_string_equal(tp.v[0].path, "traces/compute_straggler-steps-5-6.json");
    yajl_val v = parse(fx->base, tp.v[0].path);
    assert_int_equal(YAJL_GET_ARRAY(get(v, "traceEvents", NULL, yajl_t_array))->len, 2 + 2 * 2);
    assert_string_equal(YAJL_GET_STRING(get(v, "otherData", "argus_anomaly", yajl_t_string)),
                        "compute_straggler");
    yajl_val miss = get(v, "otherData", "missing", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(miss)->len, 1);
    assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(miss)->values[0]), 3);
    yajl_val peers = get(v, "otherData", "peers", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(peers)->len, 2);
    yajl_tree_free(v);

    /* the same kind and steps again: a file of its own */
    assert_int_equal(argus_pipeline_write_trace(&tp, 1, fx->base, rep), 1);
    assert_string_equal(tp.v[1].path, "traces/compute_straggler-2-steps-5-6.json");

    /* nobody answered */
    struct argus_pipeline_trace_reply none[ARGUS_TRACE_TARGETS] = {{0}};
    assert_int_equal(argus_pipeline_write_trace(&tp, 2, fx->base, none), 0);
    assert_int_equal(tp.v[2].state, ARGUS_TRACE_FAILED);
    assert_string_equal(tp.v[2].why, "no target rank answered");
    assert_string_equal(tp.v[2].path, "");
    argus_traceplan_free(&tp);
    assert_string_equal(argus_pipeline_kind_name(ARGUS_AK_HOST_STALL), "host_stall");
}

/* Kernel names that need escaping (a quote, a backslash, control characters, non-ASCII
 * UTF-8, a surrogate pair) reach the trace file as the same strings and the file parses;
 * a reply that is not JSON (raw bytes that are not UTF-8) fails the plan with a reason
 * that says so, and leaves no file. */
static void test_trace_names_escaped(void **state)
{
    struct fixture *fx = *state;
    struct argus_traceplan tp;
    char traces[300];

    snprintf(traces, sizeof traces, "%s/traces", fx->base);
    assert_int_equal(mkdir(traces, 0750), 0);
    assert_int_equal(argus_traceplan_init(&tp, 2, 8), 0);
    for (int i = 0; i < 2; i++) {
        struct argus_trace_plan *p = &tp.v[tp.n++];
        memset(p, 0, sizeof *p);
        p->kind = ARGUS_AK_COMM_DEGRADATION;
        p->from = 7;
        p->to = 7;
        p->ntargets = 2;
        p->nsources = 1;
        p->targets[0] = 4;
        p->targets[1] = 9;
        p->state = ARGUS_TRACE_ASKED;
    }
    static const char ev[] =
        "[{\"name\":\"q\\\"uote\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":4,\"tid\":1,"
        "\"ts\":1.5,\"dur\":2,\"args\":{\"step\":7}},"
        "{\"name\":\"back\\\\slash\\/\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":4,\"tid\":1,"
        "\"ts\":4.25,\"dur\":1,\"args\":{\"step\":7}},"
        "{\"name\":\"ctl\\u0001\\u001f\\t\\n\",\"cat\":\"memcpy\",\"ph\":\"X\",\"pid\":4,"
        "\"tid\":2,\"ts\":6,\"dur\":1,\"args\":{\"step\":7,\"bytes\":4096}},"
        "{\"name\":\"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00\",\"cat\":\"compute\",\"ph\":\"X\","
        "\"pid\":4,\"tid\":1,\"ts\":8,\"dur\":1,\"args\":{\"step\":7}}]";
    static const char peer[] =
        "[{\"name\":\"nccl\\\"AllReduce\\\\\",\"cat\":\"collective\",\"ph\":\"X\",\"pid\":9,"
        "\"tid\":3,\"ts\":2,\"dur\":3,\"args\":{\"step\":7}}]";
    struct argus_pipeline_trace_reply rep[ARGUS_TRACE_TARGETS] = {
        {.got = 1, .json = ev, .len = sizeof ev - 1, .events = 4, .first_step = 7,
         .last_step = 7},
        {.got = 1, .json = peer, .len = sizeof peer - 1, .events = 1, .first_step = 7,
         .last_step = 7},
    };
    assert_int_equal(argus_pipeline_write_trace(&tp, 0, fx->base, rep), 1);
    assert_string_equal(tp.v[0].path, "traces/comm_degradation-steps-7-7.json");
    yajl_val v = parse(fx->base, tp.v[0].path);
    yajl_val evs = get(v, "traceEvents", NULL, yajl_t_array);
    const char *want[] = {"q\"uote", "back\\slash/", "ctl\x01\x1f\t\n",
                          "caf\xc3\xa9 \xc3\xa9 \xf0\x9f\x98\x80", "nccl\"AllReduce\\"};
    size_t found = 0;
    for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
        yajl_val e = YAJL_GET_ARRAY(evs)->values[i];
        const char *ph = YAJL_GET_STRING(get(e, "ph", NULL, yajl_t_string));
        const char *name = YAJL_GET_STRING(get(e, "name", NULL, yajl_t_string));
        if (strcmp(ph, "X") == 0)
            assert_string_equal(name, want[found++]);
    }
    assert_int_equal(found, 5);
    assert_int_equal(YAJL_GET_ARRAY(evs)->len, 5 + 2 * 2);
    assert_string_equal(YAJL_GET_STRING(get(v, "otherData", "argus_anomaly", yajl_t_string)),
                        "comm_degradation");
    yajl_val steps = get(v, "otherData", "steps", yajl_t_array);
    assert_int_equal(YAJL_GET_ARRAY(steps)->len, 2);
    assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(steps)->values[1]), 7);
    assert_int_equal(YAJL_GET_INTEGER(get(v, "otherData", "clock_reference_rank",
                                          yajl_t_number)), 4);
    yajl_tree_free(v);

    /* raw bytes that are not UTF-8: not JSON, so nothing is written */
    static const char bad[] =
        "[{\"name\":\"bad\xff\xfe\xc3\x28\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":9,"
        "\"tid\":1,\"ts\":2,\"dur\":3,\"args\":{\"step\":7}}]";
    rep[1].json = bad;
    rep[1].len = sizeof bad - 1;
    assert_int_equal(argus_pipeline_write_trace(&tp, 1, fx->base, rep), 0);
    assert_int_equal(tp.v[1].state, ARGUS_TRACE_FAILED);
    assert_null(strstr(tp.v[1].why, "memory"));
    assert_non_null(strstr(tp.v[1].why, "not a JSON array"));
    assert_string_equal(tp.v[1].path, "");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = comm_degradation-steps-7-7.json",
             traces);
    assert_int_equal(system(cmd), 0);
    argus_traceplan_free(&tp);
}

/* ---- issue 16: writes through the directory's fd, and only true claims ---------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int exists(const char *dir, const char *name)
{
    char p[8448];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

/* A live pipeline with L4 plans over 2 ranks, one window (steps 0..4) taken in. */
static void open_live(struct fixture *fx)
{
    const struct argus_pipeline_opts o = {
        .nranks = 2, .base = fx->base, .jobid = "j", .stepid = "0", .window = 5,
        .traces = 2};
    char err[512];
    size_t len;
    assert_int_equal(argus_pipeline_open(&fx->pl, &o, err, sizeof err), 0);
    fx->open = 1;
    uint8_t *w = window(2, 0, 5, &len);
    argus_pipeline_ingest(&fx->pl, w, len, NULL, 0);
    free(w);
}

static const char one_event[] =
    "[{\"name\":\"gemm\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10.0,"
    "\"dur\":5,\"args\":{\"step\":3}}]";

/* Push one asked plan onto pl's traces and write it (dir: the path passed, as reduce/
 * tracereq.c passes pl->dir). */
static int write_one_trace(struct fixture *fx, const char *dir)
{
    struct argus_traceplan *tp = &fx->pl.traces;
    assert_true(tp->n < tp->max);
    struct argus_trace_plan *p = &tp->v[tp->n++];
    memset(p, 0, sizeof *p);
    p->kind = ARGUS_AK_COMPUTE_STRAGGLER;
    p->from = p->to = 3;
    p->ntargets = 1;
    p->nsources = 1;
    p->targets[0] = 1;
    p->state = ARGUS_TRACE_ASKED;
    struct argus_pipeline_trace_reply rep[ARGUS_TRACE_TARGETS] = {
        {.got = 1, .json = one_event, .len = sizeof one_event - 1, .events = 1,
         .first_step = 3, .last_step = 3}};
    return argus_pipeline_write_trace(tp, tp->n - 1, dir, rep);
}

/* The job directory renamed away and replaced by another user's after it was made: the
 * report, reduce-style files and the trace still land in the directory Argus made. */
static void test_swapped_dir(void **state)
{
    struct fixture *fx = *state;
    char err[512], moved[4200], evil[4200];

    open_live(fx);
    snprintf(moved, sizeof moved, "%s.moved", fx->pl.dir);
    snprintf(evil, sizeof evil, "%s/traces", fx->pl.dir);
    assert_int_equal(rename(fx->pl.dir, moved), 0);
    assert_int_equal(mkdir(fx->pl.dir, 0777), 0);
    assert_int_equal(mkdir(evil, 0777), 0);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 0), 0);
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);
    assert_int_equal(write_one_trace(fx, fx->pl.dir), 1);
    assert_true(exists(moved, "report.json"));
    assert_true(exists(moved, "report.md"));
    assert_true(exists(moved, "steps.csv"));
    assert_true(exists(moved, "traces/compute_straggler-steps-3-3.json"));
    assert_false(exists(fx->pl.dir, "report.json"));
    assert_false(exists(fx->pl.dir, "report.md"));
    assert_false(exists(fx->pl.dir, "traces/compute_straggler-steps-3-3.json"));
}

/* Symlinks planted in the job directory after it was made (at the .partial names of the
 * report and of a trace) are never written through; the files are written. */
static void test_planted_partials(void **state)
{
    struct fixture *fx = *state;
    char err[512], victim[300], p[4400];

    open_live(fx);
    snprintf(victim, sizeof victim, "%s/victim", fx->base);
    write_text(victim, "precious\n");
    const char *names[] = {"report.json.partial", "report.md.partial", "metrics.prom.partial",
                           "traces/compute_straggler-steps-3-3.json.partial"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", fx->pl.dir, names[i]);
        assert_int_equal(symlink(victim, p), 0);
    }
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 0), 0);
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);
    assert_int_equal(write_one_trace(fx, fx->pl.dir), 1);
    char *v = slurp(fx->base, "victim");
    assert_string_equal(v, "precious\n");
    free(v);
    for (size_t i = 0; i < 4; i++)
        assert_false(exists(fx->pl.dir, names[i]));
    yajl_val j = parse(fx->pl.dir, "report.json");
    yajl_tree_free(j);
    j = parse(fx->pl.dir, "traces/compute_straggler-steps-3-3.json");
    yajl_tree_free(j);
}

/* argus-analyze -o DIR: a symlink there is refused, nothing is made through it. */
static void test_o_symlink_refused(void **state)
{
    struct fixture *fx = *state;
    char err[512], target[300], link[300];

    snprintf(target, sizeof target, "%s/target", fx->base);
    snprintf(link, sizeof link, "%s/link", fx->base);
    assert_int_equal(mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, link), 0);
    const struct argus_pipeline_opts o = {.nranks = 2, .dir = link, .jobid = "x",
                                          .keep_all = 1, .prog = "test_pipeline"};
    assert_true(argus_pipeline_open(&fx->pl, &o, err, sizeof err) < 0);
    assert_non_null(strstr(err, link));
    assert_false(exists(target, "traces"));
}

static char *summary_text(struct fixture *fx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    argus_pipeline_print_summary(&fx->pl, f);
    fclose(f);
    return buf;
}

/* The output directory removed during the run: the write fails, and the summary does not
 * say "report written" nor name a file that is not there. */
static void test_removed_dir_no_false_success(void **state)
{
    struct fixture *fx = *state;
    char err[512], cmd[4200];

    open_live(fx);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 1), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->pl.dir);
    assert_int_equal(system(cmd), 0);
    assert_true(argus_pipeline_write(&fx->pl, err, sizeof err) < 0);
    char *s = summary_text(fx);
    if (strstr(s, "report written to"))
        fprintf(stderr, "summary:\n%s", s);
    assert_null(strstr(s, "report written to"));
    assert_non_null(strstr(s, "removed during the run"));
    free(s);
}

/* A full disk (RLIMIT_FSIZE: the same short write an ENOSPC gives, without root): the
 * summary says the report was not written and why; once the disk has room again, the
 * final report is written and says so. */
static void test_full_disk_no_false_success(void **state)
{
    struct fixture *fx = *state;
    char err[512];
    struct rlimit old, small;

    open_live(fx);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 0), 0);
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0); /* provisional */
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 64;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    assert_int_equal(argus_pipeline_analyze(&fx->pl, 1), 0);
    int rc = argus_pipeline_write(&fx->pl, err, sizeof err);
    char *s = summary_text(fx);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    assert_true(rc < 0);
    assert_non_null(strstr(err, "report.json.partial: write: File too large"));
    if (strstr(s, "report written to"))
        fprintf(stderr, "summary:\n%s", s);
    assert_null(strstr(s, "report written to"));
    assert_non_null(strstr(s, "the report was not written to"));
    assert_non_null(strstr(s, "File too large"));
    assert_non_null(strstr(s, "not written: report.json,"));
    assert_non_null(strstr(s, "earlier, provisional report"));
    free(s);
    assert_false(exists(fx->pl.dir, "report.json.partial"));
    /* room again: the final report is tried again, written, and claimed */
    assert_int_equal(argus_pipeline_write(&fx->pl, err, sizeof err), 0);
    s = summary_text(fx);
    assert_non_null(strstr(s, "report written to"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_inputs_reach_every_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_input_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_final_after_provisional, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_mark_taken_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_names_escaped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swapped_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_planted_partials, setup, teardown),
        cmocka_unit_test_setup_teardown(test_o_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removed_dir_no_false_success, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_no_false_success, setup, teardown),
    };
    return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
