/* inputs.c — argus-analyze's input side (import/analyze_run.h): stage what each importer
 * delivers (trimmed copies of summaries, kernel names), undo a file that failed half way,
 * say what was skipped, lost or dropped (one line each on stderr, kept for the report),
 * copy a pipe to a temporary file, and walk files and directories. Formats are detected
 * from content (import/import.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import/analyze_run.h"
#include "import/pystacks.h"
#include "import/steplog.h"
#include "store/jobstore.h"
#include "common/grow.h"
#include "common/wire.h"
#include "common/log.h"

/* ---- staging --------------------------------------------------------------------- */

static void stage_summary(void *ctx, const struct argus_step_summary *s)
{
    struct run *r = ctx;
    size_t sz = offsetof(struct argus_step_summary, kmodes) +
                (size_t)s->n_kmodes * sizeof s->kmodes[0];
    struct argus_step_summary *c;

    if (argus_grow(&r->sums, &r->cap_sums, r->n_sums + 1, sizeof *r->sums, 256) != 0) {
        r->oom = 1;
        return;
    }
    c = malloc(sz); /* trimmed: the store too reads kmodes up to n_kmodes only */
    if (!c) {
        r->oom = 1;
        return;
    }
    memcpy(c, s, sz);
    r->sums[r->n_sums].s = c;
    r->sums[r->n_sums++].file = r->cur_file;
}

static void stage_name(void *ctx, uint64_t hash, const char *name)
{
    struct run *r = ctx;

    for (size_t i = r->n_names; i-- > 0 && i + 64 > r->n_names;)
        if (r->names[i].hash == hash)
            return; /* recent duplicate; the store dedups the rest */
    if (argus_grow(&r->names, &r->cap_names, r->n_names + 1, sizeof *r->names, 256) != 0) {
        r->oom = 1;
        return;
    }
    r->names[r->n_names].hash = hash;
    if (!(r->names[r->n_names].name = strdup(name)))
        r->oom = 1;
    else
        r->n_names++;
}

/* Drop what a rejected file staged. */
static void unstage_file(struct run *r, int file)
{
    size_t j = 0;
    for (size_t i = 0; i < r->n_sums; i++) {
        if (r->sums[i].file == file)
            free(r->sums[i].s);
        else
            r->sums[j++] = r->sums[i];
    }
    r->n_sums = j;
}

/* Keep a copy of msg in a growing list of lines (every one: no cap that would lie). */
static void keep_line(struct run *r, char ***v, size_t *n, size_t *cap, const char *msg)
{
    char *c = strdup(msg);
    if (!c || argus_grow(v, cap, *n + 1, sizeof **v, 16) != 0) {
        free(c);
        r->oom = 1;
        return;
    }
    (*v)[(*n)++] = c;
}

static void skip(struct run *r, const char *msg)
{
    argus_progress_clear(r->progress);
    fprintf(stderr, PROG ": %s; skipped\n", msg);
    keep_line(r, &r->skipped, &r->n_skipped, &r->cap_skipped, msg);
}

/* An input used in part (report.json "inputs", job.complete false) or a note on one. */
__attribute__((format(printf, 3, 4)))
static void lost_or_note(struct run *r, int lost, const char *fmt, ...)
{
    char msg[1400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    argus_progress_clear(r->progress);
    fprintf(stderr, PROG ": %s\n", msg);
    if (lost)
        keep_line(r, &r->lost, &r->n_lost, &r->cap_lost, msg);
    else
        keep_line(r, &r->notes, &r->n_notes, &r->cap_notes, msg);
}

/* An importer's message names the file it opened (alias, /dev/fd/N for a pipe's copy): put
 * the name the user gave in its place. */
static void rename_msg(char *msg, size_t len, const char *alias, const char *path)
{
    const size_t al = strlen(alias);
    if (alias == path || strncmp(msg, alias, al) != 0)
        return;
    char tmp[1400];
    snprintf(tmp, sizeof tmp, "%s%s", path, msg + al);
    snprintf(msg, len, "%s", tmp);
}

/* ---- one input file ---------------------------------------------------------------- */

static void import_kineto(struct run *r, const char *path, const char *shown)
{
    struct argus_import_sink sink = {stage_summary, stage_name, r};
    struct argus_kineto_info *in = malloc(sizeof *in);
    char err[1400], msg[1200];

    if (!in) {
        snprintf(msg, sizeof msg, "%s: out of memory", path);
        skip(r, msg);
        return;
    }
    r->kopts.max_ranks = r->max_ranks;
    if (argus_kineto_import(path, &r->kopts, &sink, in, err, sizeof err) != 0) {
        if (r->kopts.pystacks)
            argus_pystacks_discard(r->kopts.pystacks); /* its host stacks go with it */
        unstage_file(r, r->cur_file);
        rename_msg(err, sizeof err, path, shown);
        skip(r, err);
        free(in);
        return;
    }
    path = shown;
    for (size_t i = 0; i < r->n_kinfo; i++)
        if (r->kinfo[i]->rank == in->rank) {
            snprintf(msg, sizeof msg, "%s: duplicate rank %d (an earlier file has it)", path,
                     in->rank);
            if (r->kopts.pystacks)
                argus_pystacks_discard(r->kopts.pystacks);
            unstage_file(r, r->cur_file);
            skip(r, msg);
            free(in);
            return;
        }
    if (in->steps == 0) {
        snprintf(msg, sizeof msg, "%s: empty rank %d: no step could be built", path,
                 in->rank);
        if (r->kopts.pystacks)
            argus_pystacks_discard(r->kopts.pystacks);
        unstage_file(r, r->cur_file);
        skip(r, msg);
        free(in);
        return;
    }
    if (argus_grow(&r->kinfo, &r->cap_kinfo, r->n_kinfo + 1, sizeof *r->kinfo, 16) != 0) {
        if (r->kopts.pystacks)
            argus_pystacks_discard(r->kopts.pystacks);
        free(in);
        r->oom = 1;
        return;
    }
    r->kinfo[r->n_kinfo++] = in;
    if (r->kopts.pystacks) /* its python_function stalls, as this rank (import/pystacks.h) */
        argus_pystacks_commit(r->kopts.pystacks, (uint32_t)in->rank, in->pg_kinds != 0,
                              &in->coords);
    if ((uint32_t)in->rank + 1 > r->n_ranks)
        r->n_ranks = (uint32_t)in->rank + 1;
    r->any_kineto = 1;
    r->n_ok++;
    if (in->bad_times)
        lost_or_note(r, 0, "%s: %llu events with a negative, unreadable or absurd ts or dur "
                     "(%llu of them kernels) dropped", path,
                     (unsigned long long)in->bad_times, (unsigned long long)in->bad_kernels);
    if (in->clipped)
        lost_or_note(r, 0, "%s: %llu strings longer than %d bytes or numbers longer than %d "
                     "cut short while reading (kernel names keep %d bytes)", path,
                     (unsigned long long)in->clipped, ARGUS_KINETO_STR_MAX,
                     ARGUS_KINETO_TOK_MAX, ARGUS_NAME_MAX);
    if (argus_log_get_level() >= ARGUS_LOG_INFO)
        fprintf(stderr, PROG ": %s: rank %d%s, %llu steps (%llu..%llu), %llu kernels (%llu "
                "NCCL), %llu events of unknown types skipped, %llu spilled runs (%llu "
                "bytes)\n", path, in->rank, in->rank_from_name ? " (from the file name)" : "",
                (unsigned long long)in->steps, (unsigned long long)in->first_step,
                (unsigned long long)in->last_step, (unsigned long long)in->kernels,
                (unsigned long long)in->nccl_kernels, (unsigned long long)in->skipped,
                (unsigned long long)in->spilled, (unsigned long long)in->spill_bytes);
}

static void import_csv(struct run *r, const char *path, const char *shown)
{
    char err[1400];
    size_t before = r->n_sums;
    struct argus_import_sink sink = {stage_summary, NULL, r};
    const struct argus_csv_opts co = {r->max_ranks};
    struct argus_csv_info ci;

    int rc = argus_steps_csv_import(path, &co, &sink, &ci, err, sizeof err);
    rename_msg(err, sizeof err, path, shown);
    if (rc != 0 && r->n_sums == before) {
        skip(r, err);
        return;
    }
    if (rc != 0)
        lost_or_note(r, 1, "%s; the rows before it are used", err);
    if (ci.refused)
        lost_or_note(r, 1, "%s:%lu: %llu of %llu rows not used; the first: %s", shown,
                     ci.refused_line, (unsigned long long)ci.refused,
                     (unsigned long long)(ci.refused + ci.rows), ci.refused_why);
    if (ci.cut_line && ci.refused > 1)
        lost_or_note(r, 1, "%s:%lu: the last line has no end of line: the file was cut short",
                     shown, ci.cut_line);
    if (ci.phase_unknown)
        lost_or_note(r, 0, "%s:%lu: %llu rows have an empty phase cell (unknown): they carry "
                     "no phase split, step time only", shown, ci.phase_unknown_line,
                     (unsigned long long)ci.phase_unknown);
    if (ci.dups)
        lost_or_note(r, 0, "%s:%lu: %llu rows repeat the (step, rank) of an earlier row (the "
                     "first repeats line %lu); the later row is used", shown, ci.dup_line,
                     (unsigned long long)ci.dups, ci.dup_of);
    r->n_ranks = ci.max_rank > r->n_ranks ? ci.max_rank : r->n_ranks;
    r->any_csv = 1;
    r->n_ok++;
}

/* A trainer log (import/steplog.h). 0, or -ENOMSG when no line matched a known format
 * (nothing staged, nothing said: the caller skips the file with its own line). */
static int import_steplog(struct run *r, const char *path, const char *shown)
{
    char err[1400];
    struct argus_import_sink sink = {stage_summary, NULL, r};
    const struct argus_steplog_opts so = {r->max_ranks, r->rank_from, (int32_t)r->n_logs};
    struct argus_steplog_info li;

    int rc = argus_steplog_import(path, &so, &sink, &li, err, sizeof err);
    if (rc == -ENOMSG)
        return rc;
    rename_msg(err, sizeof err, path, shown);
    if (rc < 0) {
        unstage_file(r, r->cur_file);
        skip(r, err);
        return 0;
    }
    for (size_t i = 0; i < r->n_logs; i++)
        if (r->log_ranks[i] == li.rank) {
            unstage_file(r, r->cur_file);
            snprintf(err, sizeof err, "%s: duplicate rank %ld (an earlier trainer log has it; "
                     "--rank-from)", shown, (long)li.rank);
            skip(r, err);
            return 0;
        }
    if (argus_grow(&r->log_ranks, &r->cap_logs, r->n_logs + 1, sizeof *r->log_ranks, 16)) {
        unstage_file(r, r->cur_file);
        snprintf(err, sizeof err, "%s: out of memory", shown);
        skip(r, err);
        return 0;
    }
    if (rc > 0)
        lost_or_note(r, 1, "%s; the steps before it are used", err);
    if (li.refused)
        lost_or_note(r, 1, "%s:%lu: %llu %s lines not used; the first: %s", shown,
                     li.refused_line, (unsigned long long)li.refused, li.format,
                     li.refused_why);
    if (li.ignored)
        lost_or_note(r, 0, "%s:%lu: %llu %s lines ignored: their step is not after the "
                     "previous one", shown, li.ignored_line, (unsigned long long)li.ignored,
                     li.format);
    if (li.rank_how == 2)
        lost_or_note(r, 0, "%s: no rank in the file name (--rank-from): taken as rank %ld, "
                     "the trainer logs' order", shown, (long)li.rank);
    r->log_ranks[r->n_logs] = li.rank;
    fprintf(stderr, PROG ": %s: %s log, rank %ld, %llu steps (%llu..%llu)\n", shown,
            li.format, (long)li.rank, (unsigned long long)li.steps,
            (unsigned long long)li.first_step, (unsigned long long)li.last_step);
    r->n_logs++;
    if ((uint32_t)li.rank + 1 > r->n_ranks)
        r->n_ranks = (uint32_t)li.rank + 1;
    r->any_csv = 1;
    r->n_ok++;
    return 0;
}

static void import_spool(struct run *r, const char *path, const char *shown)
{
    char err[1400];
    struct argus_spool_info si; /* what was lost or downsampled (import/spool.c) */
    const uint32_t bound = r->max_ranks ? r->max_ranks : ARGUS_MAX_RANKS_DEFAULT;
    int rc = argus_spool_scan_info(path, &si, err, sizeof err);
    uint32_t n = si.n_ranks;

    rename_msg(err, sizeof err, path, shown);
    if (n == 0) {
        if (rc)
            skip(r, err);
        else {
            snprintf(err, sizeof err, "%s: spool holds no summaries", shown);
            skip(r, err);
        }
        return;
    }
    if (n > bound) {
        snprintf(err, sizeof err, "%s: holds rank ids up to %lu, at or past the bound of %lu "
                 "ranks (--max-ranks)", shown, (unsigned long)n - 1, (unsigned long)bound);
        skip(r, err);
        return;
    }
    if (rc > 0) { /* read in part: damage skipped, a cut end, steps dropped */
        rename_msg(si.lost, sizeof si.lost, path, shown);
        lost_or_note(r, 1, "%s", si.lost);
    }
    if (si.thinned[0]) {
        rename_msg(si.thinned, sizeof si.thinned, path, shown);
        lost_or_note(r, 0, "%s", si.thinned);
    }
    if (argus_grow(&r->spools, &r->cap_spools, r->n_spools + 1, sizeof *r->spools, 16) ||
        !(r->spools[r->n_spools] = strdup(path))) {
        r->oom = 1;
        return;
    }
    r->n_spools++;
    r->n_ranks = n > r->n_ranks ? n : r->n_ranks;
    r->n_ok++;
    if (!r->jobid[0] && path == shown) {
        /* <outdir>/argus-<jobid>/summaries.argus: take the job id back */
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", path);
        char *slash = strrchr(tmp, '/');
        if (slash) {
            *slash = '\0';
            char *base = strrchr(tmp, '/');
            base = base ? base + 1 : tmp;
            if (strncmp(base, "argus-", 6) == 0 && base[6])
                snprintf(r->jobid, sizeof r->jobid, "%s", base + 6);
        }
    }
}

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
            skip(r, err);
            return;
        }
        path = alias;
    }
    int fmt = argus_import_detect(path, err, sizeof err);
    if (fmt == ARGUS_FMT_UNKNOWN && argus_steps_csv_sniff(path))
        fmt = ARGUS_FMT_STEPS_CSV; /* the header's names in another order */
    if (fmt == ARGUS_FMT_KINETO && argus_steplog_bracket_text(path)) {
        if (import_steplog(r, path, shown) == 0)
            return; /* a trainer log whose first line starts with "[" */
        snprintf(err, sizeof err, "%s: unknown format: starts with \"[\" but neither a "
                 "Kineto/Chrome trace (JSON) nor a trainer log of a known format (megatron, "
                 "mlperf, modded-nanogpt, deepspeed-chat, tqdm)", path);
        fmt = ARGUS_FMT_UNKNOWN;
    } else if (fmt == ARGUS_FMT_UNKNOWN) {
        if (import_steplog(r, path, shown) == 0)
            return; /* a trainer log */
        size_t n = strlen(err);
        snprintf(err + n, sizeof err - n, ", nor a trainer log of a known format (megatron, "
                 "mlperf, modded-nanogpt, deepspeed-chat, tqdm)");
    }
    if (fmt <= 0) {
        rename_msg(err, sizeof err, path, shown);
        skip(r, err);
        return;
    }
    if (fmt == ARGUS_FMT_KINETO)
        import_kineto(r, path, shown);
    else if (fmt == ARGUS_FMT_SPOOL)
        import_spool(r, path, shown);
    else
        import_csv(r, path, shown);
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
        skip(r, msg);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        import_one(r, path, S_ISREG(st.st_mode), S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        skip(r, msg);
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

/* Whether pattern is a POSIX extended regular expression with a capture group
 * (import/steplog.h: the first capture is the rank). */
static int rank_from_ok(const char *pattern)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED) != 0)
        return 0;
    const int ok = re.re_nsub >= 1;
    regfree(&re);
    return ok;
}

/* A size in bytes, or N with K, M or G. 0 or -1. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    int sh = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
           : *end == 'G' || *end == 'g' ? 30 : 0;
    if (sh)
        end++;
    if (*end || v == 0 || v > (SIZE_MAX >> sh))
        return -1;
    *out = (size_t)v << sh;
    return 0;
}

int argus_analyze_input_option(struct run *r, int opt, const char *arg)
{
    switch (opt) {
    case 'm':
        if (parse_size(arg, &r->kopts.max_mem) != 0 || r->kopts.max_mem < (32 << 10)) {
            fprintf(stderr, PROG ": --max-mem %s: not a size of at least 32K (bytes, or N "
                    "with K, M or G)\n", arg);
            return -1;
        }
        return 1;
    case 'R': { /* import/import.h: rank ids at or past it cost their file or row */
        char *e;
        unsigned long v = strtoul(arg, &e, 10);
        if (*arg < '0' || *arg > '9' || *e || v == 0 || v > ARGUS_MAX_RANKS_LIMIT) {
            fprintf(stderr, PROG ": --max-ranks %s: not an integer in [1, %u]\n", arg,
                    ARGUS_MAX_RANKS_LIMIT);
            return -1;
        }
        r->max_ranks = (uint32_t)v;
        return 1;
    }
    case 'r':
        if (!rank_from_ok(arg)) {
            fprintf(stderr, PROG ": --rank-from %s: not a POSIX extended regular "
                    "expression with a capture group\n", arg);
            return -1;
        }
        r->rank_from = arg;
        return 1;
    default:
        return 0;
    }
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
