/* test_outdir.c — unit tests of common/outdir.c and common/outfile.c: argus-<jobid>/ and
 * traces/ created 0750
 * (whatever the umask) under a base made on demand, an existing argus-<jobid> (directory,
 * symlink, file) never adopted but skipped for the next free suffix up to a bound, a
 * symlink or a group/other-writable non-sticky directory in the base refused, a sticky
 * 1777 base accepted, bad job ids refused, atomic writes leave no .partial (and replace,
 * never follow, a symlink planted at .partial or the final name), line appends, writes
 * that follow the directory's fd when its path is swapped, a fresh directory of another
 * name, and -o's adopted directory (symlinks and other owners refused). */
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

    /* Again: the existing directory (ours) is not reused; the next suffix is made. */
    assert_int_equal(argus_outdir_create(base, "4711", out, sizeof out, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/argus-4711.1", base);
    assert_string_equal(out, want);
    assert_int_equal(mode_of(out), 0750);

    /* Too small an output buffer is an error, not a cut path, and nothing is made. */
    char small[8];
    assert_int_equal(argus_outdir_create(base, "4711", small, sizeof small, err, sizeof err),
                     -ENAMETOOLONG);
    snprintf(want, sizeof want, "%s/argus-4711.2", base);
    assert_int_equal(access(want, F_OK), -1);

    /* Bad job ids. */
    assert_int_equal(argus_outdir_create(base, "../x", out, sizeof out, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "../x"));
    assert_int_equal(argus_outdir_create(base, "", out, sizeof out, err, sizeof err), -EINVAL);
    assert_int_equal(argus_outdir_create(base, NULL, out, sizeof out, err, sizeof err),
                     -EINVAL);
}

/* base/argus-<id> is made by the test first; the call must make base/argus-<id>.1. */
static void expect_suffix_1(const char *base, const char *id)
{
    char out[PATH_MAX], err[512], want[PATH_MAX], traces[PATH_MAX];

    out[0] = '\0';
    assert_int_equal(argus_outdir_create(base, id, out, sizeof out, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/argus-%s.1", base, id);
    assert_string_equal(out, want);
    struct stat st;
    assert_int_equal(lstat(out, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(mode_of(out), 0750);
    join(traces, sizeof traces, out, "traces");
    assert_int_equal(lstat(traces, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}

static void test_not_adopted(void **state)
{
    char base[512], link[PATH_MAX], target[PATH_MAX], p[PATH_MAX];
    (void)state;

    snprintf(base, sizeof base, "%s/sym", dir);
    assert_int_equal(mkdir(base, 0700), 0);

    /* A plain directory (ours, even) is not adopted. */
    snprintf(p, sizeof p, "%s/argus-98", base);
    assert_int_equal(mkdir(p, 0777), 0);
    expect_suffix_1(base, "98");
    join(link, sizeof link, p, "traces");
    assert_int_equal(access(link, F_OK), -1);

    /* A symlink to elsewhere: skipped, nothing made through it. */
    snprintf(target, sizeof target, "%s/elsewhere", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    snprintf(link, sizeof link, "%s/argus-99", base);
    assert_int_equal(symlink(target, link), 0);
    expect_suffix_1(base, "99");
    join(p, sizeof p, target, "traces");
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(mode_of(target), 0700);

    /* A dangling symlink: mkdir must not create its target. */
    snprintf(link, sizeof link, "%s/argus-100", base);
    snprintf(target, sizeof target, "%s/not-yet", dir);
    assert_int_equal(symlink(target, link), 0);
    expect_suffix_1(base, "100");
    assert_int_equal(access(target, F_OK), -1);

    /* A real directory with a symlink at traces/. */
    snprintf(p, sizeof p, "%s/argus-101", base);
    assert_int_equal(mkdir(p, 0750), 0);
    join(link, sizeof link, p, "traces");
    assert_int_equal(symlink(dir, link), 0);
    expect_suffix_1(base, "101");

    /* A regular file in the way. */
    snprintf(p, sizeof p, "%s/argus-102", base);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    expect_suffix_1(base, "102");
}

static void test_suffix_bound(void **state)
{
    char base[512], p[PATH_MAX], out[PATH_MAX], err[512];
    (void)state;

    snprintf(base, sizeof base, "%s/full", dir);
    assert_int_equal(mkdir(base, 0700), 0);
    snprintf(p, sizeof p, "%s/argus-7", base);
    assert_int_equal(mkdir(p, 0700), 0);
    for (int k = 1; k <= 999; k++) {
        snprintf(p, sizeof p, "%s/argus-7.%d", base, k);
        assert_int_equal(mkdir(p, 0700), 0);
    }
    assert_int_equal(argus_outdir_create(base, "7", out, sizeof out, err, sizeof err),
                     -EEXIST);
    assert_non_null(strstr(err, "argus-7"));
}

static void test_base_symlink(void **state)
{
    char base[PATH_MAX], real[512], link[512], out[PATH_MAX], err[512];
    (void)state;

    snprintf(real, sizeof real, "%s/realbase", dir);
    assert_int_equal(mkdir(real, 0700), 0);
    snprintf(link, sizeof link, "%s/linkbase", dir);
    assert_int_equal(symlink(real, link), 0);
    /* the symlink as the base itself, and as a component above it */
    assert_int_equal(argus_outdir_create(link, "5", out, sizeof out, err, sizeof err), -ELOOP);
    assert_non_null(strstr(err, "symbolic link"));
    assert_non_null(strstr(err, link));
    join(base, sizeof base, link, "sub");
    assert_int_equal(argus_outdir_create(base, "5", out, sizeof out, err, sizeof err), -ELOOP);
    join(base, sizeof base, real, "sub");
    assert_int_equal(access(base, F_OK), -1);
    join(base, sizeof base, real, "argus-5");
    assert_int_equal(access(base, F_OK), -1);
}

static void test_base_writable(void **state)
{
    char base[512], sub[PATH_MAX], p[PATH_MAX], out[PATH_MAX], err[512];
    (void)state;

    /* others-writable, not sticky: refused; nothing made in it */
    snprintf(base, sizeof base, "%s/open", dir);
    assert_int_equal(mkdir(base, 0700), 0);
    assert_int_equal(chmod(base, 0777), 0);
    assert_int_equal(argus_outdir_create(base, "6", out, sizeof out, err, sizeof err), -EPERM);
    assert_non_null(strstr(err, "not sticky"));
    join(p, sizeof p, base, "argus-6");
    assert_int_equal(access(p, F_OK), -1);
    /* group-writable, not sticky: refused */
    assert_int_equal(chmod(base, 0770), 0);
    assert_int_equal(argus_outdir_create(base, "6", out, sizeof out, err, sizeof err), -EPERM);
    /* as a component above the base, too */
    join(sub, sizeof sub, base, "below");
    assert_int_equal(argus_outdir_create(sub, "6", out, sizeof out, err, sizeof err), -EPERM);
    assert_int_equal(access(sub, F_OK), -1);

    /* sticky 1777, ours: accepted */
    assert_int_equal(chmod(base, 01777), 0);
    assert_int_equal(argus_outdir_create(base, "6", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, p);
    assert_int_equal(mode_of(out), 0750);
    /* and a missing base under it is made */
    assert_int_equal(argus_outdir_create(sub, "6", out, sizeof out, err, sizeof err), 0);
    assert_int_equal(mode_of(out), 0750);

    /* sticky 1777 but owned by another user (root only can set that up): refused */
    if (geteuid() == 0) {
        assert_int_equal(chown(base, 54321, 54321), 0);
        assert_int_equal(chmod(base, 01777), 0);
        assert_int_equal(argus_outdir_create(base, "8", out, sizeof out, err, sizeof err),
                         -EPERM);
        assert_non_null(strstr(err, "54321"));
        /* owned by the other user, not others-writable: a parent above the base is fine */
        assert_int_equal(chmod(base, 01755), 0);
        assert_int_equal(argus_outdir_create(sub, "8", out, sizeof out, err, sizeof err), 0);
    }
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
    assert_int_equal(argus_file_write_atomic(path, "evil", 4, err, sizeof err), 0);
    read_file(victim, buf, sizeof buf);
    assert_string_equal(buf, "keep");
    read_file(path, buf, sizeof buf);
    assert_string_equal(buf, "evil");
    assert_int_equal(access(partial, F_OK), -1);
    /* ... and a symlink at the final name is replaced, not written through */
    unlink(path);
    assert_int_equal(symlink(victim, path), 0);
    assert_int_equal(argus_file_write_atomic(path, "new", 3, err, sizeof err), 0);
    read_file(victim, buf, sizeof buf);
    assert_string_equal(buf, "keep");
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));

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

/* The fds are what is written through: the directory renamed away and replaced after it
 * was made, the files still land in the one made (and traces/ in its traces/). */
static void test_fd_relative(void **state)
{
    char base[512], moved[PATH_MAX + 16], p[PATH_MAX], err[512], buf[64];
    struct argus_outdir od;
    (void)state;

    snprintf(base, sizeof base, "%s/fdrel", dir);
    assert_int_equal(argus_outdir_create_at(&od, base, "42", err, sizeof err), 0);
    assert_true(od.fd >= 0 && od.traces_fd >= 0);
    snprintf(moved, sizeof moved, "%s.moved", od.path);
    assert_int_equal(rename(od.path, moved), 0);
    assert_int_equal(mkdir(od.path, 0777), 0); /* the attacker's */
    join(p, sizeof p, od.path, "traces");
    assert_int_equal(mkdir(p, 0777), 0);
    assert_int_equal(argus_file_write_at(od.fd, od.path, "report.json", "r", 1, err,
                                         sizeof err), 0);
    assert_int_equal(argus_file_append_at(od.fd, od.path, "anomalies.jsonl", "a", err,
                                          sizeof err), 0);
    int fd = argus_file_partial_open(od.traces_fd, od.path, "t.json", err, sizeof err);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "t", 1), 1);
    assert_int_equal(argus_file_partial_commit(od.traces_fd, od.path, "t.json", fd, 1, err,
                                               sizeof err), 0);
    join(p, sizeof p, moved, "report.json");
    read_file(p, buf, sizeof buf);
    assert_string_equal(buf, "r");
    join(p, sizeof p, moved, "anomalies.jsonl");
    read_file(p, buf, sizeof buf);
    assert_string_equal(buf, "a\n");
    join(p, sizeof p, moved, "traces/t.json");
    read_file(p, buf, sizeof buf);
    assert_string_equal(buf, "t");
    assert_int_equal(mode_of(p), 0640);
    const char *rel[] = {"report.json", "report.json.partial", "anomalies.jsonl",
                         "traces/t.json", "traces/t.json.partial"};
    for (size_t i = 0; i < 5; i++) { /* nothing in the replacement */
        join(p, sizeof p, od.path, rel[i]);
        assert_int_equal(access(p, F_OK), -1);
    }
    argus_outdir_close(&od);
    argus_outdir_close(&od); /* idempotent */

    /* a directory removed meanwhile: the write fails, it does not land elsewhere */
    assert_int_equal(argus_outdir_create_at(&od, base, "43", err, sizeof err), 0);
    join(p, sizeof p, od.path, "traces");
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(rmdir(od.path), 0);
    assert_int_equal(argus_file_write_at(od.fd, od.path, "report.json", "r", 1, err,
                                         sizeof err), -ENOENT);
    assert_non_null(strstr(err, "report.json.partial"));
    argus_outdir_close(&od);
}

/* argus_outdir_fresh: another name than argus-<jobid>, with the same suffixes. */
static void test_fresh_named(void **state)
{
    char base[512], want[PATH_MAX], err[512];
    struct argus_outdir od;
    (void)state;

    snprintf(base, sizeof base, "%s/named", dir);
    assert_int_equal(argus_outdir_fresh(&od, base, "argus-9.analysis", err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/argus-9.analysis", base);
    assert_string_equal(od.path, want);
    argus_outdir_close(&od);
    assert_int_equal(argus_outdir_fresh(&od, base, "argus-9.analysis", err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/argus-9.analysis.1", base);
    assert_string_equal(od.path, want);
    argus_outdir_close(&od);
    assert_int_equal(argus_outdir_fresh(&od, base, "a/b", err, sizeof err), -EINVAL);
    assert_int_equal(argus_outdir_fresh(&od, base, "..", err, sizeof err), -EINVAL);
    assert_int_equal(od.fd, -1);
}

/* argus_outdir_adopt (argus-analyze -o): made with its parents, or an existing directory
 * of ours used; a symlink as the last component, or at traces/, refused; another user's
 * directory refused (root only can set that up). */
static void test_adopt(void **state)
{
    char p[PATH_MAX], link[PATH_MAX], target[PATH_MAX], err[512];
    struct argus_outdir od;
    (void)state;

    snprintf(p, sizeof p, "%s/adopt/x/y", dir);
    assert_int_equal(argus_outdir_adopt(&od, p, err, sizeof err), 0);
    assert_string_equal(od.path, p);
    assert_true(od.fd >= 0 && od.traces_fd >= 0);
    argus_outdir_close(&od);
    assert_int_equal(argus_outdir_adopt(&od, p, err, sizeof err), 0); /* exists: used */
    assert_int_equal(argus_file_write_at(od.fd, od.path, "f", "1", 1, err, sizeof err), 0);
    argus_outdir_close(&od);
    join(link, sizeof link, p, "f");
    assert_int_equal(access(link, F_OK), 0);
    /* a trailing slash is the same directory */
    char slash[PATH_MAX + 2];
    snprintf(slash, sizeof slash, "%s/", p);
    assert_int_equal(argus_outdir_adopt(&od, slash, err, sizeof err), 0);
    argus_outdir_close(&od);

    snprintf(target, sizeof target, "%s/adopt/target", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    snprintf(link, sizeof link, "%s/adopt/link", dir);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(argus_outdir_adopt(&od, link, err, sizeof err), -ELOOP);
    assert_non_null(strstr(err, "symbolic link"));
    assert_int_equal(od.fd, -1);
    join(p, sizeof p, target, "traces");
    assert_int_equal(access(p, F_OK), -1); /* nothing made through it */

    /* a symlink at traces/ */
    assert_int_equal(symlink(dir, p), 0);
    assert_int_equal(argus_outdir_adopt(&od, target, err, sizeof err), -ELOOP);
    assert_non_null(strstr(err, "traces"));
    unlink(p);

    /* a file in the way */
    join(p, sizeof p, target, "file");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(argus_outdir_adopt(&od, p, err, sizeof err), -ENOTDIR);

    if (geteuid() == 0) {
        join(p, sizeof p, target, "theirs");
        assert_int_equal(mkdir(p, 0755), 0);
        assert_int_equal(chown(p, 54321, 54321), 0);
        assert_int_equal(argus_outdir_adopt(&od, p, err, sizeof err), -EPERM);
        assert_non_null(strstr(err, "54321"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_not_adopted),
        cmocka_unit_test(test_suffix_bound),
        cmocka_unit_test(test_base_symlink),
        cmocka_unit_test(test_base_writable),
        cmocka_unit_test(test_write_atomic),
        cmocka_unit_test(test_append_line),
        cmocka_unit_test(test_fd_relative),
        cmocka_unit_test(test_fresh_named),
        cmocka_unit_test(test_adopt),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
