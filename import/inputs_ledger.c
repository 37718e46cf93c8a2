/* inputs_ledger.c — argus-analyze's staging area and its account of the inputs
 * (import/inputs_int.h): trimmed copies of what each importer delivers (summaries, kernel
 * names), undone for a file that failed half way, and the lines said about inputs
 * skipped, read in part or noted (one line each on stderr, every one kept for
 * report.json's "inputs").
 * Must not cap the kept lines (a cap would lie about what was skipped); out of memory sets
 * r->oom and is reported once by the caller.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "import/inputs_int.h"

void inputs_stage_summary(void *ctx, const struct argus_step_summary *s)
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

void inputs_stage_name(void *ctx, uint64_t hash, const char *name)
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
void inputs_unstage_file(struct run *r, int file)
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

void inputs_skip(struct run *r, const char *msg)
{
    argus_progress_clear(r->progress);
    fprintf(stderr, PROG ": %s; skipped\n", msg);
    keep_line(r, &r->skipped, &r->n_skipped, &r->cap_skipped, msg);
}

/* An input used in part (report.json "inputs", job.complete false) or a note on one. */
__attribute__((format(printf, 3, 4)))
void inputs_lost_or_note(struct run *r, int lost, const char *fmt, ...)
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
void inputs_rename_msg(char *msg, size_t len, const char *alias, const char *path)
{
    const size_t al = strlen(alias);
    if (alias == path || strncmp(msg, alias, al) != 0)
        return;
    char tmp[1400];
    snprintf(tmp, sizeof tmp, "%s%s", path, msg + al);
    snprintf(msg, len, "%s", tmp);
}
