/* inputs.c — argus-analyze's input side (import/analyze_run.h): walk the files and
 * directories given, copy a pipe to a temporary file, detect each file's format from
 * content (import/import.h) and hand it to its importer (import/inputs_formats.c), with the
 * progress line around it (import/progress.h); free what the input side kept.
 * Must not stop at a bad input: it costs one line (import/inputs_ledger.c), the others go
 * on.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "import/inputs_int.h"
#include "import/steplog.h"

/* A pipe, FIFO or device (not seekable, and format detection would eat its first bytes):
 * its bytes into an unlinked temporary file in $TMPDIR, kept open until exit; alias gets
 * /dev/fd/N to read it by. 0, or -1 with msg. */
static int copy_pipe(struct run *r, const char *path, char *alias, size_t alen, char *msg,
                     size_t mlen)
{
    const char *tmp = getenv("TMPDIR");
    char tpl[PATH_MAX];
    int in = -1, out = -1, rc = -1;
    char *buf = malloc(1 << 16);

    snprintf(tpl, sizeof tpl, "%s/argus-analyze-pipe.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!buf || (in = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(msg, mlen, "%s: cannot open: %s", path, buf ? strerror(errno)
                                                              : "out of memory");
        goto out;
    }
    if ((out = mkstemp(tpl)) < 0) {
        snprintf(msg, mlen, "%s: cannot copy the pipe: %.200s: %s", path, tpl, strerror(errno));
        goto out;
    }
    unlink(tpl);
    for (;;) {
        ssize_t n = read(in, buf, 1 << 16);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(msg, mlen, "%s: read error: %s", path, strerror(errno));
            goto out;
        }
        for (ssize_t w = 0; w < n;) {
            ssize_t k = write(out, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                snprintf(msg, mlen, "%s: cannot copy the pipe to %s: %s", path,
                         tmp && *tmp ? tmp : "/tmp", strerror(errno));
                goto out;
            }
            w += k;
        }
    }
    if (argus_grow(&r->pipe_fds, &r->cap_pipe_fds, r->n_pipe_fds + 1, sizeof *r->pipe_fds,
                   4) != 0) {
        snprintf(msg, mlen, "%s: out of memory", path);
        goto out;
    }
    r->pipe_fds[r->n_pipe_fds++] = out;
    snprintf(alias, alen, "/dev/fd/%d", out);
    out = -1;
    rc = 0;
out:
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    free(buf);
    return rc;
}

static void import_file(struct run *r, const char *shown, int regular)
{
    char err[1400], alias[64];
    const char *path = shown;

    r->n_inputs++;
    r->cur_file = (int)r->n_inputs;
    if (!regular) {
        if (copy_pipe(r, shown, alias, sizeof alias, err, sizeof err) != 0) {
            inputs_skip(r, err);
            return;
        }
        path = alias;
    }
    int fmt = argus_import_detect(path, err, sizeof err);
    if (fmt == ARGUS_FMT_UNKNOWN && argus_steps_csv_sniff(path))
        fmt = ARGUS_FMT_STEPS_CSV; /* the header's names in another order */
    if (fmt == ARGUS_FMT_KINETO && argus_steplog_bracket_text(path)) {
        if (inputs_import_steplog(r, path, shown) == 0)
            return; /* a trainer log whose first line starts with "[" */
        snprintf(err, sizeof err, "%s: unknown format: starts with \"[\" but neither a "
                 "Kineto/Chrome trace (JSON) nor a trainer log of a known format (megatron, "
                 "mlperf, modded-nanogpt, deepspeed-chat, tqdm)", path);
        fmt = ARGUS_FMT_UNKNOWN;
    } else if (fmt == ARGUS_FMT_UNKNOWN) {
        if (inputs_import_steplog(r, path, shown) == 0)
            return; /* a trainer log */
        size_t n = strlen(err);
        snprintf(err + n, sizeof err - n, ", nor a trainer log of a known format (megatron, "
                 "mlperf, modded-nanogpt, deepspeed-chat, tqdm)");
    }
    if (fmt <= 0) {
        inputs_rename_msg(err, sizeof err, path, shown);
        inputs_skip(r, err);
        return;
    }
    if (fmt == ARGUS_FMT_KINETO)
        inputs_import_kineto(r, path, shown);
    else if (fmt == ARGUS_FMT_SPOOL)
        inputs_import_spool(r, path, shown);
    else
        inputs_import_csv(r, path, shown);
}

/* import_file with the progress line around it (import/progress.h). */
static void import_one(struct run *r, const char *shown, int regular, uint64_t size)
{
    argus_progress_file(r->progress, shown, size);
    import_file(r, shown, regular);
    argus_progress_done(r->progress, size, r->n_ranks);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every regular non-hidden file of a directory (sorted; one level). */
void argus_analyze_import_path(struct run *r, const char *path)
{
    struct stat st;
    char msg[PATH_MAX + 128];

    if (stat(path, &st) != 0) {
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        r->n_inputs++;
        inputs_skip(r, msg);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        import_one(r, path, S_ISREG(st.st_mode), S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        inputs_skip(r, msg);
        return;
    }
    char **list = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char full[PATH_MAX + 256];
        if (de->d_name[0] == '.')
            continue;
        snprintf(full, sizeof full, "%s/%s", path, de->d_name);
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (argus_grow(&list, &cap, n + 1, sizeof *list, 64) != 0)
            break;
        if (!(list[n] = strdup(full)))
            break;
        n++;
    }
    closedir(d);
    qsort(list, n, sizeof *list, cmp_str);
    for (size_t i = 0; i < n; i++) {
        import_one(r, list[i], 1, stat(list[i], &st) == 0 ? (uint64_t)st.st_size : 0);
        free(list[i]);
    }
    free(list);
}

void argus_analyze_inputs_free(struct run *r)
{
    for (size_t i = 0; i < r->n_skipped; i++)
        free(r->skipped[i]);
    for (size_t i = 0; i < r->n_lost; i++)
        free(r->lost[i]);
    for (size_t i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    for (size_t i = 0; i < r->n_pipe_fds; i++)
        close(r->pipe_fds[i]);
    free(r->skipped);
    free(r->lost);
    free(r->notes);
    free(r->pipe_fds);
    free(r->log_ranks);
    r->log_ranks = NULL;
    r->n_logs = r->cap_logs = 0;
    r->skipped = r->lost = r->notes = NULL;
    r->pipe_fds = NULL;
    r->n_skipped = r->n_lost = r->n_notes = r->n_pipe_fds = 0;
}
