/* steplog.h — per-rank iteration times straight from trainer logs (import/steplog.c), through
 * one table of line formats: a POSIX extended regular expression per line kind, which capture
 * holds the step (or the line's ordinal, or the step an earlier line announced), which the
 * time, its unit, whether the time is per step or a running total, and which captures hold
 * phase figures. Known: Megatron-LM "iteration N/ M | ... | elapsed time per iteration (ms):",
 * tqdm progress bars "N/M [H:MM:SS<..." (Hugging Face / DeepSpeed), MLPerf ":::MLLOG" lines of
 * key "tracked_stats" (train_step_timing), modded-nanogpt "step:N/M ... train_time:Tms" and
 * DeepSpeed-Chat "epoch: E|step: N|..." + "|E2E latency=Ts |... |Generate time=..." (its
 * phase split). A new trainer is one more row of that table.
 *
 * One file is one rank (or one node): the first line that matches a format fixes the file's
 * format; every step a line states becomes one summary (step and phase times only, as
 * steps.csv rows; import/csv.c). Times per step are laid end to end from 0; running totals
 * (tqdm's elapsed stamp, nanogpt's train_time) give each step the difference to the previous
 * stamp, spread evenly over the steps between (the first stamp is the origin, no step; a
 * total that goes down restarted from 0, as nanogpt's train_time after its warm-up steps,
 * and the rank's times go on from where they were). tqdm: a file's progress bars are read
 * as one; a second bar's lines (a dataset map before training) count only where their
 * step is after the previous line's, so a log with one bar per file is what is meant.
 * A line whose step is not after the previous one is ignored and counted. Never prints.
 */
#ifndef ARGUS_IMPORT_STEPLOG_H
#define ARGUS_IMPORT_STEPLOG_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"

struct argus_steplog_opts {
    uint32_t max_ranks;     /* a rank at or past it costs the file (0: the default) */
    const char *rank_from;  /* POSIX ERE on the file name, first capture = rank; NULL */
    int32_t default_rank;   /* the rank when neither the pattern nor the name gives one */
};

struct argus_steplog_info {
    const char *format;     /* the format's name, NULL when no line matched */
    int32_t rank;
    int rank_how;           /* 0: from the file name, 1: --rank-from, 2: the default */
    uint64_t steps, first_step, last_step;
    unsigned long lines;    /* lines read (\n or \r ends a line) */
    uint64_t ignored;       /* matching lines whose step was not after the previous one */
    unsigned long ignored_line;
    uint64_t refused;       /* matching lines with a time out of bounds or unparsable */
    unsigned long refused_line;
    char refused_why[200];
};

/* Import one trainer log (plain or gzip). 0 when at least one step was delivered; 1 when
 * some were and the rest could not be read (a damaged gzip: errbuf); -ENOMSG when no line
 * matched any known format (in the first 64 MiB of text: then reading stops); other
 * negative errno with errbuf (no steps, a rank at or past max_ranks: nothing delivered). */
int argus_steplog_import(const char *path, const struct argus_steplog_opts *o,
                         const struct argus_import_sink *sink, struct argus_steplog_info *info,
                         char *errbuf, size_t errlen);

/* 1 when path (plain or gzip) starts with '[' followed by something other than '{' or ']'
 * (spaces aside): a log line such as "[2025-01-02 15:45:22,160] [INFO] ..." that format
 * detection (argus_import_detect) takes for a JSON array, not a Kineto trace; else 0. */
int argus_steplog_bracket_text(const char *path);

/* The rank a file name (its last component) gives: pattern's first capture when it matches
 * and holds digits only (how = 1; pattern may be NULL), else the "rank N" / "worker N" rule
 * of Kineto traces (how = 0); -1 when neither; -2 when pattern does not compile. */
int32_t argus_steplog_rank(const char *path, const char *pattern, int *how);

/* Fill a summary's derived figures from its wall time (end - start) and phase figures in
 * ms (forward, backward, optimizer, comm, host; NAN: unknown) as steps.csv does
 * (import/csv.c): with any phase unknown the step carries no phase split at all, and no
 * compute or GPU time either (a steps-level cell, docs/ALGORITHMS.md "Data levels"). The
 * longest idle interval (idle_long_ns, idle_long_end_ns) is not touched: a step row has no
 * kernel intervals, so the callers leave it 0 (unknown) from their memset. */
void argus_steps_fold(struct argus_step_summary *s, const double ms[5]);

#endif /* ARGUS_IMPORT_STEPLOG_H */
