/* inputs_int.h — internal to argus-analyze's input side (import/inputs*.c; argus-predict
 * builds the same files): what the files of that side share. Every function here takes the
 * run (import/analyze_run.h) and is called on the main thread only.
 */
#ifndef ARGUS_IMPORT_INPUTS_INT_H
#define ARGUS_IMPORT_INPUTS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "import/analyze_run.h"

/* ---- import/inputs_ledger.c: what is staged, and what is said about each input ---- */

/* An importer's sink (import/import.h: struct argus_import_sink, ctx the run): a trimmed
 * copy of each summary, tagged with r->cur_file; each kernel name once (recent duplicates
 * dropped, the store dedups the rest). Out of memory sets r->oom; nothing else fails. */
void inputs_stage_summary(void *ctx, const struct argus_step_summary *s);
void inputs_stage_name(void *ctx, uint64_t hash, const char *name);
/* Drop (and free) every summary staged from input `file`. */
void inputs_unstage_file(struct run *r, int file);
/* An input skipped: "PROG: msg; skipped" on stderr (the progress line cleared first) and
 * msg kept in r->skipped for report.json. */
void inputs_skip(struct run *r, const char *msg);
/* An input used in part (lost 1: r->lost, job.complete false) or a note on one (lost 0:
 * r->notes): one line on stderr, the line kept. */
__attribute__((format(printf, 3, 4)))
void inputs_lost_or_note(struct run *r, int lost, const char *fmt, ...);
/* msg (of len bytes) starts with alias, the name an importer opened (a pipe's
 * /dev/fd/N): put path, the name the user gave, in its place. alias == path: no change. */
void inputs_rename_msg(char *msg, size_t len, const char *alias, const char *path);

/* ---- import/inputs_formats.c: one input file of a known format into the run ---- */

/* Each imports path (the file opened; shown: the name the user gave, used in every line)
 * through its importer into the staging area and the run's counts (ranks, files used),
 * or skips it with one line; what was lost or dropped costs one line each. */
void inputs_import_kineto(struct run *r, const char *path, const char *shown);
void inputs_import_csv(struct run *r, const char *path, const char *shown);
void inputs_import_spool(struct run *r, const char *path, const char *shown);
/* A trainer log (import/steplog.h). 0, or -ENOMSG when no line matched a known format
 * (nothing staged, nothing said: the caller skips the file with its own line). */
int inputs_import_steplog(struct run *r, const char *path, const char *shown);

#endif /* ARGUS_IMPORT_INPUTS_INT_H */
