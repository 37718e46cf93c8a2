/* test_outdir.c — unit tests of common/outdir.c: argus-<jobid>/ and traces/ created 0750
 * (whatever the umask) under a base made on demand, idempotent re-creation, a symlink at
 * the final component refused, bad job ids refused, atomic writes leave no .partial, and
 * line appends. */
#include "tests/common/testgen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outdir.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/argus-test-outdir-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[512];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* dst = a/b (a helper so the compiler does not guess at truncation). */
static __attribute__((noinline)) void join(char *dst, size_t n, const char *a, const char *b)
{
    snprintf(dst, n, "%s/%s", a, b);
}

static int mode_of(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return -1;
    return (int)(st.st_mode & 07777);
}

static void read_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void test_create(void **state)
{
    char base[512], out[PATH_MAX], err[512], want[PATH_MAX], traces[PATH_MAX];
    (void)state;

    mode_t old = umask(077); /* a strict umask must not change the result */
    snprintf(base, sizeof base, "%s/a/b/c", dir);
    assert_int_equal(argus_outdir_create(base, "4711", out, sizeof out, err, sizeof err), 0);
    umask(old);
    snprintf(want, sizeof want, "%s/argus-4711", base);
    assert_string_equal(out, want);
    assert_int_equal(mode_of(out), 0750);
    join(traces, sizeof traces, out, "traces");
    assert_int_equal(mode_of(traces), 0750);
    struct stat st;
    assert_int_equal(lstat(traces, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    /* Again: the existing directory is reused. */
    assert_int_equal(argus_outdir_create(base, "4711", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, want);

    /* Too small an output buffer is an error, not a cut path. */
    char small[8];
    assert_int_equal(argus_outdir_create(base, "4711", small, sizeof small, err, sizeof err),
                     -ENAMETOOLONG);

    /* Bad job ids. */
    assert_int_equal(argus_outdir_create(base, "../x", out, sizeof out, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "../x"));
    assert_int_equal(argus_outdir_create(base, "", out, sizeof out, err, sizeof err), -EINVAL);
    assert_int_equal(argus_outdir_create(base, NULL, out, sizeof out, err, sizeof err),
                     -EINVAL);
}

static void test_refuses_symlink(void **state)
{
    char base[512], link[PATH_MAX], target[PATH_MAX], out[PATH_MAX], err[512], p[PATH_MAX];
    (void)state;

    snprintf(base, sizeof base, "%s/sym", dir);
    assert_int_equal(mkdir(base, 0700), 0);
    snprintf(target, sizeof target, "%s/elsewhere", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    snprintf(link, sizeof link, "%s/argus-99", base);
    assert_int_equal(symlink(target, link), 0);
    out[0] = '\0';
    assert_int_equal(argus_outdir_create(base, "99", out, sizeof out, err, sizeof err),
                     -ELOOP);
    assert_non_null(strstr(err, "symbolic link"));
    assert_non_null(strstr(err, link));
    assert_string_equal(out, "");
    /* Nothing was created through the link. */
    join(p, sizeof p, target, "traces");
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(mode_of(target), 0700);

    /* A dangling symlink is refused too (mkdir must not create its target). */
    snprintf(link, sizeof link, "%s/argus-100", base);
    snprintf(target, sizeof target, "%s/not-yet", dir);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(argus_outdir_create(base, "100", out, sizeof out, err, sizeof err),
                     -ELOOP);
    assert_int_equal(access(target, F_OK), -1);

    /* A symlink at traces/ inside a real directory. */
    snprintf(p, sizeof p, "%s/argus-101", base);
    assert_int_equal(mkdir(p, 0750), 0);
    join(link, sizeof link, p, "traces");
    assert_int_equal(symlink(dir, link), 0);
    assert_int_equal(argus_outdir_create(base, "101", out, sizeof out, err, sizeof err),
                     -ELOOP);

    /* A regular file in the way. */
    snprintf(p, sizeof p, "%s/argus-102", base);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    assert_true(argus_outdir_create(base, "102", out, sizeof out, err, sizeof err) < 0);
    assert_non_null(strstr(err, p));
}

static void test_write_atomic(void **state)
{
    char path[PATH_MAX], partial[PATH_MAX + 16], err[512], buf[256];
    (void)state;

    snprintf(path, sizeof path, "%s/report.json", dir);
    snprintf(partial, sizeof partial, "%s.partial", path);
    mode_t old = umask(022);
    assert_int_equal(argus_file_write_atomic(path, "{\"a\":1}\n", 8, err, sizeof err), 0);
    umask(old);
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "{\"a\":1}\n");
    assert_int_equal(access(partial, F_OK), -1);
    assert_int_equal(mode_of(path), 0640);
    /* Replace. */
    assert_int_equal(argus_file_write_atomic(path, "new", 3, err, sizeof err), 0);
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "new");
    /* Empty file. */
    assert_int_equal(argus_file_write_atomic(path, "", 0, err, sizeof err), 0);
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "");

    /* A symlink planted at the .partial name is not followed. */
    char victim[PATH_MAX];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("keep", f);
    fclose(f);
    assert_int_equal(symlink(victim, partial), 0);
    assert_true(argus_file_write_atomic(path, "evil", 4, err, sizeof err) < 0);
    read_file(victim, buf, sizeof buf);
    assert_string_equal(buf, "keep");
    unlink(partial);

    /* A missing directory: error naming the path. */
    snprintf(path, sizeof path, "%s/no/such/dir/x", dir);
    assert_int_equal(argus_file_write_atomic(path, "x", 1, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, path));
}

static void test_append_line(void **state)
{
    char path[PATH_MAX], err[512], buf[256];
    (void)state;

    snprintf(path, sizeof path, "%s/anomalies.jsonl", dir);
    assert_int_equal(argus_file_append_line(path, "{\"step\":1}", err, sizeof err), 0);
    assert_int_equal(argus_file_append_line(path, "{\"step\":2}\n", err, sizeof err), 0);
    assert_int_equal(argus_file_append_line(path, "", err, sizeof err), 0);
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "{\"step\":1}\n{\"step\":2}\n\n");

    char link[PATH_MAX];
    snprintf(link, sizeof link, "%s/link.jsonl", dir);
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(argus_file_append_line(link, "x", err, sizeof err), -ELOOP);
    assert_non_null(strstr(err, link));
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "{\"step\":1}\n{\"step\":2}\n\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_refuses_symlink),
        cmocka_unit_test(test_write_atomic),
        cmocka_unit_test(test_append_line),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
