/* outdir.h — the job output directory and safe file writing.
 * argus_outdir_create makes <base>/argus-<jobid>/ (and traces/) with mode 0750, refusing a
 * symlink at the final component (the live job's directory). argus_mkdir_p makes a
 * directory the user named (argus-analyze -o) and every missing parent, mode 0750 less
 * the umask; -ENOTDIR when path exists and is not a directory. argus_file_write_atomic
 * writes <path>.partial then renames. argus_file_append_line appends one line with
 * O_APPEND (anomalies.jsonl).
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
