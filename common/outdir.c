/* outdir.c — the job output directory and safe file writing (outdir.h).
 * argus-<jobid>/ (or the next free argus-<jobid>.N) and traces/ are created fresh, 0750,
 * under a base walked with O_NOFOLLOW and checked against writers who are not us (outdir.h),
 * so a name or symlink planted by another user is skipped or refused; whole files are written
 * to <path>.partial, fsync'ed and renamed; lines are appended with O_APPEND in one write.
 * Must not follow a symlink for anything it creates, and never exits.
 */
#include "common/outdir.h"
#include "common/errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define DIR_MODE 0750
#define FILE_MODE 0640

/* mkdir -p (outdir.h): symlinks above the final directory are the site's business and are
 * followed. */
int argus_mkdir_p(const char *path, char *errbuf, size_t errlen)
{
    char tmp[PATH_MAX];
    struct stat st;
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof tmp) {
        argus_seterr(errbuf, errlen, "%s: bad directory name", path);
        return -ENAMETOOLONG;
    }
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != '\0')
            continue;
        char save = tmp[i];
        tmp[i] = '\0';
        if (mkdir(tmp, DIR_MODE) != 0 && errno != EEXIST) {
            int e = errno;
            argus_seterr(errbuf, errlen, "%s: cannot create directory: %s", tmp, strerror(e));
            return -e;
        }
        tmp[i] = save;
    }
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        argus_seterr(errbuf, errlen, "%s: not a directory", path);
        return -ENOTDIR;
    }
    return 0;
}

#ifndef O_PATH
#define O_PATH O_RDONLY
#endif
#define MAX_SUFFIX 999 /* argus-<jobid>.1 .. .999 after argus-<jobid> */

/* An fd may be used as (part of) the output base: a directory that group or others may
 * write must be sticky, and the last one, if others may write it, owned by us or root. */
static int base_dir_ok(int fd, const char *shown, const char *base, int last, char *errbuf,
                       size_t errlen)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        int e = errno;
        argus_seterr(errbuf, errlen, "output base %s: %s: %s", base, shown, strerror(e));
        return -e;
    }
    if (!S_ISDIR(st.st_mode)) {
        argus_seterr(errbuf, errlen, "output base %s: %s: not a directory", base, shown);
        return -ENOTDIR;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
        argus_seterr(errbuf, errlen,
                     "output base %s: %s is writable by group or others and not sticky; "
                     "refusing to use it", base, shown);
        return -EPERM;
    }
    if (last && (st.st_mode & S_IWOTH) && st.st_uid != geteuid() && st.st_uid != 0) {
        argus_seterr(errbuf, errlen,
                     "output base %s: writable by others and owned by uid %u, not by us or "
                     "root; refusing to use it", base, (unsigned)st.st_uid);
        return -EPERM;
    }
    return 0;
}

/* Open base component by component from / (or the cwd) without following a symlink,
 * creating missing components (DIR_MODE less the umask), checking each directory passed
 * through (base_dir_ok). Returns an O_PATH fd of base, or -errno. */
static int base_open(const char *base, char *errbuf, size_t errlen)
{
    char shown[PATH_MAX], comp[NAME_MAX + 1];
    size_t n = strlen(base), i = 0, end = n;
    int fd, rc;

    if (n >= sizeof shown) {
        argus_seterr(errbuf, errlen, "%s: path too long", base);
        return -ENAMETOOLONG;
    }
    /* end: just past the last component that is not "." (trailing "/" and "." ignored) */
    while (end > 0) {
        if (base[end - 1] == '/')
            end--;
        else if (base[end - 1] == '.' && (end == 1 || base[end - 2] == '/'))
            end--;
        else
            break;
    }
    snprintf(shown, sizeof shown, "%s", base[0] == '/' ? "/" : ".");
    fd = open(shown, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "output base %s: %s: %s", base, shown, strerror(-rc));
        return rc;
    }
    for (;;) {
        while (i < end && (base[i] == '/' || (base[i] == '.' && (base[i + 1] == '/' ||
                                                                 i + 1 == end))))
            i++;
        if ((rc = base_dir_ok(fd, shown, base, i >= end, errbuf, errlen)) < 0)
            goto fail;
        if (i >= end)
            return fd;
        size_t j = i;
        while (j < end && base[j] != '/')
            j++;
        if (j - i > NAME_MAX) {
            argus_seterr(errbuf, errlen, "output base %s: a component is too long", base);
            rc = -ENAMETOOLONG;
            goto fail;
        }
        memcpy(comp, base + i, j - i);
        comp[j - i] = '\0';
        memcpy(shown, base, j); /* the prefix of base up to this component */
        shown[j] = '\0';
        int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT) {
            if (mkdirat(fd, comp, DIR_MODE) != 0 && errno != EEXIST) {
                rc = -errno;
                argus_seterr(errbuf, errlen, "output base %s: cannot create %s: %s", base,
                             shown, strerror(-rc));
                goto fail;
            }
            next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            struct stat st;
            rc = -errno;
            if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
                argus_seterr(errbuf, errlen,
                             "output base %s: %s is a symbolic link; refusing to use it", base,
                             shown);
                rc = -ELOOP;
            } else {
                argus_seterr(errbuf, errlen, "output base %s: %s: %s", base, shown,
                             rc == -ENOTDIR ? "not a directory" : strerror(-rc));
            }
            goto fail;
        }
        close(fd);
        fd = next;
        i = j;
    }
fail:
    close(fd);
    return rc;
}

/* Create name under dirfd, which must not exist yet, exactly DIR_MODE; returns an fd of it
 * opened without following a symlink and checked through the fd (a directory of ours with
 * mode DIR_MODE). */
static int fresh_dir_open(int dirfd, const char *name, const char *shown, int made,
                          char *errbuf, size_t errlen)
{
    struct stat st;

    if (!made && mkdirat(dirfd, name, DIR_MODE) != 0) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s: cannot create directory: %s", shown, strerror(e));
        return -e;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s: cannot open the directory just made: %s", shown,
                     strerror(e));
        return -e;
    }
    /* Exactly DIR_MODE whatever the umask, then check what the fd really is. */
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        fchmod(fd, DIR_MODE) != 0 || fstat(fd, &st) != 0 || (st.st_mode & 07777) != DIR_MODE) {
        close(fd);
        argus_seterr(errbuf, errlen, "%s: not the directory of uid %u, mode %o, just made; "
                     "refusing to use it", shown, (unsigned)geteuid(), DIR_MODE);
        return -EPERM;
    }
    return fd;
}

static int jobid_ok(const char *jobid)
{
    if (!jobid || !*jobid || strlen(jobid) > 200)
        return 0;
    for (const char *p = jobid; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

int argus_outdir_create(const char *base, const char *jobid, char *out, size_t outlen,
                        char *errbuf, size_t errlen)
{
    char name[256], path[PATH_MAX], traces[PATH_MAX + 16];
    int basefd = -1, dirfd = -1, tfd = -1, rc, k;

    if (!base || !*base)
        base = ".";
    if (!jobid_ok(jobid)) {
        argus_seterr(errbuf, errlen, "job id '%.64s': only [A-Za-z0-9._-], 1 to 200 characters",
               jobid ? jobid : "");
        return -EINVAL;
    }
    basefd = base_open(base, errbuf, errlen);
    if (basefd < 0)
        return basefd;
    /* Never adopt: the first name mkdirat creates is ours (EEXIST, whoever made it, moves
     * on to the next suffix; nothing is checked before the create). */
    for (k = 0; k <= MAX_SUFFIX; k++) {
        if (k == 0)
            snprintf(name, sizeof name, "argus-%s", jobid);
        else
            snprintf(name, sizeof name, "argus-%s.%d", jobid, k);
        if (snprintf(path, sizeof path, "%s/%s", base, name) >= (int)sizeof path ||
            (out && outlen && strlen(path) >= outlen)) {
            argus_seterr(errbuf, errlen, "%s: path too long", path);
            rc = -ENAMETOOLONG;
            goto out;
        }
        if (mkdirat(basefd, name, DIR_MODE) == 0)
            break;
        if (errno != EEXIST) {
            rc = -errno;
            argus_seterr(errbuf, errlen, "%s: cannot create directory: %s", path,
                         strerror(-rc));
            goto out;
        }
    }
    if (k > MAX_SUFFIX) {
        argus_seterr(errbuf, errlen, "%s/argus-%s and .1 to .%d all exist; remove old ones",
                     base, jobid, MAX_SUFFIX);
        rc = -EEXIST;
        goto out;
    }
    dirfd = fresh_dir_open(basefd, name, path, 1, errbuf, errlen);
    if (dirfd < 0) {
        rc = dirfd;
        goto out;
    }
    snprintf(traces, sizeof traces, "%s/traces", path);
    tfd = fresh_dir_open(dirfd, "traces", traces, 0, errbuf, errlen);
    if (tfd < 0) {
        rc = tfd;
        goto out;
    }
    if (out && outlen)
        snprintf(out, outlen, "%s", path);
    rc = 0;
out:
    if (tfd >= 0)
        close(tfd);
    if (dirfd >= 0)
        close(dirfd);
    if (basefd >= 0)
        close(basefd);
    return rc;
}

/* fsync the directory holding path so the rename itself is durable; best effort. */
static void fsync_parent(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;

    if (n >= sizeof dir)
        return;
    if (slash && n == 0)
        n = 1; /* "/file" */
    if (n) {
        memcpy(dir, path, n);
        dir[n] = '\0';
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int argus_file_write_atomic(const char *path, const void *data, size_t len, char *errbuf,
                            size_t errlen)
{
    char tmp[PATH_MAX];
    int fd = -1, rc;

    if (!path || (!data && len)) {
        argus_seterr(errbuf, errlen, "atomic write: no path or data");
        return -EINVAL;
    }
    if (snprintf(tmp, sizeof tmp, "%s.partial", path) >= (int)sizeof tmp) {
        argus_seterr(errbuf, errlen, "%s: path too long", path);
        return -ENAMETOOLONG;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
    if (fd < 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s: cannot create: %s", tmp, strerror(-rc));
        return rc;
    }
    rc = argus_write_all(fd, data, len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (rc < 0) {
        argus_seterr(errbuf, errlen, "%s: write: %s", tmp, strerror(-rc));
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s: close: %s", tmp, strerror(-rc));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s: rename from %s: %s", path, tmp, strerror(-rc));
        goto fail;
    }
    fsync_parent(path);
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return rc;
}

int argus_file_append_line(const char *path, const char *line, char *errbuf, size_t errlen)
{
    if (!path || !line) {
        argus_seterr(errbuf, errlen, "append: no path or line");
        return -EINVAL;
    }
    size_t n = strlen(line);
    int need_nl = n == 0 || line[n - 1] != '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
    if (fd < 0) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s: cannot open for append: %s", path, strerror(e));
        return -e;
    }
    /* One writev, so concurrent appenders do not interleave inside a line. */
    struct iovec iov[2] = {{(void *)line, n}, {(void *)"\n", (size_t)need_nl}};
    size_t want = n + (size_t)need_nl;
    ssize_t w;
    do {
        w = writev(fd, iov, 2);
    } while (w < 0 && errno == EINTR);
    int rc = 0;
    if (w < 0)
        rc = -errno;
    else if ((size_t)w != want)
        rc = -EIO; /* short append (disk full): the line is cut, say so */
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc < 0)
        argus_seterr(errbuf, errlen, "%s: append: %s", path, strerror(-rc));
    return rc;
}
