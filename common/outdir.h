/* outdir.h — the job output directory and safe file writing.
 * argus_outdir_create makes a fresh <base>/argus-<jobid>/ (and traces/), mode 0750, and
 * never adopts one that exists, whoever made it: the first of argus-<jobid>, argus-<jobid>.1
 * ... .999 that mkdirat creates is used (-EEXIST past that), and it is checked through its
 * fd (a directory, owned by the effective uid, mode 0750). base is walked from / (or the
 * cwd) without following symlinks: a symlink component is refused (-ELOOP); a directory
 * writable by group or others must be sticky, and base itself, if writable by others,
 * owned by us or root (-EPERM); missing components are made 0750 less the umask. Root
 * gets no exception. out gets the path chosen (base/name); it is checked to fit before
 * anything is made. argus_mkdir_p makes a directory the user named (argus-analyze -o)
 * and every missing parent, mode 0750 less the umask; -ENOTDIR when path exists and is
 * not a directory. argus_file_write_atomic writes <path>.partial then renames.
 * argus_file_append_line appends one line with O_APPEND (anomalies.jsonl).
 * All return 0 or negative errno with errbuf naming the path.
 */
#ifndef ARGUS_COMMON_OUTDIR_H
#define ARGUS_COMMON_OUTDIR_H

#include <stddef.h>

int argus_outdir_create(const char *base, const char *jobid, char *out, size_t outlen,
                        char *errbuf, size_t errlen);
int argus_mkdir_p(const char *path, char *errbuf, size_t errlen);
int argus_file_write_atomic(const char *path, const void *data, size_t len, char *errbuf,
                            size_t errlen);
int argus_file_append_line(const char *path, const char *line, char *errbuf, size_t errlen);

#endif /* ARGUS_COMMON_OUTDIR_H */
