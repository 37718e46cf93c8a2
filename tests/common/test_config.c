/* test_config.c — unit tests of common/config.c: compiled defaults, bounds at both edges,
 * garbage rejected with the variable, value and range named, loading through a fake
 * environment, printing, job-id precedence and sanitising, and that etc/argus.conf
 * documents every variable of the table with its default. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"

/* A fake environment: NAME=value pairs, NULL-terminated. */
static const char *const *fake_env;

/* Same type as getenv (argus_env_lookup_fn); the result is only read by the caller. */
static char *fake_lookup(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *p = fake_env; p && *p; p++)
        if (strncmp(*p, name, n) == 0 && (*p)[n] == '=')
            return (char *)(uintptr_t)(*p + n + 1);
    return NULL;
}

static void test_defaults(void **state)
{
    struct argus_config c;
    (void)state;

    memset(&c, 0x55, sizeof c);
    argus_config_defaults(&c);
    assert_int_equal(c.mode, ARGUS_MODE_OFF);
    assert_string_equal(c.outdir, ".");
    assert_string_equal(c.jobid, "");
    assert_int_equal(c.window, 10);
    assert_int_equal(c.fanin, 4);
    assert_int_equal(c.condense, 96);
    assert_int_equal(c.max_events, 262144);
    assert_int_equal(c.spool, 1);
    assert_int_equal(c.log, ARGUS_LOG_WARN);
    assert_true(fabs(c.ratio - 1.15) < 1e-12);
    assert_int_equal(c.spool_max, 1024); /* MiB */
    /* Every row's default passes its own check, and the table has all 33 rows. */
    assert_int_equal(argus_config_nvars, 33);
    assert_int_equal(c.stacks, ARGUS_MODE_ON); /* host call stacks */
    assert_int_equal(c.stacks_min_ms, 200);
    assert_int_equal(c.total_steps, 0); /* the forecast's plan: unknown */
    for (size_t i = 0; i < argus_config_nvars; i++) {
        char err[256] = "";
        const struct argus_config_var *v = &argus_config_vars[i];
        if (argus_config_check(v->name, v->def, err, sizeof err) != 0)
            fail_msg("default of %s does not parse: %s", v->name, err);
        assert_non_null(v->help);
        assert_true(strncmp(v->name, "ARGUS_", 6) == 0);
    }
}

static void expect_reject(const char *name, const char *value, const char *range)
{
    char err[512] = "";
    int rc = argus_config_check(name, value, err, sizeof err);
    if (rc != -EINVAL)
        fail_msg("%s=%s accepted (rc %d)", name, value, rc);
    /* The message repeats the value (long values cut at 64 bytes). */
    char head[300];
    snprintf(head, sizeof head, "%s=%.64s%s: ", name, value, strlen(value) > 64 ? "..." : "");
    if (strncmp(err, head, strlen(head)) != 0)
        fail_msg("%s=%s: message '%s' does not start with '%s'", name, value, err, head);
    if (range && !strstr(err, range))
        fail_msg("%s=%s: message '%s' does not name '%s'", name, value, err, range);
}

static void expect_accept(const char *name, const char *value)
{
    char err[512] = "";
    int rc = argus_config_check(name, value, err, sizeof err);
    if (rc != 0)
        fail_msg("%s=%s refused: %s", name, value, err);
}

/* For every INT row: both bounds accepted, one past each refused, garbage refused. */
static void test_int_bounds_and_garbage(void **state)
{
    (void)state;
    int seen = 0;
    for (size_t i = 0; i < argus_config_nvars; i++) {
        const struct argus_config_var *v = &argus_config_vars[i];
        if (strcmp(v->type, "INT") != 0)
            continue;
        seen++;
        char lo[32], hi[32], lo1[32], hi1[32], range[128];
        snprintf(lo, sizeof lo, "%ld", (long)v->min);
        snprintf(hi, sizeof hi, "%ld", (long)v->max);
        snprintf(lo1, sizeof lo1, "%ld", (long)v->min - 1);
        snprintf(hi1, sizeof hi1, "%ld", (long)v->max + 1);
        snprintf(range, sizeof range, "not an integer in [%s, %s]", lo, hi);
        expect_accept(v->name, lo);
        expect_accept(v->name, hi);
        expect_reject(v->name, lo1, range);
        expect_reject(v->name, hi1, range);
        const char *garbage[] = {"abc", "12x", "", " 12", "12 ", "0x10", "1e3", "1.5", "--5",
                                 "+", "99999999999999999999999", "-99999999999999999999"};
        for (size_t g = 0; g < sizeof garbage / sizeof garbage[0]; g++)
            expect_reject(v->name, garbage[g], range);
    }
    assert_int_equal(seen, 19);
    /* The exact message of the contract. */
    char err[256];
    assert_int_equal(argus_config_check("ARGUS_WINDOW", "abc", err, sizeof err), -EINVAL);
    assert_string_equal(err, "ARGUS_WINDOW=abc: not an integer in [1, 10000]");
    expect_accept("ARGUS_WINDOW", "+7");
}

static void test_double_bool_mode_level_str(void **state)
{
    (void)state;
    expect_accept("ARGUS_RATIO", "1.01");
    expect_accept("ARGUS_RATIO", "100");
    expect_accept("ARGUS_RATIO", "100.0");
    expect_accept("ARGUS_RATIO", "2.5");
    const char *bad[] = {"1.0099", "100.0001", "1", "0", "-3", "nan", "inf", "abc", "",
                         "1.5x", " 1.5", "1e400", "0x1p1", "1..2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_reject("ARGUS_RATIO", bad[i], "not a number in [1.01, 100]");

    const char *yes[] = {"1", "on", "yes", "true", "ON", "True", "0", "off", "no", "false"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        expect_accept("ARGUS_SPOOL", yes[i]);
    const char *nobool[] = {"2", "maybe", "", "onn", " 1", "-1"};
    for (size_t i = 0; i < sizeof nobool / sizeof nobool[0]; i++)
        expect_reject("ARGUS_SPOOL", nobool[i], "[0, 1]");

    expect_accept("ARGUS_MODE", "off");
    expect_accept("ARGUS_MODE", "on");
    expect_accept("ARGUS_MODE", "ON");
    /* full was never more than on; it is refused like any other word */
    expect_reject("ARGUS_MODE", "full", "not one of off, on");
    expect_reject("ARGUS_MODE", "FULL", "not one of off, on");
    expect_reject("ARGUS_MODE", "fulll", "not one of off, on");
    expect_reject("ARGUS_MODE", "", "not one of off, on");
    expect_reject("ARGUS_MODE", "1", "not one of off, on");

    expect_accept("ARGUS_LOG", "debug");
    expect_accept("ARGUS_LOG", "error");
    expect_reject("ARGUS_LOG", "verbose", "error, warn, info, debug");
    expect_reject("ARGUS_LOG", "", "error, warn, info, debug");

    char id[300];
    memset(id, 'a', 255);
    id[255] = '\0';
    expect_accept("ARGUS_JOBID", id);
    id[255] = 'a';
    id[256] = '\0';
    expect_reject("ARGUS_JOBID", id, "at most 255");
    expect_accept("ARGUS_JOBID", "");
    expect_accept("ARGUS_OUTDIR", "/scratch/x y/z");

    char err[128];
    assert_int_equal(argus_config_check("ARGUS_NOPE", "1", err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "ARGUS_NOPE"));
}

static void test_load(void **state)
{
    struct argus_config c;
    char err[256];
    (void)state;

    static const char *const good[] = {"ARGUS_MODE=on", "ARGUS_WINDOW=20",
                                       "ARGUS_OUTDIR=/tmp/out", "ARGUS_RATIO=1.5",
                                       "ARGUS_SPOOL=off", "ARGUS_LOG=debug",
                                       "ARGUS_FANIN=1024", "ARGUS_MAX_EVENTS=1024",
                                       "ARGUS_JOBID=j1", "OTHER=1", NULL};
    fake_env = good;
    assert_int_equal(argus_config_load(&c, fake_lookup, err, sizeof err), 0);
    assert_int_equal(c.mode, ARGUS_MODE_ON);
    assert_int_equal(c.window, 20);
    assert_string_equal(c.outdir, "/tmp/out");
    assert_true(fabs(c.ratio - 1.5) < 1e-12);
    assert_int_equal(c.spool, 0);
    assert_int_equal(c.log, ARGUS_LOG_DEBUG);
    assert_int_equal(c.fanin, 1024);
    assert_int_equal(c.max_events, 1024);
    assert_string_equal(c.jobid, "j1");

    /* Two bad values: both are named, both stay at their default, the rest read. */
    static const char *const bad[] = {"ARGUS_MODE=on", "ARGUS_WINDOW=12x",
                                      "ARGUS_FANIN=1", "ARGUS_RATIO=3", NULL};
    fake_env = bad;
    assert_int_equal(argus_config_load(&c, fake_lookup, err, sizeof err), -EINVAL);
    assert_string_equal(err, "ARGUS_WINDOW=12x: not an integer in [1, 10000]; "
                             "ARGUS_FANIN=1: not an integer in [2, 1024]");
    assert_int_equal(c.window, 10);
    assert_int_equal(c.fanin, 4);
    assert_int_equal(c.mode, ARGUS_MODE_ON);
    assert_true(fabs(c.ratio - 3.0) < 1e-12);

    /* Many bad values and a short buffer: the messages that fit, whole or cut, never
     * past the buffer. */
    static const char *const many[] = {"ARGUS_WINDOW=a", "ARGUS_FANIN=b", "ARGUS_CONDENSE=c",
                                       "ARGUS_DEADLINE_MS=d", "ARGUS_RATIO=e",
                                       "ARGUS_PHASE_MAP=f", NULL};
    char small[64];
    memset(small, 'Z', sizeof small);
    fake_env = many;
    assert_int_equal(argus_config_load(&c, fake_lookup, small, 60), -EINVAL);
    assert_true(strlen(small) < 60);
    assert_int_equal(small[60], 'Z');
    assert_non_null(strstr(small, "ARGUS_WINDOW=a: not an integer in [1, 10000]; ARGUS_FAN"));
    char big[2048];
    assert_int_equal(argus_config_load(&c, fake_lookup, big, sizeof big), -EINVAL);
    const char *names[] = {"ARGUS_WINDOW=a:", "; ARGUS_FANIN=b:", "; ARGUS_CONDENSE=c:",
                           "; ARGUS_DEADLINE_MS=d:", "; ARGUS_RATIO=e:",
                           "; ARGUS_PHASE_MAP=f:"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strstr(big, names[i]))
            fail_msg("'%s' does not name %s", big, names[i]);
    assert_int_equal(c.window, 10);
    assert_string_equal(c.phase_map, "");

    /* ARGUS_MODE=full: one line, the default (off) kept, the rest still read. */
    static const char *const full[] = {"ARGUS_MODE=full", "ARGUS_WINDOW=20", NULL};
    fake_env = full;
    assert_int_equal(argus_config_load(&c, fake_lookup, err, sizeof err), -EINVAL);
    assert_string_equal(err, "ARGUS_MODE=full: not one of off, on");
    assert_int_equal(c.mode, ARGUS_MODE_OFF);
    assert_int_equal(c.window, 20);

    fake_env = NULL;
    assert_int_equal(argus_config_load(&c, fake_lookup, err, sizeof err), 0);
    assert_int_equal(c.window, 10);

    /* getenv itself fits the lookup type, and NULL means getenv. */
    assert_int_equal(setenv("ARGUS_WINDOW", "33", 1), 0);
    assert_int_equal(argus_config_load(&c, getenv, err, sizeof err), 0);
    assert_int_equal(c.window, 33);
    assert_int_equal(setenv("ARGUS_WINDOW", "34", 1), 0);
    assert_int_equal(argus_config_load(&c, NULL, err, sizeof err), 0);
    assert_int_equal(c.window, 34);
    assert_int_equal(setenv("ARGUS_WINDOW", "0", 1), 0);
    assert_int_equal(argus_config_load(&c, NULL, err, sizeof err), -EINVAL);
    assert_string_equal(err, "ARGUS_WINDOW=0: not an integer in [1, 10000]");
    unsetenv("ARGUS_WINDOW");
}

/* ARGUS_PHASE_MAP has a grammar (config.h): bad rules are refused with the rule named,
 * good maps pass, and the bounds on rules and substrings hold at both edges. */
static void test_phase_map(void **state)
{
    (void)state;
    expect_accept("ARGUS_PHASE_MAP", "");
    expect_accept("ARGUS_PHASE_MAP", "attn:forward");
    expect_accept("ARGUS_PHASE_MAP", "attn:FORWARD,grad sync:comm,step:optimizer,");
    expect_accept("ARGUS_PHASE_MAP", "a:backward,b:host,c:other");
    const char *bad[] = {"garbage", ":forward", "x:sideways", "x:forward,,", "x:", "x:forwardx",
                         ",x:forward", "x:forward,garbage"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_reject("ARGUS_PHASE_MAP", bad[i], "bad rule");
    char err[512];
    assert_int_equal(argus_config_check("ARGUS_PHASE_MAP", "garbage", err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "ARGUS_PHASE_MAP=garbage: bad rule 'garbage' (want "
                            "substring:phase"));
    /* A substring of ARGUS_PHASE_MAP_SUB_MAX - 1 bytes fits, one more does not. */
    char map[4096];
    memset(map, 'k', ARGUS_PHASE_MAP_SUB_MAX - 1);
    strcpy(map + ARGUS_PHASE_MAP_SUB_MAX - 1, ":comm");
    expect_accept("ARGUS_PHASE_MAP", map);
    memset(map, 'k', ARGUS_PHASE_MAP_SUB_MAX);
    strcpy(map + ARGUS_PHASE_MAP_SUB_MAX, ":comm");
    expect_reject("ARGUS_PHASE_MAP", map, "bad rule");
    /* ARGUS_PHASE_MAP_RULES rules fit, one more does not. */
    size_t n = 0;
    for (int i = 0; i < ARGUS_PHASE_MAP_RULES; i++)
        n += (size_t)snprintf(map + n, sizeof map - n, "%sr%d:host", i ? "," : "", i);
    expect_accept("ARGUS_PHASE_MAP", map);
    snprintf(map + n, sizeof map - n, ",extra:host");
    expect_reject("ARGUS_PHASE_MAP", map, "more than 32 rules");
    /* Loaded: a bad map stays the default (""). */
    struct argus_config c;
    static const char *const env[] = {"ARGUS_PHASE_MAP=garbage", NULL};
    fake_env = env;
    assert_int_equal(argus_config_load(&c, fake_lookup, err, sizeof err), -EINVAL);
    assert_string_equal(c.phase_map, "");
    fake_env = NULL;
}

static void test_print(void **state)
{
    struct argus_config c;
    char *text = NULL;
    size_t len = 0;
    (void)state;

    argus_config_defaults(&c);
    c.mode = ARGUS_MODE_ON;
    snprintf(c.jobid, sizeof c.jobid, "77");
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    argus_config_print(&c, f);
    fclose(f);
    assert_string_equal(text, "ARGUS_MODE=on\n"
                              "ARGUS_OUTDIR=.\n"
                              "ARGUS_JOBID=77\n"
                              "ARGUS_WINDOW=10\n"
                              "ARGUS_FANIN=4\n"
                              "ARGUS_CONDENSE=96\n"
                              "ARGUS_DEADLINE_MS=2000\n"
                              "ARGUS_SILENCE_MS=500\n"
                              "ARGUS_FINALIZE_MS=10000\n"
                              "ARGUS_CLOCK_SYNC_MS=10000\n"
                              "ARGUS_MAX_EVENTS=262144\n"
                              "ARGUS_SPOOL=1\n"
                              "ARGUS_SPOOL_MAX=1024\n"
                              "ARGUS_LOG=warn\n"
                              "ARGUS_RATIO=1.15\n"
                              "ARGUS_TOTAL_STEPS=0\n"
                              "ARGUS_CUPTI=1\n"
                              "ARGUS_CUPTI_BUF_KB=4096\n"
                              "ARGUS_CUPTI_BUFS=8\n"
                              "ARGUS_GRAPH_TRACE=0\n"
                              "ARGUS_PHASE_MAP=\n"
                              "ARGUS_STEP_RANGE=ProfilerStep#\n"
                              "ARGUS_STEP_DETECT=1\n"
                              "ARGUS_PERIOD_MAX=65536\n"
                              "ARGUS_RING_EVENTS=196608\n"
                              "ARGUS_RING_STEPS=3\n"
                              "ARGUS_TRACES=8\n"
                              "ARGUS_TRACE_EVENTS=65536\n"
                              "ARGUS_COVERAGE=0.97\n"
                              "ARGUS_MPI_SELF_INIT=1\n"
                              "ARGUS_MPI_SELF_INIT_MS=2000\n"
                              "ARGUS_STACKS=on\n"
                              "ARGUS_STACKS_MIN_MS=200\n");
    free(text);
}

static void test_jobid(void **state)
{
    struct argus_config c;
    char id[64];
    (void)state;

    argus_config_defaults(&c);
    static const char *const slurm[] = {"SLURM_JOB_ID=4711", "OMPI_MCA_ess_base_jobid=9",
                                        "PMIX_NAMESPACE=ns", NULL};
    fake_env = slurm;
    argus_config_jobid(&c, fake_lookup, id, sizeof id);
    assert_string_equal(id, "4711");
    snprintf(c.jobid, sizeof c.jobid, "my job/../x");
    argus_config_jobid(&c, fake_lookup, id, sizeof id);
    assert_string_equal(id, "my_job_.._x");
    c.jobid[0] = '\0';
    static const char *const ompi[] = {"OMPI_MCA_ess_base_jobid=123456", NULL};
    fake_env = ompi;
    argus_config_jobid(&c, fake_lookup, id, sizeof id);
    assert_string_equal(id, "123456");
    static const char *const pmix[] = {"PMIX_NAMESPACE=prterun-host-1234@1", NULL};
    fake_env = pmix;
    argus_config_jobid(&c, fake_lookup, id, sizeof id);
    assert_string_equal(id, "prterun-host-1234_1");
    /* With no config, ARGUS_JOBID is read through the lookup. */
    static const char *const env[] = {"ARGUS_JOBID=abc", "SLURM_JOB_ID=1", NULL};
    fake_env = env;
    argus_config_jobid(NULL, fake_lookup, id, sizeof id);
    assert_string_equal(id, "abc");
    /* Nothing: <YYYYmmddTHHMMSS>-<pid>. */
    fake_env = NULL;
    argus_config_jobid(&c, fake_lookup, id, sizeof id);
    char pid[32];
    snprintf(pid, sizeof pid, "-%ld", (long)getpid());
    assert_int_equal(strlen(id), 15 + strlen(pid));
    assert_int_equal(id[8], 'T');
    assert_string_equal(id + 15, pid);
    /* Small buffers are cut, not overrun. */
    fake_env = slurm;
    char small[3];
    argus_config_jobid(&c, fake_lookup, small, sizeof small);
    assert_string_equal(small, "47");
}

/* etc/argus.conf documents every variable: an uncommented NAME=<default> line and a
 * comment naming it. */
static void test_conf_documents_table(void **state)
{
    (void)state;
    const char *top = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/etc/argus.conf", top ? top : "../..");
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s (is top_srcdir exported?)", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (size_t i = 0; i < argus_config_nvars; i++) {
        const struct argus_config_var *v = &argus_config_vars[i];
        char line[256], doc[256];
        snprintf(line, sizeof line, "\n%s=%s\n", v->name, v->def);
        snprintf(doc, sizeof doc, "# %s ", v->name);
        if (!strstr(text, line))
            fail_msg("%s: no line '%s=%s'", path, v->name, v->def);
        if (!strstr(text, doc))
            fail_msg("%s: no comment documenting %s", path, v->name);
        if (strcmp(v->type, "INT") == 0 || strcmp(v->type, "DOUBLE") == 0) {
            char range[96];
            if (strcmp(v->type, "INT") == 0)
                snprintf(range, sizeof range, "[%ld, %ld]", (long)v->min, (long)v->max);
            else
                snprintf(range, sizeof range, "[%g, %g]", v->min, v->max);
            if (!strstr(text, range))
                fail_msg("%s: bounds %s of %s not documented", path, range, v->name);
        }
    }
    /* And no variable there that the table does not know. */
    for (char *p = strstr(text, "\nARGUS_"); p; p = strstr(p + 1, "\nARGUS_")) {
        char name[64];
        size_t k = strcspn(p + 1, "=\n");
        snprintf(name, sizeof name, "%.*s", (int)k, p + 1);
        assert_int_not_equal(argus_config_check(name, "", NULL, 0), -ENOENT);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_int_bounds_and_garbage),
        cmocka_unit_test(test_double_bool_mode_level_str),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_phase_map),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_jobid),
        cmocka_unit_test(test_conf_documents_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
