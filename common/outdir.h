/* outdir.h — the job output directory and safe file writing.
 *
 * An output directory is held open for the life of its writer (struct argus_outdir: the
 * directory's fd and its traces/ fd), and every file in it is created relative to those
 * fds, never by path: a directory renamed away and replaced after it was opened, or a
 * symlink planted at a file's name, cannot send a write elsewhere. The path is kept for
 * messages only.
 *
 * argus_outdir_fresh makes a new <base>/<name>/ (and traces/), mode 0750, and never adopts
 * one that exists, whoever made it: the first of <name>, <name>.1 ... <name>.999 that
 * mkdirat creates is used (-EEXIST past that), and it is checked through its fd (a
 * directory, owned by the effective uid, mode 0750). base is walked from / (or the cwd)
 * without following symlinks: a symlink component is refused (-ELOOP); a directory
 * writable by group or others must be sticky, and base itself, if writable by others,
 * owned by us or root (-EPERM); missing components are made 0750 less the umask. Root
 * gets no exception. When traces/ cannot be made the directory just created is removed
 * again (errbuf says so if that fails too). argus_outdir_create is the live job's
 * directory: name argus-<jobid> (jobid [A-Za-z0-9._-], 1 to 200 characters).
 *
 * argus_outdir_adopt opens a directory the user named (argus-analyze -o), made with every
 * missing parent (0750 less the umask) when it does not exist: an existing one is used,
 * but its last component is opened without following a symlink (-ELOOP) and checked
 * through the fd: a directory (-ENOTDIR) owned by the effective uid (-EPERM); traces/ in
 * it the same (made when missing). Symlinks above the last component are followed.
 *
 * Writers, relative to a directory fd (od->fd or od->traces_fd); shown is the directory's
 * path, used in errbuf only:
 * argus_file_write_at writes <name>.partial (a stale one of ours is removed first, then it
 * is created O_EXCL|O_NOFOLLOW, mode 0640), fsyncs it, renameat()s it to name and fsyncs
 * the directory. argus_file_partial_open / argus_file_partial_commit are its two halves
 * for a writer that streams (the L4 trace files): open returns the .partial's fd; commit
 * fsyncs and closes fd (-1: the caller synced and closed it), renames and syncs, or
 * removes the .partial (ok = 0, or a failure).
 * argus_file_append_at appends one line (a newline added when missing) in one write,
 * O_APPEND|O_CREAT|O_NOFOLLOW, mode 0640, to a regular file (anomalies.jsonl).
 * argus_file_write_atomic / argus_file_append_line are the same by path (the directory
 * part opened first, following symlinks; the file itself never followed).
 *
 * All return 0 (partial_open: an fd) or negative errno with errbuf naming the path. Never
 * exits; no global state. The caller owns an argus_outdir and its fds.
 *
 * Implemented in outdir.c (the directory: fresh, create, adopt) and outfile.c (the
 * writers).
 */
#ifndef ARGUS_COMMON_OUTDIR_H
#define ARGUS_COMMON_OUTDIR_H

#include <stddef.h>

#define ARGUS_OUTDIR_PATH_MAX 4096

struct argus_outdir {
    int fd;                           /* the directory (O_RDONLY|O_DIRECTORY); -1: none */
    int traces_fd;                    /* its traces/; -1: none */
    char path[ARGUS_OUTDIR_PATH_MAX]; /* base/name as chosen, for messages only */
};

/* fds -1, path empty; close is then a no-op. */
void argus_outdir_init(struct argus_outdir *od);
/* Close both fds (idempotent); path stays. */
void argus_outdir_close(struct argus_outdir *od);

int argus_outdir_fresh(struct argus_outdir *od, const char *base, const char *name,
                       char *errbuf, size_t errlen);
int argus_outdir_create_at(struct argus_outdir *od, const char *base, const char *jobid,
                           char *errbuf, size_t errlen);
int argus_outdir_adopt(struct argus_outdir *od, const char *path, char *errbuf,
                       size_t errlen);
/* argus_outdir_create_at, then closed: only the path chosen is kept, in out (checked to
 * fit before anything is made: -ENAMETOOLONG). */
int argus_outdir_create(const char *base, const char *jobid, char *out, size_t outlen,
                        char *errbuf, size_t errlen);

int argus_file_write_at(int dirfd, const char *shown, const char *name, const void *data,
                        size_t len, char *errbuf, size_t errlen);
int argus_file_partial_open(int dirfd, const char *shown, const char *name, char *errbuf,
                            size_t errlen);
int argus_file_partial_commit(int dirfd, const char *shown, const char *name, int fd, int ok,
                              char *errbuf, size_t errlen);
int argus_file_append_at(int dirfd, const char *shown, const char *name, const char *line,
                         char *errbuf, size_t errlen);

int argus_file_write_atomic(const char *path, const void *data, size_t len, char *errbuf,
                            size_t errlen);
int argus_file_append_line(const char *path, const char *line, char *errbuf, size_t errlen);

#endif /* ARGUS_COMMON_OUTDIR_H */
