/* outdir.c — the job output directory (outdir.h): making a fresh one, adopting one the
 * user named. <name>/ (or the next free <name>.N) and traces/ are created fresh, 0750,
 * under a base walked with O_NOFOLLOW and checked against writers who are not us, so a
 * name or symlink planted by another user is skipped or refused; a directory the user
 * named is adopted only when its fd says it is a directory of ours. The files in it are
 * written by outfile.c. Must not follow a symlink for anything it creates, and never
 * exits.
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
#include <unistd.h>

#define DIR_MODE 0750

void argus_outdir_init(struct argus_outdir *od)
{
    od->fd = -1;
    od->traces_fd = -1;
    od->path[0] = '\0';
}

void argus_outdir_close(struct argus_outdir *od)
{
    if (od->traces_fd >= 0)
        close(od->traces_fd);
    if (od->fd >= 0)
        close(od->fd);
    od->fd = od->traces_fd = -1;
}

/* mkdir -p of path[0..n) (the parents of a directory the user named): symlinks there are
 * the site's business and are followed. */
static int mkdir_parents(const char *path, size_t n, char *errbuf, size_t errlen)
{
    char tmp[PATH_MAX];

    if (n >= sizeof tmp) {
        argus_seterr(errbuf, errlen, "%s: bad directory name", path);
        return -ENAMETOOLONG;
    }
    memcpy(tmp, path, n);
    tmp[n] = '\0';
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

/* A directory entry name of ours: not empty, no '/', not "." or "..", short enough for
 * ".partial" and a ".999" suffix. */
static int name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n > 0 && n + 8 <= NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0 &&
           strcmp(name, "..") != 0;
}

int argus_outdir_fresh(struct argus_outdir *od, const char *base, const char *name,
                       char *errbuf, size_t errlen)
{
    char cand[NAME_MAX + 1], path[ARGUS_OUTDIR_PATH_MAX], traces[ARGUS_OUTDIR_PATH_MAX + 16];
    int basefd = -1, dirfd = -1, tfd = -1, rc, k;

    argus_outdir_init(od);
    if (!base || !*base)
        base = ".";
    if (!name_ok(name)) {
        argus_seterr(errbuf, errlen, "directory name '%.64s': not a plain name",
                     name ? name : "");
        return -EINVAL;
    }
    basefd = base_open(base, errbuf, errlen);
    if (basefd < 0)
        return basefd;
    /* Never adopt: the first name mkdirat creates is ours (EEXIST, whoever made it, moves
     * on to the next suffix; nothing is checked before the create). */
    for (k = 0; k <= MAX_SUFFIX; k++) {
        if (k == 0)
            snprintf(cand, sizeof cand, "%s", name);
        else
            snprintf(cand, sizeof cand, "%s.%d", name, k);
        if ((size_t)snprintf(path, sizeof path, "%s/%s", base, cand) >= sizeof path) {
            argus_seterr(errbuf, errlen, "%s/%s: path too long", base, cand);
            rc = -ENAMETOOLONG;
            goto out;
        }
        if (mkdirat(basefd, cand, DIR_MODE) == 0)
            break;
        if (errno != EEXIST) {
            rc = -errno;
            argus_seterr(errbuf, errlen, "%s: cannot create directory: %s", path,
                         strerror(-rc));
            goto out;
        }
    }
    if (k > MAX_SUFFIX) {
        argus_seterr(errbuf, errlen, "%s/%s and .1 to .%d all exist; remove old ones", base,
                     name, MAX_SUFFIX);
        rc = -EEXIST;
        goto out;
    }
    dirfd = fresh_dir_open(basefd, cand, path, 1, errbuf, errlen);
    if (dirfd < 0) {
        rc = dirfd; /* not ours after all: not removed */
        goto out;
    }
    snprintf(traces, sizeof traces, "%s/traces", path);
    tfd = fresh_dir_open(dirfd, "traces", traces, 0, errbuf, errlen);
    if (tfd < 0) {
        /* Not left behind silently: what we made is removed, or errbuf says it is left. */
        rc = tfd;
        (void)unlinkat(dirfd, "traces", AT_REMOVEDIR);
        if (unlinkat(basefd, cand, AT_REMOVEDIR) != 0 && errbuf && errlen) {
            size_t used = strnlen(errbuf, errlen);
            if (used + 1 < errlen)
                snprintf(errbuf + used, errlen - used, "; the directory %s is left behind: %s",
                         path, strerror(errno));
        }
        goto out;
    }
    od->fd = dirfd;
    od->traces_fd = tfd;
    dirfd = tfd = -1;
    snprintf(od->path, sizeof od->path, "%s", path);
    rc = 0;
out:
    if (dirfd >= 0)
        close(dirfd);
    if (basefd >= 0)
        close(basefd);
    return rc;
}

int argus_outdir_create_at(struct argus_outdir *od, const char *base, const char *jobid,
                           char *errbuf, size_t errlen)
{
    char name[256];

    argus_outdir_init(od);
    if (!jobid_ok(jobid)) {
        argus_seterr(errbuf, errlen, "job id '%.64s': only [A-Za-z0-9._-], 1 to 200 characters",
               jobid ? jobid : "");
        return -EINVAL;
    }
    snprintf(name, sizeof name, "argus-%s", jobid);
    return argus_outdir_fresh(od, base, name, errbuf, errlen);
}

int argus_outdir_create(const char *base, const char *jobid, char *out, size_t outlen,
                        char *errbuf, size_t errlen)
{
    struct argus_outdir od;
    size_t need = strlen(base && *base ? base : ".") + strlen("/argus-") +
                  (jobid ? strlen(jobid) : 0) + 5; /* ".999" and the NUL */

    if (jobid_ok(jobid) && out && outlen && need > outlen) {
        argus_seterr(errbuf, errlen, "%s/argus-%s: path too long", base, jobid);
        return -ENAMETOOLONG;
    }
    int rc = argus_outdir_create_at(&od, base, jobid, errbuf, errlen);
    if (rc == 0 && out && outlen)
        snprintf(out, outlen, "%s", od.path);
    argus_outdir_close(&od);
    return rc;
}

/* fd is a directory owned by the effective uid; else negative errno with errbuf. */
static int dir_is_ours(int fd, const char *shown, char *errbuf, size_t errlen)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s: %s", shown, strerror(e));
        return -e;
    }
    if (!S_ISDIR(st.st_mode)) {
        argus_seterr(errbuf, errlen, "%s: not a directory", shown);
        return -ENOTDIR;
    }
    if (st.st_uid != geteuid()) {
        argus_seterr(errbuf, errlen, "%s: owned by uid %u, not by us (uid %u); refusing to "
                     "write there", shown, (unsigned)st.st_uid, (unsigned)geteuid());
        return -EPERM;
    }
    return 0;
}

/* name under pfd, made when missing (DIR_MODE less the umask), opened without following a
 * symlink and checked (dir_is_ours). An fd or negative errno. */
static int adopt_one(int pfd, const char *name, const char *shown, char *errbuf,
                     size_t errlen)
{
    struct stat st;

    if (mkdirat(pfd, name, DIR_MODE) != 0 && errno != EEXIST) {
        int e = errno;
        argus_seterr(errbuf, errlen, "%s: cannot create directory: %s", shown, strerror(e));
        return -e;
    }
    int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            argus_seterr(errbuf, errlen, "%s is a symbolic link; refusing to write through it",
                         shown);
            return -ELOOP;
        }
        argus_seterr(errbuf, errlen, "%s: %s", shown,
                     e == ENOTDIR ? "not a directory" : strerror(e));
        return -e;
    }
    int rc = dir_is_ours(fd, shown, errbuf, errlen);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

int argus_outdir_adopt(struct argus_outdir *od, const char *path, char *errbuf,
                       size_t errlen)
{
    char parent[ARGUS_OUTDIR_PATH_MAX], last[NAME_MAX + 1], traces[ARGUS_OUTDIR_PATH_MAX + 16];
    size_t n = path ? strlen(path) : 0;
    int pfd = -1, fd = -1, rc;

    argus_outdir_init(od);
    if (n == 0 || n >= sizeof od->path) {
        argus_seterr(errbuf, errlen, "%s: bad directory name", path ? path : "");
        return -ENAMETOOLONG;
    }
    snprintf(od->path, sizeof od->path, "%s", path);
    while (n > 1 && path[n - 1] == '/') /* trailing slashes */
        n--;
    size_t cut = n; /* the last component is path[cut..n) */
    while (cut > 0 && path[cut - 1] != '/')
        cut--;
    if (n - cut > NAME_MAX) {
        argus_seterr(errbuf, errlen, "%s: a component is too long", path);
        return -ENAMETOOLONG;
    }
    memcpy(last, path + cut, n - cut);
    last[n - cut] = '\0';
    if (cut == 0)
        snprintf(parent, sizeof parent, ".");
    else if (cut == 1)
        snprintf(parent, sizeof parent, "/");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(cut - 1), path);
    if (cut > 1 && (rc = mkdir_parents(parent, strlen(parent), errbuf, errlen)) < 0)
        return rc;
    if (!last[0] || strcmp(last, ".") == 0 || strcmp(last, "..") == 0) {
        /* "/", ".", "x/..": nothing to make or to refuse as a link; the fd is checked */
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            rc = -errno;
            argus_seterr(errbuf, errlen, "%s: %s", path, strerror(-rc));
            return rc;
        }
        if ((rc = dir_is_ours(fd, path, errbuf, errlen)) < 0)
            goto fail;
    } else {
        pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0) {
            rc = -errno;
            argus_seterr(errbuf, errlen, "%s: cannot open %s: %s", path, parent,
                         strerror(-rc));
            return rc;
        }
        fd = adopt_one(pfd, last, path, errbuf, errlen);
        close(pfd);
        if (fd < 0)
            return fd;
    }
    snprintf(traces, sizeof traces, "%s/traces", path);
    int tfd = adopt_one(fd, "traces", traces, errbuf, errlen);
    if (tfd < 0) {
        rc = tfd;
        goto fail;
    }
    od->fd = fd;
    od->traces_fd = tfd;
    return 0;
fail:
    close(fd);
    return rc;
}
