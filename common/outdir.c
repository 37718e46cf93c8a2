/* outdir.c — the job output directory and safe file writing (outdir.h).
 * argus-<jobid>/ and traces/ are created 0750 and opened with O_NOFOLLOW, so a symlink
 * planted at the final component is refused rather than followed; whole files are written
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

/* Create name under dirfd (or accept an existing real directory we own) and return an fd
 * of it opened without following a symlink. */
static int subdir_open(int dirfd, const char *name, const char *shown, char *errbuf,
                       size_t errlen)
{
    int created = mkdirat(dirfd, name, DIR_MODE) == 0;

    if (!created && errno != EEXIST) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s: cannot create directory: %s", shown, strerror(e));
        return -e;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            argus_seterr(errbuf, errlen, "%s: is a symbolic link; refusing to use it", shown);
            return -ELOOP;
        }
        argus_seterr(errbuf, errlen, "%s: cannot open directory: %s", shown, strerror(e));
        return -e;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        argus_seterr(errbuf, errlen, "%s: %s", shown, strerror(e));
        return -e;
    }
    if (geteuid() != 0 && st.st_uid != geteuid()) {
        close(fd);
        argus_seterr(errbuf, errlen, "%s: owned by uid %u, not by us; refusing to use it", shown,
               (unsigned)st.st_uid);
        return -EPERM;
    }
    /* Exactly 0750 whatever the umask, for a directory we just made. */
    if (created && fchmod(fd, DIR_MODE) != 0) {
        int e = errno;
        close(fd);
        argus_seterr(errbuf, errlen, "%s: chmod: %s", shown, strerror(e));
        return -e;
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
    char name[256], path[PATH_MAX], traces[PATH_MAX];
    int basefd = -1, dirfd = -1, tfd = -1, rc;

    if (!base || !*base)
        base = ".";
    if (!jobid_ok(jobid)) {
        argus_seterr(errbuf, errlen, "job id '%.64s': only [A-Za-z0-9._-], 1 to 200 characters",
               jobid ? jobid : "");
        return -EINVAL;
    }
    snprintf(name, sizeof name, "argus-%s", jobid);
    if (snprintf(path, sizeof path, "%s/%s", base, name) >= (int)sizeof path ||
        snprintf(traces, sizeof traces, "%s/traces", path) >= (int)sizeof traces) {
        argus_seterr(errbuf, errlen, "%s/%s: path too long", base, name);
        return -ENAMETOOLONG;
    }
    rc = argus_mkdir_p(base, errbuf, errlen);
    if (rc < 0)
        return rc;
    basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (basefd < 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s: cannot open directory: %s", base, strerror(-rc));
        goto out;
    }
    dirfd = subdir_open(basefd, name, path, errbuf, errlen);
    if (dirfd < 0) {
        rc = dirfd;
        goto out;
    }
    tfd = subdir_open(dirfd, "traces", traces, errbuf, errlen);
    if (tfd < 0) {
        rc = tfd;
        goto out;
    }
    if (out && outlen) {
        if (snprintf(out, outlen, "%s", path) >= (int)outlen) {
            argus_seterr(errbuf, errlen, "%s: path longer than the caller's buffer", path);
            rc = -ENAMETOOLONG;
            goto out;
        }
    }
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
