/* outfile.c — safe writing of the files in an output directory (outdir.h). Files are
 * created relative to a directory's fd: whole files to <name>.partial (O_EXCL|O_NOFOLLOW),
 * fsync'ed, renameat()d and the directory fsync'ed; lines appended with
 * O_APPEND|O_NOFOLLOW in one write; the same by path, the directory part opened first.
 * Must not follow a symlink for anything it creates, and never exits.
 */
#include "common/outdir.h"
#include "common/errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define FILE_MODE 0640

static int partial_name(const char *shown, const char *name, char *tmp, size_t len,
                        char *errbuf, size_t errlen)
{
    if (!name || !*name || strchr(name, '/') ||
        (size_t)snprintf(tmp, len, "%s.partial", name) >= len || strlen(tmp) > NAME_MAX) {
        argus_seterr(errbuf, errlen, "%s/%s: bad file name", shown, name ? name : "");
        return -EINVAL;
    }
    return 0;
}

int argus_file_partial_open(int dirfd, const char *shown, const char *name, char *errbuf,
                            size_t errlen)
{
    char tmp[NAME_MAX + 16];
    struct stat st;
    int rc = partial_name(shown, name, tmp, sizeof tmp, errbuf, errlen);

    if (rc < 0)
        return rc;
    /* A stale .partial of ours (a crash, or a link planted in our own directory) goes;
     * the create is exclusive, so whatever is left there is never written through. */
    if (fstatat(dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == geteuid() &&
        !S_ISDIR(st.st_mode))
        (void)unlinkat(dirfd, tmp, 0);
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    FILE_MODE);
    if (fd < 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s/%s: cannot create: %s", shown, tmp, strerror(-rc));
        return rc;
    }
    return fd;
}

int argus_file_partial_commit(int dirfd, const char *shown, const char *name, int fd, int ok,
                              char *errbuf, size_t errlen)
{
    char tmp[NAME_MAX + 16] = "";
    int rc = partial_name(shown, name, tmp, sizeof tmp, errbuf, errlen);

    if (rc < 0)
        tmp[0] = '\0'; /* nothing of ours to remove */
    if (fd >= 0 && rc == 0 && ok && fsync(fd) != 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s/%s: write: %s", shown, tmp, strerror(-rc));
    }
    if (fd >= 0 && close(fd) != 0 && rc == 0 && ok) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s/%s: close: %s", shown, tmp, strerror(-rc));
    }
    if (rc == 0 && ok && renameat(dirfd, tmp, dirfd, name) != 0) {
        rc = -errno;
        argus_seterr(errbuf, errlen, "%s/%s: rename from %s: %s", shown, name, tmp,
                     strerror(-rc));
    }
    if (rc < 0 || !ok) {
        if (tmp[0])
            (void)unlinkat(dirfd, tmp, 0);
        return rc;
    }
    (void)fsync(dirfd); /* the rename itself made durable, best effort */
    return 0;
}

int argus_file_write_at(int dirfd, const char *shown, const char *name, const void *data,
                        size_t len, char *errbuf, size_t errlen)
{
    if (!data && len) {
        argus_seterr(errbuf, errlen, "%s/%s: no data", shown, name ? name : "");
        return -EINVAL;
    }
    int fd = argus_file_partial_open(dirfd, shown, name, errbuf, errlen);
    if (fd < 0)
        return fd;
    int rc = argus_write_all(fd, data, len);
    if (rc < 0)
        argus_seterr(errbuf, errlen, "%s/%s.partial: write: %s", shown, name, strerror(-rc));
    int crc = argus_file_partial_commit(dirfd, shown, name, fd, rc == 0, errbuf, errlen);
    return rc < 0 ? rc : crc;
}

int argus_file_append_at(int dirfd, const char *shown, const char *name, const char *line,
                         char *errbuf, size_t errlen)
{
    struct stat st;

    if (!name || !*name || strchr(name, '/') || !line) {
        argus_seterr(errbuf, errlen, "%s/%s: append: no name or line", shown,
                     name ? name : "");
        return -EINVAL;
    }
    size_t n = strlen(line);
    int need_nl = n == 0 || line[n - 1] != '\n';
    /* O_NONBLOCK: a FIFO planted at the name is refused below, not waited on */
    int fd = openat(dirfd, name,
                    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                    FILE_MODE);
    if (fd < 0) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s/%s: cannot open for append: %s", shown, name,
                     strerror(e));
        return -e;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        argus_seterr(errbuf, errlen, "%s/%s: not a regular file; not appended to", shown,
                     name);
        return -EINVAL;
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
        argus_seterr(errbuf, errlen, "%s/%s: append: %s", shown, name, strerror(-rc));
    return rc;
}

/* ---- the same by path ------------------------------------------------------------------ */

/* Open the directory part of path (following symlinks: the caller named it); *name gets
 * the last component and shown the directory part. An fd or negative errno. */
static int path_dir(const char *path, char *shown, size_t shownlen, const char **name,
                    char *errbuf, size_t errlen)
{
    const char *slash = path ? strrchr(path, '/') : NULL;

    if (!path || !*path || (slash && !slash[1])) {
        argus_seterr(errbuf, errlen, "%s: not a file name", path ? path : "");
        return -EINVAL;
    }
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= shownlen) {
        argus_seterr(errbuf, errlen, "%s: path too long", path);
        return -ENAMETOOLONG;
    }
    if (!slash)
        snprintf(shown, shownlen, ".");
    else if (n == 0)
        snprintf(shown, shownlen, "/");
    else
        snprintf(shown, shownlen, "%.*s", (int)n, path);
    *name = slash ? slash + 1 : path;
    int fd = open(shown, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s: cannot open its directory: %s", path, strerror(e));
        return -e;
    }
    return fd;
}

int argus_file_write_atomic(const char *path, const void *data, size_t len, char *errbuf,
                            size_t errlen)
{
    char shown[PATH_MAX];
    const char *name;
    int dfd = path_dir(path, shown, sizeof shown, &name, errbuf, errlen);

    if (dfd < 0)
        return dfd;
    int rc = argus_file_write_at(dfd, shown, name, data, len, errbuf, errlen);
    close(dfd);
    return rc;
}

int argus_file_append_line(const char *path, const char *line, char *errbuf, size_t errlen)
{
    char shown[PATH_MAX];
    const char *name;
    int dfd = path_dir(path, shown, sizeof shown, &name, errbuf, errlen);

    if (dfd < 0)
        return dfd;
    int rc = argus_file_append_at(dfd, shown, name, line, errbuf, errlen);
    close(dfd);
    return rc;
}
