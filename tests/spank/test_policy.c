/* test_policy.c — cmocka tests of the SPANK plugin's pure logic (spank/policy.c): the
 * strict plugstack.conf parser, the --argus decision against default/enforce,
 * outdir template expansion and LD_PRELOAD editing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spank/policy.h"

#define LIBDIR "/opt/argus/lib"

static int parse(struct argus_policy *p, char *err, int n, ...)
{
    char *av[16];
    va_list ap;

    va_start(ap, n);
    for (int i = 0; i < n; i++)
        av[i] = va_arg(ap, char *);
    va_end(ap);
    err[0] = '\0';
    return argus_policy_parse(p, n, av, LIBDIR, err, 512);
}

static void test_defaults(void **state)
{
    struct argus_policy p;
    char err[512];

    (void)state;
    assert_int_equal(parse(&p, err, 0), 0);
    assert_int_equal(p.def_mode, ARGUS_MODE_OFF);
    assert_int_equal(p.enforce, ARGUS_ENFORCE_NONE);
    assert_string_equal(p.outdir, "%w");
    assert_string_equal(p.window, "");
    assert_string_equal(p.libdir, LIBDIR);
}

static void test_all_keys(void **state)
{
    struct argus_policy p;
    char err[512];

    (void)state;
    assert_int_equal(parse(&p, err, 5, "default=on", "enforce=on", "outdir=/scratch/%u/%j",
                           "window=20", "libdir=/usr/lib/argus"), 0);
    assert_int_equal(p.def_mode, ARGUS_MODE_ON);
    assert_int_equal(p.enforce, ARGUS_ENFORCE_ON);
    assert_string_equal(p.outdir, "/scratch/%u/%j");
    assert_string_equal(p.window, "20");
    assert_string_equal(p.libdir, "/usr/lib/argus");
    assert_int_equal(parse(&p, err, 1, "enforce=off"), 0);
    assert_int_equal(p.enforce, ARGUS_ENFORCE_OFF);
    assert_int_equal(parse(&p, err, 1, "enforce=none"), 0);
    assert_int_equal(p.enforce, ARGUS_ENFORCE_NONE);
}

static void test_bad_arguments(void **state)
{
    struct argus_policy p;
    char err[512];

    (void)state;
    assert_int_equal(parse(&p, err, 2, "default=on", "colour=blue"), -EINVAL);
    assert_non_null(strstr(err, "unknown key 'colour'"));
    assert_non_null(strstr(err, "(keys: default, enforce, outdir, window, libdir, spool_max)"));
    /* allow_full= is no key: there is no mode beyond on */
    assert_int_equal(parse(&p, err, 2, "default=on", "allow_full=yes"), -EINVAL);
    assert_non_null(strstr(err, "unknown key 'allow_full'"));
    assert_int_equal(parse(&p, err, 1, "verbose"), -EINVAL);
    assert_non_null(strstr(err, "'verbose' is not key=value"));
    assert_int_equal(parse(&p, err, 1, "default=maybe"), -EINVAL);
    assert_non_null(strstr(err, "default=maybe"));
    assert_int_equal(parse(&p, err, 1, "enforce=yes"), -EINVAL);
    assert_non_null(strstr(err, "on, off, none"));
    assert_int_equal(parse(&p, err, 1, "window=0"), -EINVAL);
    assert_non_null(strstr(err, "window=0"));
    assert_int_equal(parse(&p, err, 1, "window=abc"), -EINVAL);
    assert_int_equal(parse(&p, err, 1, "libdir=lib"), -EINVAL);
    assert_non_null(strstr(err, "absolute"));
    assert_int_equal(parse(&p, err, 1, "outdir="), -EINVAL);
    assert_int_equal(parse(&p, err, 1, "outdir=/x/%q"), -EINVAL);
    assert_non_null(strstr(err, "'%q'"));
    assert_int_equal(parse(&p, err, 1, "outdir=/x/%"), -EINVAL);
    assert_int_equal(parse(&p, err, 2, "default=on", "default=off"), -EINVAL);
    assert_non_null(strstr(err, "twice"));
    assert_int_equal(parse(&p, err, 1, "defaults=on"), -EINVAL); /* no prefix matching */
    assert_int_equal(parse(&p, err, 1, "=on"), -EINVAL);
}

/* spool_max= is a ceiling on ARGUS_SPOOL_MAX: a user's lower cap stands, anything else
 * (unset, garbage, 0 = no cap, above the site's) gets the site's. */
static void test_spool_max(void **state)
{
    struct argus_policy p;
    char err[512];

    (void)state;
    assert_int_equal(parse(&p, err, 0), 0);
    assert_string_equal(p.spool_max, "");
    assert_null(argus_policy_spool_max(&p, "0"));
    assert_int_equal(parse(&p, err, 1, "spool_max=-1"), -EINVAL);
    assert_non_null(strstr(err, "spool_max=-1"));
    assert_int_equal(parse(&p, err, 1, "spool_max=lots"), -EINVAL);
    assert_int_equal(parse(&p, err, 1, "spool_max=64"), 0);
    assert_string_equal(p.spool_max, "64");
    assert_string_equal(argus_policy_spool_max(&p, NULL), "64");
    assert_null(argus_policy_spool_max(&p, "32"));
    assert_null(argus_policy_spool_max(&p, "64"));
    assert_string_equal(argus_policy_spool_max(&p, "65"), "64");
    assert_string_equal(argus_policy_spool_max(&p, "0"), "64");
    assert_string_equal(argus_policy_spool_max(&p, "huge"), "64");
    assert_int_equal(parse(&p, err, 1, "spool_max=0"), 0); /* the site sets no cap */
    assert_null(argus_policy_spool_max(&p, "0"));
    assert_null(argus_policy_spool_max(&p, NULL));
}

static void test_mode_parse(void **state)
{
    (void)state;
    assert_int_equal(argus_mode_parse("on"), ARGUS_MODE_ON);
    assert_int_equal(argus_mode_parse(NULL), ARGUS_MODE_ON);
    assert_int_equal(argus_mode_parse(""), ARGUS_MODE_ON);
    assert_int_equal(argus_mode_parse("off"), ARGUS_MODE_OFF);
    assert_int_equal(argus_mode_parse("full"), -EINVAL); /* never more than on */
    /* Any case, as ARGUS_MODE=ON is (common/config.c): the two never disagree. */
    assert_int_equal(argus_mode_parse("ON"), ARGUS_MODE_ON);
    assert_int_equal(argus_mode_parse("Off"), ARGUS_MODE_OFF);
    assert_int_equal(argus_mode_parse("FULL"), -EINVAL);
    assert_int_equal(argus_mode_parse("onn"), -EINVAL);
    const char *words[] = {"on", "ON", "On", "off", "OFF", "oFf", "full", "bogus", "1"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        char err[256];
        int cfg = argus_config_check("ARGUS_MODE", words[i], err, sizeof err);
        if ((cfg == 0) != (argus_mode_parse(words[i]) >= 0))
            fail_msg("--argus=%s and ARGUS_MODE=%s disagree", words[i], words[i]);
    }
    assert_int_equal(argus_mode_parse("bogus"), -EINVAL);
    assert_string_equal(argus_mode_name(ARGUS_MODE_ON), "on");
    assert_string_equal(argus_mode_name(ARGUS_MODE_OFF), "off");
    assert_string_equal(argus_mode_name(2), "?");
}

static void test_decide(void **state)
{
    struct argus_policy p;
    char err[512];
    int mode;

    (void)state;
    argus_policy_defaults(&p, LIBDIR);
    assert_int_equal(argus_policy_decide(&p, ARGUS_REQ_NONE, &mode, err, sizeof err), 0);
    assert_int_equal(mode, ARGUS_MODE_OFF);
    assert_int_equal(argus_policy_decide(&p, ARGUS_MODE_ON, &mode, err, sizeof err), 0);
    assert_int_equal(mode, ARGUS_MODE_ON);
    /* default=on: on without asking, off when asked */
    p.def_mode = ARGUS_MODE_ON;
    assert_int_equal(argus_policy_decide(&p, ARGUS_REQ_NONE, &mode, err, sizeof err), 0);
    assert_int_equal(mode, ARGUS_MODE_ON);
    assert_int_equal(argus_policy_decide(&p, ARGUS_MODE_OFF, &mode, err, sizeof err), 0);
    assert_int_equal(mode, ARGUS_MODE_OFF);
    /* enforce=on: off contradicts the site (the caller refuses or ignores it), and the
     * mode to use is on; the reason names the key and says nothing of what happens next */
    p.enforce = ARGUS_ENFORCE_ON;
    assert_int_equal(argus_policy_decide(&p, ARGUS_MODE_OFF, &mode, err, sizeof err), -EPERM);
    assert_int_equal(mode, ARGUS_MODE_ON);
    assert_string_equal(err, "this site runs Argus on every job (plugstack.conf enforce=on)");
    assert_int_equal(argus_policy_decide(&p, ARGUS_REQ_NONE, &mode, err, sizeof err), 0);
    assert_int_equal(mode, ARGUS_MODE_ON);
    /* enforce=off: nobody turns it on */
    p.enforce = ARGUS_ENFORCE_OFF;
    assert_int_equal(argus_policy_decide(&p, ARGUS_MODE_ON, &mode, err, sizeof err), -EPERM);
    assert_int_equal(mode, ARGUS_MODE_OFF);
    assert_string_equal(err, "Argus is disabled on this site (plugstack.conf enforce=off)");
    assert_int_equal(argus_policy_decide(&p, ARGUS_MODE_OFF, &mode, err, sizeof err), 0);
    assert_int_equal(argus_policy_decide(&p, ARGUS_REQ_NONE, &mode, err, sizeof err), 0);
    assert_int_equal(mode, ARGUS_MODE_OFF);
}

static void test_template(void **state)
{
    struct argus_tmpl_vars v = {"42", "3", "alice", "my job/../x", "/home/alice/run"};
    char out[256], err[512];

    (void)state;
    assert_int_equal(argus_template_expand("%w", &v, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/home/alice/run");
    assert_int_equal(argus_template_expand("/scratch/%u/%j.%s-%%", &v, out, sizeof out, err,
                                           sizeof err), 0);
    assert_string_equal(out, "/scratch/alice/42.3-%");
    /* a job name cannot add path components */
    assert_int_equal(argus_template_expand("/s/%x", &v, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/s/my_job_.._x");
    v.jobname = "..";
    assert_int_equal(argus_template_expand("/s/%x", &v, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/s/__");
    v.jobname = NULL;
    assert_int_equal(argus_template_expand("/s/%x", &v, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/s/unknown");
    /* relative templates are anchored at the working directory */
    assert_int_equal(argus_template_expand("out/%j", &v, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/home/alice/run/out/42");
    assert_int_equal(argus_template_expand("%u", &v, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "/home/alice/run/alice");
    /* errors */
    assert_int_equal(argus_template_expand("/x/%z", &v, out, sizeof out, err, sizeof err),
                     -EINVAL);
    assert_int_equal(argus_template_check("/a/%j/%s/%u/%x/%w/%%", err, sizeof err), 0);
    assert_int_equal(argus_template_expand("/scratch/%w/%w/%w", &v, out, 32, err, sizeof err),
                     -ENAMETOOLONG);
    assert_non_null(strstr(err, "too long"));
}

static void test_preload(void **state)
{
    const char *lib = "/opt/argus/lib/libargus.so";
    char out[256];

    (void)state;
    assert_int_equal(argus_preload_prepend(NULL, lib, out, sizeof out), 0);
    assert_string_equal(out, lib);
    assert_int_equal(argus_preload_prepend("", lib, out, sizeof out), 0);
    assert_string_equal(out, lib);
    assert_int_equal(argus_preload_prepend("/u/a.so", lib, out, sizeof out), 0);
    assert_string_equal(out, "/opt/argus/lib/libargus.so:/u/a.so");
    /* already there: unchanged, not doubled */
    assert_int_equal(argus_preload_prepend("/u/a.so /opt/argus/lib/libargus.so", lib, out,
                                           sizeof out), 0);
    assert_string_equal(out, "/u/a.so /opt/argus/lib/libargus.so");
    /* a longer name that merely contains ours is not ours */
    assert_int_equal(argus_preload_has("/opt/argus/lib/libargus.so.1", lib), 0);
    assert_int_equal(argus_preload_has("x.so:/opt/argus/lib/libargus.so", lib), 1);
    assert_int_equal(argus_preload_remove("/opt/argus/lib/libargus.so:/u/a.so /u/b.so", lib,
                                          out, sizeof out), 0);
    assert_string_equal(out, "/u/a.so:/u/b.so");
    assert_int_equal(argus_preload_remove(lib, lib, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(argus_preload_remove(NULL, lib, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(argus_preload_prepend("/u/a.so", lib, out, 10), -ENAMETOOLONG);
    assert_int_equal(argus_preload_remove("/u/aaaaaaaaaaaaaa.so", lib, out, 8), -ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),    cmocka_unit_test(test_all_keys),
        cmocka_unit_test(test_bad_arguments), cmocka_unit_test(test_mode_parse),
        cmocka_unit_test(test_decide),      cmocka_unit_test(test_template),
        cmocka_unit_test(test_preload),     cmocka_unit_test(test_spool_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
