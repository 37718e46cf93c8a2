/* inputs.c — argus-analyze's input side (import/analyze_run.h): stage what each importer
 * delivers (trimmed copies of summaries, kernel names), undo a file that failed half way,
 * and walk files and directories. Formats are detected from content (import/import.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import/analyze_run.h"
#include "store/jobstore.h"
#include "common/grow.h"
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

static void skip(struct run *r, const char *msg)
{
    fprintf(stderr, PROG ": %s; skipped\n", msg);
    if (r->n_skipped < MAX_SKIPPED)
        r->skipped[r->n_skipped++] = strdup(msg);
}

/* ---- one input file ---------------------------------------------------------------- */

static void import_kineto(struct run *r, const char *path)
{
    struct argus_import_sink sink = {stage_summary, stage_name, r};
    struct argus_kineto_info *in = malloc(sizeof *in);
    char err[1024], msg[1200];

    if (!in) {
        snprintf(msg, sizeof msg, "%s: out of memory", path);
        skip(r, msg);
        return;
    }
    if (argus_kineto_import(path, &r->kopts, &sink, in, err, sizeof err) != 0) {
        unstage_file(r, r->cur_file);
        skip(r, err);
        free(in);
        return;
    }
    for (size_t i = 0; i < r->n_kinfo; i++)
        if (r->kinfo[i]->rank == in->rank) {
            snprintf(msg, sizeof msg, "%s: duplicate rank %d (an earlier file has it)", path,
                     in->rank);
            unstage_file(r, r->cur_file);
            skip(r, msg);
            free(in);
            return;
        }
    if (in->steps == 0) {
        snprintf(msg, sizeof msg, "%s: empty rank %d: no step could be built", path,
                 in->rank);
        unstage_file(r, r->cur_file);
        skip(r, msg);
        free(in);
        return;
    }
    if (argus_grow(&r->kinfo, &r->cap_kinfo, r->n_kinfo + 1, sizeof *r->kinfo, 16) != 0) {
        free(in);
        r->oom = 1;
        return;
    }
    r->kinfo[r->n_kinfo++] = in;
    if ((uint32_t)in->rank + 1 > r->n_ranks)
        r->n_ranks = (uint32_t)in->rank + 1;
    r->any_kineto = 1;
    r->n_ok++;
    if (argus_log_get_level() >= ARGUS_LOG_INFO)
        fprintf(stderr, PROG ": %s: rank %d%s, %llu steps (%llu..%llu), %llu kernels (%llu "
                "NCCL), %llu events of unknown types skipped, %llu spilled runs (%llu "
                "bytes)\n", path, in->rank, in->rank_from_name ? " (from the file name)" : "",
                (unsigned long long)in->steps, (unsigned long long)in->first_step,
                (unsigned long long)in->last_step, (unsigned long long)in->kernels,
                (unsigned long long)in->nccl_kernels, (unsigned long long)in->skipped,
                (unsigned long long)in->spilled, (unsigned long long)in->spill_bytes);
}

static void import_file(struct run *r, const char *path)
{
    char err[1024];
    int fmt = argus_import_detect(path, err, sizeof err);

    r->n_inputs++;
    r->cur_file = (int)r->n_inputs;
    if (fmt <= 0) {
        skip(r, err);
        return;
    }
    if (fmt == ARGUS_FMT_KINETO) {
        import_kineto(r, path);
    } else if (fmt == ARGUS_FMT_SPOOL) {
        uint32_t n = 0;
        int rc = argus_spool_scan(path, &n, err, sizeof err);
        if (n == 0) {
            skip(r, rc ? err : "spool holds no summaries");
            return;
        }
        if (rc)
            fprintf(stderr, PROG ": %s; the records before it are used\n", err);
        if (argus_grow(&r->spools, &r->cap_spools, r->n_spools + 1, sizeof *r->spools, 16) ||
            !(r->spools[r->n_spools] = strdup(path))) {
            r->oom = 1;
            return;
        }
        r->n_spools++;
        r->n_ranks = n > r->n_ranks ? n : r->n_ranks;
        r->n_ok++;
        if (!r->jobid[0]) {
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
    } else {
        uint32_t n = 0;
        size_t before = r->n_sums;
        struct argus_import_sink sink = {stage_summary, NULL, r};
        if (argus_steps_csv_import(path, &sink, &n, err, sizeof err) != 0) {
            if (r->n_sums == before) {
                skip(r, err);
                return;
            }
            fprintf(stderr, PROG ": %s; the rows before it are used\n", err);
        }
        r->n_ranks = n > r->n_ranks ? n : r->n_ranks;
        r->any_csv = 1;
        r->n_ok++;
    }
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
        import_file(r, path);
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
        import_file(r, list[i]);
        free(list[i]);
    }
    free(list);
}
