/* analyze_run.h — internal to argus-analyze: the state of one offline run (summaries and
 * names staged from every input before they go into the job store, per-file Kineto facts
 * for clock alignment, the inputs skipped and why) and the input side
 * (import/inputs*.c): argus_analyze_import_path imports a file, or every regular
 * non-hidden file of a directory (sorted, one level), detecting the format from content;
 * a bad file costs one line on stderr and an entry in skipped[], never the run; a file read
 * in part (refused rows, a cut last line) one line and an entry in lost[]; data dropped or
 * cut inside a used file (bad event times, clipped strings, duplicate rows) one line and an
 * entry in notes[]. A pipe or other non-regular file (`<(...)`, a FIFO) is copied to an
 * unlinked temporary file in $TMPDIR first and read from there (named by its own path).
 */
#ifndef ARGUS_IMPORT_ANALYZE_RUN_H
#define ARGUS_IMPORT_ANALYZE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"
#include "import/progress.h"
#include "common/types.h"

#ifndef PROG /* argus-predict, which reads the same inputs, names itself */
#define PROG "argus-analyze"
#endif

struct staged {
    struct argus_step_summary *s; /* trimmed copy */
    int file;                     /* index of the input it came from */
};

struct names {
    uint64_t hash;
    char *name;
};

struct run {
    struct staged *sums;
    size_t n_sums, cap_sums;
    struct names *names;
    size_t n_names, cap_names;
    int cur_file;
    int oom;
    /* Kineto ranks: info per file that imported */
    struct argus_kineto_info **kinfo;
    size_t n_kinfo, cap_kinfo;
    char **spools;
    size_t n_spools, cap_spools;
    uint32_t n_ranks;
    int source;
    int any_kineto, any_csv;
    size_t n_inputs, n_ok;
    char **skipped;               /* "path: reason", every skipped input */
    size_t n_skipped, cap_skipped;
    char **lost;                  /* "path: what was lost": inputs read in part */
    size_t n_lost, cap_lost;
    char **notes;                 /* "path: what was dropped or cut" (the input is used) */
    size_t n_notes, cap_notes;
    uint32_t max_ranks;           /* --max-ranks (0: ARGUS_MAX_RANKS_DEFAULT) */
    const char *rank_from;        /* --rank-from: ERE on a trainer log's name; NULL */
    int32_t *log_ranks;           /* the rank of each trainer log imported */
    size_t n_logs, cap_logs;      /* n_logs: the next one's default rank */
    int *pipe_fds;                /* copies of pipes read (open until exit: spools are
                                     read again from /dev/fd/N by the store) */
    size_t n_pipe_fds, cap_pipe_fds;
    char jobid[256];
    struct argus_kineto_opts kopts;
    struct argus_progress *progress; /* argus-analyze's progress line (import/progress.h);
                                        NULL: none */
};

void argus_analyze_import_path(struct run *r, const char *path);
/* The input side's options, shared by argus-analyze and argus-predict: -m/--max-mem,
 * -R/--max-ranks, -r/--rank-from (opt is getopt's letter). 1: taken into r; 0: not one
 * of them; -1: a bad value, said in one line on stderr (the caller exits 2). */
int argus_analyze_input_option(struct run *r, int opt, const char *arg);
/* Free what the input side allocated (skipped, lost, notes, pipe copies). */
void argus_analyze_inputs_free(struct run *r);

#endif /* ARGUS_IMPORT_ANALYZE_RUN_H */
