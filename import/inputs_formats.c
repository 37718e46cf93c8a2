/* inputs_formats.c — one input file of a known format into argus-analyze's run
 * (import/inputs_int.h): a Kineto trace, a steps.csv, a trainer log or a spool, each through
 * its importer (import/import.h, import/steplog.h), then judged as a whole (a duplicate
 * rank, an empty rank, rank ids past --max-ranks: the file is skipped and what it staged
 * undone) and what was lost or dropped inside it said in one line each.
 * Must not print other than through the ledger (import/inputs_ledger.c), except the one
 * line per trainer log (and per trace at ARGUS_LOG=info) saying what was read.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/wire.h"
#include "import/inputs_int.h"
#include "import/pystacks.h"
#include "import/steplog.h"

/* A Kineto file refused after its import began: its host stacks and staged file go with
 * it, msg is said once, the file counts as skipped. */
static void kineto_refuse(struct run *r, struct argus_kineto_info *in, const char *msg)
{
    if (r->kopts.pystacks)
        argus_pystacks_discard(r->kopts.pystacks);
    inputs_unstage_file(r, r->cur_file);
    inputs_skip(r, msg);
    free(in);
}

void inputs_import_kineto(struct run *r, const char *path, const char *shown)
{
    struct argus_import_sink sink = {inputs_stage_summary, inputs_stage_name, r};
    struct argus_kineto_info *in = malloc(sizeof *in);
    char err[1400], msg[1200];

    if (!in) {
        snprintf(msg, sizeof msg, "%s: out of memory", path);
        inputs_skip(r, msg);
        return;
    }
    r->kopts.max_ranks = r->max_ranks;
    if (argus_kineto_import(path, &r->kopts, &sink, in, err, sizeof err) != 0) {
        inputs_rename_msg(err, sizeof err, path, shown);
        kineto_refuse(r, in, err);
        return;
    }
    path = shown;
    for (size_t i = 0; i < r->n_kinfo; i++)
        if (r->kinfo[i]->rank == in->rank) {
            snprintf(msg, sizeof msg, "%s: duplicate rank %d (an earlier file has it)", path,
                     in->rank);
            kineto_refuse(r, in, msg);
            return;
        }
    if (in->steps == 0) {
        snprintf(msg, sizeof msg, "%s: empty rank %d: no step could be built", path,
                 in->rank);
        kineto_refuse(r, in, msg);
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
        inputs_lost_or_note(r, 0, "%s: %llu events with a negative, unreadable or absurd ts or dur "
                     "(%llu of them kernels) dropped", path,
                     (unsigned long long)in->bad_times, (unsigned long long)in->bad_kernels);
    if (in->clipped)
        inputs_lost_or_note(r, 0, "%s: %llu strings longer than %d bytes or numbers longer than %d "
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

void inputs_import_csv(struct run *r, const char *path, const char *shown)
{
    char err[1400];
    size_t before = r->n_sums;
    struct argus_import_sink sink = {inputs_stage_summary, NULL, r};
    const struct argus_csv_opts co = {r->max_ranks};
    struct argus_csv_info ci;

    int rc = argus_steps_csv_import(path, &co, &sink, &ci, err, sizeof err);
    inputs_rename_msg(err, sizeof err, path, shown);
    if (rc != 0 && r->n_sums == before) {
        inputs_skip(r, err);
        return;
    }
    if (rc != 0)
        inputs_lost_or_note(r, 1, "%s; the rows before it are used", err);
    if (ci.refused)
        inputs_lost_or_note(r, 1, "%s:%lu: %llu of %llu rows not used; the first: %s", shown,
                     ci.refused_line, (unsigned long long)ci.refused,
                     (unsigned long long)(ci.refused + ci.rows), ci.refused_why);
    if (ci.cut_line && ci.refused > 1)
        inputs_lost_or_note(r, 1, "%s:%lu: the last line has no end of line: the file was "
                            "cut short", shown, ci.cut_line);
    if (ci.phase_unknown)
        inputs_lost_or_note(r, 0, "%s:%lu: %llu rows have an empty phase cell (unknown): they "
                     "carry no phase split, step time only", shown, ci.phase_unknown_line,
                     (unsigned long long)ci.phase_unknown);
    if (ci.dups)
        inputs_lost_or_note(r, 0, "%s:%lu: %llu rows repeat the (step, rank) of an earlier row "
                     "(the first repeats line %lu); the later row is used", shown, ci.dup_line,
                     (unsigned long long)ci.dups, ci.dup_of);
    r->n_ranks = ci.max_rank > r->n_ranks ? ci.max_rank : r->n_ranks;
    r->any_csv = 1;
    r->n_ok++;
}

/* A trainer log (import/steplog.h). 0, or -ENOMSG when no line matched a known format
 * (nothing staged, nothing said: the caller skips the file with its own line). */
int inputs_import_steplog(struct run *r, const char *path, const char *shown)
{
    char err[1400];
    struct argus_import_sink sink = {inputs_stage_summary, NULL, r};
    const struct argus_steplog_opts so = {r->max_ranks, r->rank_from, (int32_t)r->n_logs};
    struct argus_steplog_info li;

    int rc = argus_steplog_import(path, &so, &sink, &li, err, sizeof err);
    if (rc == -ENOMSG)
        return rc;
    inputs_rename_msg(err, sizeof err, path, shown);
    if (rc < 0) {
        inputs_unstage_file(r, r->cur_file);
        inputs_skip(r, err);
        return 0;
    }
    for (size_t i = 0; i < r->n_logs; i++)
        if (r->log_ranks[i] == li.rank) {
            inputs_unstage_file(r, r->cur_file);
            snprintf(err, sizeof err, "%s: duplicate rank %ld (an earlier trainer log has it; "
                     "--rank-from)", shown, (long)li.rank);
            inputs_skip(r, err);
            return 0;
        }
    if (argus_grow(&r->log_ranks, &r->cap_logs, r->n_logs + 1, sizeof *r->log_ranks, 16)) {
        inputs_unstage_file(r, r->cur_file);
        snprintf(err, sizeof err, "%s: out of memory", shown);
        inputs_skip(r, err);
        return 0;
    }
    if (rc > 0)
        inputs_lost_or_note(r, 1, "%s; the steps before it are used", err);
    if (li.refused)
        inputs_lost_or_note(r, 1, "%s:%lu: %llu %s lines not used; the first: %s", shown,
                     li.refused_line, (unsigned long long)li.refused, li.format,
                     li.refused_why);
    if (li.ignored)
        inputs_lost_or_note(r, 0, "%s:%lu: %llu %s lines ignored: their step is not after the "
                     "previous one", shown, li.ignored_line, (unsigned long long)li.ignored,
                     li.format);
    if (li.rank_how == 2)
        inputs_lost_or_note(r, 0, "%s: no rank in the file name (--rank-from): taken as rank %ld, "
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

void inputs_import_spool(struct run *r, const char *path, const char *shown)
{
    char err[1400];
    struct argus_spool_info si; /* what was lost or downsampled (import/spool.c) */
    const uint32_t bound = r->max_ranks ? r->max_ranks : ARGUS_MAX_RANKS_DEFAULT;
    int rc = argus_spool_scan_info(path, &si, err, sizeof err);
    uint32_t n = si.n_ranks;

    inputs_rename_msg(err, sizeof err, path, shown);
    if (n == 0) {
        if (rc)
            inputs_skip(r, err);
        else {
            snprintf(err, sizeof err, "%s: spool holds no summaries", shown);
            inputs_skip(r, err);
        }
        return;
    }
    if (n > bound) {
        snprintf(err, sizeof err, "%s: holds rank ids up to %lu, at or past the bound of %lu "
                 "ranks (--max-ranks)", shown, (unsigned long)n - 1, (unsigned long)bound);
        inputs_skip(r, err);
        return;
    }
    if (rc > 0) { /* read in part: damage skipped, a cut end, steps dropped */
        inputs_rename_msg(si.lost, sizeof si.lost, path, shown);
        inputs_lost_or_note(r, 1, "%s", si.lost);
    }
    if (si.thinned[0]) {
        inputs_rename_msg(si.thinned, sizeof si.thinned, path, shown);
        inputs_lost_or_note(r, 0, "%s", si.thinned);
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
